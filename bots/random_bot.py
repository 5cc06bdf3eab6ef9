"""random: plays a uniformly random legal action. The bottom rung of the ladder.

python bots/random_bot.py [--seed N]

It only chooses among ``legal``, so it plays every game the arena offers it, an
installed third game included (its identity declares the game its ``hello``
offers): every game has a built-in opponent, for ``arena check-bot`` too.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from arena.sdk import Bot, Request, run


class RandomBot(Bot):
    name = "random"
    author = "Kamisado Arena"
    version = "1"

    def __init__(self, seed: int | None) -> None:
        self.rng = random.Random(seed)

    def games_for(self, offered: str) -> Sequence[str]:
        return [offered]

    def choose(self, request: Request) -> str:
        return self.rng.choice(request.legal)


def main() -> None:
    parser = argparse.ArgumentParser(description="uniformly random bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    run(RandomBot(args.seed))


if __name__ == "__main__":
    main()
