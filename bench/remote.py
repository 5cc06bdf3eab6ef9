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

    python bench/remote.py [--requests 500] [--rounds 5] [--flood 50 [--addresses 50]]
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
from pathlib import Path

import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.gateway import Gateway
from arena.engine.remote import RemoteEngine
from arena.engine.sandbox import Sandbox
from arena.protocol.messages import Ping
from arena.web.app import Site
from arena.web.server import Listen, serve

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


async def main(requests: int, rounds: int, flood: int, addresses: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-remote-"))
    script = folder / "echo.py"
    script.write_text(BOT)
    config = EngineConfig(
        name="echo", command=[sys.executable, str(script)], sandbox=Sandbox(mode="none")
    )
    gateway = Gateway({"echo": TOKEN.encode()}, max_line=config.max_line, leeway=0.0)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            lambda task_status: serve(
                Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
            )
        )
        connect = await trio.lowlevel.open_process(
            [sys.executable, "-m", "arena.cli", "connect", url, "--name", "echo"]
            + ["--sandbox", "none", "--", sys.executable, str(script)],
            env={**os.environ, "ARENA_TOKEN": TOKEN},
            stdout=subprocess.DEVNULL,
        )
        try:
            async with Engine(config) as local, RemoteEngine(config, gateway, WAIT) as remote:
                await local.start("kamisado", "standard")
                await remote.start("kamisado", "standard")
                await batch(local, max(1, requests // 10))  # warm both paths
                await batch(remote, max(1, requests // 10))
                pipe, net, flooded = [], [], []
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
            connect.kill()
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
    print(f"probed round trip of the connection: {'-' if rtt is None else f'{rtt:.2f} ms'}")
    if flooded:
        ratio = min(flooded) / min(pipe)
        where = f"from {addresses} address{'es' if addresses > 1 else ''}"
        print(f"local pipe, {flood} strangers knocking {where}: {figure(flooded)} (x{ratio:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--flood", type=int, default=0, help="strangers knocking at once")
    parser.add_argument(
        "--addresses", type=int, default=1, help="loopback addresses they knock from"
    )
    args = parser.parse_args()
    trio.run(main, args.requests, args.rounds, args.flood, max(1, min(args.addresses, 1 << 20)))
