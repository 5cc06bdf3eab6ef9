"""Reading the client's address from a trusted reverse proxy's ``X-Forwarded-For``:
known answers for the header as proxies write it and as strangers forge it."""

from __future__ import annotations

import pytest

from arena.web.proxy import MAX_HOPS, client_address, parse_proxies

PROXIES = parse_proxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"])


def client(peer: str, *values: str) -> str:
    headers = [(b"host", b"arena.example")]
    headers += [(b"x-forwarded-for", value.encode("latin-1")) for value in values]
    return client_address(peer, headers, PROXIES)


def test_a_trusted_proxy_names_the_client() -> None:
    assert client("127.0.0.1", "203.0.113.7") == "203.0.113.7"
    assert client("10.1.2.3", "203.0.113.7") == "203.0.113.7"  # a network


def test_the_right_most_untrusted_entry_is_the_client_whatever_it_sent() -> None:
    # nginx's $proxy_add_x_forwarded_for appends the address it saw to the client's own
    assert client("127.0.0.1", "1.1.1.1, 198.51.100.2") == "198.51.100.2"
    # past the trusted hops, the first other entry from the right
    assert client("127.0.0.1", "1.1.1.1, 198.51.100.2, 10.0.0.5, 10.9.8.7") == "198.51.100.2"
    # several header lines are one list, in order
    assert client("127.0.0.1", "1.1.1.1", "198.51.100.2, 10.0.0.5") == "198.51.100.2"
    # every entry trusted: the left-most (the client is on the proxies' network)
    assert client("127.0.0.1", "10.0.0.9, 10.0.0.5") == "10.0.0.9"


def test_spaces_ports_and_ipv6() -> None:
    assert client("127.0.0.1", "  203.0.113.7\t,\t10.0.0.1  ") == "203.0.113.7"
    assert client("127.0.0.1", "203.0.113.7:52814") == "203.0.113.7"
    assert client("127.0.0.1", "2001:DB8:0::1") == "2001:db8::1"  # one key per address
    assert client("127.0.0.1", "[2001:db8::1]") == "2001:db8::1"
    assert client("127.0.0.1", "[2001:db8::1]:443, fd00::3") == "2001:db8::1"
    assert client("127.0.0.1", "::ffff:203.0.113.7") == "203.0.113.7"
    assert client("::ffff:127.0.0.1", "203.0.113.7") == "203.0.113.7"  # dual-stack peer
    assert client("fd00::2", "203.0.113.7") == "203.0.113.7"


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        "unknown",
        "_hidden",
        "203.0.113.7,",
        "203.0.113.7,,",
        "999.1.1.1",
        "203.0.113.7:",
        "203.0.113.7:port",
        "203.0.113.7:123456",
        "[2001:db8::1",
        "[2001:db8::1]x",
        "[2001:db8::1]:",
        "[203.0.113.7]junk",
        "fe80::1%eth0",
        "1.2.3.4 5.6.7.8",
        "for=203.0.113.7",
        "\x00\xff",
        "203.0.113.7, garbage",
        "garbage, 10.0.0.5",  # garbage reached past the trusted hop
    ],
)
def test_a_malformed_header_from_a_trusted_proxy_leaves_its_address(value: str) -> None:
    assert client("127.0.0.1", value) == "127.0.0.1"


def test_garbage_left_of_the_client_is_never_read() -> None:
    assert client("127.0.0.1", "garbage, ]]], 198.51.100.2") == "198.51.100.2"


def test_from_an_untrusted_peer_the_header_is_ignored() -> None:
    assert client("198.51.100.9", "203.0.113.7") == "198.51.100.9"
    assert client("198.51.100.9", "127.0.0.1") == "198.51.100.9"
    assert client("2001:db8::9", "203.0.113.7") == "2001:db8::9"
    assert client_address("127.0.0.1", [(b"x-forwarded-for", b"203.0.113.7")], ()) == "127.0.0.1"


def test_no_header_leaves_the_proxy() -> None:
    assert client("127.0.0.1") == "127.0.0.1"


def test_the_walk_is_bounded() -> None:
    hops = ", ".join(f"10.0.0.{i}" for i in range(MAX_HOPS - 1))
    assert client("127.0.0.1", f"198.51.100.2, {hops}") == "198.51.100.2"
    # one trusted hop more and the client is past the bound: the proxy's address
    assert client("127.0.0.1", f"198.51.100.2, 10.0.0.99, {hops}") == "127.0.0.1"
    huge = ",".join(["10.0.0.1"] * 4000)  # Hypercorn's 16 KiB head holds about that many
    assert client("127.0.0.1", f"198.51.100.2,{huge}") == "127.0.0.1"


def test_trusted_proxies_are_addresses_or_networks() -> None:
    assert [str(n) for n in parse_proxies([" 10.0.0.0/8", "::1", "192.0.2.1/32"])] == [
        "10.0.0.0/8",
        "::1/128",
        "192.0.2.1/32",
    ]
    for bad in ("proxy.example", "10.0.0.1/8", "10.0.0.0/33", ""):
        with pytest.raises(ValueError, match="--trust-proxy") as info:
            parse_proxies(["127.0.0.1", bad])
        assert "\n" not in str(info.value) and repr(bad) in str(info.value)
