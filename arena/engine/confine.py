"""Who a sandboxed bot runs as, and which system calls it is refused (issue 22).

Two things bubblewrap alone does not give:

* **an unprivileged identity.** An arena running as root (containers, CI) would
  otherwise run its bots as root with capabilities dropped: owner-only files
  such as ``/etc/shadow`` stay readable to them, and ``RLIMIT_NPROC`` means
  nothing (the kernel does not apply it to root). So a root arena switches each
  bot process to ``[sandbox] user`` (``nobody`` by default) in the child, after
  bwrap builds the sandbox (as root: it must reach the bot's files even below
  an owner-only folder, like a pyenv interpreter under ``/root``) and
  ``setpriv`` switches to the bot's user as the last step before the bot, with
  ``no_new_privs`` (no setuid program gives root back) and no capabilities
  left. The bot's private ``/tmp`` is writable by it (mode 1777, its own tmpfs).
  An arena that is not root keeps its own user: it has no other to give, and
  bwrap confines it in an unprivileged user namespace.
* **a seccomp filter** (built with libseccomp through ``pyseccomp``, exported
  as BPF and handed to bwrap with ``--seccomp FD``), after the list Flatpak
  keeps in ``flatpak-run.c``: the kernel keyrings (``add_key``, ``keyctl``,
  ``request_key``: the arena's session keyring would otherwise be shared by
  every bot, a channel between entrants), namespaces and mounts (``unshare``,
  ``setns``, ``clone``/``clone3`` with a new user namespace, the mount calls),
  ``TIOCSTI`` (typing into a terminal), ``io_uring`` and ``memfd_secret``, socket
  families other than UNIX, INET, INET6 and NETLINK (``EAFNOSUPPORT``) and a few
  calls no bot needs. Where no
  cgroup bounds a bot's memory as a whole, ``memfd_create`` is refused too: a
  memfd's pages count against no process's address space.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import pwd
import termios
from typing import Any

SAFE_FD = 10
"""Lowest descriptor number for the filter: the sandbox's shell uses 3 and 4."""

CLONE_NEWUSER = 0x10000000

# Aligned by hand: a table reads better in rows.
# fmt: off
REFUSED = {
    errno.EPERM: (
        "add_key", "keyctl", "request_key",  # the kernel keyrings
        "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
        "syslog", "uselib", "acct", "quotactl", "modify_ldt",
        "move_pages", "mbind", "get_mempolicy", "set_mempolicy", "migrate_pages",
        "kexec_load", "init_module", "finit_module", "delete_module", "bpf",
        "perf_event_open", "userfaultfd",
        # io_uring does file and socket work no filter sees (and is a common kernel
        # exploit path); memfd_secret's memory is unmapped from the kernel itself.
        "io_uring_setup", "io_uring_enter", "io_uring_register", "memfd_secret",
    ),
    # ENOSYS, as Flatpak answers: a program then falls back to the older call
    # (clone3 to clone, whose flags the filter can see; the new mount API to mount).
    errno.ENOSYS: (
        "clone3", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
        "mount_setattr",
    ),
}
# fmt: on

SOCKET_FAMILIES = (0, 1, 2, 10, 16)
"""``AF_UNSPEC``, ``AF_UNIX``, ``AF_INET``, ``AF_INET6``, ``AF_NETLINK``: the socket
families a bot may open, as Flatpak's filter allows; any other (``AF_VSOCK`` to the
host, ``AF_ALG``, ``AF_PACKET``...) answers ``EAFNOSUPPORT``, as on a kernel without it."""


class IdentityError(ValueError):
    """``[sandbox] user`` names no user on this machine; one line."""


def lookup_user(name: str) -> tuple[int, int]:
    """``(uid, gid)`` of ``name`` (a user name or a number); :class:`IdentityError` if none."""
    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except (KeyError, OverflowError):
        raise IdentityError(f"no user {name!r} on this machine") from None
    if entry.pw_uid == 0:
        raise IdentityError(f"user {name!r} is root: bots must run as an unprivileged user")
    return entry.pw_uid, entry.pw_gid


def bot_identity(user: str) -> tuple[int, int] | None:
    """The ``(uid, gid)`` a bot process switches to, or ``None`` to keep the arena's.

    Only root switches: an ordinary user cannot become another one, and its bots
    are already as unprivileged as the arena itself.
    """
    if os.geteuid() != 0:
        return None
    return lookup_user(user)


@functools.cache
def seccomp_program(refuse_memfd: bool) -> bytes:
    """The filter as BPF bytes (built once per variant), for bwrap's ``--seccomp``."""
    import tempfile

    import pyseccomp as sc

    f = sc.SyscallFilter(sc.ALLOW)
    for code, names in REFUSED.items():
        for name in names:
            try:
                f.add_rule(sc.ERRNO(code), name)
            except (RuntimeError, ValueError, OSError):  # a call this architecture lacks
                continue
    f.add_rule(
        sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
    )
    f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, termios.TIOCSTI))
    if refuse_memfd:
        f.add_rule(sc.ERRNO(errno.EPERM), "memfd_create")
    _refuse_socket_families(f, sc)
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.flush()
        out.seek(0)
        return out.read()


def _refuse_socket_families(f: Any, sc: Any) -> None:
    """``socket`` of a family outside :data:`SOCKET_FAMILIES` answers ``EAFNOSUPPORT``:
    one rule per family between the allowed ones, one for every family above them."""
    refuse = sc.ERRNO(errno.EAFNOSUPPORT)
    rules = [
        sc.Arg(0, sc.EQ, family)
        for family in range(SOCKET_FAMILIES[-1])
        if family not in SOCKET_FAMILIES
    ]
    rules.append(sc.Arg(0, sc.GE, SOCKET_FAMILIES[-1] + 1))
    for rule in rules:
        try:
            f.add_rule_exactly(refuse, "socket", rule)
        except (RuntimeError, ValueError, OSError):  # socketcall architectures: no filter here
            continue


def seccomp_fd(refuse_memfd: bool) -> int:
    """A fresh descriptor (number >= :data:`SAFE_FD`) holding the filter; the caller closes it.

    bwrap reads it to the end, so each bot process needs its own.
    """
    program = seccomp_program(refuse_memfd)
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, SAFE_FD)
    finally:
        os.close(fd)
    return high


def reachable(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid`` (in group ``gid``, no others) may read ``path`` (and enter it, a folder).

    Only the path's own mode counts: the folders above it are the sandbox's own
    (``arena/engine/sandbox.py``). Checked beforehand so that a bot whose folder is
    owner-only fails to start with a line that says so, not as a crash.
    """
    try:
        st = os.stat(path)
    except OSError:
        return False
    need = 5 if os.path.isdir(path) else 4
    if st.st_uid == uid:
        bits = (st.st_mode >> 6) & 7
    elif st.st_gid == gid:
        bits = (st.st_mode >> 3) & 7
    else:
        bits = st.st_mode & 7
    return bits & need == need
