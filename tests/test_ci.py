"""The CI entry (``.ci/run``) refuses a machine where the bot sandbox does not work.

Only its sandbox check (``.ci/check-sandbox``) is run here, not the whole entry
(which installs packages and runs this suite).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import needs
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / ".ci" / "check-sandbox"
ENTRY = ROOT / ".ci" / "run"

BWRAP_SAYS = (
    "bwrap: No permissions to create new namespace, likely because the kernel does not "
    "allow non-privileged user namespaces."
)
FAILING_BWRAP = f"""#!/bin/sh
echo "{BWRAP_SAYS}" >&2
exit 1
"""
"""What bwrap says in a container without user namespaces (Docker's default)."""


def check(path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "PYTHON": sys.executable}
    return subprocess.run([str(CHECK)], capture_output=True, text=True, timeout=60, env=env)


def test_a_failing_bwrap_first_on_path_fails_the_check_in_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(FAILING_BWRAP)
    fake.chmod(0o755)
    done = check(f"{tmp_path}:{os.environ['PATH']}")
    print(done.stdout + done.stderr, end="")
    assert done.returncode != 0
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    line = done.stderr.strip()
    assert line.startswith("ci: the bot sandbox does not work on this machine: bwrap fails here:")
    assert line.endswith(BWRAP_SAYS), line


def test_no_bwrap_at_all_fails_the_check_in_one_line_with_the_install_hint(
    tmp_path: Path,
) -> None:
    (tmp_path / "sh").symlink_to("/bin/sh")  # the shebang's env finds bash by PATH
    (tmp_path / "bash").symlink_to(os.path.realpath("/bin/bash"))
    done = check(str(tmp_path))
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "bwrap is not installed" in done.stderr and "apt-get install bubblewrap" in done.stderr


def test_a_working_sandbox_passes_the_check() -> None:
    needs.sandbox()
    done = check(os.environ["PATH"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ci: the bot sandbox works on this machine\n"


def test_the_ci_entry_checks_the_sandbox_before_any_test_and_requires_every_test() -> None:
    lines = [line.strip() for line in ENTRY.read_text().splitlines()]
    steps = [line for line in lines if line and not line.startswith("#")]
    assert steps[0] == "set -euo pipefail"  # a failed step ends the run
    check_at = steps.index("PYTHON=python .ci/check-sandbox")
    assert steps.index("export ARENA_REQUIRE_ALL=1") > check_at
    assert steps[-1] == "python -m pytest -q"  # the README's test command
    assert all(
        "pytest" not in step and "ruff" not in step and "mypy" not in step
        for step in steps[:check_at]
    )
    # The type check ([tool.mypy] in pyproject.toml): a type error fails CI.
    assert "mypy" in steps[check_at:]


PROBE = """
import pytest

def test_runs():
    assert True

def test_skips():
    pytest.skip("no such tool")
"""


def test_the_switch_turns_every_skip_into_a_failure(tmp_path: Path) -> None:
    """The conftest hook that CI's ``ARENA_REQUIRE_ALL=1`` switches on, run on a
    probe file: without the switch a skip passes quietly, with it the skip fails
    and says why."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    tests = Path(__file__).parent
    command = [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider"]
    command += ["-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path / "test_probe.py")]

    def run(required: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(tests), "ARENA_REQUIRE_ALL": required}
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)

    laptop = run("0")
    assert laptop.returncode == 0, laptop.stdout
    assert "1 passed, 1 skipped" in laptop.stdout, laptop.stdout
    ci = run("1")
    assert ci.returncode == 1, ci.stdout
    assert "1 failed, 1 passed" in ci.stdout, ci.stdout
    assert "skipped: no such tool, but ARENA_REQUIRE_ALL=1 allows no skip" in ci.stdout


def test_the_switch_turns_an_expected_failure_into_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same hook on the report pytest makes for an expected failure (a
    skipped report carrying ``wasxfail``). No test of this suite is marked as an
    expected failure, not even a probe: a known failure is fixed, not marked, so
    the report is built here as pytest builds it."""
    import conftest

    def expected_failure() -> pytest.TestReport:
        report = pytest.TestReport(
            nodeid="test_probe.py::test_known_bug",
            location=("test_probe.py", 0, "test_known_bug"),
            keywords={},
            outcome="skipped",
            longrepr=None,
            when="call",
        )
        report.wasxfail = "a known bug"
        return report

    monkeypatch.setenv("ARENA_REQUIRE_ALL", "0")
    laptop = expected_failure()
    conftest._refuse_skip(laptop)
    assert laptop.outcome == "skipped"
    monkeypatch.setenv("ARENA_REQUIRE_ALL", "1")
    ci = expected_failure()
    conftest._refuse_skip(ci)
    assert ci.outcome == "failed"
    assert ci.longrepr == (
        "an expected failure (a known bug), but ARENA_REQUIRE_ALL=1 allows no skip and no xfail"
    )
