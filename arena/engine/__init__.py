"""One bot process: start it in its sandbox, handshake, requests with deadlines, what
it wrote (the head and tail of its stderr, stray stdout: ``output.py``), engine
options, and the kill of its whole process group.

May import: :mod:`arena.protocol.messages` and :mod:`arena.protocol.text`. Knows nothing
of the rules, tournament files or the store: an engine runs a command it is given, in
the confinement it is given.
"""
