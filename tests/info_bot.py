"""A test bot that reports its "search" in ``info`` lines, for the report tests.

    python info_bot.py [--seed N]

Plays a seeded random legal action and sends, with each, an ``info`` whose
figures follow from the request alone (so a test can recompute them): depth is
``len(legal) % 7 + 1``, score ``len(legal) / 4 - 3``, nodes ``100 * len(legal)``,
and the PV is the chosen action then the first two legal ones. It also writes
one line per decision to stderr, which the report shows as the stderr tail.
Speaks both games.
"""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.sdk import log, run  # noqa: E402

seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
rng = random.Random(seed)


def choose(request):  # noqa: ANN001, ANN201
    legal = request.legal
    action = rng.choice(legal)
    n = len(legal)
    log(f"thinking about {n} moves")
    info = {"depth": n % 7 + 1, "score": n / 4 - 3, "nodes": 100 * n, "pv": [action, *legal[:2]]}
    return action, info


run(choose, name="info-bot", author="tests", games=("kamisado", "sekigahara"))
