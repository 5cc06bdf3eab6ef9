import subprocess
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
    """Build the compiled search's cache once, before any test (about 15 s on a
    fresh clone, a second after): otherwise the first test to search would
    pay for the compiling inside its own deadlines."""
    subprocess.run([sys.executable, str(ROOT / "bots" / "alphabeta_bot.py"), "--warm"],
                   check=True, timeout=600)  # fmt: skip
