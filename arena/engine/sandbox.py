"""Bubblewrap sandbox for bot processes: a bot touches nothing but its own game.

Every bot process is started as ``bwrap ... -- COMMAND`` (the tool Flatpak uses,
package ``bubblewrap``), so that a hostile entrant cannot reach outside its game:

* **no network**: its own network namespace (only a loopback of its own), unless
  the tournament grants ``sandbox_net``;
* **an allow-list file system** (issue 22): bwrap's root is an empty tmpfs into
  which only this is bound, read-only: the system runtime (``/usr``, ``/bin``,
  ``/sbin``, ``/lib*``), what every user may read of ``/etc`` less its secrets
  (:data:`ETC_HIDDEN`: no shadow files, private keys or sudoers), a minimal
  ``/dev``, a ``/proc`` of its own,
  the arena's interpreter prefix and ``arena`` package, the bot's own paths
  (its working directory, its program's folder, files named on its command
  line: :func:`shown`) and its ``sandbox_ro`` grants; ``sandbox_rw`` grants are
  writable, and ``/tmp`` is a fresh, size-bounded tmpfs per process (its
  ``HOME``), as is ``/dev/shm`` (both open to every user, mode 1777). No
  other entrant's folder, no results folder (hidden even under a grant), no
  homes, and so no socket file outside the bot's own grants;
* **an unprivileged user and a seccomp filter** (``arena/engine/confine.py``), and a
  cgroup per bot bounding its memory and processes as a whole where the
  machine gives one (``arena/engine/cgroups.py``);
* **own PID namespace** with bwrap as its init and ``--die-with-parent``, and a
  reaper that kills the bot's process group when the arena is gone (``_WATCHED``):
  when the bot's game ends or the arena dies, every descendant dies too (``setsid``,
  double forks and SIGTERM-proof helpers included), and ``/proc`` shows only the
  bot's own processes (so the arena's ``/proc/PID/environ`` is out of reach; the
  init's environment is the scrubbed one the bot gets anyway);
* **no capabilities**: even an arena running as root gives its bots none.

The rlimits of :class:`arena.engine.config.ResourceLimits` are set on bwrap before it
execs, so they hold for everything inside. Start-up costs a few milliseconds per
bot process (``bench/overhead.py`` measures it).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from arena.engine.record import SandboxRecord

Mode = Literal["auto", "bwrap", "none"]
MODES: tuple[str, ...] = ("auto", "bwrap", "none")
MB = 1 << 20

INSTALL_HINT = "install it with: apt-get install bubblewrap (Fedora: dnf install bubblewrap)"
SCRATCH = "/tmp"
"""The private writable folder inside the sandbox, also the bot's ``HOME``."""


class SandboxError(ValueError):
    """The sandbox was demanded (``--sandbox bwrap``) but cannot run; one line."""


class SandboxSettings(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[sandbox]`` in a tournament file (and ``--sandbox`` on the command line).

    ``mode``: ``auto`` uses bwrap when it works here, else says so once and runs
    bots unconfined; ``bwrap`` insists; ``none`` opts out. ``scratch_mb`` bounds
    each bot's private ``/tmp`` (and ``/dev/shm``). ``hide`` adds folders the bots
    must not see (the results folder is always hidden). ``user``: who the bots
    run as when the arena runs as root (``arena/engine/confine.py``); an arena that is
    not root runs them as itself.
    """

    mode: Mode = "auto"
    scratch_mb: Annotated[int, Meta(ge=1)] = 64
    hide: list[str] = []
    user: Annotated[str, Meta(min_length=1)] = "nobody"


class Sandbox(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How one bot process is confined: the tournament's settings plus the bot's own grants."""

    mode: Mode = "auto"
    ro: list[str] = []
    """Extra paths visible read-only (``sandbox_ro``)."""
    rw: list[str] = []
    """Extra paths visible and writable (``sandbox_rw``)."""
    net: bool = False
    """Share the arena's network (``sandbox_net``)."""
    hide: list[str] = []
    """Folders covered by an empty tmpfs: the results folder and ``[sandbox] hide``."""
    scratch_bytes: int = 64 * MB
    user: str = "nobody"
    """Who the bot runs as under a root arena."""

    def record(self, mode: str, user: str = "", bound: str = "") -> SandboxRecord:
        """What the game record keeps: the mode in force, the bot's grants, its user and bound."""
        return SandboxRecord(
            mode=mode, ro=list(self.ro), rw=list(self.rw), net=self.net, user=user, bound=bound
        )


# --------------------------------------------------------------------------- availability


@functools.cache
def bwrap_path() -> str | None:
    return shutil.which("bwrap")


_inherited: dict[str, str | None] = {}
"""What a worker process was handed by its arena (:func:`inherit`): ``"view"``,
the arena's ``/etc`` view, and ``"probe"``, the arena's probe answer."""


def inherit(view: str | None, probe_answer: str | None) -> None:
    """Take the arena's ``/etc`` view and probe answer in a worker process.

    A worker plays with the sandbox its arena resolved; making its own view and
    probing bwrap again was a tenth of a second and more of each worker's start
    on a loaded machine. The view stays the arena's: made and removed by the
    arena process, whose pid it bears (so :func:`_sweep_views` keeps it while
    the arena lives, and workers die with their arena). A view that is gone or
    not a folder is not taken: the worker makes its own.
    """
    if view is not None and os.path.isdir(view) and not os.path.islink(view):
        _inherited["view"] = view
    _inherited["probe"] = probe_answer
    etc_view.cache_clear()
    probe.cache_clear()
    _system_args.cache_clear()


def shared() -> tuple[str | None, str | None] | None:
    """``(view, probe answer)`` for :func:`inherit` in this arena's workers, or
    ``None`` if this process has not probed bwrap (its sandbox is off)."""
    if probe.cache_info().currsize == 0:
        return None
    return etc_view(), probe()


@functools.cache
def probe() -> str | None:
    """Why bwrap cannot confine a process here, or ``None`` if it can (checked once,
    in the arena: its workers :func:`inherit` the answer).

    Runs a real sandboxed ``true`` with the same options bots get, since bwrap
    may be installed yet refused user namespaces (some containers, hardened
    kernels without setuid bwrap).
    """
    if "probe" in _inherited:
        return _inherited["probe"]
    exe = bwrap_path()
    if exe is None:
        return "bwrap is not installed"
    from arena.engine.confine import IdentityError, bot_identity, seccomp_fd

    true = shutil.which("true") or "/bin/true"
    try:
        identity = bot_identity(Sandbox().user)
        fd = seccomp_fd(refuse_memfd=True)
    except (IdentityError, OSError, ImportError, RuntimeError) as exc:
        return f"the sandbox cannot be set up: {exc}"
    argv = wrap(Sandbox(mode="bwrap"), [true], None, seccomp_fd=fd, identity=identity)
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, pass_fds=(fd,))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot start: {exc}"
    finally:
        os.close(fd)
    if done.returncode != 0:
        words = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap fails here: {words[-1] if words else f'exit code {done.returncode}'}"
    return None


_warned: list[str] = []


def _warn_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def resolve(mode: str, warn: Callable[[str], None] = _warn_stderr) -> Literal["bwrap", "none"]:
    """The mode in force for ``mode``: ``auto`` becomes ``bwrap`` or ``none``.

    ``auto`` without a working bwrap warns once per process, in one line;
    ``bwrap`` without one raises :class:`SandboxError`.
    """
    if mode == "none":
        return "none"
    reason = probe()
    if reason is None:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError(f"sandbox 'bwrap' unavailable: {reason}; {INSTALL_HINT}")
    if not _warned:
        _warned.append(reason)
        warn(f"arena: warning: {reason}: bots run unconfined (no sandbox); {INSTALL_HINT}")
    return "none"


# --------------------------------------------------------------------------- command line

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system runtime, shown read-only (a symlink into ``/usr`` stays one)."""
ETC_HIDDEN = (
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh/ssh_host_*key",
    "ssl/private",
    "pki/*/private",
    "machine-id",
    "security/opasswd",
    "krb5.keytab",
    "credstore",
    "credstore.encrypted",
    "NetworkManager/system-connections",
    "wireguard",
    "ipsec.secrets",
    "ipsec.d/private",
    "ppp/*-secrets",
    "letsencrypt",
)
"""What a bot never sees of ``/etc`` (``fnmatch`` patterns of paths relative to it),
even where its mode lets everyone read it: passwords and their hashes, who may
become root, host and TLS private keys, the machine's id and stored
credentials. The rest of ``/etc`` that every user may read is shown (:func:`etc_view`):
what language runtimes read there (``java-17-openjdk``, ``mono``, certificates,
time zone and locale data, the dynamic linker's cache, ``alternatives``, mime
types...) is no secret from an unprivileged user, and a list of it would always
miss some runtime's."""
ETC_FILE_MAX = 64 << 20
"""A file of ``/etc`` larger than this is left out of the view (which lives in memory)."""
NOT_SHOWN = ("/etc", "/proc", "/dev", "/sys", "/run")
"""Never bound in as a bot's own folder: what the sandbox gives of these is all it sees."""


def _parents(path: str, made: set[str]) -> list[str]:
    """``--dir`` for each folder above ``path`` not made yet, open to every user.

    bwrap would make them owner-only when it runs as root (a bot running as
    ``nobody`` could then not reach ``/etc/ssl/certs`` nor ``/root/x``).
    """
    args = []
    parts = path.split("/")
    for depth in range(2, len(parts)):
        folder = "/".join(parts[:depth])
        if folder not in made and not _under(folder, (*SYSTEM, "/etc")):  # see _stand_in
            made.add(folder)
            args += ["--perms", "0755", "--dir", folder]
    return args


VIEW_FOLDERS = ("/dev/shm",)
"""Where the ``/etc`` view is made when one of these takes a folder: a memory file
system, where its 700 links take a few milliseconds. On a disk (``/tmp`` on ext4
here) each link is a journalled metadata write of about a millisecond: 0.5 to 0.9 s
of every arena's and worker's start."""


def _view_folder() -> str:
    """The first of :data:`VIEW_FOLDERS` that is a folder we may write in, else the
    temporary folder."""
    import tempfile

    for folder in VIEW_FOLDERS:
        if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return tempfile.gettempdir()


@functools.cache
def etc_view() -> str | None:
    """A copy of what every user may read of ``/etc`` less :data:`ETC_HIDDEN`, made
    once per arena (its worker processes :func:`inherit` it).

    A copy, not a bind of ``/etc`` with the secrets covered: one bind costs bwrap
    a mount and a pass over the mount table, and each covered name would cost
    another; and a copy shows only what everyone may read (a file only its
    owner or group may read is not there at all). Folders keep their modes,
    files too (less set-user-ID bits). Symbolic links are copied as links when
    they lead into the system runtime, ``/etc``, ``/proc`` or ``/dev``
    (``alternatives``, ``localtime``, ``mtab``); a link elsewhere
    (``resolv.conf`` into ``/run``) is copied as the file it names, if everyone
    may read it. Sockets, pipes and devices are left out. ``None`` when it
    cannot be made. The copy lives in a memory file system where there is one
    (:data:`VIEW_FOLDERS`).
    """
    import atexit
    import tempfile

    if "view" in _inherited:
        return _inherited["view"]
    folder = _view_folder()
    for place in dict.fromkeys((folder, tempfile.gettempdir())):
        _sweep_views(place)
    try:
        root = tempfile.mkdtemp(prefix=f"arena-etc-{os.getpid()}-", dir=folder)
        atexit.register(shutil.rmtree, root, True)
        view = os.path.join(root, "etc")
        _copy_visible("/etc", view, "")
        os.chmod(view, 0o755)  # whatever /etc's mode: the bot's user reads it
    except OSError:
        return None
    return view


@functools.cache
def _etc_hidden() -> re.Pattern[str]:
    """:data:`ETC_HIDDEN` as one expression: one match per entry of ``/etc``."""
    import fnmatch

    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in ETC_HIDDEN))


def _copy_visible(source: str, target: str, relative: str) -> None:
    """Copy what every user may read of the folder ``source`` to ``target``.

    Without ``copystat`` of every entry (times and extended attributes, a handful
    of system calls each): ``alternatives`` alone holds hundreds of links.
    """
    hidden = _etc_hidden()
    os.mkdir(target, 0o700)
    with os.scandir(source) as entries:
        for entry in entries:
            name = relative + entry.name
            if hidden.match(name):
                continue
            path = os.path.join(target, entry.name)
            try:
                if entry.is_symlink():
                    _copy_link(source, entry.name, path)
                    continue
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o005 == 0o005:
                    _copy_visible(entry.path, path, name + "/")
                elif stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
                    _copy_file(entry.path, path, st)
            except (PermissionError, FileNotFoundError):
                continue  # gone meanwhile, or not even root's to read (a FUSE mount)
    os.chmod(target, os.stat(source).st_mode & 0o777)


_LINKED = (*SYSTEM, "/etc", "/proc", "/dev")
"""Where a link of ``/etc`` may lead and stay a link: paths the sandbox has."""


def _copy_link(folder: str, name: str, target: str) -> None:
    """A link of ``/etc``: kept as a link into the sandbox's own paths, else its file.

    Judged by where it points as written (no resolving of the hundreds of
    ``alternatives`` links): one that points into :data:`_LINKED` but leads on
    elsewhere ends at a path the sandbox does not have, as a dangling link does.
    """
    link = os.readlink(os.path.join(folder, name))
    if _under(os.path.normpath(os.path.join(folder, link)), _LINKED):
        os.symlink(link, target)
        return
    try:
        real = os.path.realpath(os.path.join(folder, name))
        st = os.stat(real)
    except OSError:
        return  # dangling: nothing to show
    if stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
        _copy_file(real, target, st)


def _copy_file(source: str, target: str, st: os.stat_result) -> None:
    """``source``'s bytes and mode (less set-user-ID bits), if not over :data:`ETC_FILE_MAX`."""
    if st.st_size > ETC_FILE_MAX:
        return
    fd_in = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fd_out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            while os.sendfile(fd_out, fd_in, None, 1 << 20):
                pass
            os.fchmod(fd_out, st.st_mode & 0o755)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _sweep_views(folder: str) -> None:
    """Remove the ``/etc`` copies of arena processes that ended without removing theirs."""
    from arena.engine.cgroups import dead_arenas

    for name in dead_arenas(folder, ("etc",)):
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


@functools.cache
def _system_args() -> tuple[str, ...]:
    args: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    view = etc_view()
    if view is not None:
        return (*args, "--ro-bind", view, "/etc")
    # No copy: /etc itself with the hidden names covered (more mounts per start, and
    # what only root may read stays there, unreadable to the bot's user).
    import glob

    args += ["--ro-bind", "/etc", "/etc"]
    for pattern in ETC_HIDDEN:
        for path in sorted(glob.glob(f"/etc/{pattern}")):
            if os.path.isdir(path) and not os.path.islink(path):
                args += ["--tmpfs", path, "--remount-ro", path]
            else:
                args += ["--ro-bind", "/dev/null", path]
    return tuple(args)


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _too_broad(path: str) -> bool:
    """A whole home folder (or a top-level folder) is never bound in for a program."""
    return path in ("/", "/root") or os.path.dirname(path) in ("/", "/home")


def arena_package() -> str:
    """The ``arena`` package folder: built-in bots (and any Python bot) import ``arena.sdk``."""
    return str(Path(__file__).resolve().parents[1])


@functools.cache
def _arena_paths() -> tuple[str, ...]:
    """The interpreter prefixes and the ``arena`` package, resolved once per process:
    resolving them at every bot start was most of :func:`shown`'s time."""
    return tuple(dict.fromkeys(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)))


def shown(command: Sequence[str], cwd: str | None, path_env: str | None) -> list[str]:
    """The bot's own paths: its folder, its program, files on its command line.

    A file is shown with its folder (a script imports its siblings), the
    executable's ``bin`` or ``shims`` folder also with its parent (``PREFIX`` for
    ``PREFIX/bin``: a virtualenv, or ``~/.pyenv`` for pyenv's shims) unless that
    is a whole home folder; and the arena's own interpreter prefix and package (built-in bots
    import ``arena.sdk``). Nothing above these: not the folder they lie in.
    """
    wanted = [*_arena_paths(), arena_package()]
    real = set(wanted)  # already resolved
    if cwd is not None:
        wanted.append(cwd)
    base = cwd or os.getcwd()
    exe = command[0] if "/" in command[0] else shutil.which(command[0], path=path_env)
    words = [exe] if exe else []
    words += [w for w in command[1:] if w.startswith("/") or os.path.exists(os.path.join(base, w))]
    for word in words:
        path = os.path.join(base, word)
        resolved = os.path.realpath(path)
        for p in dict.fromkeys((os.path.abspath(path), resolved)):
            if not os.path.exists(p):
                continue
            folder = os.path.dirname(p) if os.path.isfile(p) else p
            wanted += [p, folder]
            prefix = os.path.dirname(folder)
            if word == exe and os.path.basename(folder) in ("bin", "shims"):
                wanted.append(prefix)  # PREFIX of PREFIX/bin, ~/.pyenv of shims
        if resolved not in real and os.path.exists(resolved):  # its folder is resolved too
            real.update((resolved, os.path.dirname(resolved)))
    out = []
    for p in dict.fromkeys(p if p in real else os.path.realpath(p) for p in wanted):
        if not _too_broad(p) and not _under(p, SYSTEM) and not _under(p, NOT_SHOWN):
            out.append(p)
    return out


SHELL = "/bin/sh"
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin") or "/usr/bin/setpriv"
"""util-linux's ``setpriv``: the user switch inside a root arena's sandbox."""
_OUTER = 'exec 3<&0 4>&1 0</dev/null 1>/dev/null; exec "$@"'
_INNER = 'exec 0<&3 1>&4 3<&- 4>&-; exec "$@"'
"""The bot's stdin and stdout pipes travel through bwrap as fds 3 and 4, which
bwrap's own processes close, and are put back at 0 and 1 just before the bot
starts. Otherwise bwrap would keep both open for the bot's whole life, and a
bot that closes its stdout or stdin would not be seen doing so."""

_WATCHED = (
    "exec 3<&0 4>&1 0</dev/null 1>/dev/null; "
    '(exec 3<&- 4>&- 2>/dev/null 5<"/proc/self/fd/$1"; read x <&5; kill -KILL -$$) & '
    'shift; exec "$@"'
)
""":data:`_OUTER` with a reaper: a subshell in the bot's process group that reads
fd ``$1``, the read end of a pipe whose other end only the arena holds, and kills
the whole group when that pipe ends, that is, when the arena (or its worker)
has died. The group is the one the wrapper leads (``-$$``: the caller starts it
in a session of its own); a wrapper that leads none kills nothing. The reaper
holds none of the bot's pipes, stderr included, and a pipe it cannot open ends
it without a kill.

Why: bwrap killed between its ``clone`` and its child's set-up leaves that child
waiting forever for a go that never comes (bubblewrap issue #633), outside the
sandbox's PID namespace and with no parent-death signal of its own; an arena
SIGKILLed while a bot started did leave one. The reaper takes it along. (A pipe
rather than a parent-death signal: the reaper's parent is bwrap, and a pipe that
ends before the reaper reads it still ends: no race. bwrap itself is still
exec'd in the foreground, so the bot gets SIGINT and SIGQUIT as a shell's
background command would not. The pipe is opened through ``/proc``, as the
shell names only fds 0 to 9, and reaches bwrap as ``--sync-fd``, which bwrap's
init keeps and closes before the bot starts.)"""


def missing_program(command: Sequence[str], cwd: str | None, path_env: str | None) -> str | None:
    """Why ``command[0]`` cannot be executed, as ``exec`` would say, or ``None``.

    Checked before starting bwrap: inside, a missing program is only bwrap's
    exit code 1, which would pass for the bot's own crash.
    """
    word = command[0] if command else ""
    if "/" in word:
        path: str | None = os.path.join(cwd or os.getcwd(), word)
    else:
        path = shutil.which(word, path=path_env) if word else None
    if path is None or not os.path.exists(path):
        return f"[Errno 2] No such file or directory: {word!r}"
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        return f"[Errno 13] Permission denied: {word!r}"
    return None


def bound_paths(
    sandbox: Sandbox, command: Sequence[str], cwd: str | None, path_env: str | None
) -> list[str]:
    """Every path outside the system runtime that bwrap binds: what the bot's user must reach."""
    return [*shown(command, cwd, path_env), *sandbox.ro, *sandbox.rw]


def wrap(
    sandbox: Sandbox,
    command: Sequence[str],
    cwd: str | None,
    path_env: str | None = None,
    *,
    seccomp_fd: int | None = None,
    identity: tuple[int, int] | None = None,
    watch_fd: int | None = None,
) -> list[str]:
    """``bwrap OPTIONS -- COMMAND``: ``command`` run in ``cwd`` inside ``sandbox``.

    The root is bwrap's own empty tmpfs; only what is listed here is bound in:
    the system runtime and ``/etc`` less its secrets (:data:`SYSTEM`,
    :func:`etc_view`), a minimal ``/dev``, a ``/proc`` of its own, a private
    ``/tmp`` and ``/dev/shm``, the bot's
    own paths (:func:`shown`) and its grants. ``cwd`` ``None``: the bot starts
    in its private ``/tmp``. ``seccomp_fd``: a filter from ``arena/engine/confine.py``.
    ``identity``: the ``(uid, gid)`` a root arena's bot runs as; bwrap then runs
    as root (it must reach the bot's files even below an owner-only folder such
    as ``/root``) without a user namespace, keeping only the capability to change
    user, and ``setpriv`` switches to ``identity`` as the last step before the
    bot (no way back: ``--no-new-privs``, and changing user clears capabilities).
    ``watch_fd``: the read end of a pipe the caller holds open for the bot's life
    (passed to the child); when it ends, the bot's whole process group is killed
    (:data:`_WATCHED`).
    """
    exe = bwrap_path() or "bwrap"
    hidden = [os.path.realpath(h) for h in sandbox.hide if os.path.isdir(h)]
    args = [exe, "--die-with-parent"]
    if watch_fd is not None:
        args += ["--sync-fd", str(watch_fd)]
    if identity is None:  # bwrap as the arena's own user, in a user namespace of its own
        args += ["--unshare-user", "--unshare-all", "--disable-userns", "--cap-drop", "ALL"]
        if sandbox.net:
            args.append("--share-net")
    else:  # a root arena: bwrap as root, the bot as ``identity`` (see arena/engine/confine.py)
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not sandbox.net:
            args.append("--unshare-net")
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += [*_system_args(), "--dev", "/dev", "--proc", "/proc"]
    size = str(sandbox.scratch_bytes)
    args += [
        "--perms",
        "1777",
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "1777",
        "--size",
        size,
        "--tmpfs",
        SCRATCH,
    ]
    made: set[str] = set()
    mine = shown(command, cwd, path_env)
    for path in [*mine, *sandbox.ro, *sandbox.rw]:
        args += _parents(path, made)  # the folders above are the sandbox's own
    own = [p for p in mine if not _under(p, hidden)]
    for path in own:
        if not any(path != outer and _under(path, [outer]) for outer in own):  # one suffices
            args += ["--ro-bind", path, path]
    grants = [("--ro-bind", p) for p in sandbox.ro] + [("--bind", p) for p in sandbox.rw]
    for _, path in grants:
        _stand_in(path)
    inside = [(how, p) for how, p in grants if _under(os.path.realpath(p), hidden)]
    for how, path in [g for g in grants if g not in inside]:
        args += [how, path, path]
    for path in hidden:  # after the paths around them: those do not show them again
        args += ["--tmpfs", path, "--remount-ro", path]
    for how, path in inside:  # ...but a grant inside one is still granted
        args += [how, path, path]
    args += ["--remount-ro", "/", "--chdir", cwd or SCRATCH, "--"]
    if identity is not None:
        uid, gid = identity
        args += [
            SETPRIV,
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--no-new-privs",
            "--",
        ]
    args += [SHELL, "-c", _INNER, "sh", *command]
    if watch_fd is not None:
        return [SHELL, "-c", _WATCHED, "sh", str(watch_fd), *args]
    return [SHELL, "-c", _OUTER, "sh", *args]


def _stand_in(path: str) -> None:
    """An empty stand-in in the ``/etc`` view for a grant under ``/etc`` that the view
    lacks (a hidden name, a file only its owner may read, one made since), so that
    bwrap has a place to mount it: the view is read-only inside, where bwrap
    could not make one (``Can't mkdir /etc/x: Read-only file system``). Without
    a view the real ``/etc`` is bound, where the granted path exists already."""
    view = etc_view()
    if view is None or not _under(path, ["/etc"]) or path == "/etc":
        return
    inside = os.path.join(view, os.path.relpath(path, "/etc"))
    if os.path.lexists(inside):
        return
    os.makedirs(os.path.dirname(inside), mode=0o755, exist_ok=True)
    if os.path.isdir(path):
        os.makedirs(inside, mode=0o755, exist_ok=True)
    else:
        os.close(os.open(inside, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))


def exit_status(returncode: int) -> int:
    """bwrap reports a bot killed by signal N as exit code 128 + N; give back ``-N``."""
    if 128 < returncode < 128 + 65:
        return 128 - returncode
    return returncode


__all__ = [
    "INSTALL_HINT",
    "MODES",
    "Mode",
    "Sandbox",
    "SandboxError",
    "SandboxSettings",
    "exit_status",
    "probe",
    "resolve",
    "wrap",
]
