"""random: plays a uniformly random legal action. The bottom rung of the ladder.

python bots/random_bot.py [--seed N]
"""

from __future__ import annotations

import argparse
import random

from arena.sdk import Request, run


def main() -> None:
    parser = argparse.ArgumentParser(description="uniformly random bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def choose(request: Request) -> str:
        return rng.choice(request.legal)

    run(
        choose,
        name="random",
        author="Kamisado Arena",
        version="1",
        games=("kamisado", "sekigahara"),
    )


if __name__ == "__main__":
    main()
