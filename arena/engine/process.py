"""Child processes spawned from the main thread, with trio streams and an async wait.

Why not ``trio.lowlevel.open_process``: it forks from one of trio's worker
threads, and Linux's ``PR_SET_PDEATHSIG`` (which the arena sets so that bots and
workers die with it, even on SIGKILL) fires when the *thread* that forked
exits, not the process. Trio retires idle worker threads after ten seconds, so
every bot would be killed ten seconds after its spawning thread went idle.
Forking here, from the thread running trio (the main thread, alive as long as
the arena), keeps the death signal meaningful. The fork itself blocks the event
loop for a millisecond or two, once per process start.

Waiting uses a pidfd where the kernel has one (Linux 5.3+), so no thread sits in
``waitpid``; elsewhere a worker thread waits.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import trio

PIPE = subprocess.PIPE


class _Waitable(Protocol):
    """What :class:`ChildProcess` uses of ``subprocess.Popen`` (and :class:`_Forked` has)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...


class ChildProcess:
    """A running child: ``stdin``/``stdout``/``stderr`` trio streams (when piped),
    ``pid``, ``returncode`` (``None`` while it runs) and ``await wait()``."""

    def __init__(
        self,
        popen: _Waitable,
        stdin: trio.lowlevel.FdStream | None,
        stdout: trio.lowlevel.FdStream | None,
        stderr: trio.lowlevel.FdStream | None,
    ) -> None:
        self._popen = popen
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._lock = trio.Lock()
        self._pidfd: int | None = None
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            try:
                self._pidfd = pidfd_open(popen.pid)
            except OSError:  # an old kernel, or already reaped
                self._pidfd = None

    # Each stream for a caller that spawned with it piped (as :func:`spawn` does
    # by default): one that was not is a programming error, said here once.
    @property
    def stdin_pipe(self) -> trio.lowlevel.FdStream:
        return _piped(self.stdin, "stdin")

    @property
    def stdout_pipe(self) -> trio.lowlevel.FdStream:
        return _piped(self.stdout, "stdout")

    @property
    def stderr_pipe(self) -> trio.lowlevel.FdStream:
        return _piped(self.stderr, "stderr")

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        """Wait for the exit (and reap); safe to call from several tasks at once."""
        async with self._lock:
            if self._popen.poll() is None:
                if self._pidfd is not None:
                    await trio.lowlevel.wait_readable(self._pidfd)
                    self._popen.wait()
                else:
                    await trio.to_thread.run_sync(self._popen.wait, abandon_on_cancel=True)
            self._close_pidfd()
        code = self._popen.returncode
        assert code is not None
        return code

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            trio.lowlevel.notify_closing(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def send_signal(self, sig: int) -> None:
        self._popen.send_signal(sig)

    async def aclose_streams(self) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                await stream.aclose()


def _piped(stream: trio.lowlevel.FdStream | None, name: str) -> trio.lowlevel.FdStream:
    if stream is None:
        raise RuntimeError(f"the child's {name} is not piped")
    return stream


def spawn(
    command: Sequence[str],
    *,
    stdin: int | None = PIPE,
    stdout: int | None = PIPE,
    stderr: int | None = PIPE,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    start_new_session: bool = False,
    preexec_fn: Callable[[], None] | None = None,
    pass_fds: Sequence[int] = (),
) -> ChildProcess:
    """Start ``command`` now, from the calling (main) thread; raises ``OSError`` on failure.

    ``PIPE`` for a stream gives the parent a non-blocking trio stream for it.
    """
    ours: list[int] = []
    theirs: list[int] = []
    child: dict[str, int | None] = {}
    for name, how, child_reads in (
        ("stdin", stdin, True),
        ("stdout", stdout, False),
        ("stderr", stderr, False),
    ):
        if how == PIPE:
            r, w = os.pipe()
            child_end, parent = (r, w) if child_reads else (w, r)
            child[name] = child_end
            ours.append(parent)
            theirs.append(child_end)
        else:
            child[name] = how
            ours.append(-1)
    try:
        popen = subprocess.Popen(
            list(command),
            stdin=child["stdin"],
            stdout=child["stdout"],
            stderr=child["stderr"],
            cwd=cwd,
            env=env,
            start_new_session=start_new_session,
            preexec_fn=preexec_fn,
            pass_fds=tuple(pass_fds),
        )
    except BaseException:
        for fd in ours + theirs:
            if fd >= 0:
                os.close(fd)
        raise
    for fd in theirs:
        os.close(fd)
    streams = [trio.lowlevel.FdStream(fd) if fd >= 0 else None for fd in ours]
    return ChildProcess(popen, *streams)


def _close_from(low: int) -> None:
    """Close every descriptor from ``low`` up: those open, as listed in ``/proc``
    (the descriptor limit may be a billion, too many to close one by one)."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        open_fds = [resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 1]
    top = max(open_fds, default=low)
    os.closerange(low, min(top, 1 << 20) + 1)


class _Forked:
    """What :class:`ChildProcess` uses of ``subprocess.Popen``, for a child of :func:`fork`."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)


def fork(main: Callable[[], int]) -> ChildProcess:
    """Run ``main()`` in a forked copy of this process, with piped stdin and stdout.

    For worker processes that need what this process has already imported: a
    fresh interpreter spends about 0.3 s importing them again, per worker, on
    the way to a tournament's first game. Only before trio runs: a fork from
    inside a running loop would share its epoll and lose its threads, so the
    child starts a trio loop of its own from a process that has none. The child
    is what :func:`spawn` makes with ``start_new_session`` and
    :func:`child_preexec`: a session of its own, dead with its parent, no file
    descriptor beyond the three standard ones (this process's databases and
    pipes stay here); it leaves with ``os._exit``, running no ``atexit`` hook
    of this process.
    """
    try:
        trio.lowlevel.current_root_task()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("fork() while trio runs: use spawn()")
    to_child, ours_in = os.pipe()
    ours_out, from_child = os.pipe()
    hook = child_preexec([], default_signals=False)  # keeps ignoring SIGPIPE, as Python does
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - measured in the child, which leaves with _exit
        code = 1
        try:
            os.setsid()
            hook()
            os.dup2(to_child, 0)
            os.dup2(from_child, 1)
            _close_from(3)
            code = main()
        except KeyboardInterrupt:
            code = 130
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(to_child)
    os.close(from_child)
    process = _Forked(pid)
    return ChildProcess(
        process,
        trio.lowlevel.FdStream(ours_in),
        trio.lowlevel.FdStream(ours_out),
        None,
    )


_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux, looked up once in the parent; ``None`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_SIGKILL = int(signal.SIGKILL)


def die_with_parent() -> bool:
    """Have the kernel SIGKILL this process when its parent goes (Linux's
    ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; whether it could be asked).

    The one place the arena asks it, for bots (:func:`child_preexec`), worker
    processes and the analysis's solvers alike: a process of the arena's must not
    outlive it, and a SIGKILLed arena or a crash runs no ``finally`` to end it.
    The "parent" the kernel watches is the *thread* that forked, not the process
    (see the module docstring). Cheap enough for the child of a threaded parent.
    """
    if _PRCTL is None:
        return False
    _PRCTL(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    return True


def _load_signal() -> Callable[..., int] | None:
    """libc's ``signal``, which works in a child forked from any thread (Python's
    ``signal.signal`` refuses outside the main thread: a Ray actor's trio thread)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.signal
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_void_p]
    function.restype = ctypes.c_void_p
    return function


_SIGNAL = _load_signal()
_SIG_DFL = 0


def ignored_signals() -> list[int]:
    """The signals this process ignores now (``SigIgn`` in ``/proc/self/status``;
    elsewhere, the ones Python knows it ignores)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"SigIgn:"):
                    mask = int(line.split()[1], 16)
                    return [n for n in range(1, 65) if mask >> (n - 1) & 1]
    except (OSError, ValueError, IndexError):
        pass
    return [int(s) for s in signal.valid_signals() if signal.getsignal(s) == signal.SIG_IGN]


def child_preexec(
    limits: list[tuple[int, int, int]],
    *,
    cgroup_fds: Sequence[int] = (),
    default_signals: bool = True,
) -> Callable[[], None]:
    """The child-side hook, run between ``fork`` and ``exec``; everything computed beforehand.

    1. :func:`die_with_parent`: the kernel kills the bot when the arena dies, even
       by SIGKILL or a crash; :func:`spawn` forks from the thread running trio, the
       one the kernel watches.
       The signal is not inherited by the bot's own children: a helper that
       ignores the closing of its pipes may outlive a SIGKILLed arena (the
       arena's normal exits kill the whole group instead).
       If the arena died between ``fork`` and ``prctl``, the signal would never
       come, so the child checks that its parent is still the one that forked it.
    2. Joining the bot's own cgroup (``arena/engine/cgroups.py``): ``0`` written to each
       ``cgroup.procs`` opened by the parent, while still root, so everything the
       bot starts is counted there.
    3. ``setrlimit`` for the configured resource limits.
    4. (``default_signals``) Default actions for the signals the arena ignores and an
       empty signal mask: an ignored signal and the mask survive ``exec``, so an
       arena started in the background (``cmd &``, ``nohup``, a job runner: SIGINT
       and SIGQUIT ignored) or by a parent that blocks signals would pass that on
       to every bot, and to the bwrap and shell that start a sandboxed one.
       ``subprocess`` restores only SIGPIPE, SIGXFZ and SIGXFSZ. Not for a
       :func:`fork` that runs the arena's own code on (it writes to bots' pipes and
       must keep ignoring SIGPIPE, as Python does).

    No allocation-heavy work here: the child of a threaded parent must stay trivial.
    """
    parent = os.getpid()
    reset = _SIGNAL if default_signals else None
    ignored = ignored_signals() if reset is not None else []

    def apply() -> None:
        if die_with_parent() and os.getppid() != parent:
            os._exit(127)
        for fd in cgroup_fds:
            os.write(fd, b"0")
        for res, soft, hard in limits:
            resource.setrlimit(res, (soft, hard))
        if default_signals:
            if reset is not None:
                for number in ignored:
                    reset(number, _SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())

    return apply
