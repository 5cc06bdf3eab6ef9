"""What several verbs parse alike: the protocol and confinement options, the
analysis budget, the observer of a run, the report printed at a run's end."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from arena.analysis import DEFAULT_BUDGET_MS, MAX_BUDGET_MS, MIN_BUDGET_MS
from arena.cli.app import FiniteFloat, UserError
from arena.engine.sandbox import MODES, SandboxSettings

if TYPE_CHECKING:
    from arena.cli.live import LiveObserver, LogObserver
    from arena.plan.config import Limits

BUDGET = click.option(
    "--budget-ms",
    type=FiniteFloat(MIN_BUDGET_MS, MAX_BUDGET_MS),
    default=DEFAULT_BUDGET_MS,
    show_default=True,
    help="Milliseconds the solver may spend on each position.",
)
"""The analysis budget (``arena analyze``, ``arena run --analyze``)."""


def protocol_options(func: Callable[..., Any]) -> Callable[..., Any]:
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


def tls_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--tls-cert`` and ``--tls-key``: the web server (``arena run --web``, ``arena
    serve``, ``arena check-bot --listen``) speaks HTTPS and WSS (checked by
    ``arena.web.server.parse_listen``)."""
    options = [
        click.option(
            "--tls-cert",
            "tls_cert",
            default=None,
            metavar="FILE",
            help="Serve HTTPS with this certificate (PEM, its chain after it); with --tls-key.",
        ),
        click.option(
            "--tls-key",
            "tls_key",
            default=None,
            metavar="FILE",
            help="The certificate's private key (PEM, not encrypted).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


SANDBOX_HELP = (
    "Confine each bot with bubblewrap: auto (when bwrap works here, else say so and run "
    "unconfined), bwrap (required) or none."
)


def confinement_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--sandbox`` and the resource limits, with the tournament file's defaults."""
    from arena.plan.config import Limits

    d = Limits()
    options = [
        click.option(
            "--sandbox",
            type=click.Choice(MODES),
            default="auto",
            show_default=True,
            help=SANDBOX_HELP,
        ),
        click.option(
            "--memory-mb",
            type=click.IntRange(0),
            default=d.memory_mb,
            show_default=True,
            help=(
                "Memory per bot: its processes together where a cgroup counts them, "
                "else address space per process (0: none)."
            ),
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
            help=(
                "Processes per bot where a cgroup counts them, "
                "else RLIMIT_NPROC counted per user (0: none)."
            ),
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def confinement(
    sandbox: str, memory_mb: int, cpu_seconds: int, file_size_mb: int, processes: int
) -> tuple[Limits, SandboxSettings]:
    """A tournament file's ``[limits]`` and ``[sandbox]`` from the options; the sandbox
    mode decided once, here."""
    from arena.engine.sandbox import resolve
    from arena.plan.config import Limits

    limits = Limits(
        memory_mb=memory_mb or None,
        cpu_seconds=cpu_seconds or None,
        file_size_mb=file_size_mb or None,
        processes=processes or None,
    )
    return limits, SandboxSettings(mode=resolve(sandbox))


def protocol_settings(
    base: Any, handshake: float | None, newgame: float | None, max_line: int | None
) -> Any:
    """``base`` (a ``ProtocolSettings``) with the command line's values on top."""
    import msgspec

    given = {"handshake_timeout": handshake, "newgame_timeout": newgame, "max_line": max_line}
    return msgspec.structs.replace(base, **{k: v for k, v in given.items() if v is not None})


def observer_for(quiet: bool) -> LogObserver | LiveObserver:
    """The live view on a terminal; plain, ended lines with ``--quiet`` or through a pipe."""
    from arena.cli.live import LiveObserver, LogObserver

    return LogObserver() if quiet or not sys.stdout.isatty() else LiveObserver()


def announce(url: str) -> None:
    click.echo(f"web view: {url}", err=True)


def report_and_standings(
    directory: str | os.PathLike[str],
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
        data = write_reports(directory, anchor=anchor, list_latest=latest, list_faulted=faulted)
    else:
        with Store.open_existing(directory) as store:
            data = build_report(store, anchor=anchor, directory=Path(directory))
    console = text_console()
    print_standings(data, console)
    if write:
        console.print(
            f"reports: {data.directory}/report.md, {data.directory}/report.html", soft_wrap=True
        )


def parse_anchor(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    name, sep, value = text.rpartition("=")
    try:
        return name, float(value)
    except ValueError:
        raise UserError(f"--anchor must be NAME=RATING, got {text!r}") from None
