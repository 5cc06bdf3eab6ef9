"""Every example tournament file stays valid as the code changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.plan.config import load_config
from arena.plan.rounds import Rounds
from arena.plan.schedule import build_schedule

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.toml"))


def test_there_are_examples() -> None:
    assert {p.stem for p in EXAMPLES} >= {
        "quick",
        "ladder",
        "gauntlet",
        "battle",
        "swiss",
        "knockout",
    }


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_loads_and_schedules(path: Path) -> None:
    config = load_config(path)
    if config.format in ("swiss", "knockout"):  # round 1, drawn with no results yet
        tasks = Rounds(config).draw([]).tasks
    else:
        tasks = build_schedule(config)
    assert tasks
    assert len({t.key for t in tasks}) == len(tasks)
