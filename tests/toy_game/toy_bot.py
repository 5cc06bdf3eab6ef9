"""A random bot for the toy race, built as the built-in bots are (arena.sdk).

python toy_bot.py [SEED]
"""

import random
import sys

from arena.sdk import run

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else None)
run(lambda request: rng.choice(request.legal), name="toy-random", version="1", games=("toy",))
