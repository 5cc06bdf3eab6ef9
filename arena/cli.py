"""The ``arena`` command: parses arguments and delegates; no logic of its own.

Every expected failure (a bad position, tournament file, bot command...) is
reported as one readable line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from arena import __version__
from arena.games import GameError, get_game


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
        except (GameError, ValueError, OSError) as exc:
            raise UserError(str(exc)) from None

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
        for action in state.legal_actions():
            child = state.clone()
            child.apply_action(action)
            count = game.perft(child, depth - 1)
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
    from rich.console import Console

    from arena.report.boards import render_terminal

    game, state = _state(game_name, position, variant)
    console = Console()
    console.print(render_terminal(game.name, state.observation(max(state.current_player(), 0))))
    console.print(f"position: {state.to_text()}", highlight=False, soft_wrap=True)
    actions = state.legal_actions()
    console.print(f"legal actions ({len(actions)}): {' '.join(actions)}", highlight=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
