"""``arena solve``: prove who wins a position (Kamisado: the round) with the game's
exact solver, and write the proof of the single round from the start as a book."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from arena.cli.app import FiniteFloat, UserError, friendly_errors, main
from arena.games import Game, State, get_game

TABLE_MB = click.IntRange(1, 1 << 16)


@main.command()
@click.option(
    "--position", "-p", help="Position text (default: the start of --variant's first round)."
)
@click.option("--variant", default="single", show_default=True, help="Match kind for the start.")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option(
    "--time",
    "seconds",
    type=FiniteFloat(0.001, 1e7),
    default=None,
    help="Give up after this many seconds (default: no limit).",
)
@click.option(
    "--hash-mb",
    type=TABLE_MB,
    default=256,
    show_default=True,
    help="Memory for the solver's table.",
)
@click.option(
    "--book",
    "book_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the proof as a book of Black moves to FILE (Kamisado, Black to move).",
)
@click.option(
    "--leaf-plies",
    type=click.IntRange(1, 15),
    default=5,
    show_default=True,
    help="The book leaves out positions Black wins within this many plies.",
)
@friendly_errors
def solve(
    position: str | None,
    variant: str,
    game_name: str,
    seconds: float | None,
    hash_mb: int,
    book_path: Path | None,
    leaf_plies: int,
) -> None:
    """Prove who wins (Kamisado: the round being played) and in how many plies.

    The solver deepens one ply at a time until one side wins whatever the other
    plays: the distance printed is the quickest win against the longest
    defence. On a terminal each depth is shown as it is refuted. Exit status 3:
    --time ran out before a verdict.
    """
    game = get_game(game_name)
    if game.solves is None:
        raise UserError(f"{game.name}: {game.no_solver}")
    state = game.state_from_text(position) if position else game.new_state(variant)
    click.echo(f"position: {state.to_text()}")
    game.solve(state, None, max_depth=1, table_mb=hash_mb)  # load the solver off the clock
    start = time.monotonic()
    deadline = None if seconds is None else start + seconds
    progress = sys.stderr.isatty()
    nodes = 0
    depth = 0
    while True:
        depth += 1
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0) * 1000
        solution = game.solve(state, left, max_depth=depth, table_mb=hash_mb)
        if solution is None or solution.move is None:
            raise UserError(f"nothing to solve: the {game.solves} of this position is over")
        nodes += solution.nodes
        elapsed = time.monotonic() - start
        if solution.winner is not None:
            break
        if solution.distance < depth:  # stopped by the clock
            click.echo(
                f"unknown: no {game.solves} win within {solution.distance} plies for either side"
                f" ({nodes:,} nodes in {elapsed:.1f} s; --time ran out)"
            )
            sys.exit(3)
        if progress:
            click.echo(
                f"  depth {depth}: no forced win yet ({nodes:,} nodes, {elapsed:.1f} s)",
                err=True,
            )
    names = state.player_names()
    mover = names[solution.player]
    click.echo(
        f"{names[solution.winner]} wins the {game.solves} within {solution.distance} plies"
        f" with best play ({mover} to move, best move {solution.move})"
    )
    rate = nodes / elapsed if elapsed > 0 else 0.0
    click.echo(f"nodes {nodes:,} in {elapsed:.1f} s ({rate:,.0f} nodes/s)")
    if book_path is not None:
        write_book(game, state, book_path, leaf_plies, hash_mb, progress)


def write_book(
    game: Game, state: State, path: Path, leaf_plies: int, hash_mb: int, progress: bool
) -> None:
    """Write the proof from ``state`` as a book (games that have one: Kamisado)."""
    make = getattr(game, "proof_book", None)
    if make is None:
        raise UserError(f"{game.name} writes no proof books")
    start = time.monotonic()

    def on_entry(count: int) -> None:
        if progress and count % 100 == 0:
            click.echo(f"  book: {count} positions ({time.monotonic() - start:.0f} s)", err=True)

    text = make(state, leaf_plies, table_mb=hash_mb, on_entry=on_entry)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    entries = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    click.echo(
        f"book: {entries:,} positions, {len(text.encode()):,} bytes, written to {path}"
        f" in {time.monotonic() - start:.1f} s"
    )
