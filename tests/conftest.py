from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

# Let tests import their small helper modules (e.g. kamisado_helpers).
sys.path.insert(0, str(Path(__file__).parent))

import needs  # noqa: E402

# The shared headless-browser fixture (tests/browser.py).
pytest_plugins = ["browser"]

ROOT = Path(__file__).resolve().parent.parent


def pytest_report_header() -> str:
    if needs.required():
        return f"{needs.SWITCH}=1: every skip is an error"
    return f"missing tools skip their tests ({needs.SWITCH}=1 makes each skip an error)"


def _refuse_skip(report: Any) -> None:
    """Under ``ARENA_REQUIRE_ALL=1`` a skip or an expected failure becomes a
    failure, with its reason.

    ``needs.missing`` fails such a test itself; this catches every other skip
    (a plain ``pytest.skip``, a ``skipif`` marker, a module skipped at import),
    so a new test cannot slip past CI by forgetting the helper. An ``xfail``
    would hide a failure just as well (``xfail_strict`` only catches the pass):
    in CI a known failure is fixed, not marked.
    """
    if not (needs.required() and report.skipped):
        return
    if hasattr(report, "wasxfail"):
        what = f"an expected failure ({report.wasxfail or 'xfail'})"
    else:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        what = "skipped: " + reason.removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = f"{what}, but {needs.SWITCH}=1 allows no skip and no xfail"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator:
    outcome = yield
    _refuse_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator:
    outcome = yield
    _refuse_skip(outcome.get_result())


@pytest.fixture(scope="session", autouse=True)
def compiled_search() -> None:
    """Build the compiled search's cache once, before any test, as the arena does
    (about 45 s on a fresh clone, nothing after): otherwise the first test to
    search would pay for the compiling inside its own deadlines."""
    import trio

    from arena.plan.prepare import prepare

    assert trio.run(prepare, "alphabeta") is None


@pytest.fixture(scope="session", autouse=True)
def bots_may_read_test_folders(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Test folders open to every user, as a bot's own folder must be.

    A root arena runs its bots as ``nobody`` (``arena/engine/confine.py``), and a bot
    can only use a folder that user may read; pytest makes its folders
    owner-only. Only each test folder itself is opened: the sandbox makes the
    folders above a bot's own, so ``/tmp/pytest-of-root`` stays closed.
    """
    mktemp = tmp_path_factory.mktemp

    def readable(basename: str, numbered: bool = True) -> Path:
        path = mktemp(basename, numbered)
        path.chmod(0o755)
        return path

    tmp_path_factory.mktemp = readable  # type: ignore[method-assign]
