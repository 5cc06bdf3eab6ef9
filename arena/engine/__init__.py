"""One bot process: start it in its sandbox, handshake, requests with deadlines, what
it wrote (the head and tail of its stderr, stray stdout: ``output.py``), engine
options, and the kill of its whole process group. A remote bot's engine talks to
a connection of the gateway instead (``link.py``, ``gateway.py``).

May import: :mod:`arena.protocol.messages`, :mod:`arena.protocol.text` and
:mod:`arena.protocol.remote`. Knows nothing of the rules, tournament files or the
store: an engine runs a command it is given, in the confinement it is given.
"""
