"""The ``arena`` command: parses arguments and delegates; no logic of its own.

Every expected failure (a bad position, tournament file, bot command...) is
reported as one readable line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena import __version__
from arena.engine.sandbox import MODES, Sandbox
from arena.games import GameError, get_game
from arena.match.record import GameRecord, SandboxRecord
from arena.plan.config import (
    MAX_CONCURRENCY,
    MAX_GAMES_PER_PAIRING,
    MAX_OPENING_PLIES,
    MAX_PLIES,
    SEED_RANGE,
)
from arena.report.text import visible
from arena.storage.store import StoreError

if TYPE_CHECKING:
    from arena.engine.bot import ResourceLimits


class UserError(click.ClickException):
    """A mistake in what the user asked for; printed as one line."""

    def show(self, file: Any = None) -> None:
        click.echo(f"arena: error: {self.format_message()}", err=True)


def _friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the arena's own error types into one-line ``UserError``s."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (GameError, ValueError, OSError, StoreError) as exc:
            raise UserError(str(exc)) from None
        except BaseExceptionGroup as group:  # raised through trio nurseries
            leaves = _leaves(group)
            if not all(
                isinstance(e, GameError | ValueError | OSError | StoreError) for e in leaves
            ):
                raise
            raise UserError("; ".join(dict.fromkeys(str(e) for e in leaves))) from None

    return wrapper


def _leaves(exc: BaseException) -> list[BaseException]:
    """The plain exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


class FiniteFloat(click.FloatRange):
    """A float range that also refuses ``nan`` and ``inf`` (click's own lets nan through)."""

    name = "finite float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number or number in (float("inf"), float("-inf")):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


SEED = click.IntRange(*SEED_RANGE)
PLIES = click.IntRange(1, MAX_PLIES)
OPENING_PLIES = click.IntRange(0, MAX_OPENING_PLIES)
CONCURRENCY = click.IntRange(1, MAX_CONCURRENCY)
ELO = FiniteFloat(-2000, 2000)


class _OneLineUsageError(click.UsageError):
    """A bad option or argument, shown as one line like every other error."""

    def show(self, file: Any = None) -> None:
        hint = f" (see '{self.ctx.command_path} --help')" if self.ctx is not None else ""
        click.echo(f"arena: error: {self.format_message()}{hint}", err=True)


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())
"""Click 8.2+ raises it for a bare ``arena`` (8.1 prints the help itself)."""


def _one_line(exc: click.UsageError) -> click.UsageError:
    if isinstance(exc, _OneLineUsageError):
        return exc
    one = _OneLineUsageError(exc.format_message(), exc.ctx)
    one.exit_code = exc.exit_code
    return one


class _ArenaGroup(click.Group):
    """The ``arena`` group: a usage error (a number out of range, an unknown
    option of ``arena`` itself or of a subcommand) is one line, not click's
    usage block."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if isinstance(exc, _NO_ARGS_IS_HELP):  # bare ``arena``: the help is wanted
                raise
            raise _one_line(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line(exc) from None


@click.group(cls=_ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def main() -> None:
    """Kamisado Arena: run bots against each other and rank them."""


def _state(game_name: str, position: str | None, variant: str | None):  # noqa: ANN202
    game = get_game(game_name)
    return game, (game.state_from_text(position) if position else game.new_state(variant))


@main.command()
@click.argument("depth", type=click.IntRange(0, 12))
@click.option("--position", "-p", help="Position text (default: the start position).")
@click.option("--variant", default=None, help="Match kind for the start position.")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--divide", is_flag=True, help="One line 'ACTION COUNT' per legal action.")
@_friendly_errors
def perft(
    depth: int, position: str | None, variant: str | None, game_name: str, divide: bool
) -> None:
    """Count the action sequences of exactly DEPTH plies (checks the rules core)."""
    game, state = _state(game_name, position, variant)
    start = time.perf_counter()
    if divide and depth > 0:
        total = 0
        for action, count in game.perft_divide(state, depth):
            total += count
            click.echo(f"{action} {count}")
        click.echo("")
    else:
        total = game.perft(state, depth)
    elapsed = time.perf_counter() - start
    rate = total / elapsed if elapsed > 0 else float("inf")
    click.echo(f"total {total}")
    click.echo(f"time {elapsed:.3f} s, {rate:,.0f} leaves/s")


@main.command()
@click.option("--position", "-p", help="Position text (default: the start position).")
@click.option("--variant", default=None, help="Match kind for the start position.")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@_friendly_errors
def show(position: str | None, variant: str | None, game_name: str) -> None:
    """Draw a position in the terminal, in colour and with colour initials."""
    from arena.report.boards import render_terminal
    from arena.report.terminal import text_console

    game, state = _state(game_name, position, variant)
    console = text_console()
    console.print(
        render_terminal(game.name, state.observation(max(state.current_player(), 0))),
        soft_wrap=True,
    )  # through a pipe, lines stay whole
    console.print(f"position: {state.to_text()}", soft_wrap=True)
    actions = state.legal_actions()
    console.print(f"legal actions ({len(actions)}): {' '.join(actions)}", soft_wrap=True)


def _protocol_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--handshake-timeout``, ``--newgame-timeout`` and ``--max-line`` (the
    ``[protocol]`` settings of a tournament file)."""
    seconds = FiniteFloat(0, 3600, min_open=True)
    options = [
        click.option(
            "--handshake-timeout",
            type=seconds,
            default=None,
            help="Seconds a bot has to answer hello (default 10).",
        ),
        click.option(
            "--newgame-timeout",
            type=seconds,
            default=None,
            help="Seconds a bot has to answer newgame (default 10).",
        ),
        click.option(
            "--max-line",
            type=click.IntRange(1 << 16, 1 << 30),
            default=None,
            help="Longest line a bot may write, in bytes (default 1 MiB).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


_SANDBOX_HELP = (
    "Confine each bot with bubblewrap: auto (when bwrap works here, else say so and run "
    "unconfined), bwrap (required) or none."
)


def _confinement_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--sandbox`` and the resource limits, with the tournament file's defaults."""
    from arena.plan.config import Limits

    d = Limits()
    options = [
        click.option(
            "--sandbox",
            type=click.Choice(MODES),
            default="auto",
            show_default=True,
            help=_SANDBOX_HELP,
        ),
        click.option(
            "--memory-mb",
            type=click.IntRange(0),
            default=d.memory_mb,
            show_default=True,
            help="Address-space limit per bot (0: none).",
        ),
        click.option(
            "--cpu-seconds",
            type=click.IntRange(0),
            default=d.cpu_seconds or 0,
            show_default=True,
            help="CPU-time limit per bot process (0: none).",
        ),
        click.option(
            "--file-size-mb",
            type=click.IntRange(0),
            default=d.file_size_mb,
            show_default=True,
            help="Largest file a bot may write (0: none).",
        ),
        click.option(
            "--processes",
            type=click.IntRange(0),
            default=d.processes or 0,
            show_default=True,
            help="RLIMIT_NPROC, counted per user (0: none).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _confinement(
    sandbox: str, memory_mb: int, cpu_seconds: int, file_size_mb: int, processes: int
) -> tuple[ResourceLimits, Sandbox]:
    """(ResourceLimits, Sandbox) from the options; the sandbox mode decided once, here."""
    from arena.backends.slots import resource_limits
    from arena.engine.sandbox import resolve
    from arena.plan.config import Limits

    limits = Limits(
        memory_mb=memory_mb or None,
        cpu_seconds=cpu_seconds or None,
        file_size_mb=file_size_mb or None,
        processes=processes or None,
    )
    return resource_limits(limits), Sandbox(mode=resolve(sandbox))


def _protocol_settings(
    base: Any, handshake: float | None, newgame: float | None, max_line: int | None
) -> Any:
    """``base`` (a ``ProtocolSettings``) with the command line's values on top."""
    import msgspec

    given = {"handshake_timeout": handshake, "newgame_timeout": newgame, "max_line": max_line}
    return msgspec.structs.replace(base, **{k: v for k, v in given.items() if v is not None})


def _identity_name(spec: tuple[str, list[str], bool], game: str, variant: str) -> str:
    """A command bot's ``identity`` name, made a valid tournament name; a built-in
    (or a bot that does not answer ``hello``) keeps the name it has."""
    import re

    import trio

    from arena.engine.bot import Engine, EngineConfig, EngineError
    from arena.plan.config import NAME_RE

    name, command, builtin = spec
    if builtin:
        return name

    async def ask() -> str:
        async with Engine(EngineConfig(name=name, command=command)) as engine:
            try:
                return (await engine.start(game, variant, check_identity=False)).name
            except EngineError:
                return name

    wanted = re.sub(r"[^A-Za-z0-9_.+\-]", "-", trio.run(ask))[:64].lstrip("-.+_")
    return wanted if NAME_RE.match(wanted) else name


def _shown_name(name: str) -> str:
    """A bot's self-chosen name as the terminal may show it: no control characters
    (a name could hold escape sequences), at most 64 characters."""
    shown = "".join(c if c.isprintable() else "?" for c in name[:64])
    return shown + ("..." if len(name) > 64 else "")


def _bot_command(spec: str, seed: int | None) -> tuple[str, list[str], bool]:
    """A built-in bot name (``random`` or ``builtin:random``) or a command line;
    the flag says whether the name is the built-in's (else it is a placeholder
    until the bot's ``identity`` names it)."""
    import shlex
    from pathlib import Path

    from bots import builtin_names, resolve_builtin

    name = spec.removeprefix("builtin:")
    if name in builtin_names():
        command = resolve_builtin(name)
        if seed is not None:
            command += ["--seed", str(seed)]
        return name, command, True
    try:
        command = shlex.split(spec)
    except ValueError as exc:
        raise UserError(f"bot command {spec!r}: {exc}") from None
    if not command:
        raise UserError("empty bot command")
    import shutil

    exe = command[0]
    found = Path(exe).is_file() if "/" in exe else shutil.which(exe) is not None
    if not found:
        raise UserError(f"bot {spec!r}: executable {exe!r} not found")
    return Path(exe).stem, command, False


@main.command()
@click.argument("first")
@click.argument("second")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--variant", default=None, help="Variant (Kamisado: single|standard|long|marathon).")
@click.option("--tc", default="10+0.1", show_default=True, help="Time control, e.g. 10+0.1.")
@click.option("--seed", type=SEED, default=None, help="Seed for built-in bots and the opening.")
@click.option(
    "--opening-plies", type=OPENING_PLIES, default=0, help="Random plies before the game."
)
@click.option("--max-plies", type=PLIES, default=1000, show_default=True)
@_protocol_options
@click.option("--quiet", "-q", is_flag=True, help="Print only the result.")
@_confinement_options
@_friendly_errors
def play(
    first: str,
    second: str,
    game_name: str,
    variant: str | None,
    tc: str,
    seed: int | None,
    opening_plies: int,
    max_plies: int,
    handshake_timeout: float | None,
    newgame_timeout: float | None,
    max_line: int | None,
    quiet: bool,
    sandbox: str,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
) -> None:
    """Play one game: FIRST (player 0) against SECOND; each a built-in bot name or a command.

    A command bot is named by the name in its ``identity``. The bots get the
    opening's position, not the random plies that led to it, exactly as in
    ``arena run``.
    """
    import random

    import msgspec
    import trio

    from arena.engine.bot import Engine, EngineConfig, EngineError
    from arena.match.clock import TimeControl
    from arena.match.referee import MoveEvent, RefereeSettings, play_game
    from arena.plan.config import ProtocolSettings

    game = get_game(game_name)
    variant = variant or game.default_variant
    control = TimeControl.parse(tc)
    settings = _protocol_settings(ProtocolSettings(), handshake_timeout, newgame_timeout, max_line)
    opening = (
        game.random_opening(variant, opening_plies, random.Random(seed))
        if opening_plies or game.deals_openings
        else game.new_state(variant)
    )
    # Through the text, as a tournament stores and reads it (so `history` agrees).
    opening = game.state_from_text(opening.to_text())
    specs = [
        _bot_command(spec, None if seed is None else seed + i)
        for i, spec in enumerate((first, second))
    ]
    roles = opening.player_names()
    limits, box = _confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes)

    def engine_config(name: str, command: list[str]) -> EngineConfig:
        from arena.plan.config import program_command

        command, cwd = program_command(command, Path.cwd())
        return EngineConfig(
            name=name,
            command=command,
            cwd=cwd,
            max_line=settings.max_line,
            handshake_timeout=settings.handshake_timeout,
            limits=limits,
            sandbox=box,
        )

    async def start_and_name(engines: list[Engine]) -> None:
        """Start command bots first, to name them after their ``identity``."""
        for engine, spec in zip(engines, specs, strict=True):
            if spec[2]:
                continue
            try:
                ident = await engine.start(game.name, variant)
            except EngineError:
                continue  # the referee restarts it and records the fault
            engine.config = msgspec.structs.replace(engine.config, name=_shown_name(ident.name))
        if engines[0].name == engines[1].name:
            for i, engine in enumerate(engines):
                engine.config = msgspec.structs.replace(
                    engine.config, name=f"{engine.name}-{i + 1}"
                )

    def show_action(event: MoveEvent) -> None:
        if quiet:
            return
        forced = " (forced)" if event.forced else f" ({event.ms} ms)"
        click.echo(f"{event.ply:4d}. {roles[event.player]:>8} {event.action}{forced}")

    async def run() -> None:
        async with (
            Engine(engine_config(specs[0][0], specs[0][1])) as a,
            Engine(engine_config(specs[1][0], specs[1][1])) as b,
        ):
            await start_and_name([a, b])
            if not quiet:
                click.echo(
                    f"{game.name} {variant}, {control}: {a.name} ({roles[0]}) "
                    f"vs {b.name} ({roles[1]})"
                )
                click.echo(f"opening: {opening.to_text()}")
            record = await play_game(
                game,
                opening,
                [a, b],
                [control, control],
                variant=variant,
                settings=RefereeSettings(
                    max_plies=max_plies, newgame_timeout=settings.newgame_timeout
                ),
                on_action=show_action,
            )
        if not quiet:
            click.echo(f"final: {record.final_position}")
            for name, box in zip(record.players, record.sandbox, strict=False):
                click.echo(f"sandbox of {visible(name)}: {_confinement_text(box)}")
        detail = f" ({visible(record.detail)})" if record.detail else ""
        click.echo(f"result {record.result} {record.reason}{detail}")
        for name, tail in zip(record.players, record.stderr_tails, strict=True):
            if tail and record.faulty is not None:
                click.echo(f"stderr of {visible(name)}:\n{visible(tail, multiline=True)}", err=True)

    trio.run(run)


def _confinement_text(box: SandboxRecord) -> str:
    """``bwrap, user nobody, bounded by cgroup``: what held the bot, in one line."""
    if box.mode != "bwrap":
        return f"{box.mode} (unconfined)"
    user = f"user {box.user}" if box.user else "the arena's user"
    bound = {
        "cgroup": "a cgroup (memory and processes of the whole bot)",
        "rlimit": "rlimits (memory per process, processes per user)",
    }.get(box.bound, "-")
    return f"bwrap, {user}, bounded by {bound}"


@main.command("run")
@click.argument("tournament_file", type=click.Path(dir_okay=False))
@click.option(
    "--results",
    "results_root",
    default="results",
    show_default=True,
    help="Folder holding one sub-folder per tournament.",
)
@click.option(
    "--concurrency",
    "-j",
    type=CONCURRENCY,
    default=None,
    help="Games at once (default: the file's, else the number of cores).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Resume even though the file's schedule changed (replaces the stored config).",
)
@click.option(
    "--workers",
    type=CONCURRENCY,
    default=None,
    help="Worker processes (default: one per core, up to the concurrency; 1: in this process).",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Where games run: this machine, or a Ray cluster (default: the file's, else local).",
)
@click.option(
    "--address",
    default=None,
    metavar="HOST:PORT",
    help="Ray cluster to join with --backend ray (default: the file's ray_address, "
    "else RAY_ADDRESS, else a local Ray instance).",
)
@_protocol_options
@click.option("--quiet", "-q", is_flag=True, help="One log line per game instead of a live view.")
@click.option("--no-report", is_flag=True, help="Do not write report.md/report.html at the end.")
@click.option(
    "--web",
    "web",
    default=None,
    metavar="[HOST:]PORT",
    help="Also serve a live web view (on 127.0.0.1 unless HOST is given).",
)
@click.option(
    "--token",
    default=None,
    help="Token the web view asks for (made up if HOST is "
    "not a loopback address and none is given).",
)
@click.option(
    "--sandbox",
    type=click.Choice(MODES),
    default=None,
    help=_SANDBOX_HELP + " Default: the file's [sandbox] mode, else auto.",
)
@_friendly_errors
def run_command(
    tournament_file: str,
    results_root: str,
    concurrency: int | None,
    workers: int | None,
    backend: str | None,
    address: str | None,
    force: bool,
    handshake_timeout: float | None,
    newgame_timeout: float | None,
    max_line: int | None,
    quiet: bool,
    no_report: bool,
    web: str | None,
    token: str | None,
    sandbox: str | None,
) -> None:
    """Run (or resume) the tournament described by TOURNAMENT_FILE."""
    from pathlib import Path

    import msgspec
    import trio

    from arena.plan.config import load_config
    from arena.tournament import Observer, Observers, Tournament

    config = load_config(tournament_file)
    protocol = _protocol_settings(config.protocol, handshake_timeout, newgame_timeout, max_line)
    config = msgspec.structs.replace(config, protocol=protocol)
    text = Path(tournament_file).read_text(encoding="utf-8")
    observer: Observer = _observer(quiet)
    listen = hub = None
    if web is not None:
        from arena.web.hub import LiveHub
        from arena.web.server import parse_listen

        listen = parse_listen(web, token)
        hub = LiveHub()
        observer = Observers(observer, hub)
    elif token is not None:
        raise UserError("--token is for --web")
    if address is not None and (backend or config.backend) != "ray":
        raise UserError("--address is for --backend ray")
    tournament = Tournament(
        config,
        text,
        results_root=results_root,
        force=force,
        observer=observer,
        config_path=tournament_file,
        workers=workers,
        backend=backend,
        address=address,
        concurrency=concurrency,
        sandbox=sandbox,
    )
    try:
        if listen is None:
            interrupted = trio.run(tournament.run_until_interrupted)
        else:
            from arena.web.app import Site
            from arena.web.server import run_with_web

            name = tournament.directory.name
            site = Site({name: tournament.directory.resolve()}, hub=hub, live_name=name)
            interrupted = trio.run(run_with_web, tournament, site, listen, _announce)
    finally:
        observer.close()
        tournament.close()
    progress = tournament.progress
    if interrupted:
        click.echo(
            f"interrupted: {progress.done} of {progress.total} games stored in "
            f"{tournament.directory}; run the same command again to resume",
            err=True,
        )
        sys.exit(130)
    skipped = f" ({progress.skipped} skipped: disqualified bots)" if progress.skipped else ""
    click.echo(
        f"{progress.done} of {progress.total} games stored in {tournament.directory}{skipped}"
    )
    summary = getattr(tournament.pool, "summary", None)
    if summary is not None:  # the Ray backend: nodes used, nodes and actors lost
        click.echo(summary())
    _report(tournament.directory, write=not no_report)


def _observer(quiet: bool):  # noqa: ANN202
    """The live view on a terminal; plain, ended lines with ``--quiet`` or through a pipe."""
    from arena.cli.live import LiveObserver, LogObserver

    return LogObserver() if quiet or not sys.stdout.isatty() else LiveObserver()


def _announce(url: str) -> None:
    click.echo(f"web view: {url}", err=True)


@main.command()
@click.argument("results_dirs", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--listen",
    "-l",
    default="127.0.0.1:8080",
    show_default=True,
    metavar="[HOST:]PORT",
    help="Where to serve (port 0: any free port).",
)
@click.option(
    "--token",
    default=None,
    help="Token every request must carry (made up if HOST "
    "is not a loopback address and none is given).",
)
@_friendly_errors
def serve(results_dirs: tuple[str, ...], listen: str, token: str | None) -> None:
    """Serve a web view of stored tournaments (RESULTS_DIRS, default: results/).

    Each folder is a tournament's (it holds games.sqlite) or holds such folders.
    The databases are only read, so this may run while a tournament writes.
    """
    from pathlib import Path

    import trio

    from arena.web.app import Site, find_tournaments
    from arena.web.server import parse_listen, serve_forever

    where = parse_listen(listen, token)
    paths = [Path(p) for p in results_dirs] or [Path("results")]
    tournaments = find_tournaments([p for p in paths if p.is_dir()])
    if not tournaments:
        raise UserError(f"no tournament results in {', '.join(map(str, paths))}")
    with suppress(KeyboardInterrupt):
        trio.run(serve_forever, Site(tournaments), where, _announce)


def _report(
    directory: object,
    anchor: tuple[str, float] | None = None,
    *,
    write: bool = True,
    latest: int | None = None,
    faulted: int | None = None,
) -> None:
    """Write report.md and report.html into ``directory`` (unless ``write`` is off)
    and print the standings, the one table of a run's end."""
    from pathlib import Path

    from arena.report import print_standings, write_reports
    from arena.report.summary import build_report
    from arena.report.terminal import text_console
    from arena.storage.store import Store

    if write:
        data = write_reports(  # type: ignore[arg-type]
            directory, anchor=anchor, list_latest=latest, list_faulted=faulted
        )
    else:
        with Store.open_existing(directory) as store:  # type: ignore[arg-type]
            data = build_report(store, anchor=anchor, directory=Path(str(directory)))
    console = text_console()
    print_standings(data, console)
    if write:
        console.print(
            f"reports: {data.directory}/report.md, {data.directory}/report.html", soft_wrap=True
        )


def _parse_anchor(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    name, sep, value = text.rpartition("=")
    try:
        return name, float(value)
    except ValueError:
        raise UserError(f"--anchor must be NAME=RATING, got {text!r}") from None


@main.command()
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--anchor", default=None, help="Fix one bot's rating, e.g. random=0 (default: pool mean 0)."
)
@click.option(
    "--latest",
    type=click.IntRange(0),
    default=None,
    help="Games listed and replayed, newest first (default 200).",
)
@click.option(
    "--faulted",
    type=click.IntRange(0),
    default=None,
    help="Faulted games listed before those (default 200).",
)
@_friendly_errors
def report(results_dir: str, anchor: str | None, latest: int | None, faulted: int | None) -> None:
    """Write report.md and report.html for RESULTS_DIR and print the standings.

    Every game counts in the tables; the latest games and the faulted ones are
    listed with replays, so the reports stay small (arena serve shows them all).
    """
    _report(results_dir, _parse_anchor(anchor), latest=latest, faulted=faulted)


@main.command()
@click.argument("results_dirs", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="What to print (ratings.md/.html are written too).",
)
@click.option("--anchor", default=None, help="Fix one player's rating, e.g. 'random 1=0'.")
@click.option(
    "--min-games", type=click.IntRange(0), default=0, help="Leave out players with fewer games."
)
@click.option(
    "--since", default=None, metavar="DATE", help="Only games from this day on (2026-01-31)."
)
@click.option(
    "--tc",
    default=None,
    type=click.Choice(["bullet", "blitz", "rapid", "classical"]),
    help="Only games of this time-control class (base + 40 x increment).",
)
@click.option(
    "--aliases",
    type=click.Path(dir_okay=False),
    default=None,
    help="TOML file merging or splitting players.",
)
@click.option(
    "--skip-bad", is_flag=True, help="Say which folders cannot be read and rate the rest."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to write ratings.md/.html (default: the results folder).",
)
@_friendly_errors
def ratings(
    results_dirs: tuple[str, ...],
    fmt: str,
    anchor: str | None,
    min_games: int,
    since: str | None,
    tc: str | None,
    aliases: str | None,
    skip_bad: bool,
    out: str | None,
) -> None:
    """One rating list over every stored tournament (RESULTS_DIRS, default: results/).

    A joint fit per game and match kind; players are the bots' own names and
    versions (with their options), not entry names. See README "Rating list".
    """
    from arena.ratinglist.command import run_ratings

    run_ratings(
        results_dirs,
        fmt=fmt,
        anchor=_parse_anchor(anchor),
        min_games=min_games,
        since=since,
        tc=tc,
        aliases=aliases,
        skip_bad=skip_bad,
        out=out,
        echo=click.echo,
    )


@main.command("check-bot", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option(
    "--timeout",
    type=FiniteFloat(0, 3600, min_open=True),
    default=5.0,
    show_default=True,
    help="Seconds per check.",
)
@click.option(
    "--games",
    type=click.IntRange(0, 100),
    default=2,
    show_default=True,
    help="Games per declared variant and opponent (seats alternate); 0: none.",
)
@click.option("--tc", default="2+0.05", show_default=True, help="Time control of those games.")
@_confinement_options
@_friendly_errors
def check_bot(
    command: tuple[str, ...],
    game_name: str,
    timeout: float,
    games: int,
    tc: str,
    sandbox: str,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
) -> None:
    """Check that a bot speaks the protocol and plays whole games: arena check-bot -- COMMAND...

    The games are played in every variant the bot declares, against the built-in
    random bot and the strongest built-in bot for the game; the first fault is
    shown with the game, the ply and the position the bot faced.
    """
    from arena.match.clock import TimeControl
    from arena.tools.compliance import run_checks

    get_game(game_name)
    TimeControl.parse(tc)
    limits, box = _confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes)
    sys.exit(
        run_checks(
            list(command),
            game=game_name,
            timeout=timeout,
            games=games,
            tc=tc,
            echo=click.echo,
            limits=limits,
            sandbox=box,
        )
    )


@main.command()
def bots() -> None:
    """List the built-in bots (use them as NAME or builtin:NAME)."""
    from bots import BUILTIN, builtin_names

    width = max(map(len, builtin_names()), default=0)
    for name in builtin_names():
        click.echo(f"{name:<{width}}  {BUILTIN[name][1]}")


@main.command()
@click.argument("first")
@click.argument("second")
@click.option(
    "--elo0", type=ELO, default=0.0, show_default=True, help="H0: FIRST is elo0 stronger."
)
@click.option(
    "--elo1", type=ELO, default=5.0, show_default=True, help="H1: FIRST is elo1 stronger."
)
@click.option("--alpha", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.05)
@click.option("--beta", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.05)
@click.option("--model", type=click.Choice(["normalized", "logistic"]), default="normalized")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--variant", default=None)
@click.option("--tc", default="10+0.1", show_default=True)
@click.option(
    "--max-games", type=click.IntRange(2, MAX_GAMES_PER_PAIRING), default=20000, show_default=True
)
@click.option("--opening-plies", type=OPENING_PLIES, default=2, show_default=True)
@click.option(
    "--openings",
    "openings_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="An openings file (one position text per line) "
    "instead of random walks: e.g. examples/openings/kamisado-standard.txt.",
)
@click.option(
    "--seed", type=click.IntRange(SEED_RANGE[0], SEED_RANGE[1] - 1), default=1, show_default=True
)
@click.option("--concurrency", "-j", type=CONCURRENCY, default=None)
@click.option(
    "--sandbox", type=click.Choice(MODES), default="auto", show_default=True, help=_SANDBOX_HELP
)
@click.option("--name", default=None, help="Results folder name (default: sprt-FIRST-SECOND).")
@click.option("--results", "results_root", default="results", show_default=True)
@click.option("--quiet", "-q", is_flag=True)
@_friendly_errors
def sprt(
    first: str,
    second: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    model: str,
    game_name: str,
    variant: str | None,
    tc: str,
    max_games: int,
    opening_plies: int,
    openings_file: str | None,
    seed: int,
    concurrency: int | None,
    sandbox: str,
    name: str | None,
    results_root: str,
    quiet: bool,
) -> None:
    """Play pairs of FIRST against SECOND until an SPRT decides (stored, resumable)."""
    import os
    from pathlib import Path

    import trio

    from arena.plan.config import parse_config
    from arena.tools.sprt import SprtState, tournament_text
    from arena.tournament import Tournament

    specs = [_bot_command(first, seed), _bot_command(second, seed + 1)]
    variant_name = variant or get_game(game_name).default_variant
    (a, a_cmd), (b, b_cmd) = [
        (_identity_name(spec, game_name, variant_name), spec[1]) for spec in specs
    ]
    if a == b:
        a, b = f"{a}-1", f"{b}-2"
    state = SprtState(a, elo0, elo1, alpha, beta, model)
    try:
        state.check()
    except ValueError as exc:
        hint = "; try smaller Elo bounds or --model logistic" if "bracket" in str(exc) else ""
        raise UserError(f"--elo0 {elo0:g} --elo1 {elo1:g} ({model} model): {exc}{hint}") from None
    name = name or f"sprt-{a}-{b}"
    text = tournament_text(
        name=name,
        game=game_name,
        variant=variant,
        tc=tc,
        max_games=max_games,
        seed=seed,
        concurrency=concurrency or os.cpu_count() or 1,
        opening_plies=opening_plies,
        openings_file=str(Path(openings_file).resolve()) if openings_file else None,
        bots=[(a, a_cmd), (b, b_cmd)],
        comment=f"arena sprt {first} {second} --elo0 {elo0:g} --elo1 {elo1:g} "
        f"--alpha {alpha:g} --beta {beta:g} --model {model}",
    )
    directory = Path(results_root) / name
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sprt.toml"
    path.write_text(text, encoding="utf-8")
    config = parse_config(text, path)
    state.resume(directory)

    def decided(key: str, pair_key: str, record: GameRecord) -> bool:
        return state.add_game(pair_key, record) and state.decision() != "continue"

    observer = _observer(quiet)
    tournament = Tournament(
        config,
        text,
        directory=directory,
        observer=observer,
        config_path=path,
        stop_when=decided,
        sandbox=sandbox,
    )
    interrupted = False
    try:
        if state.decision() == "continue":
            interrupted = trio.run(tournament.run_until_interrupted)
    finally:
        observer.close()
        tournament.close()
    click.echo(state.summary())
    if interrupted:
        click.echo("interrupted: run the same command again to resume", err=True)
        sys.exit(130)


@main.command()
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--output",
    "-o",
    default=None,
    help="Output file, or - for standard output (default: RESULTS_DIR/games.jsonl).",
)
@_friendly_errors
def export(results_dir: str, output: str | None) -> None:
    """Write every stored game of RESULTS_DIR as one JSON line."""
    from pathlib import Path

    from arena.storage.export import export_jsonl, write_jsonl
    from arena.storage.store import Store

    with Store.open_existing(results_dir) as store:
        if output == "-":
            count = write_jsonl(store, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            click.echo(f"{count} games written to standard output", err=True)
            return
        out = Path(output) if output else Path(results_dir) / "games.jsonl"
        count = export_jsonl(store, out)
    click.echo(f"{count} games written to {out}")


@main.group()
def openings() -> None:
    """Openings books (position files for [openings] file = ...)."""


@openings.command("generate")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--variant", default=None, help="The book's variant (Kamisado: single|standard|...).")
@click.option(
    "--plies", type=OPENING_PLIES, default=2, show_default=True, help="Random plies from the start."
)
@click.option("--count", type=click.IntRange(1, 100_000), default=50, show_default=True)
@click.option(
    "--bot",
    default="alphabeta",
    show_default=True,
    help="Scoring bot: a built-in name or a command.",
)
@click.option(
    "--depth",
    type=click.IntRange(0, 12),
    default=4,
    show_default=True,
    help="No side may win by force within this many plies.",
)
@click.option(
    "--check-variant",
    default=None,
    help="Variant for the forced-win check (default: the game's first, "
    "for Kamisado the single round).",
)
@click.option(
    "--movetime",
    type=click.FloatRange(0.01, 60),
    default=0.2,
    show_default=True,
    help="Seconds the scoring bot thinks per position.",
)
@click.option(
    "--max-score",
    type=click.FloatRange(0),
    default=60,
    show_default=True,
    help="Keep positions the bot scores within +-this (its own units).",
)
@click.option(
    "--probe-pairs",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    help="Also play this many pairs of games (colours swapped, in --probe-variant) "
    "from each position between two near-equal players, and keep it only if "
    "no pair splits 1-1 (the side won both); 0: no probe.",
)
@click.option("--probe-bot", default=None, help="The probe's first player (default: --bot).")
@click.option(
    "--probe-weak", default=None, help="The probe's second player (default: --probe-bot)."
)
@click.option(
    "--probe-movetime",
    type=(click.FloatRange(0.005, 10), click.FloatRange(0.005, 10)),
    default=(0.1, 0.06),
    show_default=True,
    help="Seconds per decision of the first and the second probe player "
    "(a little apart: alphabeta is deterministic but for timing).",
)
@click.option(
    "--probe-variant",
    default=None,
    help="Variant the probe games are played in (default: --check-variant).",
)
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--output", "-o", required=True, help="Openings file to write, or - for stdout.")
@_friendly_errors
def openings_generate(
    game_name: str,
    variant: str | None,
    plies: int,
    count: int,
    bot: str,
    depth: int,
    check_variant: str | None,
    movetime: float,
    max_score: float,
    probe_pairs: int,
    probe_bot: str | None,
    probe_weak: str | None,
    probe_movetime: tuple[float, float],
    probe_variant: str | None,
    seed: int,
    output: str,
) -> None:
    """Write an openings file of positions no side wins by force and the bot scores even
    (and, with --probe-pairs, that the side does not decide in play)."""
    from collections import Counter
    from pathlib import Path

    import trio

    from arena.engine.bot import EngineError
    from arena.tools.openings import Probe, generate

    game = get_game(game_name)
    variant = variant or game.default_variant
    check_variant = check_variant or game.variants[0]
    _, command, _ = _bot_command(bot, None)
    probe = None
    probe_text = ""
    if probe_pairs:
        probe_bot = probe_bot or bot
        probe_weak = probe_weak or probe_bot
        probe = Probe(
            strong=_bot_command(probe_bot, None)[1],
            weak=_bot_command(probe_weak, None)[1],
            variant=probe_variant or check_variant,
            pairs=probe_pairs,
            strong_movetime=probe_movetime[0],
            weak_movetime=probe_movetime[1],
        )
        probe_text = (
            f" --probe-pairs {probe_pairs} --probe-bot {probe_bot} --probe-weak {probe_weak} "
            f"--probe-movetime {probe_movetime[0]:g} {probe_movetime[1]:g} "
            f"--probe-variant {probe.variant}"
        )
    stats: Counter[str] = Counter()
    started = time.monotonic()
    walked = [0]

    def progress(kept: int, tries: int) -> None:
        walked[0] = tries
        if sys.stderr.isatty():
            click.echo(f"\r{kept}/{count} kept, {tries} walks tried", err=True, nl=False)

    try:
        texts = trio.run(
            lambda: generate(
                game,
                variant,
                plies=plies,
                count=count,
                depth=depth,
                bot=command,
                check_variant=check_variant,
                movetime=movetime,
                max_score=max_score,
                seed=seed,
                probe=probe,
                stats=stats,
                progress=progress,
            )
        )
    except EngineError as exc:
        raise UserError(f"scoring bot {bot!r}: {exc.reason}: {exc.detail}") from None
    if sys.stderr.isatty():
        click.echo("", err=True)
    header = (
        f"# arena openings generate --game {game_name} --variant {variant} --plies {plies} "
        f"--count {count} --bot {bot} --depth {depth} --check-variant {check_variant} "
        f"--movetime {movetime:g} --max-score {max_score:g}{probe_text} --seed {seed}\n"
        f"# {len(texts)} positions: no side wins by force within {depth} plies "
        f"({check_variant}), |score| <= {max_score:g}"
        + (f", no probe pair split ({probe_pairs} in {probe.variant})" if probe else "")
        + "\n# walks: "
        + ", ".join(f"{stats[k]} {k}" for k in ("kept", "forced", "duplicate", "score", "split"))
        + "\n"
    )
    body = header + "".join(t + "\n" for t in texts)
    if output == "-":
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        Path(output).write_text(body, encoding="utf-8")
    where = "standard output" if output == "-" else output
    click.echo(
        f"{len(texts)} openings written to {where} in {time.monotonic() - started:.0f} s "
        f"({walked[0]} walks tried)",
        err=output == "-",
    )
    if len(texts) < count:
        raise UserError(
            f"only {len(texts)} of {count} positions found; try more --plies, "
            f"a smaller --depth or a larger --max-score"
        )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
