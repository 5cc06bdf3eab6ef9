"""One bot: the conversation with it over a transport (handshake, requests with
deadlines, faults: ``conversation.py``, ``transport.py``), and for a local process
its start in its sandbox, what it wrote (the head and tail of its stderr, stray
stdout: ``output.py``), engine options, and the kill of its whole process group.

May import: :mod:`arena.protocol.messages` and :mod:`arena.protocol.text`. Knows nothing
of the rules, tournament files or the store: an engine runs a command it is given, in
the confinement it is given.
"""
