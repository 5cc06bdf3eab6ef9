"""Bots in seven languages, written from protocol.md alone, on every default (issue 34).

Java (``java -jar`` of a jar built with ``javac`` and ``jar``, and a bot run from
its source by the JDK's launcher that uses ``UUID``, ``SecureRandom`` and
``java.util.logging``), C# on Mono (``System.Random``, ``{0:F2}`` formatting),
Go, Rust, C++, JavaScript (the example bot) and Python (numpy in the bot's own
virtualenv, and ``multiprocessing``). Each is built once per session in a
temporary folder, as a course's student would build it, then passes
``arena check-bot`` with the default sandbox and limits (as root here and in
CI), and all of them play one round robin without a fault. What ran them at
home ran them here: no flag, no grant, no larger limit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec
import needs
import pytest

from arena.match.record import GameRecord
from arena.storage.store import Store

HERE = Path(__file__).parent
SOURCES = HERE / "langbots"
JS_EXAMPLE = HERE.parent / "bots" / "examples" / "js" / "kamisado_bot.js"
ARENA = [sys.executable, "-m", "arena.cli"]
BUILD_TIMEOUT = 300


def build(*command: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    """One build step; its output is the failure message."""
    done = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"


def folder_for(root: Path, name: str, *sources: str) -> Path:
    """The bot's own folder, readable by the bot's user, with its sources copied in."""
    folder = root / name
    folder.mkdir()
    for source in sources:
        shutil.copy(SOURCES / source, folder)
    return folder


JDK = "(Debian: openjdk-17-jdk-headless)"


def java_jar(root: Path) -> list[str]:
    javac = needs.tool("javac", what=f"javac {JDK}")
    jar = needs.tool("jar", what=f"jar {JDK}")
    java = needs.tool("java", what=f"java {JDK}")
    folder = folder_for(root, "java-jar", "java/Bot.java")
    build(javac, "-d", "classes", "Bot.java", cwd=folder)
    manifest = ["--main-class", "Bot"]
    build(jar, "--create", "--file", "bot.jar", *manifest, "-C", "classes", ".", cwd=folder)
    return [java, "-jar", str(folder / "bot.jar")]


def java_source(root: Path) -> list[str]:
    java = needs.tool("java", what=f"java {JDK}")
    folder = folder_for(root, "java-source", "java/LauncherBot.java")
    return [java, str(folder / "LauncherBot.java")]


def csharp(root: Path) -> list[str]:
    mcs = needs.tool("mcs", what="mcs (Debian: mono-mcs)")
    mono = needs.tool("mono", what="mono (Debian: mono-runtime)")
    folder = folder_for(root, "csharp", "csharp/Bot.cs")
    build(mcs, "-out:Bot.exe", "Bot.cs", cwd=folder)
    return [mono, str(folder / "Bot.exe")]


def go(root: Path) -> list[str]:
    go = needs.tool("go", what="go (Debian: golang-go)")
    folder = folder_for(root, "go", "go/bot.go")
    cache = root / "go-cache"
    build(
        go,
        "build",
        "-o",
        "bot",
        "bot.go",
        cwd=folder,
        env={"GOCACHE": str(cache)},
    )
    return [str(folder / "bot")]


def rust(root: Path) -> list[str]:
    rustc = needs.tool("rustc", what="rustc (Debian: rustc)")
    folder = folder_for(root, "rust", "rust/bot.rs")
    build(rustc, "-O", "-o", "bot", "bot.rs", cwd=folder)
    return [str(folder / "bot")]


def cpp(root: Path) -> list[str]:
    gxx = needs.tool("g++", what="g++ (Debian: g++)")
    folder = folder_for(root, "cpp", "cpp/bot.cpp")
    build(gxx, "-O2", "-std=c++17", "-o", "bot", "bot.cpp", cwd=folder)
    return [str(folder / "bot")]


def javascript(root: Path) -> list[str]:
    folder = root / "javascript"
    folder.mkdir()
    shutil.copy(JS_EXAMPLE, folder)
    return [needs.node(), str(folder / JS_EXAMPLE.name)]


def python_numpy(root: Path) -> list[str]:
    """numpy in the bot's own virtualenv: the system's through ``--system-site-packages``
    where it has one, else installed into it by pip (from pip's cache where it is)."""
    folder = folder_for(root, "python-numpy", "python/numpy_bot.py")
    venv = folder / "venv"
    build(sys.executable, "-m", "venv", "--system-site-packages", str(venv), cwd=folder)
    python = str(venv / "bin" / "python")
    has = subprocess.run([python, "-c", "import numpy"], capture_output=True, check=False)
    if has.returncode != 0:
        build(python, "-m", "pip", "install", "-q", "numpy", cwd=folder)
    return [python, str(folder / "numpy_bot.py")]


def python_multiprocessing(root: Path) -> list[str]:
    folder = folder_for(root, "python-multiprocessing", "python/multiprocessing_bot.py")
    return [sys.executable, str(folder / "multiprocessing_bot.py")]


BUILDS: dict[str, Callable[[Path], list[str]]] = {
    "java-jar": java_jar,
    "java-source": java_source,
    "csharp": csharp,
    "go": go,
    "rust": rust,
    "cpp": cpp,
    "javascript": javascript,
    "python-numpy": python_numpy,
    "python-multiprocessing": python_multiprocessing,
}


@pytest.fixture(scope="session")
def build_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("langbots")
    root.chmod(0o755)  # the bots' own folders are in it, for their user to read
    return root


@pytest.fixture(scope="session")
def built(build_root: Path) -> dict[str, list[str] | BaseException]:
    """Each bot built once (a failed or impossible build is kept, and raised by the
    tests that need that bot)."""
    out: dict[str, list[str] | BaseException] = {}
    for name, make in BUILDS.items():
        try:
            out[name] = make(build_root)
        except (Exception, pytest.skip.Exception, pytest.fail.Exception) as exc:
            out[name] = exc
    return out


def command(built: dict[str, list[str] | BaseException], name: str) -> list[str]:
    got = built[name]
    if isinstance(got, BaseException):
        raise got
    return got


@pytest.fixture(autouse=True)
def working_sandbox() -> None:
    needs.sandbox()


@pytest.mark.parametrize("name", list(BUILDS))
def test_each_language_passes_check_bot_on_the_defaults(built, name: str) -> None:
    argv = command(built, name)
    done = subprocess.run(
        [*ARENA, "check-bot", "--game", "kamisado", "--games", "0", "--", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "all 13 checks passed" in done.stdout, done.stdout + done.stderr
    assert "warning" not in done.stderr, done.stderr  # no fall back to running unconfined


def test_all_languages_play_a_round_robin_without_a_fault(built, build_root: Path) -> None:
    bots = {name: command(built, name) for name in BUILDS}
    lines = [
        'name = "languages"',
        'variant = "single"',
        'tc = "10+0.1"',
        "games_per_pairing = 2",
        "concurrency = 2",
        "seed = 1",
    ]
    for name, argv in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f"command = {msgspec.json.encode(argv).decode()}"]
    toml = build_root / "languages.toml"
    toml.write_text("\n".join(lines) + "\n")
    results = build_root / "results"
    done = subprocess.run(
        [*ARENA, "run", str(toml), "--results", str(results), "-q", "--no-report"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with Store.open_existing(results / "languages") as store:
        records: list[GameRecord] = list(store.records())
    assert len(records) == len(bots) * (len(bots) - 1)  # two games a pairing, sides swapped
    faults = [
        (r.players, r.reason, r.detail, r.stderr_tails) for r in records if r.faulty is not None
    ]
    assert faults == [], faults
    assert {s.mode for r in records for s in r.sandbox} == {"bwrap"}
    assert {s.bound for r in records for s in r.sandbox} <= {"cgroup", "rlimit"}
