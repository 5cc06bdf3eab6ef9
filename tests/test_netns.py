"""The network-namespace harness (tests/netns.py) with real sockets: the delay it
promises is the round trip a client inside measures, by whichever method this
machine has (netem, or the relay where the kernel has no netem, as here and in
CI), loopback stays isolated, and nothing outlives the block."""

from __future__ import annotations

import ipaddress
import json
import secrets
import select
import statistics
import subprocess
import sys
from pathlib import Path

import needs
import netns
import pytest
import trio

PINGS = 20

DELAY_SLACK_S = 0.005
"""How far above the asked round trip the median may be: netem and the relay
add the delay late, never early (a timer's wake-up; the relay's is the trio
loop's, rounded up to the millisecond by epoll, once each way), and on top come
the veth crossing (tens of microseconds), the Python client and the trio echo
server, a scheduling wake-up each on two cores shared with other test runs.
5 ms is the "few milliseconds" the remote-bot latency test must match to; a
median of 20 pings shrugs off the odd late wake-up."""

BARE_LINK_S = 0.003
"""A veth pair and two Python processes, no delay: well under a millisecond
unloaded; 3 ms leaves room for a loaded machine and is still far from any
delay a test would ask for."""


@pytest.fixture
def netns_here() -> None:
    """Checked before trio starts: pytest-trio 0.8 turns a skip raised inside a
    trio test into a bare "Skipped", its reason lost."""
    needs.netns()


def names() -> list[str]:
    done = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=True)
    return [entry["name"] for entry in json.loads(done.stdout or "[]")]


def links() -> list[str]:
    done = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True)
    return [link["ifname"] for link in json.loads(done.stdout)]


def addresses() -> list[str]:
    done = subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True, check=True)
    return [info["local"] for link in json.loads(done.stdout) for info in link["addr_info"]]


def measured(ns: netns.Netns, times: list[float]) -> str:
    return (
        f"rtt {ns.rtt_ms} ms by {ns.delay}: median {statistics.median(times) * 1000:.2f} ms,"
        f" min {min(times) * 1000:.2f}, max {max(times) * 1000:.2f}"
    )


async def test_a_40_ms_path_has_a_40_ms_round_trip(netns_here: None) -> None:
    async with netns.open_namespace(rtt_ms=40) as ns:
        times = await netns.round_trips(ns, PINGS)
    print(measured(ns, times))
    assert ns.delay == ("netem" if netns.netem_missing() is None else "relay")
    # Never early (200 µs: the clocks' own slack), and late by a few ms at most.
    assert min(times) >= 0.040 - 0.0002, measured(ns, times)
    assert statistics.median(times) <= 0.040 + DELAY_SLACK_S, measured(ns, times)


async def test_a_20_ms_path_is_half_of_that(netns_here: None) -> None:
    """The delay follows what is asked (not a fixed 40 ms somewhere)."""
    async with netns.open_namespace(rtt_ms=20) as ns:
        times = await netns.round_trips(ns, PINGS)
    print(measured(ns, times))
    assert min(times) >= 0.020 - 0.0002, measured(ns, times)
    assert statistics.median(times) <= 0.020 + DELAY_SLACK_S, measured(ns, times)


async def test_the_relay_can_be_asked_for_where_netem_is_there_too(netns_here: None) -> None:
    """The relay's round trip through the namespace, whatever the kernel has;
    and netem asked for where the kernel lacks it is an error naming why."""
    async with netns.open_namespace(rtt_ms=30, delay="relay") as ns:
        times = await netns.round_trips(ns, PINGS)
    print(measured(ns, times))
    assert ns.delay == "relay"
    assert min(times) >= 0.030 - 0.0002, measured(ns, times)
    assert statistics.median(times) <= 0.030 + DELAY_SLACK_S, measured(ns, times)
    reason = netns.netem_missing()
    if reason is not None:
        with pytest.raises(RuntimeError, match="netem"):
            async with netns.open_namespace(rtt_ms=30, delay="netem"):
                pass


async def test_the_path_is_asked_for_the_namespaces_host_address(netns_here: None) -> None:
    """127.0.0.1 would do for the relay and not for netem: refused with either."""
    async with netns.open_namespace(rtt_ms=10) as ns:
        with pytest.raises(ValueError, match=ns.host_addr):
            async with netns.delayed_path(ns, "127.0.0.1", 1):
                pass


async def test_without_netem_the_round_trip_is_about_nothing(netns_here: None) -> None:
    async with netns.open_namespace() as ns:
        assert ns.host_addr != ns.ns_addr and ns.rtt_ms is None and ns.delay is None
        times = await netns.round_trips(ns, PINGS)
    print(f"rtt without a delay: median {statistics.median(times) * 1000:.3f} ms")
    assert statistics.median(times) < BARE_LINK_S


async def test_the_root_namespaces_loopback_is_not_reachable_from_inside(
    netns_here: None,
) -> None:
    async def refuse(stream: trio.SocketStream) -> None:
        await stream.aclose()

    async with netns.open_namespace() as ns, trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        nursery.start_soon(trio.serve_listeners, refuse, listeners)
        # The same client run in the root namespace does reach it: the server is up.
        here = await trio.run_process(
            [sys.executable, "-c", netns.CONNECT_CLIENT, "127.0.0.1", str(port), "10"],
            capture_stdout=True,
            check=True,
        )
        assert here.stdout.decode().strip() == "connected"
        assert await netns.connect_from(ns, "127.0.0.1", port) == "ConnectionRefusedError"
        assert await netns.connect_from(ns, ns.host_addr, port) == "ConnectionRefusedError"
        nursery.cancel_scope.cancel()


def test_nothing_outlives_the_block() -> None:
    with netns.namespace() as ns:
        assert ns.name in names() and ns.host_veth in links() and ns.host_addr in addresses()
        inside = subprocess.run(
            ns.argv("ip", "-j", "-4", "addr"), capture_output=True, text=True, check=True
        )
        assert ns.ns_addr in inside.stdout and ns.host_addr not in inside.stdout
    assert ns.name not in names()
    assert ns.host_veth not in links() and ns.host_addr not in addresses()
    assert not (netns.LOCKS / ns.name).exists()


def test_nothing_outlives_a_failing_block() -> None:
    with pytest.raises(ZeroDivisionError), netns.namespace() as ns:
        assert ns.name in names()
        1 / 0  # noqa: B018
    assert ns.name not in names() and ns.host_veth not in links()


async def test_nothing_outlives_a_cancelled_block(netns_here: None) -> None:
    with trio.move_on_after(0.05) as scope:
        async with netns.open_namespace() as ns:
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert ns.name not in names() and ns.host_veth not in links()


def test_a_killed_runs_namespace_is_swept_and_a_live_ones_is_not() -> None:
    """A namespace whose maker is gone (its lock free) goes at the next entry;
    one another run is using (its lock held, here by this process) stays."""
    dead = netns.PREFIX + secrets.token_hex(3)
    subprocess.run(["ip", "netns", "add", dead], check=True)  # no lock: its maker is gone
    try:
        with netns.namespace() as live:
            with netns.namespace() as other:
                assert dead not in names()
                assert live.name in names()  # in use: left alone by the second entry
                assert other.name in names()
            assert live.name in names()
    finally:
        subprocess.run(["ip", "netns", "del", dead], capture_output=True, check=False)


KILLED_RUN = """
import sys
sys.path.insert(0, sys.argv[1])
import netns
with netns.namespace() as ns:
    print(ns.name, flush=True)
    sys.stdin.read()
"""


def test_a_namespace_left_by_a_killed_run_is_swept() -> None:
    """Killed with SIGKILL inside the block (no teardown ran): its namespace, veth
    and lock file stay, until the next run sweeps them."""
    run = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(Path(__file__).parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert run.stdout is not None
        ready, _, _ = select.select([run.stdout], [], [], 30)
        assert ready, "the run made no namespace within 30 s"
        name = run.stdout.readline().strip()
    finally:
        run.kill()
        run.wait(timeout=30)
    assert name.startswith(netns.PREFIX) and name in names() and name in links()
    # Swept by this call, or by another run's entry a moment before (two at once).
    netns.sweep()
    assert name not in names() and name not in links()
    assert not (netns.LOCKS / name).exists()


def test_two_namespaces_at_once_get_different_subnets() -> None:
    with netns.namespace() as one, netns.namespace() as two:
        assert one.name != two.name
        nets = [ipaddress.ip_network(f"{ns.host_addr}/30", strict=False) for ns in (one, two)]
        assert not nets[0].overlaps(nets[1])
        assert ipaddress.ip_address(one.ns_addr) in nets[0]


def test_the_subnet_is_picked_away_from_what_is_taken() -> None:
    """Known answer: with all of 10.0.0.0/8 but one /30 taken, that /30."""
    free = ipaddress.IPv4Network("10.77.1.8/30")
    taken = [n for n in netns.POOL.address_exclude(free)]
    assert netns._pick(taken) == free
