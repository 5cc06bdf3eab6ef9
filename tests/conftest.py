import sys
from pathlib import Path

# Let tests import their small helper modules (e.g. kamisado_helpers).
sys.path.insert(0, str(Path(__file__).parent))

# The shared headless-browser fixture (tests/browser.py).
pytest_plugins = ["browser"]
