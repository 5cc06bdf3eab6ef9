"""Engine options: what a bot declares in ``identity`` against what an operator sets.

Like UCI's ``option``/``setoption`` and cutechess's ``option.Hash=64``: a bot lists
its options (name, type, default, range) in ``identity``; a tournament entry
sets some of them (``options = { Hash = 64 }``); the arena checks every value
against the declaration before the first game, so a typo in a tournament file is
one line at start-up rather than a surprise in game 300, and sends the values as
``setoption`` notifications before each ``newgame``.

Pure functions on protocol types; no processes here.
"""

from __future__ import annotations

from collections.abc import Mapping

from arena.protocol.messages import OptionSpec, OptionValue, SetOption

__all__ = ["OptionError", "check_declaration", "check_options", "describe", "sample_values"]


class OptionError(ValueError):
    """A value that does not fit the bot's declared options; the message is one line."""


def describe(spec: OptionSpec) -> str:
    """``int 1..1024, default 64`` — the declaration as an error message shows it."""
    text: str = spec.type
    if spec.type in ("int", "float") and (spec.min is not None or spec.max is not None):
        text += f" {_range(spec)}"
    if spec.type == "choice":
        text += " of " + "|".join(spec.choices or [])
    if spec.default is not None:
        text += f", default {spec.default!r}"
    return text


def _range(spec: OptionSpec) -> str:
    low = "" if spec.min is None else f"{spec.min:g}"
    high = "" if spec.max is None else f"{spec.max:g}"
    return f"{low}..{high}"


def _fits(spec: OptionSpec, value: OptionValue) -> str | None:
    """``None`` if ``value`` is a valid setting of ``spec``, else what was expected."""
    kind = spec.type
    if kind == "bool":
        return None if isinstance(value, bool) else "expected true or false"
    if kind == "string":
        return None if isinstance(value, str) else "expected a string"
    if kind == "choice":
        choices = spec.choices or []
        if isinstance(value, str) and value in choices:
            return None
        return f"expected one of {', '.join(map(repr, choices))}"
    # int and float
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected {'an integer' if kind == 'int' else 'a number'}"
    if kind == "int" and not isinstance(value, int):
        return "expected an integer"
    if (spec.min is not None and value < spec.min) or (spec.max is not None and value > spec.max):
        return f"expected a value in {_range(spec)}"
    return None


def check_declaration(spec: OptionSpec) -> str | None:
    """``None`` if a bot's own declaration is coherent, else what is wrong with it."""
    if spec.type == "choice" and not spec.choices:
        return f"option {spec.name!r}: a choice needs a non-empty 'choices' list"
    if spec.min is not None and spec.max is not None and spec.min > spec.max:
        return f"option {spec.name!r}: min {spec.min:g} is above max {spec.max:g}"
    if spec.default is not None and (why := _fits(spec, spec.default)) is not None:
        return f"option {spec.name!r}: default {spec.default!r} does not fit ({why})"
    return None


def check_options(
    declared: Mapping[str, OptionSpec], given: Mapping[str, OptionValue], *, bot: str
) -> list[SetOption]:
    """The ``setoption`` messages for ``given``; :class:`OptionError` for the first
    value that names an undeclared option or does not fit its declaration."""
    out = []
    for name, value in given.items():
        spec = declared.get(name)
        if spec is None:
            known = ", ".join(declared) or "none"
            raise OptionError(f"option {name!r}: {bot} declares no such option (it has: {known})")
        why = _fits(spec, value)
        if why is not None:
            raise OptionError(
                f"option {name}: {why} ({bot} declares {describe(spec)}), got {value!r}"
            )
        out.append(SetOption(name=name, value=value))
    return out


def sample_values(spec: OptionSpec) -> list[OptionValue]:
    """Values check-bot sets to prove the bot accepts its own declaration: the
    default and, for a bounded number, both bounds; for a choice, every choice."""
    values: list[OptionValue] = []
    if spec.default is not None:
        values.append(spec.default)
    if spec.type == "int":
        values += [int(v) for v in (spec.min, spec.max) if v is not None]
    elif spec.type == "float":
        values += [float(v) for v in (spec.min, spec.max) if v is not None]
    elif spec.type == "choice":
        values += list(spec.choices or [])
    elif spec.type == "bool":
        values += [True, False]
    elif not values:  # a string option without a default
        values.append("")
    unique: list[OptionValue] = []
    for value in values:  # not dict.fromkeys: True == 1 would merge a bool with an int
        if not any(type(v) is type(value) and v == value for v in unique):
            unique.append(value)
    return unique
