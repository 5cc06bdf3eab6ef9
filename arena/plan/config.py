"""Tournament files: TOML decoded into typed, validated msgspec Structs.

A tournament can run for hours, so every mistake in its file should surface at
load time, before the first bot starts, as one readable line that names the
file, the key and what was expected. msgspec does the typing in one pass (and
rejects unknown keys, which catches typos such as ``concurency``); the checks
that need more than one field or the file system follow in ``_validate``.

After ``load_config`` the config is *resolved*: every bot's ``command`` is a list
whose first word is an absolute path to an executable, every ``cwd`` and the
openings ``file`` are absolute, ``variant`` names a real variant and
``concurrency`` is a number. Later stages never look at the TOML file's folder.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from pathlib import Path
from typing import Annotated, Literal, get_args

import msgspec
from msgspec import Meta

from arena.engine.sandbox import SandboxSettings
from arena.games import GameError, get_game
from arena.match.clock import TimeControl
from arena.plan.builtins import resolve_builtin
from arena.plan.errors import ConfigError
from arena.plan.knockout import resolve_seeds
from arena.plan.own_files import bot_folders, leading_out, refused
from arena.plan.programs import absolute, find_program, is_path, leads_out, program_folder
from arena.plan.remote import REDACTED, RemoteSettings, entry_tokens, remote_problem
from arena.protocol.messages import MAX_LINE

__all__ = [
    "BotConfig",
    "ConfigError",
    "Faults",
    "Limits",
    "Openings",
    "ProtocolSettings",
    "RemoteSettings",
    "SandboxSettings",
    "TournamentConfig",
    "load_config",
    "one_line",
    "parse_config",
    "read_openings_file",
]

# Upper bounds of every number in a tournament file (and of the command-line
# options that override them): a value outside them is a one-line error at load
# time instead of a MemoryError or OverflowError once the schedule is built.
MAX_GAMES_PER_PAIRING = 100_000
MAX_GAMES = 1_000_000
"""Games in a whole schedule; the schedule is built in memory before the first game."""
MAX_CONCURRENCY = 1024
MAX_PLIES = 100_000
MAX_OPENING_PLIES = 1000
MAX_MIN_GAMES = 1_000_000
SEED_RANGE = (-(2**63), 2**63 - 1)
MAX_MEMORY_MB = 1 << 20  # 1 TiB
MAX_CPU_SECONDS = 10**7
MAX_PROCESSES = 1 << 22  # Linux's pid_max ceiling
MAX_FILE_SIZE_MB = 1 << 20
MAX_THREADS = 1024

Positive = Annotated[int, Meta(ge=1)]
Seed = Annotated[int, Meta(ge=SEED_RANGE[0], le=SEED_RANGE[1])]
Format = Literal["round-robin", "gauntlet", "swiss", "knockout"]
SeedFrom = Literal["file", "ratings", "draw"]
MAX_ROUNDS = 1000
MAX_EXTRA_PAIRS = 100
Backend = Literal["local", "ray"]
ClockKind = Literal["wall", "cpu"]

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+\-]{0,63}$")
"""Bot and tournament names: they appear in game keys (``r1:alpha:beta/1``), in
directory names (``results/<tournament>``) and in reports, so keep them plain."""


class BotConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """One ``[[bots]]`` table.

    ``command`` may be a shell-like string (split with ``shlex``) or a list; after
    loading it is always a list with an absolute executable first. ``env`` is
    added on top of the arena's own environment. ``tc`` overrides the
    tournament's time control for this bot (handicap matches). ``sandbox_ro`` and
    ``sandbox_rw`` are paths (relative to the tournament file) the bot may read,
    or read and write, beyond its sandbox's defaults; ``sandbox_net`` gives it
    the network (``arena/engine/sandbox.py``). A ``remote`` bot has no command: it
    connects through the gateway with its ``token`` (``arena/plan/remote.py``).
    """

    name: str
    command: str | list[str] | msgspec.UnsetType = msgspec.UNSET
    args: list[str] = []
    cwd: str | None = None
    env: dict[str, str] = {}
    tc: str | None = None
    options: dict[str, bool | int | float | str] = {}
    """Engine options (``{ Hash = 64 }``), checked against the bot's ``identity``
    before the first game and sent as ``setoption`` before every ``newgame``."""
    sandbox_ro: list[str] = []
    sandbox_rw: list[str] = []
    sandbox_net: bool = False
    threads: Annotated[int, Meta(ge=1, le=MAX_THREADS)] = 1
    """Cores the bot may use at once: its CPU quota, told to it in ``hello``
    (``cores``). Every bot has one CPU share, whatever its ``threads``."""
    builtin: str | None = None
    """The built-in bot's name when ``command`` says ``builtin:NAME``: set at load,
    never by the file (unknown there). The one sign that a bot is the arena's own
    (its preparation runs outside the sandbox, ``arena/plan/prepare.py``)."""
    remote: bool = False
    """Plays from its author's machine (``arena connect``) instead of being started here."""
    token: str | None = None
    """A remote entrant's token, written in the file (``REDACTED`` once loaded for a run)."""
    token_env: str | None = None
    """The environment variable holding a remote entrant's token instead."""

    @property
    def argv(self) -> list[str]:
        """The full command line: resolved command followed by ``args``."""
        if isinstance(self.command, str):
            return [*shlex.split(self.command), *self.args]
        command = self.command if isinstance(self.command, list) else []  # remote: unset
        return [*command, *self.args]


class Openings(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[openings]``: either ``plies`` random actions from the start, drawn from
    the tournament seed, or a ``file`` of position texts, one per line (blank
    lines and ``#`` comments skipped), used in order and cycled. Neither means
    every game starts from the initial position."""

    plies: Annotated[int, Meta(ge=0, le=MAX_OPENING_PLIES)] = 0
    file: str | None = None
    positions: list[str] = []
    """The ``file``'s position texts, filled in at load once each is checked, so the
    schedule plays what was checked without reading the file again. Not a key of a
    tournament file."""


class Limits(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[limits]``: resource limits applied to each bot process (``None``: none).

    Where a cgroup bounds a sandboxed bot (``arena/engine/cgroups.py``),
    ``memory_mb`` and ``processes`` hold for the bot's processes together, and
    no address-space limit is set (a runtime reserves far more than it uses);
    elsewhere ``memory_mb`` is each process's address space (RLIMIT_AS) and
    ``processes`` is RLIMIT_NPROC, which the kernel counts per *user*, so it is
    off by default there; a bot's cgroup, where there is one, bounds its
    processes (threads included) as a whole, at 256 when it is unset
    (``arena/engine/cgroups.py``).
    """

    memory_mb: Annotated[int, Meta(ge=1, le=MAX_MEMORY_MB)] | None = 2048
    cpu_seconds: Annotated[int, Meta(ge=1, le=MAX_CPU_SECONDS)] | None = None
    processes: Annotated[int, Meta(ge=1, le=MAX_PROCESSES)] | None = None
    file_size_mb: Annotated[int, Meta(ge=1, le=MAX_FILE_SIZE_MB)] | None = 64


class ProtocolSettings(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[protocol]``: the operator's settings of protocol.md. The time margin is
    part of the time control text instead (``tc = "10+0.1 margin=0.1"``)."""

    handshake_timeout: Annotated[float, Meta(gt=0, le=3600)] = 10.0
    """Seconds a bot has to answer ``hello`` after it is started."""
    newgame_timeout: Annotated[float, Meta(gt=0, le=3600)] = 10.0
    """Seconds a bot has to answer ``newgame`` with ``ready``."""
    max_line: Annotated[int, Meta(ge=1 << 16, le=1 << 30)] = MAX_LINE
    """Longest line in bytes a bot may write, sent to it in ``hello`` (at least 64 KiB:
    the arena's own lines must fit)."""


class Faults(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[faults]``: what to do with bots that crash, hang or break the protocol.

    ``restart`` starts a fresh process after a fault. A bot is disqualified once
    it has played at least ``min_games`` games and the share of those it faulted
    reaches ``disqualify_after``; ``None`` (the default, as the README shows) never
    disqualifies. A bot that cannot start at all needs no policy: the pre-flight
    (``arena/backends/preflight.py``) stops the run, or with ``--skip-broken`` its
    games are not played.
    """

    restart: bool = True
    disqualify_after: Annotated[float, Meta(gt=0, le=1)] | None = None
    min_games: Annotated[int, Meta(ge=1, le=MAX_MIN_GAMES)] = 10


class TournamentConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """A whole tournament file. See the module docstring for what loading resolves."""

    name: str
    bots: list[BotConfig]
    game: str = "kamisado"
    variant: str = ""
    """The game's default variant when the file leaves it out; a loaded config always
    names its variant, so nothing after loading falls back to the default again."""
    tc: str = "10+0.1"
    format: Format = "round-robin"
    challengers: list[str] = []
    games_per_pairing: Annotated[int, Meta(ge=1, le=MAX_GAMES_PER_PAIRING)] = 2
    openings: Openings = Openings()
    concurrency: Annotated[int, Meta(ge=1, le=MAX_CONCURRENCY)] = msgspec.field(
        default_factory=lambda: min(os.cpu_count() or 1, MAX_CONCURRENCY)
    )
    seed: Seed = 0
    rounds: Annotated[int, Meta(ge=1, le=MAX_ROUNDS)] | None = None
    """Swiss: rounds to play (default ⌈log₂ n⌉ + 2, at most n − 1; ``arena/plan/swiss.py``)."""
    seeds: list[str] = []
    """Knockout: every entrant, best seed first (``seed_from = "file"``); filled in at load
    from the rating list or the seeded draw otherwise (``arena/plan/knockout.py``)."""
    seed_from: SeedFrom | None = None
    """Knockout: ``file`` (``seeds``), ``ratings`` (the ``ratings`` file of ``arena ratings
    --json``) or ``draw`` (the tournament seed); default ``file`` when ``seeds`` is given."""
    ratings: str | None = None
    extra_pairs: Annotated[int, Meta(ge=0, le=MAX_EXTRA_PAIRS)] = 2
    """Knockout: pairs added, one at a time, to a tied match before its stated rule decides."""
    max_plies: Annotated[int, Meta(ge=1, le=MAX_PLIES)] = 1000
    ponder: bool = False
    """Let bots think on their opponent's time; by default a bot is frozen from its
    answer to its next request (``arena/engine/cpu.py``)."""
    affinity: bool | None = None
    """Each game slot on cores of its own (``arena/engine/cpuset.py``); unset: wherever
    the cores allow (``concurrency`` games of :meth:`game_cores` cores each)."""
    clock: ClockKind = "wall"
    """What a move is charged: ``wall`` time, or the ``cpu`` time of the bot's cgroup
    (with a wall-clock ceiling of three times the budget; ``arena/match/clock.py``)."""
    limits: Limits = Limits()
    protocol: ProtocolSettings = ProtocolSettings()
    faults: Faults = Faults()
    sandbox: SandboxSettings = SandboxSettings()
    remote: RemoteSettings = RemoteSettings()
    backend: Backend = "local"
    """Where games run: this machine's worker processes, or a Ray cluster (the 'ray' extra)."""
    ray_address: str | None = None
    """A running Ray cluster (``HEAD:6379``) for ``backend = "ray"``; none starts a local one."""
    ray_connect_timeout: Annotated[float, Meta(gt=0, le=600)] = 5.0
    """Seconds each step of reaching the cluster may take (connect, greeting) before
    the run stops with one line instead of waiting on Ray's retries."""

    def bot(self, name: str) -> BotConfig:
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(name)

    def game_cores(self) -> int:
        """Cores one game needs (``arena/engine/cpuset.py``): the most ``threads`` of a bot,
        twice that with ``ponder`` (both bots of a game run at once then)."""
        return max((b.threads for b in self.bots), default=1) * (2 if self.ponder else 1)

    def time_control(self, bot: str) -> str:
        """The time control string that applies to ``bot``."""
        return self.bot(bot).tc or self.tc


def load_config(path: str | os.PathLike[str]) -> TournamentConfig:
    """Read, decode, validate and resolve a tournament file.

    Raises ``ConfigError`` with a one-line message for every kind of mistake.
    Unlike :func:`parse_config` (which workers and Ray actors use on the redacted
    copy), it also checks that every remote entrant's token can be read.
    """
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read tournament file: {e.strerror or e}") from None
    config = parse_config(text, path)
    entry_tokens(config, path)  # the operator's run: every remote entrant's token is at hand
    return config


def redact(config: TournamentConfig) -> TournamentConfig:
    """``config`` with :data:`~arena.plan.remote.REDACTED` for every token written in
    it: what the workers, Ray actors and the store may see (``arena/plan/remote.py``)."""
    bots = [
        b if b.token is None else msgspec.structs.replace(b, token=REDACTED) for b in config.bots
    ]
    return msgspec.structs.replace(config, bots=bots)


def parse_config(text: str | bytes, path: str | os.PathLike[str]) -> TournamentConfig:
    """Like ``load_config`` for text already read (``path`` names it and anchors
    relative paths), so a caller that also stores the text reads it once."""
    path = Path(path)
    try:
        config = msgspec.toml.decode(text, type=TournamentConfig)
    except msgspec.ValidationError as e:
        raise ConfigError(_render_validation(path, str(e), text)) from None
    except msgspec.DecodeError as e:
        raise ConfigError(f"{path}: TOML syntax error: {one_line(str(e))}") from None
    return _Validator(config, path).run()


def read_openings_file(path: str | os.PathLike[str]) -> list[str]:
    """The position texts of an openings file: one per line, blank lines and
    lines starting with ``#`` skipped, surrounding whitespace stripped."""
    return [text for _, text in _numbered_openings(path)]


def _numbered_openings(path: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """``read_openings_file`` with each text's line number, for errors that point at it."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [
        (n, s) for n, line in enumerate(lines, 1) if (s := line.strip()) and not s.startswith("#")
    ]


# -- error rendering ------------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces: an error the
    arena shows is one line, whatever a library or a bot put in it."""
    return " ".join(text.split())


_CHOICES = {
    "format": get_args(Format),
    "backend": get_args(Backend),
    "seed_from": get_args(SeedFrom),
    "clock": get_args(ClockKind),
}
"""Literal-typed keys, whose msgspec error does not list the allowed values."""

_PATH_RE = re.compile(r"^(?P<msg>.*) - at `\$(?P<path>[^`]*)`$", re.S)


def _render_validation(path: Path, message: str, text: str | bytes) -> str:
    """Turn msgspec's "Expected `int`, got `str` - at `$.bots[1].tc`" into
    "file: bots[1] (alpha).tc: expected `int`, got `str`"."""
    match = _PATH_RE.match(message)
    msg, key = (match["msg"], match["path"].lstrip(".")) if match else (message, "")
    msg = re.sub(r"^Object contains unknown field (`[^`]*`)", r"unknown key \1", msg)
    msg = re.sub(r"^Object missing required field (`[^`]*`)", r"missing required key \1", msg)
    msg = msg[:1].lower() + msg[1:]
    if msg.startswith("invalid enum value") and key in _CHOICES:
        msg += f" (expected one of: {', '.join(map(repr, _CHOICES[key]))})"
    key = _name_bots(key, text)
    return f"{path}: {key}: {one_line(msg)}" if key else f"{path}: {one_line(msg)}"


def _name_bots(key: str, text: str | bytes) -> str:
    """Add the bot's name to ``bots[i]`` so that the reader need not count tables."""
    match = re.match(r"^bots\[(\d+)\]", key)
    if not match:
        return key
    try:
        raw = tomllib.loads(text.decode() if isinstance(text, bytes) else text)
        name = raw["bots"][int(match[1])]["name"]
    except Exception:  # best effort only: the bare path is still correct
        return key
    if not isinstance(name, str):
        return key
    return f"{match[0]} ({name}){key[match.end() :]}"


def _bot_key(index: int, bot: BotConfig, field: str = "") -> str:
    return f"bots[{index}] ({bot.name})" + (f".{field}" if field else "")


# -- validation -----------------------------------------------------------------------


def _check_time_control(text: str) -> str | None:
    """None if ``text`` is a usable time control, else what was expected."""
    try:
        TimeControl.parse(text)
    except ValueError as e:
        return str(e)
    return None


def check_affinity(config: TournamentConfig, where: object) -> None:
    """Refuse ``affinity = true`` when the games do not fit on the machine's cores (one line)."""
    cores, need = len(os.sched_getaffinity(0)), config.concurrency * config.game_cores()
    if config.affinity and need > cores:
        raise ConfigError(
            f"{where}: affinity: {config.concurrency} games of {config.game_cores()} core(s) "
            f"each need {need} cores, this machine has {cores}; lower concurrency (or the "
            "bots' threads), or set affinity = false"
        )


class _Validator:
    """Checks that need several fields or the file system, and resolves paths."""

    def __init__(self, config: TournamentConfig, path: Path) -> None:
        self.config = config
        self.path = path
        self.base = path.resolve().parent

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(one_line(f"{self.path}: {key}: {message}"))

    def run(self) -> TournamentConfig:
        c = self.config
        if not NAME_RE.match(c.name):
            raise self.fail("name", self._name_expected(c.name))
        if not c.bots:
            raise self.fail("bots", "expected at least one [[bots]] table")
        seen: dict[str, int] = {}
        for i, bot in enumerate(c.bots):
            if not NAME_RE.match(bot.name):
                raise self.fail(f"bots[{i}].name", self._name_expected(bot.name))
            if bot.name in seen:
                raise self.fail(
                    f"bots[{i}].name",
                    f"duplicate bot name {bot.name!r} (also bots[{seen[bot.name]}])",
                )
            seen[bot.name] = i
        self._check_tc("tc", c.tc)
        for i, bot in enumerate(c.bots):
            if bot.tc is not None:
                self._check_tc(_bot_key(i, bot, "tc"), bot.tc)
            if problem := remote_problem(bot, c.clock):
                raise self.fail(_bot_key(i, bot, problem[0]), problem[1])
        self._check_format()
        if c.games_per_pairing % 2:
            raise self.fail(
                "games_per_pairing",
                "expected an even number: games come in pairs with sides swapped on the "
                f"same opening, got {c.games_per_pairing}",
            )
        self._check_size()
        check_affinity(c, self.path)
        variant, openings = self._check_game()
        bots = [bot if bot.remote else self._resolve_bot(i, bot) for i, bot in enumerate(c.bots)]
        hide = [str((self.base / p).resolve()) for p in c.sandbox.hide]
        sandbox = msgspec.structs.replace(c.sandbox, hide=hide)
        from arena.engine.confine import IdentityError, lookup_user

        try:
            lookup_user(c.sandbox.user)
        except IdentityError as e:
            raise self.fail("sandbox.user", str(e)) from None
        seeds = c.seeds
        if c.format == "knockout":
            ratings = None if c.ratings is None else (self.base / c.ratings).resolve()
            try:
                seeds = resolve_seeds(
                    [bot.name for bot in c.bots],
                    c.seeds,
                    c.seed_from,
                    seed=c.seed,
                    ratings=ratings,
                    game=c.game,
                    variant=variant,
                )
            except ValueError as e:
                key = "ratings" if c.seed_from == "ratings" else "seeds"
                raise self.fail(key, str(e)) from None
        return msgspec.structs.replace(
            c, bots=bots, variant=variant, openings=openings, sandbox=sandbox, seeds=seeds
        )

    @staticmethod
    def _name_expected(name: str) -> str:
        return (
            "expected a plain name of letters, digits and '_.+-' (at most 64, starting "
            f"with a letter or digit), got {name!r}"
        )

    def _check_tc(self, key: str, text: str) -> None:
        problem = _check_time_control(text)
        if problem:
            raise self.fail(key, problem)

    def _check_format(self) -> None:
        c = self.config
        names = [bot.name for bot in c.bots]
        if c.format in ("swiss", "knockout"):
            from arena.plan.rounds import check_rounds_config

            problem = check_rounds_config(c)
            if problem:
                raise self.fail(*problem)
            return
        if c.rounds is not None or c.seeds or c.seed_from or c.ratings:
            raise self.fail("format", "rounds, seeds and seed_from are for a swiss or knockout")
        if c.format == "round-robin":
            if c.challengers:
                raise self.fail(
                    "challengers", "only a gauntlet has challengers; set format = 'gauntlet'"
                )
            if len(names) < 2:
                raise self.fail("bots", "a round robin needs at least two bots")
            return
        if not c.challengers:
            raise self.fail(
                "challengers", "a gauntlet needs challengers = [names of bots from [[bots]]]"
            )
        for i, name in enumerate(c.challengers):
            if name not in names:
                raise self.fail(
                    f"challengers[{i}]",
                    f"unknown bot {name!r} (bots: {', '.join(names)})",
                )
            if name in c.challengers[:i]:
                raise self.fail(f"challengers[{i}]", f"challenger {name!r} is listed twice")
        if set(names) <= set(c.challengers):
            raise self.fail(
                "challengers", "a gauntlet needs at least one bot that is not a challenger"
            )

    def _check_size(self) -> None:
        c = self.config
        n, k = len(c.bots), len(c.challengers)
        pairings = k * (n - k) if c.format == "gauntlet" else n * (n - 1) // 2
        if c.format in ("swiss", "knockout"):
            from arena.plan.rounds import most_pairings

            pairings = most_pairings(c)
        games = pairings * c.games_per_pairing
        if games > MAX_GAMES:
            raise self.fail(
                "games_per_pairing",
                f"{pairings} pairings x {c.games_per_pairing} games = {games} games, more than "
                f"the {MAX_GAMES} a schedule may hold; split the tournament",
            )

    def _check_game(self) -> tuple[str, Openings]:
        c = self.config
        try:
            game = get_game(c.game)
        except GameError as e:
            raise self.fail("game", str(e)) from None
        variant = c.variant or game.default_variant
        if variant not in game.variants:
            raise self.fail(
                "variant",
                f"unknown variant {variant!r} of {c.game} (variants: {', '.join(game.variants)})",
            )
        openings = c.openings
        if openings.positions:
            # Set at load from ``file``, never by the file (unknown there, as msgspec says).
            raise self.fail("openings", "unknown key `positions`")
        if openings.file is None:
            return variant, openings
        if openings.plies:
            raise self.fail("openings", "expected either plies = N or file = 'path', not both")
        file = (self.base / openings.file).resolve()
        key = "openings.file"
        try:
            numbered = _numbered_openings(file)
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise self.fail(key, f"cannot read openings file {str(file)!r}: {reason}") from None
        if not numbered:
            raise self.fail(key, f"openings file {str(file)!r} holds no positions")
        for number, text in numbered:
            where = f"{file}:{number}"
            try:
                state = game.state_from_text(text)
            except GameError as e:
                raise self.fail(key, f"{where}: not a {c.game} position ({e})") from None
            if state.is_terminal():
                outcome = state.outcome()
                how = f" ({outcome.reason})" if outcome else ""
                raise self.fail(key, f"{where}: the game is already over in this position{how}")
            kind = game.variant_of(state)
            if kind is not None and kind != variant:
                raise self.fail(
                    key, f"{where}: a position of a {kind} match; the tournament plays {variant}"
                )
        positions = [text for _, text in numbered]
        return variant, msgspec.structs.replace(openings, file=str(file), positions=positions)

    def _resolve_bot(self, index: int, bot: BotConfig) -> BotConfig:
        """The bot with absolute paths; without ``cwd``, the folder of its program.

        A bot without ``cwd`` starts in the folder of its program (the first
        file on its command line after the executable, a script say, else the
        executable's), or with none (its private ``/tmp`` in the sandbox) when
        that is a system folder: never in the tournament file's folder, where
        the other entrants' files lie. Relative file names on its command line
        are made absolute (against the tournament file's folder, as before).
        """
        cwd = (self.base / bot.cwd).resolve() if bot.cwd is not None else self.base
        if not cwd.is_dir():
            raise self.fail(_bot_key(index, bot, "cwd"), f"no such directory {str(cwd)!r}")
        key = _bot_key(index, bot, "command")
        try:
            words = shlex.split(bot.command) if isinstance(bot.command, str) else bot.command
        except ValueError as e:
            raise self.fail(key, f"cannot split command {bot.command!r}: {e}") from None
        if not words or not words[0]:
            if bot.command is msgspec.UNSET:
                raise self.fail(
                    _bot_key(index, bot),
                    "missing required key `command` (or remote = true for an entrant that "
                    "connects through the gateway)",
                )
            raise self.fail(key, "expected a command to start the bot, got an empty one")
        if bot.builtin is not None:
            raise self.fail(_bot_key(index, bot), "unknown key `builtin`")
        first, rest = words[0], list(words[1:])
        builtin = None
        if first.startswith("builtin:"):
            resolved = self._resolve_builtin(key, first)
            builtin = first.removeprefix("builtin:")
        else:
            resolved = [self._resolve_executable(key, first, cwd, bot.env)]
        folder: str | None = str(cwd)
        if bot.cwd is None:
            rest = [absolute(self.base, w) for w in rest]
            folder = program_folder([*resolved, *rest])
        grants = self._resolve_grants(index, bot, folder, [*resolved, *rest])
        return msgspec.structs.replace(
            bot, command=[*resolved, *rest], cwd=folder, builtin=builtin, **grants
        )

    def _resolve_grants(
        self, index: int, bot: BotConfig, folder: str | None, command: list[str]
    ) -> dict[str, list[str]]:
        """``sandbox_ro`` and ``sandbox_rw`` as real paths, once the bot's own paths are
        checked (:mod:`arena.plan.own_files`): a symbolic link on its command line
        or in a relative grant may not lead out of its folder. Absolute grants are
        the operator's own and stay as written (resolved)."""
        granted = [
            str(Path(os.path.expanduser(p)).resolve())
            for p in (*bot.sandbox_ro, *bot.sandbox_rw)
            if os.path.isabs(os.path.expanduser(p))
        ]
        program = program_folder(
            [command[0], *(os.path.join(folder or "", w) for w in command[1:])]
        )
        folders = bot_folders(folder, program)
        grants = {}
        for field in ("sandbox_ro", "sandbox_rw"):
            paths = []
            for written in getattr(bot, field):
                path = os.path.normpath(self.base / os.path.expanduser(written))
                if not os.path.exists(path):
                    raise self.fail(_bot_key(index, bot, field), f"no such path {path!r}")
                target = None if os.path.isabs(written) else leading_out(path, folders, granted)
                if target is not None:
                    raise self.fail(_bot_key(index, bot, field), leads_out(path, target))
                paths.append(os.path.realpath(path))
            grants[field] = paths
        found = refused(command, folder, program, bot.env.get("PATH"), granted)
        if found is not None:
            raise self.fail(_bot_key(index, bot, "command"), leads_out(*found))
        return grants

    def _resolve_builtin(self, key: str, word: str) -> list[str]:
        try:
            return resolve_builtin(word)
        except KeyError as e:
            detail = e.args[0] if e.args else ""
            known = f" ({detail})" if detail else ""
            raise self.fail(key, f"unknown built-in bot {word!r}{known}") from None

    def _resolve_executable(self, key: str, word: str, cwd: Path, env: dict[str, str]) -> str:
        """An absolute path to the program ``word`` names.

        A word with a slash is a path: absolute, or relative to the bot's ``cwd``
        and then to the TOML file's folder. A bare word is looked up on the PATH
        (the bot's own ``env`` PATH if it sets one), as a shell would.
        """
        word = os.path.expanduser(word)
        found = find_program(word, [cwd, self.base], env.get("PATH"))
        if found is None and is_path(word):
            candidates = [Path(word)] if os.path.isabs(word) else [cwd / word, self.base / word]
            where = " or ".join(repr(str(c)) for c in dict.fromkeys(candidates))
            raise self.fail(key, f"no executable file {where}")
        if found is None:
            hint = f"; for a file next to the tournament file write './{word}'"
            raise self.fail(key, f"program {word!r} not found on PATH{hint}")
        if is_path(word) and not os.access(found, os.X_OK):
            raise self.fail(key, f"{found!r} is not executable (chmod +x?)")
        return found
