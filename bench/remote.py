"""The gateway's cost per move: one request through a remote entrant's connection
against the same request through a local bot's pipe, on loopback.

Both figures come from the same run, with the same instant bot (a tiny Python
program that answers at once) and the same requests (``ping``, answered by the
bot itself, so the bot's own work is the same on both paths):

* **local pipe**: :class:`~arena.engine.bot.Engine` talking to the bot over its
  pipes, as for any local entrant;
* **remote**: :class:`~arena.engine.remote.RemoteEngine` talking to the same bot
  through the gateway (served here on 127.0.0.1 by the web server, as ``arena
  run --web`` does) and a real ``arena connect`` process, which runs the bot
  behind its own engine and relays each line.

The difference is what the gateway, the WebSocket both ways and ``arena
connect``'s relay add to a move; the ratio says how it compares with the pipe.

With ``--tls`` another figure: the same remote path with the gateway serving
WSS (``--tls-cert``/``--tls-key``, a certificate made here by ``trustme``) and
``arena connect --cafile``: what TLS adds to a move.

With ``--flood N`` a third figure: the local pipe again while another process
keeps N connections at a time knocking at the gateway with a wrong token (each
refused in one line, then the next), in batches interleaved with the quiet ones
(the flooder is stopped and continued between them): what a flood of strangers
costs a local game. The strangers knock from ``--addresses A`` loopback
addresses (127.1.0.2 on), each knock from the next: one address is soon barred
by the gateway's per-address back-off; thousands, each knocking a few times,
are a flood the per-address limits hardly see (the global cap and the auth
deadline bound it).
Batches of both are interleaved so they see the same machine; the best batch is
the figure to compare, the median shows the noise. Both bots run unconfined
(``--sandbox none``) so that the sandbox's cost (``bench/overhead.py``) stays out.

    python bench/remote.py [--requests 500] [--rounds 5] [--tls] [--flood 50 [--addresses 50]]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.gateway import Gateway
from arena.engine.remote import RemoteEngine
from arena.engine.sandbox import Sandbox
from arena.protocol.messages import Ping
from arena.web.app import Site
from arena.web.server import Listen, Tls, serve

BOT = """\
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    t = m["type"]
    if t == "hello":
        a = {"type": "identity", "id": m["id"], "protocol": 1, "name": "echo",
             "games": ["kamisado"]}
    elif t == "ping":
        a = {"type": "pong", "id": m["id"]}
    elif t == "newgame":
        a = {"type": "ready", "id": m["id"]}
    else:
        continue
    sys.stdout.write(json.dumps(a) + "\\n")
    sys.stdout.flush()
"""
TOKEN = "bench-token-0123456789"
FLOODER = """\
import sys, trio
from urllib.parse import urlsplit
from trio_websocket import wrap_client_stream
URL, N, A = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
PARTS = urlsplit(URL)
async def knock(i):
    while True:
        k, i = i % A, i + N  # the next knock from the next address of this stranger's
        source = f"127.{1 + (k >> 16)}.{(k >> 8) & 255}.{2 + (k & 255) % 250}"
        try:
            async with trio.open_nursery() as own:
                sock = trio.socket.socket()
                await sock.bind((source, 0))
                await sock.connect((PARTS.hostname, PARTS.port))
                ws = await wrap_client_stream(
                    own, trio.SocketStream(sock), PARTS.hostname, PARTS.path
                )
                await ws.send_message(
                    '{"type":"auth","name":"echo","token":"wrong-token-0123456789"}'
                )
                await ws.get_message()
                own.cancel_scope.cancel()
        except* Exception:
            pass
async def main():
    async with trio.open_nursery() as n:
        for i in range(N):
            n.start_soon(knock, i)
trio.run(main)
"""
WAIT = 60.0


async def batch(engine: Engine | RemoteEngine, requests: int) -> float:
    """Seconds per request, over ``requests`` pings."""
    total = 0.0
    for _ in range(requests):
        reply = await engine.request(Ping(), WAIT)
        total += reply.received_at - reply.sent_at
    return total / requests


def certificate(folder: Path) -> tuple[Tls, Path]:
    """A certificate for 127.0.0.1 and its CA's, made with ``trustme`` (a test extra)."""
    import trustme

    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    cert, key, cafile = folder / "cert.pem", folder / "key.pem", folder / "ca.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(cafile))
    return Tls(str(cert), str(key)), cafile


async def gateway_and_client(
    nursery: trio.Nursery, config: EngineConfig, script: Path, tls: Tls | None, cafile: Path | None
) -> tuple[Gateway, str, trio.Process]:
    """A gateway served on loopback (with TLS if ``tls``) and a real ``arena connect``
    for the echo bot."""
    gateway = Gateway({"echo": TOKEN.encode()}, max_line=config.max_line, leeway=0.0)
    listen = Listen("127.0.0.1", 0, None, tls=tls)
    url = await nursery.start(
        lambda task_status: serve(Site({}), listen, gateway=gateway, task_status=task_status)
    )
    trust = [] if cafile is None else ["--cafile", str(cafile)]
    connect = await trio.lowlevel.open_process(
        [sys.executable, "-m", "arena.cli", "connect", url, "--name", "echo", *trust]
        + ["--sandbox", "none", "--", sys.executable, str(script)],
        env={**os.environ, "ARENA_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
    )
    return gateway, url, connect


async def main(requests: int, rounds: int, flood: int, addresses: int, tls: bool) -> None:
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-remote-"))
    script = folder / "echo.py"
    script.write_text(BOT)
    config = EngineConfig(
        name="echo", command=[sys.executable, str(script)], sandbox=Sandbox(mode="none")
    )
    async with trio.open_nursery() as nursery:
        gateway, url, connect = await gateway_and_client(nursery, config, script, None, None)
        clients = [connect]
        try:
            async with AsyncExitStack() as stack:
                local = await stack.enter_async_context(Engine(config))
                remote = await stack.enter_async_context(RemoteEngine(config, gateway, WAIT))
                await local.start("kamisado", "standard")
                await remote.start("kamisado", "standard")
                secure = None
                if tls:
                    made, cafile = certificate(folder)
                    gw, _, client = await gateway_and_client(nursery, config, script, made, cafile)
                    clients.append(client)
                    secure = await stack.enter_async_context(RemoteEngine(config, gw, WAIT))
                    await secure.start("kamisado", "standard")
                    await batch(secure, max(1, requests // 10))
                await batch(local, max(1, requests // 10))  # warm both paths
                await batch(remote, max(1, requests // 10))
                pipe, net, wss, flooded = [], [], [], []
                flooder = None
                if flood:
                    ws_url = url.replace("http://", "ws://") + "/bots/connect"
                    flooder = await trio.lowlevel.open_process(
                        [sys.executable, "-c", FLOODER, ws_url, str(flood), str(addresses)]
                    )
                    flooder.send_signal(signal.SIGSTOP)
                try:
                    for _ in range(rounds):
                        pipe.append(await batch(local, requests))
                        net.append(await batch(remote, requests))
                        if secure is not None:
                            wss.append(await batch(secure, requests))
                        if flooder is not None:
                            flooder.send_signal(signal.SIGCONT)
                            await trio.sleep(0.2)  # the flood under way before timing
                            flooded.append(await batch(local, requests))
                            flooder.send_signal(signal.SIGSTOP)
                finally:
                    if flooder is not None:
                        flooder.kill()
                rtt = remote.round_trip_ms()
        finally:
            for client in clients:
                client.kill()
            shutil.rmtree(folder, ignore_errors=True)
        nursery.cancel_scope.cancel()
    us = 1e6

    def figure(seconds: list[float]) -> str:
        return f"best {min(seconds) * us:8.1f} us, median {statistics.median(seconds) * us:8.1f} us"

    print(f"requests per batch: {requests}, batches: {rounds} (interleaved)")
    print(f"local pipe:    {figure(pipe)}")
    print(f"remote (gw):   {figure(net)}")
    added = min(net) - min(pipe)
    print(
        f"gateway adds:  {added * us:8.1f} us per request (best), ratio {min(net) / min(pipe):.2f}"
    )
    if wss:
        added = min(wss) - min(net)
        print(f"remote (TLS):  {figure(wss)}")
        ratio = min(wss) / min(net)
        print(f"TLS adds:      {added * us:8.1f} us per request (best), ratio {ratio:.2f}")
    print(f"probed round trip of the connection: {'-' if rtt is None else f'{rtt:.2f} ms'}")
    if flooded:
        ratio = min(flooded) / min(pipe)
        where = f"from {addresses} address{'es' if addresses > 1 else ''}"
        print(f"local pipe, {flood} strangers knocking {where}: {figure(flooded)} (x{ratio:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tls", action="store_true", help="also time the gateway over TLS")
    parser.add_argument("--flood", type=int, default=0, help="strangers knocking at once")
    parser.add_argument(
        "--addresses", type=int, default=1, help="loopback addresses they knock from"
    )
    args = parser.parse_args()
    addresses = max(1, min(args.addresses, 1 << 20))
    trio.run(main, args.requests, args.rounds, args.flood, addresses, args.tls)
