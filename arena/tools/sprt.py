"""Sequential probability ratio test between two bots, played as a resumable tournament.

The test plays pairs of games (same opening, sides swapped) and after every
finished pair updates the pentanomial counts and the log-likelihood ratio of
H1 (the first bot is ``elo1`` stronger) against H0 (``elo0``), stopping as soon
as it crosses a bound. Pairs are counted together because the two games of a
pair share an opening: counting them as independent games would understate the
variance. The games are stored like any tournament's, so an interrupted test
resumes where it stopped and reaches the same decision from the same games.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from arena.match.record import GameRecord
from arena.plan.config import parse_config
from arena.plan.entrants import distinct, entrant, identity_name
from arena.stats.elo import pentanomial_counts, pentanomial_elo
from arena.stats.sprt import SprtDecision, llr_pentanomial, sprt_bounds, sprt_decision
from arena.storage.safefile import write_atomic
from arena.storage.store import Store
from arena.tournament import Observer, Tournament


@dataclass(slots=True)
class SprtState:
    """Pentanomial counts of ``bot``'s pairs, and the test's verdict so far."""

    bot: str
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    pair_scores: list[float] = field(default_factory=list)
    _partial: dict[str, float] = field(default_factory=dict)

    def check(self) -> None:
        """Raise ``ValueError`` now if the hypotheses cannot be tested (e.g. elo1 <= elo0)."""
        llr_pentanomial((1, 1, 1, 1, 1), self.elo0, self.elo1, model=self.model)
        sprt_bounds(self.alpha, self.beta)

    def add_pair(self, score: float) -> None:
        self.pair_scores.append(score)

    def resume(self, directory: Path) -> None:
        """Count the complete pairs already stored in ``directory`` (if any)."""
        if not (directory / "games.sqlite").exists():
            return
        with Store.open_existing(directory) as store:
            for first, _second, s1, s2 in store.pair_results():
                self.add_pair(s1 + s2 if first == self.bot else 2 - s1 - s2)

    def add_game(self, pair_key: str, record: GameRecord) -> bool:
        """Count one game; return ``True`` when it completed a pair."""
        points = record.score if record.players[0] == self.bot else 1.0 - record.score
        if pair_key in self._partial:
            self.pair_scores.append(self._partial.pop(pair_key) + points)
            return True
        self._partial[pair_key] = points
        return False

    @property
    def pentanomial(self) -> tuple[int, int, int, int, int]:
        return pentanomial_counts(self.pair_scores)

    def llr(self) -> float:
        if not self.pair_scores:
            return 0.0
        return llr_pentanomial(self.pentanomial, self.elo0, self.elo1, model=self.model)

    def decision(self) -> SprtDecision:
        return sprt_decision(self.llr(), self.alpha, self.beta)

    def bounds(self) -> tuple[float, float]:
        return sprt_bounds(self.alpha, self.beta)

    def summary(self) -> str:
        lower, upper = self.bounds()
        decision = self.decision()
        verdict = {
            SprtDecision.H1: f"H1 accepted: {self.bot} is at least {self.elo1:g} Elo stronger",
            SprtDecision.H0: f"H0 accepted: {self.bot} is not {self.elo1:g} Elo stronger "
            f"(at most {self.elo0:g})",
            SprtDecision.CONTINUE: "no decision yet (game cap reached or interrupted)",
        }[decision]
        return (
            f"pairs {len(self.pair_scores)}, pentanomial (LL, LD, WL+DD, WD, WW) = "
            f"{self.pentanomial}; {self.estimate()}; LLR {self.llr():.2f} in "
            f"({lower:.2f}, {upper:.2f}) [{self.model}, elo0 {self.elo0:g}, "
            f"elo1 {self.elo1:g}]: {verdict}"
        )

    def estimate(self) -> str:
        """The first bot's score and Elo so far, with 95 % intervals from the pairs
        (what a reader wants beside the verdict: how much stronger, not only whether)."""
        if not self.pair_scores:
            return "no pair yet"
        stats = pentanomial_elo(self.pentanomial)
        elo, nelo = stats.elo, stats.nelo
        if not (math.isfinite(elo.value) and math.isfinite(elo.error)):
            return f"score {100 * stats.score:.1f} %"
        return (
            f"score {100 * stats.score:.1f} %, Elo {elo.value:+.0f} ± {elo.error:.0f}, "
            f"nElo {nelo.value:+.0f} ± {nelo.error:.0f}"
        )


@dataclass(frozen=True, slots=True)
class SprtPlan:
    """What a test plays, as its tournament file says: two bots in pairs of games,
    up to ``max_games``, with these settings."""

    name: str
    game: str
    variant: str | None
    tc: str
    max_games: int
    seed: int
    concurrency: int
    opening_plies: int
    openings_file: str | None = None
    comment: str = ""


def tournament_text(plan: SprtPlan, bots: Sequence[tuple[str, list[str]]]) -> str:
    """The tournament file an SPRT runs as: two bots, pairs up to ``max_games`` games.

    Written into the results folder, so the test is stored, checked on resume and
    reported like any tournament.
    """
    lines = [f"# {plan.comment}"] if plan.comment else []
    lines += [
        f"name = {json.dumps(plan.name)}",
        f"game = {json.dumps(plan.game)}",
        *([f"variant = {json.dumps(plan.variant)}"] if plan.variant else []),
        f"tc = {json.dumps(plan.tc)}",
        f"games_per_pairing = {plan.max_games + plan.max_games % 2}",
        f"seed = {plan.seed}",
        f"concurrency = {plan.concurrency}",
        "[openings]",
        f"file = {json.dumps(plan.openings_file)}"
        if plan.openings_file
        else f"plies = {plan.opening_plies}",
    ]
    for bot, command in bots:
        lines += ["[[bots]]", f"name = {json.dumps(bot)}", f"command = {json.dumps(command)}"]
    return "\n".join(lines) + "\n"


def players(
    first: str, second: str, *, seed: int, game: str, variant: str
) -> list[tuple[str, list[str]]]:
    """The two bots of a test, each a built-in name or a command (given ``--seed seed``
    and ``seed + 1``), as (name, command): a command bot named after its ``identity``
    (started once for it), two of one name told apart."""
    bots = [entrant(first, seed), entrant(second, seed + 1)]

    async def names() -> list[str]:
        return [await identity_name(bot, game, variant) for bot in bots]

    # A built-in stays ``builtin:NAME`` in the test's file: the one sign of the arena's own.
    commands = [[f"builtin:{b.name}", *b.command[2:]] if b.builtin else b.command for b in bots]
    return list(zip(distinct(trio.run(names)), commands, strict=True))


def sprt_tournament(
    state: SprtState,
    bots: Sequence[tuple[str, list[str]]],
    plan: SprtPlan,
    *,
    results_root: str | Path,
    observer: Observer,
    sandbox: str | None = None,
) -> Tournament:
    """The test as a tournament in ``results_root/plan.name``: its file written there
    (:func:`tournament_text`), ``state`` brought up to the pairs already stored, and
    a run that stops as soon as ``state`` decides."""
    text = tournament_text(plan, bots)
    directory = Path(results_root) / plan.name
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sprt.toml"
    write_atomic(path, text)  # in the results folder: never through a link there
    config = parse_config(text, path)
    state.resume(directory)

    def decided(key: str, pair_key: str, record: GameRecord) -> bool:
        return state.add_game(pair_key, record) and state.decision() != "continue"

    return Tournament(
        config,
        text,
        directory=directory,
        observer=observer,
        config_path=path,
        stop_when=decided,
        sandbox=sandbox,
    )
