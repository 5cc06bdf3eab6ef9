"""``arena serve``: the web view of stored tournaments."""

from __future__ import annotations

from contextlib import suppress

import click

from arena.cli.app import UserError, friendly_errors, main
from arena.cli.common import announce, tls_options


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
    "is not a loopback address, or behind a proxy, and none is given).",
)
@click.option(
    "--public-url",
    default=None,
    metavar="URL",
    help="The address the view is reached at through a reverse proxy (https://host/ or "
    "https://host/cup/, the proxy stripping /cup), printed instead of the bound one; "
    "the pages link under its path.",
)
@tls_options
@friendly_errors
def serve(
    results_dirs: tuple[str, ...],
    listen: str,
    token: str | None,
    public_url: str | None,
    tls_cert: str | None,
    tls_key: str | None,
) -> None:
    """Serve a web view of stored tournaments (RESULTS_DIRS, default: results/).

    Each folder is a tournament's (it holds games.sqlite) or holds such folders.
    The databases are only read, so this may run while a tournament writes.
    """
    from pathlib import Path

    import trio

    from arena.web.app import Site, find_tournaments
    from arena.web.server import parse_listen, serve_forever

    where = parse_listen(listen, token, public=public_url, cert=tls_cert, key=tls_key)
    paths = [Path(p) for p in results_dirs] or [Path("results")]
    tournaments = find_tournaments([p for p in paths if p.is_dir()])
    if not tournaments:
        raise UserError(f"no tournament results in {', '.join(map(str, paths))}")
    with suppress(KeyboardInterrupt):
        trio.run(serve_forever, Site(tournaments), where, announce)
