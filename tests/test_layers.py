"""The architecture, checked: what each part of ``arena/`` may import, from the
part's own docstring, and what no part may import at all.

Each package of ``arena/`` (and the top-level modules ``tournament.py`` and
``sdk.py``) opens with a docstring whose ``May import:`` sentence names the
parts it builds on (``:mod:`arena.X```), says ``everything`` (the CLI, the
tools) or ``nothing``; this test reads those sentences and scans every import
statement of the package, so the docstrings cannot drift from the code.
Imports under ``if TYPE_CHECKING:`` count too: they cost nothing at run time,
but a type named from a layer above is a dependency all the same (the protocol
building its clocks from the match's, a page module naming the app that
imports it), and it hides an import circle until someone needs the import at
run time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARENA = ROOT / "arena"
PARTS = sorted(
    [p.name for p in ARENA.iterdir() if (p / "__init__.py").exists()]
    + [p.stem for p in ARENA.glob("*.py") if p.name != "__init__.py"]
)


def part_of(module: str) -> str | None:
    """``arena.engine.bot`` -> ``engine``; ``None`` for another project's module."""
    names = module.split(".")
    if names[0] != "arena":
        return None
    return names[1] if len(names) > 1 and names[1] in PARTS else "arena"  # arena.__version__


def files(part: str) -> list[Path]:
    folder = ARENA / part
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [ARENA / f"{part}.py"]


def docstring(part: str) -> str:
    path = ARENA / part / "__init__.py" if (ARENA / part).is_dir() else ARENA / f"{part}.py"
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def allowed(part: str) -> set[str]:
    """The parts ``part``'s docstring says it may import."""
    text = " ".join(docstring(part).split())
    match = re.search(r"May import:? (.*?)(?:\.(?:\s|$)|$)", text)
    assert match, f"arena/{part}: its docstring has no 'May import:' sentence"
    sentence = match[1]
    if sentence.startswith("everything"):
        return set(PARTS) - ({"cli"} if "below" in sentence else set())
    named = {part_of(m) for m in re.findall(r":mod:`([\w.]+)`", sentence)}
    assert named or sentence.startswith("nothing"), f"arena/{part}: {sentence!r}"
    return {n for n in named if n is not None}


def imports(path: Path, *, typing_too: bool = False) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in ``path`` (in functions too)."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    if not typing_too:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


@pytest.mark.parametrize("part", PARTS)
def test_each_part_imports_only_what_its_docstring_allows(part: str) -> None:
    allowed_here = allowed(part) | {part, "arena"}
    wrong = sorted(
        {
            f"{path.relative_to(ROOT)}:{line}: arena.{other}"
            for path in files(part)
            for line, module in imports(path, typing_too=True)
            if (other := part_of(module)) is not None and other not in allowed_here
        }
    )
    assert not wrong, f"arena/{part} may import {sorted(allowed(part))}, not: {wrong}"


def module_name(path: Path) -> str:
    """``arena/web/app.py`` -> ``arena.web.app``; a package's ``__init__`` is the package."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def typing_only(path: Path) -> set[str]:
    """The modules ``path`` imports only under ``if TYPE_CHECKING:``."""
    every = {module for _, module in imports(path, typing_too=True)}
    return every - {module for _, module in imports(path)}


def test_no_import_circle_hides_under_type_checking() -> None:
    """A module that names another's types under ``TYPE_CHECKING`` while that one
    imports it back (at any level) is a circle that works only until someone needs
    the import at run time (``web/app.py`` and ``web/ratings.py`` were one, and so
    were ``backends/pool.py`` and ``backends/slots.py``, ``plan/knockout.py`` and
    ``plan/config.py``). None is allowed: the shared type moves to where it belongs."""
    paths = {module_name(p): p for p in sorted(ARENA.rglob("*.py"))}

    def owner(module: str) -> str | None:
        while module and module not in paths:
            module = module.rpartition(".")[0]
        return module or None

    found = set()
    for name, path in paths.items():
        for module in typing_only(path):
            other = owner(module)
            if other is None or other == name or other == "arena":
                continue
            back = {owner(m) for _, m in imports(paths[other], typing_too=True)}
            if name in back:
                found.add((name, other))
    assert not found, sorted(found)


def test_reading_a_record_loads_no_process_code() -> None:
    """The game record, the store and the reports read what the engine recorded (a
    plain value, ``engine/record.py``) without loading the engine's process, sandbox
    or cgroup code: a report of a results folder runs none of it."""
    code = (
        "import sys, arena.match.record, arena.storage.store, arena.report.summary;"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('arena.engine.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["arena.engine.record"]


def test_the_arena_never_imports_the_built_in_bots() -> None:
    """They are programs, found by path (``arena/plan/builtins.py``); no import of
    them, under any name, even for type checking."""
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted(ARENA.rglob("*.py"))
        for line, module in imports(path, typing_too=True)
        if module.split(".")[0] == "bots" or f"{module}.".startswith("arena.bots.")
    ]
    assert not wrong, wrong


def test_the_engine_only_starts_processes() -> None:
    """Neither tournament files nor the built-in bots' preparation: the engine runs
    the command it is given, in the confinement it is given."""
    assert allowed("engine") == {"protocol"}
    for path in files("engine"):
        for line, module in imports(path, typing_too=True):
            assert not module.startswith(("arena.plan", "arena.match")), (path, line, module)


def test_every_package_folder_is_installed() -> None:
    """``pyproject.toml`` lists the packages (the built-in bots are mapped to
    ``arena.bots``): a folder missing there would be missing from a wheel."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setup["package-dir"] == {"arena.bots": "bots"}

    def folder(package: str) -> Path:
        if f"{package}.".startswith("arena.bots."):
            package = "bots" + package.removeprefix("arena.bots")
        return ROOT.joinpath(*package.split("."))

    listed = set(setup["packages"])
    assert all(folder(p).is_dir() for p in listed), [p for p in listed if not folder(p).is_dir()]
    holding = {
        p.relative_to(ROOT)
        for top in ("arena", "bots")
        for p in [ROOT / top, *(ROOT / top).rglob("*")]
        if p.is_dir() and p.name != "__pycache__" and any(f.is_file() for f in p.iterdir())
    }
    assert holding <= {folder(p).relative_to(ROOT) for p in listed}
