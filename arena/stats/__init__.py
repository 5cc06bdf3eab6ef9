"""Statistics on result counts: the joint Bradley–Terry fit with a first-move term,
intervals, likelihood of superiority, pentanomial Elo and the SPRT.

May import: nothing else of the arena (pure functions on numbers).
"""
