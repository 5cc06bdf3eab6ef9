"""A test bot that plays a given action in a given position, else the first legal one.

    python scripted_bot.py [POSITION-TEXT ACTION]...

With it a test makes a known mistake happen at a known ply (a move that throws
away a proven won round) inside a real tournament.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.sdk import run  # noqa: E402

SCRIPT = dict(zip(sys.argv[1::2], sys.argv[2::2], strict=True))


def choose(request):  # noqa: ANN001, ANN201
    action = SCRIPT.get(request.position)
    return action if action in request.legal else request.legal[0]


run(choose, name="scripted")
