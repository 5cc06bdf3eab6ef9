"""``arena run``: run or resume a tournament file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from arena.cli.app import CONCURRENCY, UserError, friendly_errors, main
from arena.cli.common import (
    BUDGET,
    SANDBOX_HELP,
    announce,
    observer_for,
    protocol_options,
    protocol_settings,
    report_and_standings,
    tls_options,
)
from arena.engine.sandbox import MODES

if TYPE_CHECKING:
    from arena.backends.preflight import BrokenEntrants


@main.command("run")
@click.argument("tournament_file", type=click.Path(dir_okay=False))
@click.option(
    "--results",
    "results_root",
    default="results",
    show_default=True,
    help="Folder holding one sub-folder per tournament (relative to the current folder).",
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
@protocol_options
@click.option("--quiet", "-q", is_flag=True, help="One log line per game instead of a live view.")
@click.option("--no-report", is_flag=True, help="Do not write report.md/report.html at the end.")
@click.option(
    "--analyze",
    is_flag=True,
    help="Once every game is played, solve every position (as arena analyze does; "
    "with --backend ray on the cluster).",
)
@BUDGET
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
    "not a loopback address, or behind a proxy, and none is given).",
)
@click.option(
    "--trust-proxy",
    "trust_proxy",
    multiple=True,
    metavar="ADDR",
    help="With --web: a reverse proxy in front (an address, or a network such as "
    "10.0.0.0/8; repeatable) whose X-Forwarded-For names each connection's client, so "
    "that the gateway's per-address limits apply per author, not to all at once. "
    "The header from any other peer is ignored.",
)
@click.option(
    "--public-url",
    default=None,
    metavar="URL",
    help="With --web: the address the arena is reached at through a reverse proxy "
    "(https://host/ or https://host/cup/, the proxy stripping /cup), printed for the web "
    "view and arena connect instead of the bound one; the pages link under its path.",
)
@tls_options
@click.option(
    "--skip-broken",
    is_flag=True,
    help="Entrants that cannot start before the first game sit out (their games are "
    "not played, not lost) instead of stopping the run.",
)
@click.option(
    "--sandbox",
    type=click.Choice(MODES),
    default=None,
    help=SANDBOX_HELP + " Default: the file's [sandbox] mode, else auto.",
)
@friendly_errors
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
    analyze: bool,
    budget_ms: float,
    web: str | None,
    token: str | None,
    trust_proxy: tuple[str, ...],
    public_url: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    sandbox: str | None,
    skip_broken: bool,
) -> None:
    """Run (or resume) the tournament described by TOURNAMENT_FILE."""
    from pathlib import Path

    import msgspec
    import trio

    from arena.plan.config import load_config
    from arena.tournament import Observer, Observers, Tournament

    config = load_config(tournament_file)
    protocol = protocol_settings(config.protocol, handshake_timeout, newgame_timeout, max_line)
    config = msgspec.structs.replace(config, protocol=protocol)
    text = Path(tournament_file).read_text(encoding="utf-8")
    from arena.plan.own_files import grant_lines

    for line in grant_lines(text):  # the operator's absolute grants, as they resolve now
        click.echo(line, err=True)
    observer: Observer = observer_for(quiet)
    listen = hub = None
    if web is not None:
        from arena.web.hub import LiveHub
        from arena.web.server import parse_listen

        listen = parse_listen(
            web, token, trust=trust_proxy, public=public_url, cert=tls_cert, key=tls_key
        )
        hub = LiveHub()
        observer = Observers(observer, hub)
    else:
        given = {
            "--token": token,
            "--trust-proxy": trust_proxy,
            "--public-url": public_url,
            "--tls-cert": tls_cert,
            "--tls-key": tls_key,
        }
        for option, value in given.items():
            if value not in (None, ()):
                raise UserError(f"{option} is for --web")
    remote = [bot.name for bot in config.bots if bot.remote]
    if remote and web is None:
        raise UserError(
            f"remote entrants ({', '.join(remote)}) connect through the web server: "
            "add --web HOST:PORT"
        )
    if remote and ((workers or 1) > 1 or (backend or config.backend) == "ray"):
        click.echo(
            "note: the remote entrants' games are played in this process, where the "
            "gateway is; the others as ever",
            err=True,
        )
    if address is not None and (backend or config.backend) != "ray":
        raise UserError("--address is for --backend ray")
    if analyze:
        from arena.games import get_game

        game = get_game(config.game)
        if game.solves is None:  # said before any game is played
            raise UserError(f"--analyze: {game.name} games cannot be analysed: {game.no_solver}")
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
        skip_broken=skip_broken,
        # The analysis runs on the cluster the games ran on: a local Ray instance
        # started for the games is kept for it (Ray's start costs seconds).
        keep_ray=analyze,
    )
    try:
        tournament.fork_workers()  # before trio runs: workers with the modules loaded
        if listen is None:
            interrupted = trio.run(tournament.run_until_interrupted)
        else:
            from arena.web.app import Site
            from arena.web.server import run_with_web

            name = tournament.directory.name
            site = Site({name: tournament.directory.resolve()}, hub=hub, live_name=name)
            interrupted = trio.run(run_with_web, tournament, site, listen, announce)
        if interrupted:
            tournament.release_ray()
    except BaseException as exc:  # no analysis follows
        tournament.release_ray()
        broken = _broken_entrants(exc)
        if broken is None:
            raise
        for line in broken.lines:  # one line per entrant that cannot start
            click.echo(f"arena: {line}", err=True)
        raise UserError(str(broken)) from None
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
    skipped = ""
    if progress.skipped:
        why = ", ".join(
            ([f"did not start: {', '.join(progress.broken)}"] if progress.broken else [])
            + (
                ["disqualified bots"]
                if any(t.disqualified and not t.broken for t in progress.standings.values())
                else []
            )
        )
        skipped = f" ({progress.skipped} not played: {why})"
    click.echo(
        f"{progress.done} of {progress.total} games stored in {tournament.directory}{skipped}"
    )
    summary = tournament.summary()
    if summary is not None:  # the Ray backend: nodes used, nodes and actors lost
        click.echo(summary)
    if analyze:
        from arena.analysis.run import default_workers
        from arena.cli.analyze import run_analysis

        if tournament.backend == "ray":  # on the cluster the games ran on
            try:
                run_analysis(
                    tournament.directory,
                    budget_ms,
                    workers,
                    backend="ray",
                    address=tournament.address,
                    connect_timeout=config.ray_connect_timeout,
                )
            finally:
                tournament.release_ray()
        else:  # one worker process per core, as the games ran
            count = workers or default_workers(concurrency or config.concurrency)
            run_analysis(tournament.directory, budget_ms, count)
    report_and_standings(tournament.directory, write=not no_report)


def _broken_entrants(exc: BaseException) -> BrokenEntrants | None:
    """The pre-flight's verdict inside ``exc`` (trio's nurseries wrap it in groups)."""
    from arena.backends.preflight import BrokenEntrants

    if isinstance(exc, BrokenEntrants):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = _broken_entrants(sub)
            if found is not None:
                return found
    return None
