"""Measure how many decisions a bot still has to make: the figures behind ``bots/timeman.py``.

Not a test. Plays alphabeta self-play matches in-process (no arena, a short
fixed search per decision) from random 2-ply openings and counts, for every
decision a bot is actually asked for (forced actions are played by the
referee without a ``go``):

* own decisions left in the round, by how many plies of the round were played;
* rounds left after the current one, by the points the leader still needs.

The time manager divides the clock by these expectations, so they are
measured rather than guessed; rerun this after a change that alters how long
rounds last (stronger play ends rounds differently) and copy the tables.

    python bench/decisions.py [--matches 30] [--time 0.03]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict

from arena.bots.compiled_search import CompiledSearcher

from arena.games import get_game
from arena.games.kamisado.board import MATCH_KINDS, MATCH_TARGET
from arena.games.kamisado.position import OVER, PLAY

BUCKET = 4
"""Round plies are grouped in buckets of this many plies."""


def play_match(variant: str, rng: random.Random, think: float) -> list[tuple[int, int, int]]:
    """One self-play match; returns (player, round ply, round no) per asked decision,
    with the round ends marked as (-1, round no, leader's missing points)."""
    game = get_game("kamisado")
    pos = game.random_opening(variant, 2, rng).pos.copy()
    searcher = CompiledSearcher()
    events: list[tuple[int, int, int]] = []
    round_ply = 2
    target = MATCH_TARGET[pos.kind]
    while pos.phase != OVER:
        moves = pos.legal_moves()
        if pos.phase == PLAY:
            if len(moves) > 1:
                events.append((pos.side, round_ply, pos.round))
                move, _, _ = searcher.think(pos, time.monotonic() + think)
            else:
                move = moves[0]
            pos.make(move)
            round_ply += 1
            if pos.phase != PLAY:
                missing = target - max(pos.score(0), pos.score(1))
                events.append((-1, pos.round, max(missing, 0)))
        else:  # the regroup choice is a decision too, counted with the next round
            move, _, _ = searcher.think(pos, time.monotonic() + think)
            pos.make(move)
            round_ply = 0
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=30, help="matches per match kind")
    parser.add_argument("--time", type=float, default=0.03, help="seconds per decision")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    left_in_round: dict[int, list[int]] = defaultdict(list)
    rounds_after: dict[int, list[int]] = defaultdict(list)
    per_round: list[int] = []
    for variant in MATCH_KINDS:
        for _ in range(args.matches if variant != "marathon" else max(1, args.matches // 3)):
            events = play_match(variant, rng, args.time)
            # Own decisions left in the round at each decision.
            current: list[tuple[int, int]] = []
            ends: list[tuple[int, int]] = []
            for player, a, b in events:
                if player < 0:
                    for p, ply in current:
                        left_in_round[ply // BUCKET].append(
                            sum(1 for q, _ in current if q == p)
                            - sum(1 for q, r in current if q == p and r < ply)
                        )
                    per_round.append(len(current))
                    current = []
                    ends.append((a, b))
                else:
                    current.append((player, a))
            total_rounds = len(ends)
            # The leader's missing points after round k are those before round k + 1.
            for k, (_, missing) in enumerate(ends[:-1]):
                rounds_after[missing].append(total_rounds - k - 2)
            if ends:
                rounds_after[MATCH_TARGET[MATCH_KINDS.index(variant)]].append(total_rounds - 1)
    print(
        f"decisions asked per round (both sides): mean {sum(per_round) / len(per_round):.1f}"
        f" over {len(per_round)} rounds"
    )
    print("own decisions left in the round, by round ply (bucket start: mean, n):")
    print(
        "ROUND_LEFT = {"
        + ", ".join(
            f"{b * BUCKET}: {sum(v) / len(v):.1f}"
            for b, v in sorted(left_in_round.items())
            if len(v) >= 5
        )
        + "}"
    )
    print("rounds left after this one, by the leader's missing points (mean, n):")
    print(
        "ROUNDS_AFTER = {"
        + ", ".join(f"{m}: {sum(v) / len(v):.2f}" for m, v in sorted(rounds_after.items()))
        + "}"
    )
    print("  n: " + ", ".join(f"{m}: {len(v)}" for m, v in sorted(rounds_after.items())))


if __name__ == "__main__":
    main()
