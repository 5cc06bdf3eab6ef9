"""The benchmarks' smoke driver (``bench/smoke.py``): every bench script is declared
in it, CI runs it, and it fails, naming the script, when one breaks or is added
without a smoke run.

The benchmarks themselves are not run here (``.ci/run`` runs the driver once);
the driver is run on folders of tiny scripts made for each test.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

_spec = importlib.util.spec_from_file_location("bench_smoke", BENCH / "smoke.py")
assert _spec is not None and _spec.loader is not None
smoke = importlib.util.module_from_spec(_spec)
sys.modules["bench_smoke"] = smoke  # dataclasses look their module up while the class is made
_spec.loader.exec_module(smoke)
Run, StartedBy = smoke.Run, smoke.StartedBy


def folder_of(tmp_path: Path, **scripts: str) -> Path:
    for name, code in scripts.items():
        (tmp_path / f"{name}.py").write_text(code)
    return tmp_path


def drive(
    folder: Path, table: dict, capsys: pytest.CaptureFixture[str], *names: str
) -> tuple[int, list[str]]:
    status = smoke.main(list(names), folder=folder, table=table)
    return status, capsys.readouterr().out.splitlines()


def test_every_bench_script_has_a_smoke_run_and_every_entry_a_script() -> None:
    assert smoke.problems(BENCH, smoke.SMOKE) == {}
    assert set(smoke.scripts(BENCH)) == set(smoke.SMOKE)


def test_a_script_added_without_smoke_arguments_fails_the_run_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(tmp_path, fine="print('figures')", new="print('figures')")
    status, lines = drive(folder, {"fine.py": [Run("")], "gone.py": [Run("")]}, capsys)
    assert status == 1
    assert any("FAILED" in line and "new.py: no smoke run declared" in line for line in lines)
    assert any("FAILED" in line and "gone.py: declared in SMOKE, but" in line for line in lines)
    assert any(line.split()[1:] == ["ok", "fine.py"] for line in lines), lines
    assert lines[-1].startswith("smoke: FAILED: new.py, gone.py ")


def test_a_broken_script_fails_the_run_by_name_with_its_last_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(
        tmp_path,
        fine="import sys; print(sys.argv[1:])",
        broken="print('one figure')\nraise SystemExit('broken on purpose')",
    )
    table = {"fine.py": [Run("--n 1 --keep {tmp}")], "broken.py": [Run("--n 1")]}
    status, lines = drive(folder, table, capsys)
    assert status == 1
    fine = next(line for line in lines if "fine.py" in line)
    assert fine.split()[1:3] == ["ok", "fine.py"]
    at = next(i for i, line in enumerate(lines) if "broken.py" in line)
    assert lines[at].split()[1:] == ["FAILED", "broken.py", "--n", "1"]
    assert lines[at + 1 : at + 3] == ["    | one figure", "    | broken on purpose"]
    assert lines[-1].startswith("smoke: FAILED: broken.py ")
    assert not any(line.startswith("    | ['--n'") for line in lines)  # an ok run stays quiet


def test_the_runs_arguments_are_split_and_tmp_is_a_fresh_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = "import os, sys; print(sys.argv[1:], os.path.isdir(sys.argv[2]))"
    folder = folder_of(tmp_path, args=code)
    status, lines = drive(folder, {"args.py": [Run("--keep {tmp} 'two words'")]}, capsys, "-v")
    assert status == 0
    shown = next(line for line in lines if line.startswith("    | "))
    assert shown.startswith("    | ['--keep', '") and shown.endswith("', 'two words'] True")
    assert lines[-1].startswith("smoke: every bench script ran (1 runs in ")


def test_a_bot_is_declared_by_the_benchmark_that_starts_it(tmp_path: Path) -> None:
    folder = folder_of(tmp_path, bench="print('starts helper_bot.py')", helper_bot="", other_bot="")
    table = {
        "bench.py": [Run("")],
        "helper_bot.py": StartedBy("bench.py"),  # named in bench.py's source
        "other_bot.py": StartedBy("bench.py"),  # not started by it
    }
    assert smoke.problems(folder, table) == {
        "other_bot.py": "said to be started by bench.py, whose smoke run does not"
    }
    table["other_bot.py"] = StartedBy("bench.py")
    table["bench.py"] = [Run("--bots other_bot.py")]  # or named in its smoke arguments
    assert "other_bot.py" not in smoke.problems(folder, table)


def test_a_run_needing_what_is_missing_is_skipped_but_fails_when_every_run_is_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_of(tmp_path, extra="raise SystemExit('must not run')")
    table = {"extra.py": [Run("", needs=(lambda: "needs ray (pip install -e '.[ray]')",))]}
    monkeypatch.delenv("ARENA_REQUIRE_ALL", raising=False)
    status, lines = drive(folder, table, capsys)
    assert status == 0
    assert lines[0].split()[:2] == ["skipped", "extra.py:"] and lines[0].endswith("'.[ray]')")
    monkeypatch.setenv("ARENA_REQUIRE_ALL", "1")
    status, lines = drive(folder, table, capsys)
    assert status == 1 and lines[0].split()[:2] == ["FAILED", "extra.py:"]
    assert lines[-1].startswith("smoke: FAILED: extra.py ")


def test_ci_runs_every_smoke_run_before_the_suite() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    steps = [line for line in lines if line and not line.startswith("#")]
    at = steps.index("python bench/smoke.py")
    assert steps.index("export ARENA_REQUIRE_ALL=1") < at < steps.index("python -m pytest -q")
    assert steps.index("python -m pip install -q -e '.[test,ray]'") < at  # Ray's run too
