"""One bot: the conversation with it over a transport (handshake, requests with
deadlines, faults: ``conversation.py``, ``transport.py``), and for a local process
its start in its sandbox, what it wrote (the head and tail of its stderr, stray
stdout: ``output.py``), engine options, and the kill of its whole process group. A
remote bot's transport is a connection of the gateway instead (``link.py``,
``gateway.py``).

May import: :mod:`arena.protocol.messages`, :mod:`arena.protocol.text` and
:mod:`arena.protocol.remote`. Knows nothing of the rules, tournament files or the
store: an engine runs a command it is given, in the confinement it is given.
"""
