"""The ``arena`` group and its error handling: every expected failure (a bad
position, tournament file, bot command...) is one readable line and a non-zero
exit, never a traceback. The verbs live one per module beside this one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from arena import __version__
from arena.games import GameError
from arena.plan.config import (
    MAX_CONCURRENCY,
    MAX_OPENING_PLIES,
    MAX_PLIES,
    SEED_RANGE,
)
from arena.protocol.text import visible
from arena.storage.store import StoreError


class UserError(click.ClickException):
    """A mistake in what the user asked for; printed as one line.

    The message may quote a bot's words (the options it declares, a fault's
    detail) or a file's bytes: control characters are shown as escapes, so the
    one line stays one line and sets no terminal state.
    """

    def show(self, file: Any = None) -> None:
        click.echo(f"arena: error: {visible(self.format_message())}", err=True)


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the arena's own error types into one-line ``UserError``s."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            # A reader gone (``arena export -o - | head -1``): click ends quietly,
            # with status 1, as a well-behaved filter does; no error line.
            raise
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
        click.echo(f"arena: error: {visible(self.format_message())}{hint}", err=True)


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())
"""Click 8.2+ raises it for a bare ``arena`` (8.1 prints the help itself)."""


def _one_line_usage(exc: click.UsageError) -> click.UsageError:
    if isinstance(exc, _OneLineUsageError):
        return exc
    # The exit code is click's class attribute, 2 for every usage error.
    return _OneLineUsageError(exc.format_message(), exc.ctx)


VERBS = {
    "analyze": "analyze",
    "bots": "check",
    "check-bot": "check",
    "connect": "connect",
    "export": "report",
    "openings": "openings",
    "perft": "rules",
    "play": "play",
    "ratings": "ratings",
    "report": "report",
    "run": "run",
    "serve": "serve",
    "show": "rules",
    "solve": "solve",
    "sprt": "sprt",
}
"""Each verb and the module of :mod:`arena.cli` that registers it."""


class _ArenaGroup(click.Group):
    """The ``arena`` group: a usage error (a number out of range, an unknown
    option of ``arena`` itself or of a subcommand) is one line, not click's
    usage block.

    A verb's module is imported when the verb is asked for (click's lazy group):
    ``arena run`` then loads what a tournament needs and not, say, the analysis's
    worker machinery or the web server, a fifth of a second of every start.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(VERBS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = VERBS.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            importlib.import_module(f"arena.cli.{module}")
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if isinstance(exc, _NO_ARGS_IS_HELP):  # bare ``arena``: the help is wanted
                raise
            raise _one_line_usage(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line_usage(exc) from None


@click.group(cls=_ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def main() -> None:
    """Kamisado Arena: run bots against each other and rank them."""
