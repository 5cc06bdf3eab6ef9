"""What a language runtime needs at start-up, inside the default sandbox (issue 34).

Each test starts ``tests/runtime_bot.py`` as a tournament would (the default
``[limits]`` and ``[sandbox]``, as root here and in CI), lets it try what
runtimes do before their first line (reserve address space, take a
``multiprocessing`` lock, read their configuration in ``/etc``) and reads its
report from its stderr.
"""

from __future__ import annotations

import os
import stat
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import needs
import pytest
import trio

from arena.engine import sandbox as sandbox_module
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.sandbox import ETC_FILE_MAX, Sandbox
from arena.plan.config import Limits
from arena.plan.launch import resource_limits

HERE = Path(__file__).parent
BOT = [sys.executable, str(HERE / "runtime_bot.py")]


@pytest.fixture(autouse=True)
def working_sandbox() -> None:
    needs.sandbox()


def attempt(*checks: str, sandbox: Sandbox | None = None, limits: Limits | None = None) -> dict:
    """``{check: "ok" or "failed: why"}`` from one sandboxed start of the runtime bot,
    and the bound in force under ``"bound"``."""
    config = EngineConfig(
        name="runtime",
        command=[*BOT, *checks],
        limits=resource_limits(limits or Limits()),
        sandbox=sandbox or Sandbox(mode="bwrap"),
    )

    async def run() -> tuple[str, str]:
        async with Engine(config) as engine:
            await engine.start("kamisado", "standard")
            await engine.stop()
            return engine.stderr_tail(), engine.sandbox_bound

    tail, bound = trio.run(run)
    out = {"bound": bound}
    for line in tail.splitlines():
        if line.startswith("RUNTIME "):
            word, _, outcome = line.removeprefix("RUNTIME ").partition(" ")
            out[word] = outcome
    assert set(out) == {"bound", *checks}, tail
    return out


def test_under_a_cgroup_a_runtime_may_reserve_more_address_space_than_its_memory() -> None:
    """A JVM reserves its heap and class space up front (``java -jar`` did not start
    under the default 2048 MB); under a cgroup only the memory in use counts."""
    got = attempt("reserve=3072")
    if got["bound"] != "cgroup":
        needs.missing("no cgroup for the bots here: memory is bounded per process")
    assert got["reserve=3072"] == "ok", got


def test_address_space_is_bounded_without_a_sandbox() -> None:
    """Where nothing counts the bot's memory as a whole, ``memory_mb`` is each
    process's address space: the same reservation fails (the rlimit fallback)."""
    got = attempt("reserve=3072", sandbox=Sandbox(mode="none"))
    assert got["reserve=3072"].startswith("failed: OSError"), got


def expected_etc() -> set[str]:
    """What every user may read of ``/etc`` here (regular files, through folders
    every user may enter, no links followed), less the hidden names."""
    hidden = sandbox_module._etc_hidden()
    out = set()
    for folder, folders, files in os.walk("/etc"):
        rel = os.path.relpath(folder, "/etc")
        rel = "" if rel == "." else rel + "/"
        folders[:] = [
            d
            for d in folders
            if not hidden.match(rel + d)
            and os.lstat(os.path.join(folder, d)).st_mode & 0o005 == 0o005
        ]
        for file in files:
            st = os.lstat(os.path.join(folder, file))
            if (
                stat.S_ISREG(st.st_mode)
                and st.st_mode & 0o004
                and st.st_size <= ETC_FILE_MAX
                and not hidden.match(rel + file)
            ):
                out.add(rel + file)
    return out


def test_the_world_readable_part_of_etc_is_visible_less_its_secrets(tmp_path: Path) -> None:
    """Runtimes read their configuration in ``/etc`` (``java-17-openjdk``, ``mono``,
    certificates, time zone, ``ld.so.cache``...): an allow-list missed some.
    Everything every user may read is there; the secrets are not, even where
    everyone may read them (``machine-id``)."""
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o777)  # the bot's user writes its listing there
    listing = out / "etc.txt"
    got = attempt(f"etc={listing}", sandbox=Sandbox(mode="bwrap", rw=[str(out)]))
    assert got[f"etc={listing}"] == "ok", got
    seen = set(listing.read_text().splitlines())
    expected = expected_etc()
    assert expected - seen == set(), sorted(expected - seen)[:20]
    secrets = {"shadow", "gshadow", "sudoers", "machine-id", "ssl/private"}
    assert {p for p in seen if p in secrets or p.startswith("ssl/private/")} == set()
    for path in ("passwd", "group", "ld.so.cache"):
        assert path in seen, path
    for folder in ("java-17-openjdk", "mono"):  # the two runtimes the allow-list hid
        if os.path.isdir(f"/etc/{folder}"):
            assert any(p.startswith(folder + "/") for p in seen), folder


def test_the_etc_view_copies_only_what_everyone_may_read(tmp_path: Path) -> None:
    """A known tree: owner-only files and folders, a hidden name, links into the
    system (kept), out of it (their file) and dangling (left out)."""
    src = tmp_path / "etc"
    (src / "open").mkdir(parents=True)
    (src / "open" / "conf").write_text("shown")
    (src / "open" / "mine").write_text("owner only")
    (src / "open" / "mine").chmod(0o600)
    (src / "closed").mkdir()
    (src / "closed" / "conf").write_text("behind a closed folder")
    (src / "closed").chmod(0o700)
    (src / "shadow").write_text("hidden by name")
    (src / "shadow").chmod(0o644)
    (src / "ssl" / "private").mkdir(parents=True)
    (src / "ssl" / "private" / "key.pem").write_text("hidden by name")
    elsewhere = tmp_path / "run" / "resolv.conf"
    elsewhere.parent.mkdir()
    elsewhere.write_text("nameserver 127.0.0.1\n")
    (src / "resolv.conf").symlink_to(elsewhere)
    (src / "localtime").symlink_to("/usr/share/zoneinfo/Etc/UTC")
    (src / "mtab").symlink_to("/proc/self/mounts")
    (src / "gone").symlink_to(tmp_path / "nothing")
    view = tmp_path / "view"
    sandbox_module._copy_visible(str(src), str(view), "")
    found = {
        str(p.relative_to(view)) + ("@" + os.readlink(p) if p.is_symlink() else "")
        for p in view.rglob("*")
    }
    assert found == {
        "open",
        "open/conf",
        "ssl",
        "resolv.conf",
        "localtime@/usr/share/zoneinfo/Etc/UTC",
        "mtab@/proc/self/mounts",
    }
    assert (view / "resolv.conf").read_text() == "nameserver 127.0.0.1\n"
    assert stat.S_IMODE((view / "open" / "conf").stat().st_mode) == 0o644


def test_dev_shm_is_writable_and_multiprocessing_works() -> None:
    """Python's ``multiprocessing`` lock is a POSIX semaphore in ``/dev/shm``: it
    failed for a bot running as ``nobody`` in the root-owned tmpfs."""
    assert attempt("shm")["shm"] == "ok"


def test_dev_shm_is_the_bots_own() -> None:
    marker = f"/dev/shm/arena-test-{uuid.uuid4().hex[:12]}"
    Path(marker).write_text("the arena's")
    try:
        assert attempt(f"absent={marker}")[f"absent={marker}"] == "ok"
    finally:
        os.unlink(marker)


@pytest.fixture
def hostname_hidden(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh ``/etc`` view that also hides ``hostname``: a granted name it lacks."""

    def fresh() -> None:
        for cached in (sandbox_module.etc_view, sandbox_module._system_args):
            cached.cache_clear()
        sandbox_module._etc_hidden.cache_clear()

    monkeypatch.setattr(sandbox_module, "ETC_HIDDEN", (*sandbox_module.ETC_HIDDEN, "hostname"))
    fresh()
    yield
    monkeypatch.undo()
    fresh()


@pytest.mark.usefixtures("hostname_hidden")
def test_grants_under_etc_and_the_system_paths_are_mounted() -> None:
    """``sandbox_ro = ["/etc/mono"]`` failed (``bwrap: Can't mkdir /etc/mono:
    Read-only file system``): a grant under ``/etc`` the view lacks, or in a
    read-only system folder, is mounted all the same."""
    assert attempt("absent=/etc/hostname")["absent=/etc/hostname"] == "ok"
    grants = ["/etc/hostname", "/etc/ssl/certs", "/usr/share/zoneinfo"]
    checks = [f"read={p}" for p in grants]
    got = attempt(*checks, sandbox=Sandbox(mode="bwrap", ro=grants))
    assert all(got[c] == "ok" for c in checks), got


@pytest.fixture
def no_view(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No copy of ``/etc`` could be made: the real one is bound, its secrets covered."""

    def fresh() -> None:
        sandbox_module._system_args.cache_clear()

    monkeypatch.setattr(sandbox_module, "etc_view", lambda: None)
    fresh()
    yield
    monkeypatch.undo()
    fresh()


@pytest.mark.usefixtures("no_view")
def test_without_a_view_etc_is_bound_with_its_secrets_covered() -> None:
    secrets = ["shadow", "gshadow", "machine-id", "ssl/private"]
    covered = [f"nothing=/etc/{p}" for p in secrets if os.path.lexists(f"/etc/{p}")]
    shown = ["read=/etc/passwd", "read=/etc/ld.so.cache"]
    got = attempt(*covered, *shown, sandbox=Sandbox(mode="bwrap"))
    assert covered and all(got[c] == "ok" for c in covered), got
    assert all(got[c] == "ok" for c in shown), got
    if os.path.exists("/etc/machine-id"):  # a grant of a covered name shows it after all
        grant = Sandbox(mode="bwrap", ro=["/etc/machine-id"])
        assert attempt("read=/etc/machine-id", sandbox=grant)["read=/etc/machine-id"] == "ok"


def test_the_help_the_play_line_and_protocol_md_say_the_same_of_memory() -> None:
    """``--memory-mb`` was documented as an address-space limit, which under a
    cgroup it no longer is."""
    from click.testing import CliRunner

    from arena.cli import main

    for verb in ("check-bot", "play"):
        shown = " ".join(CliRunner().invoke(main, [verb, "--help"]).output.split())
        assert "its processes together where a cgroup counts them" in shown, verb
        assert "else address space per process" in shown, verb
    from arena.cli.play import _confinement_text
    from arena.engine.record import SandboxRecord

    line = _confinement_text(SandboxRecord(mode="bwrap", bound="rlimit"))
    assert "bounded by rlimits (address space per process" in line, line
    text = " ".join((HERE.parent / "protocol.md").read_text().split())
    assert "no process has an address-space limit" in text
    assert "bounded by rlimits" in text and "bounded by a cgroup" in text
