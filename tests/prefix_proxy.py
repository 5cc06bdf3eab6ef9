"""A reverse proxy serving the arena under a path prefix, for the browser tests.

What nginx's ``location /cup/ { proxy_pass http://127.0.0.1:PORT/; }`` does,
over loopback: a request for ``/cup/REST`` goes to the arena as ``/REST``
(``/cup`` itself is redirected to ``/cup/``; anything else is the proxy's own
404, so a page naming an address outside the prefix shows as a failed request),
with the client's address appended to ``X-Forwarded-For``. Like nginx it speaks
to the arena one request per connection (``Connection: close``), except for a
WebSocket upgrade, piped both ways once the head has passed; a response (the
live page's event stream too) is piped back as it comes.

Usage: ``python prefix_proxy.py /cup``; prints the port it listens on, then
reads the arena's port from standard input (the arena is started after the
proxy, to be told the proxy's address).
"""

from __future__ import annotations

import sys
from functools import partial

import trio

MAX_HEAD = 65536
HEAD_SECONDS = 10.0


async def read_head(stream: trio.SocketStream) -> tuple[bytes, bytes] | None:
    """The request head (without its blank line) and what came after it."""
    data = b""
    with trio.move_on_after(HEAD_SECONDS):
        while b"\r\n\r\n" not in data:
            chunk = await stream.receive_some(MAX_HEAD)
            if not chunk or len(data) > MAX_HEAD:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        return head, rest
    return None


async def answer(stream: trio.SocketStream, status: str, headers: str = "") -> None:
    body = f"prefix proxy: {status}\n".encode()
    await stream.send_all(
        f"HTTP/1.1 {status}\r\n{headers}Content-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


async def pipe(source: trio.SocketStream, sink: trio.SocketStream) -> None:
    try:
        while data := await source.receive_some(MAX_HEAD):
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def handle(prefix: bytes, port: int, client: trio.SocketStream) -> None:
    async with client:
        got = await read_head(client)
        if got is None:
            return
        head, rest = got
        lines = head.split(b"\r\n")
        method, target, _ = lines[0].split(b" ", 2)
        if target == prefix:
            await answer(client, "301 Moved Permanently", f"Location: {prefix.decode()}/\r\n")
            return
        if not target.startswith(prefix + b"/"):
            await answer(client, "404 Not Found")
            return
        peer = client.socket.getpeername()[0].encode()
        upgrade = any(line.lower().startswith(b"upgrade:") for line in lines[1:])
        headers, forwarded = [], b""
        for line in lines[1:]:
            name = line.split(b":", 1)[0].strip().lower()
            if name == b"x-forwarded-for":
                forwarded = line.split(b":", 1)[1].strip() + b", "
            elif name not in (b"connection", b"keep-alive") or upgrade:
                headers.append(line)
        headers.append(b"X-Forwarded-For: " + forwarded + peer)
        if not upgrade:
            headers.append(b"Connection: close")
        request = b" ".join([method, target[len(prefix) :], b"HTTP/1.1"])
        upstream = await trio.open_tcp_stream("127.0.0.1", port)
        async with upstream:
            await upstream.send_all(b"\r\n".join([request, *headers]) + b"\r\n\r\n" + rest)
            async with trio.open_nursery() as nursery:
                if upgrade:  # a WebSocket: both ways, for as long as it lasts
                    nursery.start_soon(pipe, client, upstream)
                await pipe(upstream, client)
                nursery.cancel_scope.cancel()


async def main(prefix: str) -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    print(listeners[0].socket.getsockname()[1], flush=True)
    port = int(await trio.to_thread.run_sync(sys.stdin.readline))
    await trio.serve_listeners(partial(handle, prefix.encode(), port), listeners)


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
