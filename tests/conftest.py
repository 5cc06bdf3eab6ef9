import sys
from pathlib import Path

import pytest

# Let tests import their small helper modules (e.g. kamisado_helpers).
sys.path.insert(0, str(Path(__file__).parent))

# The shared headless-browser fixture (tests/browser.py).
pytest_plugins = ["browser"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def compiled_search() -> None:
    """Build the compiled search's cache once, before any test, as the arena does
    (about 15 s on a fresh clone, nothing after): otherwise the first test to
    search would pay for the compiling inside its own deadlines."""
    import trio

    from arena.plan.builtins import resolve_builtin
    from arena.plan.prepare import prepare

    assert trio.run(prepare, resolve_builtin("alphabeta")) is None


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
