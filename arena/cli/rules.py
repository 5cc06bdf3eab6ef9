"""``arena perft`` and ``arena show``: the rules core from the command line."""

from __future__ import annotations

import time

import click

from arena.cli.app import friendly_errors, main
from arena.games import Game, State, get_game


def _state(game_name: str, position: str | None, variant: str | None) -> tuple[Game, State]:
    game = get_game(game_name)
    return game, (game.state_from_text(position) if position else game.new_state(variant))


@main.command()
@click.argument("depth", type=click.IntRange(0, 12))
@click.option("--position", "-p", help="Position text (default: the start position).")
@click.option("--variant", default=None, help="Match kind for the start position.")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--divide", is_flag=True, help="One line 'ACTION COUNT' per legal action.")
@friendly_errors
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
@friendly_errors
def show(position: str | None, variant: str | None, game_name: str) -> None:
    """Draw a position in the terminal, in colour and with colour initials."""
    from arena.report.terminal import text_console

    game, state = _state(game_name, position, variant)
    console = text_console()
    console.print(
        game.show().terminal(state.observation(max(state.current_player(), 0))),
        soft_wrap=True,
    )  # through a pipe, lines stay whole
    console.print(f"position: {state.to_text()}", soft_wrap=True)
    actions = state.legal_actions()
    console.print(f"legal actions ({len(actions)}): {' '.join(actions)}", soft_wrap=True)
