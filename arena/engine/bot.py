"""One bot process on trio: start it in its sandbox, freeze and thaw it, kill it.

In the spirit of python-chess's ``chess/engine.py``: the engine knows nothing
of the board, every exchange is one request and its answer under its own
timeout, and everything that can go wrong with a foreign program surfaces as a
typed exception carrying the reason the referee records (``errors.py``). The
requests, their deadlines and faults are :class:`~arena.engine.conversation.Conversation`'s,
over the process's pipes as its :class:`~arena.engine.transport.Transport`
(``pipes.py``); what is here is the process around them: spawn, sandbox and cgroup,
freezer, stderr drain, kill. The bot's settings are ``config.py``; a reply and the
reading of each line ``exchange.py``.

A faulted bot has lost its game, so the engine kills it at once (it should not
keep burning the CPU other games are timed on) and keeps its stderr tail for the
record; :meth:`Engine.start` or :meth:`Engine.restart` brings it back before its
next game. One process serves many games (``newgame``).

Processes run in their own session (process group), with a scrubbed
environment and optional resource limits. Killing always targets the whole
group, so a bot's helpers die with it. :class:`Engine` is an async context
manager and the only way to get one running: leaving the block, normally or by
cancellation, kills the group under a shielded, bounded cancel scope, so no
bot outlives the arena. For the deaths no code survives (SIGKILL, a crash of
the interpreter), Linux's ``PR_SET_PDEATHSIG`` makes the kernel SIGKILL each
bot when the arena goes (see :func:`arena.engine.process.child_preexec`).

Timing: ``Reply.elapsed`` runs from just before the request line is written to
the pipe until the answer line has been read, on trio's clock (the thaw of a
frozen bot inside it). That is exactly the interval the referee charges to the
bot's clock.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from contextlib import suppress
from typing import Literal

import msgspec
import trio

from arena.engine import cgroups, cpu
from arena.engine.config import EngineConfig
from arena.engine.confine import IdentityError, bot_identity, reachable, seccomp_fd
from arena.engine.conversation import Conversation
from arena.engine.errors import EngineCrashed, EngineError, name_out_of_memory
from arena.engine.pipes import EXIT_DRAIN, Running, close_fd, wait_exit
from arena.engine.process import child_preexec, spawn
from arena.engine.record import SandboxRecord
from arena.engine.sandbox import (
    SCRATCH,
    bound_paths,
    missing_program,
    resolve,
    wrap,
)
from arena.protocol.messages import Identity, LineReader, Quit, encode_line

_REAP_TIMEOUT = 2.0
"""After SIGKILL, how long to wait for the kernel to report the exit."""


# --------------------------------------------------------------------------
# the engine


class Engine(Conversation):
    """A bot process that can be started, questioned, restarted and killed.

    ::

        async with Engine(config) as engine:
            identity = await engine.start("kamisado", "standard")
            await engine.new_game(NewGame(...), timeout=5)
            reply = await engine.go(Go(...), timeout=clock.budget(player))

    Only one request is outstanding at a time. Ids are assigned here; the
    ``id`` of messages passed in is ignored.
    """

    def __init__(self, config: EngineConfig) -> None:
        super().__init__(config)
        self.returncode: int | None = None
        """Exit status of the last process once it is gone."""
        self.sandbox_mode: str | None = None
        """``bwrap`` or ``none``: the confinement of the last process started."""
        self.sandbox_user = ""
        """Who the last process ran as, when not the arena's own user."""
        self.sandbox_bound = ""
        """``cgroup`` or ``rlimit``: how the last sandboxed process was bounded as a whole."""
        self._cgroup: cgroups.BotCgroup | None = None
        self._freezer: cpu.CpuGroup | cpu.SignalFreezer | None = None
        """What freezes the bot between its answer and its next request (``None``: ponder)."""
        self._frozen = False
        self._last_freeze = ""
        self._oom_killed = False
        self._proc: Running | None = None
        """The process; also the conversation's transport while it is attached."""

    # -- lifetime -------------------------------------------------------------

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> Literal[False]:
        """Kill the group whatever happened; the body's exception passes through unchanged."""
        cfg = self.config
        budget = cfg.quit_timeout + cfg.term_timeout + _REAP_TIMEOUT + 1.0
        assert self._nursery is not None
        try:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + budget):
                await self.stop(graceful=exc_type is None)
        finally:
            self._kill_group(signal.SIGKILL)
            # Outside the shield: scopes must nest, and the background tasks are
            # cancelled there first, so the nursery closes at once.
            await self._close_tasks()
        return False

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.process.pid

    @property
    def pgid(self) -> int | None:
        """The bot's process group (its session), the unit that is killed."""
        return None if self._proc is None else self._proc.pgid

    def cpu_seconds(self) -> float | None:
        """CPU time the running bot's processes used so far, from its cgroup (``None``: none)."""
        used = self._cpu_ns()
        return None if used is None else used / 1e9

    def _cpu_ns(self) -> int | None:
        group = self._cgroup
        return None if group is None or group.cpu is None else group.cpu.usage_ns()

    @property
    def sandbox_record(self) -> SandboxRecord:
        """The confinement the game record keeps for this bot."""
        mode = self.sandbox_mode or resolve(self.config.sandbox.mode)
        record = self.config.sandbox.record(mode, self.sandbox_user, self.sandbox_bound)
        freeze = self.freeze_kind or self._last_freeze
        return msgspec.structs.replace(record, freeze=freeze, cores=self.config.threads)

    def stderr_tail(self, *, clear: bool = False) -> str:
        """The bounded tail of the bot's stderr; ``clear`` starts a fresh one (per game).

        Whatever already sits in the pipe is read first, so the tail holds
        everything the bot wrote before its last answer was read.
        """
        self._drain_now()
        return super().stderr_tail(clear=clear)

    def _drain_now(self, limit: int = 16) -> None:
        """Read what stderr holds right now, without waiting (at most ``limit`` chunks).

        The drain task reads the same pipe whenever trio schedules it; this
        catches up synchronously, so lines written before an answer cannot
        arrive after it (in the next game's tail, or not at all).
        """
        proc = self._proc
        stream = None if proc is None else proc.process.stderr
        if stream is None or proc is None or proc.stderr_done.is_set():
            return
        try:
            fd = stream.fileno()
            for _ in range(limit):
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                self._tail.feed(chunk)
        except OSError:  # BlockingIOError: nothing more for now; EBADF: closed
            return

    async def start(self, game: str, variant: str, *, check_identity: bool = True) -> Identity:
        """Spawn the process and shake hands, within ``handshake_timeout``.

        Raises an :class:`EngineError` (the process is then already killed) if the
        bot cannot be started, does not answer, speaks another protocol version
        or does not support ``game``/``variant``. ``check_identity=False`` skips
        the last two checks: the compliance checker reports them itself and goes
        on talking to the bot.
        """
        if self._nursery is None:
            raise RuntimeError("use 'async with Engine(config) as engine' before start()")
        if self._proc is not None:
            raise RuntimeError(f"{self.name}: already running; use restart()")
        cfg = self.config
        self.faulted = None
        self.identity = None
        self.returncode = None
        self._tail.clear()  # what this process writes, not the last one's
        limits = cfg.limits.pairs()
        self.sandbox_mode = mode = resolve(cfg.sandbox.mode)  # SandboxError: no bwrap
        env = cfg.environment()
        command = cfg.command
        cwd = cfg.cwd
        identity: tuple[int, int] | None = None
        pass_fds: list[int] = []
        join_fds: list[int] = []
        watch: int | None = None
        self.sandbox_user = self.sandbox_bound = ""
        self._oom_killed = False
        try:
            if mode == "bwrap":
                env["HOME"] = SCRATCH
                cwd = "/"  # bwrap's own --chdir puts the bot in its folder
                limits, identity = self._confine(limits, pass_fds, join_fds)
                # The sandbox's reaper reads the other end: it ends when this process does.
                watched, watch = os.pipe()
                pass_fds.append(watched)
                command = wrap(
                    cfg.sandbox,
                    cfg.command,
                    cfg.cwd,
                    env.get("PATH"),
                    seccomp_fd=pass_fds[0],
                    identity=identity,
                    watch_fd=watched,
                )
            process = spawn(
                command,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=child_preexec(limits, cgroup_fds=join_fds),
                pass_fds=pass_fds,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self._remove_cgroup()
            close_fd(watch)
            err = EngineCrashed(f"cannot start {cfg.command!r}: {exc}", engine=self.name)
            self.faulted = err
            raise err from exc
        except EngineCrashed as exc:
            self._remove_cgroup()
            close_fd(watch)
            self.faulted = exc
            raise
        finally:
            for fd in pass_fds + join_fds:
                os.close(fd)
        self.starts += 1
        # start_new_session makes the child a session and group leader: pgid == pid.
        proc = Running(
            process,
            LineReader(process.stdout_pipe, cfg.max_line),
            pgid=process.pid,
            sandboxed=mode == "bwrap",
            watch=watch,
        )
        self._proc = proc
        self._attach(proc)
        self._freezer, self._frozen = self._pick_freezer(proc.pgid), False
        self._nursery.start_soon(self._watch_exit, proc)
        self._nursery.start_soon(self._drain_stderr, proc)

        return await self._handshake(game, variant, check_identity=check_identity)

    def _confine(
        self, limits: list[tuple[int, int, int]], pass_fds: list[int], join_fds: list[int]
    ) -> tuple[list[tuple[int, int, int]], tuple[int, int] | None]:
        """Identity, cgroup and seccomp filter for a sandboxed start (``arena/engine/confine.py``).

        Fills ``pass_fds`` (the filter) and ``join_fds`` (the cgroup to join);
        returns the rlimits to set and the ``(uid, gid)`` to switch to. Raises
        :class:`EngineCrashed` with one line when the bot cannot be started so.
        """
        cfg = self.config
        box = cfg.sandbox
        missing = missing_program(cfg.command, cfg.cwd, cfg.environment().get("PATH"))
        if missing is not None:
            raise EngineCrashed(f"cannot start {cfg.command!r}: {missing}", engine=self.name)
        try:
            identity = bot_identity(box.user)
        except IdentityError as exc:
            raise EngineCrashed(f"cannot start {cfg.command!r}: {exc}", engine=self.name) from None
        if identity is not None:
            self.sandbox_user = box.user
            path_env = cfg.environment().get("PATH")
            for path in bound_paths(box, cfg.command, cfg.cwd, path_env):
                if not reachable(path, *identity):
                    raise EngineCrashed(
                        f"cannot start {cfg.command!r}: {path!r} is not readable by user "
                        f"{box.user!r}, who runs the bot (make it readable by others, "
                        "or set [sandbox] user)",
                        engine=self.name,
                    )
        if cgroups.available():
            self._cgroup = cgroups.BotCgroup(
                cfg.limits.memory_bytes, cfg.limits.processes, cfg.threads
            )
            join_fds += self._cgroup.join_fds()
            self.sandbox_bound = "cgroup"
            # pids.max counts this bot alone; RLIMIT_NPROC would count every bot of the user.
            # The group's memory limit counts the pages the bot uses; RLIMIT_AS would count
            # the address space it reserves, far more for a runtime (a JVM reserves its heap
            # and class space up front: `java -jar` did not start under 2 GiB of it).
            unbounded = (resource.RLIMIT_NPROC, resource.RLIMIT_AS)
            limits = [t for t in limits if t[0] not in unbounded]
        else:
            self.sandbox_bound = "rlimit"
        pass_fds.append(seccomp_fd(refuse_memfd=self._cgroup is None))
        return limits, identity

    def _pick_freezer(self, pgid: int) -> cpu.CpuGroup | cpu.SignalFreezer | None:
        """The bot's freezer group, else signals to its process group; none when it ponders."""
        if self.config.ponder:
            return None
        group = self._cgroup
        if group is not None and group.cpu is not None and group.cpu.can_freeze:
            return group.cpu
        if self.sandbox_mode == "bwrap":  # unconfined bots were told so already
            cpu.warn_sigstop("no freezer cgroup for bots here")
        return cpu.SignalFreezer(pgid)

    @property
    def freeze_kind(self) -> str:
        """How the bot is kept off its opponent's time: ``freezer``, ``cgroup.freeze``,
        ``sigstop``, or ``ponder`` (not at all)."""
        if self.config.ponder:
            return "ponder"
        freezer = self._freezer
        return "" if freezer is None else freezer.freeze_kind

    def thaw(self) -> None:
        """Let the bot run again (before it is killed: on cgroup v1 a frozen one would not die)."""
        if self._frozen and self._freezer is not None:
            self._freezer.thaw()
            self._frozen = False

    def _freeze(self) -> None:
        if self._freezer is not None and not self._frozen:
            self._freezer.freeze()
            self._frozen = True

    def _remove_cgroup(self) -> None:
        """At a failed start: nothing ran in the group yet."""
        group, self._cgroup = self._cgroup, None
        if group is not None:
            group.try_remove()

    async def _release_cgroup(self) -> None:
        """After the bot is gone: note a memory kill, then remove its group (bounded)."""
        group, self._cgroup = self._cgroup, None
        if group is not None:
            self._oom_killed = self._oom_killed or group.oom_killed()
            await group.remove()

    async def stop(self, *, graceful: bool = True) -> None:
        """End the process: ``quit`` and a bounded wait, then SIGTERM, then SIGKILL.

        The whole process group gets SIGKILL at the end in every case, so
        children that ignore SIGTERM or outlive their parent die too. The
        process is reaped and the stderr drain finishes (bounded) before return.
        """
        proc = self._proc
        if proc is None:
            return
        cfg = self.config
        self.thaw()  # a frozen process reads no quit, and on cgroup v1 ignores SIGKILL
        self._last_freeze = self.freeze_kind
        self._freezer = None
        try:
            if graceful and not proc.exited.is_set():
                with trio.move_on_after(cfg.quit_timeout):
                    try:
                        await proc.process.stdin_pipe.send_all(encode_line(Quit()))
                        await proc.process.stdin_pipe.aclose()
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        pass
                    await wait_exit(proc)
            if not proc.exited.is_set():
                self._kill_group(signal.SIGTERM)
                with trio.move_on_after(cfg.term_timeout):
                    await wait_exit(proc)
        finally:
            self._kill_group(signal.SIGKILL)
            try:
                with trio.move_on_after(_REAP_TIMEOUT):
                    await wait_exit(proc)
                with trio.move_on_after(EXIT_DRAIN):
                    await proc.stderr_done.wait()  # the bot's last words
            finally:
                proc.cancel_tasks()
                close_fd(proc.watch)  # after the group's SIGKILL: the reaper has nothing left
                self.returncode = proc.returncode
                with trio.CancelScope(shield=True):
                    await proc.process.stdin_pipe.aclose()
                    await proc.process.stdout_pipe.aclose()
                    await proc.process.stderr_pipe.aclose()
                self._proc = self._transport = None
                with trio.CancelScope(shield=True):
                    await self._release_cgroup()

    def _kill_group(self, sig: signal.Signals) -> None:
        proc = self._proc
        if proc is None:
            return
        # Already gone: ProcessLookupError (PermissionError: a zombie-only group on some systems).
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pgid, sig)

    async def _watch_exit(self, proc: Running) -> None:
        """Reap the process and announce its exit to any pending read."""
        with proc.watch_scope:
            await proc.process.wait()
            proc.mark_exited()
            if self._transport is proc:
                self._cut_short()

    async def _drain_stderr(self, proc: Running) -> None:
        """Read stderr until EOF, always, so the bot can never block on it."""
        stream = proc.process.stderr_pipe
        with proc.drain_scope:
            try:
                while chunk := await stream.receive_some(65536):
                    self._tail.feed(chunk)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            finally:
                proc.stderr_done.set()

    def _annotate(self, exc: EngineError) -> None:
        name_out_of_memory(exc, oom_killed=self._oom_killed, limit=self.config.limits.memory_bytes)


__all__ = ["Engine"]
