"""Tools built on the arena for bot authors and tuners: the protocol compliance check
(``check-bot``), openings books, and the SPRT run as a resumable tournament.

May import everything below the CLI.
"""
