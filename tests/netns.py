"""A network namespace a test makes for itself, optionally with a delayed path.

Network tests use loopback or a namespace the test makes, never another
address (GUIDE.md). :func:`namespace` (or :func:`open_namespace` under trio)
makes a fresh namespace joined to the root namespace by a veth pair on a
private /30 that no existing address or route of the root namespace overlaps::

    root namespace                         the test's namespace
    host_addr (x.x.x.1/30) on host_veth <--> ns_veth  ns_addr (x.x.x.2/30), lo up

With ``rtt_ms``, what goes from inside the namespace to a server in the root
namespace and back takes ``rtt_ms`` longer, half each way, made by one of two
methods (:attr:`Netns.delay` says which ran):

- ``"netem"``: a ``tc netem delay`` of ``rtt_ms / 2`` on each end's egress of
  the veth, where the kernel has the netem qdisc (``sch_netem``). The whole
  link is delayed, so the server is dialled directly.
- ``"relay"``: otherwise, a delaying TCP relay (tests/relay.py) the test runs
  in its own trio loop, listening on ``host_addr`` and forwarding to the
  server, ``rtt_ms / 2`` each way. This machine's kernel, and CI's (the same
  kind of machine, where a skipped test is an error), has no netem: ``tc qdisc
  ... netem`` says "Specified qdisc kind is unknown". A delay that a test of
  remote bots could never have here is no test, so it comes from user space.

:func:`delayed_path` hides the difference: given the server's address, it gives
the address a client inside the namespace dials, the server itself with netem,
the relay's otherwise. Everything is torn down when the block ends, whatever
happened in it; namespaces that a killed earlier run left behind (named
:data:`PREFIX`, their owner's lock free) are swept on the next entry. A machine
without ``ip`` or root skips the test, or fails it under ``ARENA_REQUIRE_ALL=1``
(tests/needs.py).

How the remote-bot latency test (tests/test_remote_latency.py, issue 37) uses
it: the gateway listens in the root namespace on the host-side address, and
``arena connect`` runs inside the namespace through :meth:`Netns.argv`, dialling
the address :func:`delayed_path` gives, so every byte between them (moves,
clocks, the WebSocket's pings) crosses the round trip::

    async with netns.open_namespace(rtt_ms=40) as ns, trio.open_nursery() as nursery:
        url = await nursery.start(lambda task_status: serve(
            site, Listen(ns.host_addr, 0, None), gateway=gateway, task_status=task_status))
        port = int(url.rsplit(":", 1)[1])
        async with netns.delayed_path(ns, ns.host_addr, port) as (host, via):
            process = await trio.lowlevel.open_process(ns.argv(
                sys.executable, "-m", "arena.cli", "connect", f"http://{host}:{via}", ...))
            ...  # charged time per move == think time + rtt - leeway, within 5 ms
                 # (name ns.delay in the assertion's message)

The relay runs in the test's loop, so the test must keep that loop free (wait on
the processes, do not block it). With the relay the TCP handshake is not
delayed (netem delays it by a round trip): a connection's first message, not its
connect, is what a move's charged time contains.

In a trio test, call ``needs.netns()`` from a plain fixture first, as
tests/test_netns.py does: pytest-trio 0.8 reports a skip raised inside trio as a
bare "Skipped", without its reason.

A server bound to 127.0.0.1 in the root namespace is not reachable from inside
(the namespace has a loopback of its own): bind to ``ns.host_addr``.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import math
import os
import random
import secrets
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import needs
import relay
import trio

PREFIX = "arena-t-"
"""The name of every namespace (and host-side veth) made here: ``arena-t-`` and
six hex digits, 14 characters, within an interface name's 15."""

LOCKS = Path("/run/arena-test-netns")
"""One lock file per live namespace, held (flock) by the process that made it:
a namespace whose lock can be taken belongs to a run that is gone. A lock
rather than a process id, so that runs in other worktrees, or in another PID
namespace, are never mistaken for dead."""

NS_VETH = "veth0"
"""The namespace-side end of the pair (alone in its namespace, so a fixed name)."""

POOL = ipaddress.IPv4Network("10.0.0.0/8")
"""Where the /30 is picked from, at random, away from every route and address."""

COMMAND_TIMEOUT = 20.0
"""A deadline for each ``ip``/``tc`` command (they take milliseconds)."""


Delay = Literal["netem", "relay"]
"""The two ways of delaying the path (module docstring)."""


@dataclass(frozen=True)
class Netns:
    """A live namespace: where to listen, where the client is, how to run in it."""

    name: str
    host_addr: str
    """The root namespace's end: a server here is reachable from inside."""
    ns_addr: str
    """The namespace's end: where a process run through :meth:`argv` connects from."""
    host_veth: str
    rtt_ms: float | None
    """The round trip added (half each way), or ``None`` for none."""
    delay: Delay | None = None
    """How ``rtt_ms`` is added (``None`` without it): ``"netem"`` on the veth, or
    ``"relay"``, a relay that :func:`delayed_path` runs."""

    def argv(self, *command: str) -> list[str]:
        """``command`` run inside the namespace (as a subprocess's argv)."""
        return ["ip", "netns", "exec", self.name, *command]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)


def _must(*argv: str) -> str:
    done = _run(*argv)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().replace("\n", " ")
        raise RuntimeError(f"{' '.join(argv)} failed (exit {done.returncode}): {said}")
    return done.stdout


def _claim() -> tuple[str, int]:
    """A fresh name and its lock, held (a descriptor, kept open while the
    namespace lives). The lock file is made exclusively: two runs that draw the
    same six hex digits (pytest-xdist workers, other worktrees) do not share a
    name, the second draws again, where a shared lock file would have had it
    wait for the first and then hold a lock that the first's teardown unlinked."""
    LOCKS.mkdir(mode=0o700, exist_ok=True)
    while True:
        name = PREFIX + secrets.token_hex(3)
        try:
            fd = os.open(LOCKS / name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        return name, fd


def _abandoned(name: str) -> bool:
    """Whether the run that made ``name`` is gone (its lock is free)."""
    try:
        fd = os.open(LOCKS / name, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return True  # made before a lock existed, or its folder was cleared
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # also releases the lock just taken
    return True


def _namespaces() -> list[str]:
    listed = json.loads(_must("ip", "-j", "netns", "list") or "[]")
    return [entry["name"] for entry in listed]


def _links() -> list[str]:
    return [link["ifname"] for link in json.loads(_must("ip", "-j", "link", "show"))]


def sweep() -> list[str]:
    """Delete the namespaces and host-side veths that killed runs left; their names."""
    gone: list[str] = []
    for name in sorted(
        {n for n in _namespaces() + _links() if n.startswith(PREFIX) and _abandoned(n)}
    ):
        _run("ip", "link", "del", name)
        _run("ip", "netns", "del", name)
        with contextlib.suppress(FileNotFoundError):
            (LOCKS / name).unlink()
        gone.append(name)
    return gone


def _taken() -> list[ipaddress.IPv4Network]:
    """Every IPv4 network the root namespace has an address or a route in."""
    nets: list[ipaddress.IPv4Network] = []
    for link in json.loads(_must("ip", "-j", "-4", "addr", "show")):
        for info in link.get("addr_info", []):
            nets.append(ipaddress.IPv4Network(f"{info['local']}/{info['prefixlen']}", strict=False))
    for route in json.loads(_must("ip", "-j", "-4", "route", "show", "table", "all")):
        dst = route.get("dst", "")
        if dst in ("default", "") or ":" in dst:
            continue  # the default route overlaps everything and is no obstacle
        nets.append(ipaddress.IPv4Network(dst if "/" in dst else f"{dst}/32", strict=False))
    return nets


def _pick(taken: list[ipaddress.IPv4Network]) -> ipaddress.IPv4Network:
    """A random /30 of :data:`POOL` that overlaps nothing in ``taken``."""
    free = [POOL]
    for net in taken:
        left: list[ipaddress.IPv4Network] = []
        for block in free:
            if not block.overlaps(net):
                left.append(block)
            elif not block.subnet_of(net):
                left.extend(block.address_exclude(net))
        free = left
    blocks = [block for block in free if block.prefixlen <= 30]
    if not blocks:
        raise RuntimeError(f"no free /30 left in {POOL}")
    block = random.choices(blocks, weights=[b.num_addresses for b in blocks])[0]
    offset = 4 * random.randrange(block.num_addresses // 4)
    return ipaddress.IPv4Network((int(block.network_address) + offset, 30))


def _netem(device: str, one_way_ms: float, *, inside: str | None = None) -> None:
    """Delay every packet ``device`` sends (in namespace ``inside``, else the root one)."""
    where = ["-n", inside] if inside is not None else []
    delay = f"{round(one_way_ms * 1000)}us"
    _must("tc", *where, "qdisc", "add", "dev", device, "root", "netem", "delay", delay)


@contextlib.contextmanager
def namespace(rtt_ms: float | None = None, *, delay: Delay | None = None) -> Iterator[Netns]:
    """A fresh namespace linked to the root one; with ``rtt_ms``, a delayed path.

    The delay is netem where the kernel has it, else the relay; ``delay`` asks
    for one (``"netem"`` where the kernel lacks it is an error, with tc's
    reason). Needs root and ``ip`` (``needs.netns``): otherwise the test is
    skipped (failed in CI).
    """
    if rtt_ms is not None and not 0 < rtt_ms < math.inf:
        raise ValueError(f"rtt_ms must be positive, not {rtt_ms}")
    if delay is not None and rtt_ms is None:
        raise ValueError(f"delay={delay!r} without rtt_ms: nothing to delay")
    needs.netns()
    if rtt_ms is not None and delay is None:
        delay = "netem" if netem_missing() is None else "relay"
    elif delay == "netem" and (reason := netem_missing()) is not None:
        raise RuntimeError(reason)
    sweep()
    name, lock = _claim()
    try:
        _must("ip", "netns", "add", name)
        try:
            # One lock around choosing the /30 and taking it, so that two runs at
            # once (other worktrees) cannot both choose the same one.
            with _held(LOCKS / ".pick"):
                net = _pick(_taken())
                host, inside = (str(net.network_address + i) for i in (1, 2))
                _must("ip", "link", "add", name, "type", "veth",
                      "peer", "name", NS_VETH, "netns", name)  # fmt: skip
                _must("ip", "addr", "add", f"{host}/30", "dev", name)
            _must("ip", "-n", name, "addr", "add", f"{inside}/30", "dev", NS_VETH)
            _must("ip", "-n", name, "link", "set", "lo", "up")
            _must("ip", "-n", name, "link", "set", NS_VETH, "up")
            _must("ip", "link", "set", name, "up")
            if rtt_ms is not None and delay == "netem":
                _netem(name, rtt_ms / 2)
                _netem(NS_VETH, rtt_ms / 2, inside=name)
            yield Netns(name, host, inside, name, rtt_ms, delay)
        finally:
            # The veth first, explicitly: deleting a namespace frees its devices
            # later, in the kernel's own time, and the test may look at once.
            _run("ip", "link", "del", name)
            _run("ip", "netns", "del", name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            (LOCKS / name).unlink()
        os.close(lock)


@contextlib.contextmanager
def _held(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.asynccontextmanager
async def open_namespace(
    rtt_ms: float | None = None, *, delay: Delay | None = None
) -> AsyncIterator[Netns]:
    """:func:`namespace` for trio code: made and torn down in a worker thread
    (the ``ip`` commands block), the teardown shielded from cancellation."""
    manager = namespace(rtt_ms, delay=delay)
    ns = await trio.to_thread.run_sync(manager.__enter__)
    try:
        yield ns
    except BaseException as exc:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(manager.__exit__, type(exc), exc, exc.__traceback__)
        raise
    with trio.CancelScope(shield=True):
        await trio.to_thread.run_sync(manager.__exit__, None, None, None)


_netem_reason: list[str | None] = []


def netem_missing() -> str | None:
    """Why this machine cannot delay a link with netem, or ``None`` if it can.

    Tried for real once per run, on the loopback of a throwaway namespace: the
    qdisc is a kernel module (``sch_netem``) that some kernels lack (this
    machine's and CI's) or cannot load.
    """
    if not _netem_reason:
        _netem_reason.append(_probe_netem())
    return _netem_reason[0]


def _probe_netem() -> str | None:
    if shutil.which("tc") is None:
        return "tc is not installed (Debian: iproute2)"
    name, lock = _claim()
    try:
        _must("ip", "netns", "add", name)
        try:
            done = _run("tc", "-n", name, "qdisc", "add", "dev", "lo", "root",
                        "netem", "delay", "1ms")  # fmt: skip
        finally:
            _run("ip", "netns", "del", name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            (LOCKS / name).unlink()
        os.close(lock)
    if done.returncode == 0:
        return None
    said = (done.stderr or done.stdout).strip().replace("\n", " ")
    return f"the netem qdisc cannot be used here (kernel module sch_netem): tc says: {said}"


PING_CLIENT = """
import json, socket, sys, time
host, port, count, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
sock = socket.create_connection((host, port), timeout=timeout)
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
times = []
for _ in range(count):
    start = time.perf_counter()
    sock.sendall(b"p")
    if sock.recv(1) != b"p":
        sys.exit("ping: the echo server closed the connection")
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""
"""Pings a one-byte echo, one at a time, each timed alone: a round trip is the
send, the two link crossings and the echo, nothing else."""


async def _echo(stream: trio.SocketStream) -> None:
    async with stream:
        async for data in stream:
            await stream.send_all(data)


@contextlib.asynccontextmanager
async def delayed_path(
    ns: Netns, target_host: str, target_port: int
) -> AsyncIterator[tuple[str, int]]:
    """The address a client inside ``ns`` dials to reach ``target_host:target_port``
    (a server in the root namespace) with ``ns.rtt_ms`` of round trip added.

    With netem, or without a delay, the target itself (the veth is delayed
    already); with the relay, a relay's on ``ns.host_addr``, run until the block
    ends. The target must listen on ``ns.host_addr``, the one address that works
    with either: a test that passes here passes with netem too.
    """
    if target_host != ns.host_addr:
        raise ValueError(
            f"the target must listen on the namespace's host address {ns.host_addr},"
            f" not {target_host}: only that one is reachable from inside with netem"
        )
    if ns.delay != "relay":
        yield target_host, target_port
        return
    assert ns.rtt_ms is not None
    async with relay.relay(ns.host_addr, target_host, target_port, ns.rtt_ms / 2000) as running:
        yield running.host, running.port


async def round_trips(ns: Netns, count: int = 20, *, timeout: float = 30.0) -> list[float]:
    """``count`` TCP round trips (seconds) from inside ``ns`` to a server in the
    root namespace, through :func:`delayed_path`.

    A one-byte echo server on ``ns.host_addr``, a client run through
    ``ns.argv``: what the path costs a remote bot's every exchange. The server
    listens before the client starts, so the client connects once, no retry.
    """
    with trio.fail_after(timeout):
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(0, host=ns.host_addr)
            port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(trio.serve_listeners, _echo, listeners)
            async with delayed_path(ns, ns.host_addr, port) as (host, via):
                argv = [sys.executable, "-c", PING_CLIENT, host, str(via), str(count)]
                done = await trio.run_process(
                    ns.argv(*argv, str(timeout)),
                    capture_stdout=True,
                    capture_stderr=True,
                    check=False,
                )
            nursery.cancel_scope.cancel()
    if done.returncode != 0:
        raise RuntimeError(f"the ping client failed: {done.stderr.decode(errors='replace')}")
    times: list[float] = json.loads(done.stdout)
    return times


CONNECT_CLIENT = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3])).close()
except OSError as exc:
    print(type(exc).__name__)
else:
    print("connected")
"""


async def connect_from(ns: Netns, host: str, port: int, *, timeout: float = 10.0) -> str:
    """What one TCP connect from inside ``ns`` to ``host:port`` gives: ``"connected"``,
    or the error's class name (``ConnectionRefusedError``, ``TimeoutError``...)."""
    argv = ns.argv(sys.executable, "-c", CONNECT_CLIENT, host, str(port), str(timeout))
    with trio.fail_after(timeout + 10):
        done = await trio.run_process(argv, capture_stdout=True, check=True)
    return done.stdout.decode().strip()
