"""``arena connect``: a real client process, a real bot, a real gateway on loopback.

The arena's side is scripted here on the entrant's link (the engine that plays
through a link is the referee's to drive): the lines a bot gets and what comes
back, the ids kept, a refusal in one line, a fault on the author's machine
closing the connection with its reason.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
import trio

from arena.engine.gateway import Gateway, Knocks
from arena.engine.link import RemoteLink
from arena.games import get_game
from arena.match.clock import Clock, TimeControl
from arena.match.wire import clock_info
from arena.protocol.messages import (
    Action,
    EndOfStream,
    GameOver,
    Go,
    Hello,
    Identity,
    NewGame,
    Ping,
    Pong,
    Quit,
    Ready,
    decode_bot_message,
    encode_line,
)
from arena.remote.client import ConnectError, gateway_url
from arena.web.app import Site
from arena.web.server import Listen, serve

TOKEN = "far-token-0123456789"
WAIT = 30.0


@pytest.fixture
async def arena(nursery: trio.Nursery) -> AsyncIterator[tuple[Gateway, str]]:
    gateway = Gateway({"far": TOKEN.encode()}, max_line=1 << 20, leeway=0.05)
    url = await nursery.start(
        lambda task_status: serve(
            Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
        )
    )
    yield gateway, url


async def client(
    nursery: trio.Nursery, url: str, *command: str, token: str = TOKEN
) -> trio.Process:
    argv = [sys.executable, "-m", "arena.cli", "connect", url, "--name", "far", "--token", token]
    return await nursery.start(
        lambda task_status: trio.run_process(
            [*argv, "--sandbox", "none", "--max-backoff", "1", "--", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
            task_status=task_status,
        )
    )


async def greeted(
    nursery: trio.Nursery, gateway: Gateway, url: str, *command: str
) -> tuple[trio.Process, RemoteLink]:
    """``arena connect`` for ``far`` running ``command``, its link once connected,
    and the session's ``hello`` answered."""
    process = await client(nursery, url, *command)
    with trio.fail_after(WAIT):
        link = await gateway.connection("far", trio.current_time() + WAIT)
    assert link is not None
    await ask(link, Hello(id=1, game="kamisado", variant="standard"))
    return process, link


async def ask(link: RemoteLink, msg: object) -> object:
    with trio.fail_after(WAIT):
        await link.send(encode_line(msg))  # type: ignore[arg-type]
        return decode_bot_message(await link.receive())


def test_gateway_url_is_the_printed_address_as_a_websocket() -> None:
    assert gateway_url("http://127.0.0.1:8080") == "ws://127.0.0.1:8080/bots/connect"
    assert gateway_url("http://h:1/live?token=abc") == "ws://h:1/bots/connect"
    assert gateway_url("https://arena.example/cup/") == "wss://arena.example/cup/bots/connect"
    with pytest.raises(ConnectError, match="expected the arena's address"):
        gateway_url("127.0.0.1:8080")


async def test_a_game_is_relayed_line_by_line_with_the_arenas_ids(
    arena: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    gateway, url = arena
    process = await client(nursery, url, "random")
    with trio.fail_after(WAIT):
        link = await gateway.connection("far", trio.current_time() + WAIT)
    assert link is not None
    identity = await ask(link, Hello(id=11, game="kamisado", variant="standard"))
    assert isinstance(identity, Identity) and identity.id == 11 and identity.name == "random"
    game = get_game("kamisado")
    state = game.new_state("standard")
    control = TimeControl.parse("10+0.1")
    ready = await ask(
        link,
        NewGame(
            id=12,
            game="kamisado",
            variant="standard",
            player=0,
            players=["far", "near"],
            position=state.observation_text(0),
            time_control=str(control),
        ),
    )
    assert ready == Ready(id=12)
    clocks = [Clock(control), Clock(control)]
    go = Go(
        id=13,
        player=0,
        position=state.observation_text(0),
        observation=state.observation(0),
        history=state.history(0),
        legal=state.legal_actions(),
        clock=clock_info(clocks, 0),
    )
    answer = await ask(link, go)
    assert isinstance(answer, Action) and answer.id == 13 and answer.action in go.legal
    assert await ask(link, Ping(id=14)) == Pong(id=14)
    with trio.fail_after(WAIT):
        await link.send(encode_line(GameOver(result="1-0", reason="normal")))
        await link.send(encode_line(Quit()))
        await link.ended.wait()
        while process.returncode is None:
            await trio.sleep(0.05)
    assert process.returncode == 0
    said = (await process.stdout.receive_some(1 << 16)).decode()  # type: ignore[union-attr]
    assert "as far" in said and "waiting for a game" in said
    assert re.search(r"game 1: against near \(10\+0\.1\); latency \d+\.\d ms", said), said
    assert (
        "game 1 over: 1-0 (normal), won; 1 moves, 0.0 s thinking here, its clock had 10.0 s"
    ) in said
    assert said.rstrip().endswith("this bot played 1 game: 1 won, 0 lost, 0 drawn"), said


async def test_a_wrong_token_ends_the_client_in_one_line(
    arena: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    _, url = arena
    process = await client(nursery, url, "random", token="wrong-token-0123456789")
    with trio.fail_after(WAIT):
        while process.returncode is None:
            await trio.sleep(0.05)
    out = (await process.stdout.receive_some(1 << 16)).decode()  # type: ignore[union-attr]
    assert process.returncode == 1
    assert out.strip().splitlines()[-1] == (
        "arena: error: the arena refused: arena: no remote entrant of that name with that token"
    )


async def test_a_barred_address_is_told_why_and_gets_in_once_the_bar_ends(
    arena: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    gateway, url = arena
    gateway.knocks = Knocks(free=0, first=3.0)
    gateway.knocks.wrong("127.0.0.1", trio.current_time())  # as after a wrong token
    process = await client(nursery, url, "random")
    assert process.stdout is not None
    out = ""
    with trio.fail_after(WAIT):
        while "connecting again" not in out:
            out += (await process.stdout.receive_some(1 << 16)).decode()
        link = await gateway.connection("far", trio.current_time() + WAIT)
    assert link is not None
    assert (
        "cannot open the connection (HTTP 429: arena: a wrong token from your address;"
        " try again in "
    ) in out


async def test_a_bot_that_crashes_here_closes_the_connection_with_its_fault(
    arena: tuple[Gateway, str], nursery: trio.Nursery, tmp_path: object
) -> None:
    """The arena learns the crash at once (not as a time loss), and the client
    connects again with a fresh bot."""
    from pathlib import Path

    script = Path(str(tmp_path)) / "dies.py"
    script.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'identity', 'id': m['id'], 'protocol': 1,"
        " 'name': 'dies', 'games': ['kamisado']}), flush=True)\n"
        "    elif m['type'] == 'newgame':\n"
        "        print('weights.bin: no such file', file=sys.stderr)\n"
        "        sys.exit(3)\n"
    )
    gateway, url = arena
    process, link = await greeted(nursery, gateway, url, sys.executable, str(script))
    state = get_game("kamisado").new_state("standard")
    with trio.fail_after(WAIT):
        await link.send(
            encode_line(
                NewGame(
                    id=2,
                    game="kamisado",
                    variant="standard",
                    player=1,
                    players=["near", "far"],
                    position=state.observation_text(1),
                    time_control="10+0.1",
                )
            )
        )
        await link.ended.wait()
    fault = link.end_fault()
    assert fault.reason == "crash" and "exited with code 3" in str(fault)
    with trio.fail_after(WAIT):  # connected again, with a fresh bot
        again = await gateway.connection("far", trio.current_time() + WAIT)
    assert again is not None and again is not link
    assert process.stdout is not None
    told = ""
    with trio.fail_after(WAIT):
        while "no such file" not in told:
            chunk = (await process.stdout.receive_some(1 << 16)).decode()
            assert chunk, told
            told += chunk
    process.kill()
    assert "the bot failed: far: exited with code 3" in told
    assert "| weights.bin: no such file" in told  # its author sees why
    assert "weights.bin" not in str(fault)  # the arena is not told it


SLOW_BOT = """\
import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    t = m["type"]
    if t == "hello":
        a = {"type": "identity", "id": m["id"], "protocol": 1, "name": "slow",
             "games": ["kamisado"]}
    elif t == "newgame":
        a = {"type": "ready", "id": m["id"]}
    elif t == "go":
        time.sleep(1.5)
        a = {"type": "action", "id": m["id"], "action": m["legal"][0]}
    else:
        continue
    print(json.dumps(a), flush=True)
"""


async def mid_game(
    nursery: trio.Nursery, reconnect: float, tmp_path: object, think: float = 1.5
) -> tuple[Gateway, str, RemoteLink, trio.Process, Go, list[str]]:
    """An arena whose entrant ``far`` (a bot that thinks 1.5 s) was just asked for a move."""
    from pathlib import Path

    script = Path(str(tmp_path)) / "slow.py"
    script.write_text(SLOW_BOT.replace("time.sleep(1.5)", f"time.sleep({think})"))
    gateway = Gateway({"far": TOKEN.encode()}, max_line=1 << 20, leeway=0.0, reconnect=reconnect)
    url = await nursery.start(
        lambda task_status: serve(
            Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
        )
    )
    command = [sys.executable, str(script)]
    process, link = await greeted(nursery, gateway, url, *command)
    state = get_game("kamisado").new_state("standard")
    newgame = NewGame(
        id=2,
        game="kamisado",
        variant="standard",
        player=0,
        players=["far", "near"],
        position=state.observation_text(0),
        time_control="10+0.1",
    )
    assert await ask(link, newgame) == Ready(id=2)
    clocks = [Clock(TimeControl.parse("10+0.1")) for _ in range(2)]
    go = Go(
        id=3,
        player=0,
        position=state.observation_text(0),
        observation=state.observation(0),
        history=state.history(0),
        legal=state.legal_actions(),
        clock=clock_info(clocks, 0),
    )
    with trio.fail_after(WAIT):
        await link.send(encode_line(go))
    return gateway, url, link, process, go, command


async def test_a_client_killed_mid_game_and_started_again_in_the_window_finishes_the_move(
    nursery: trio.Nursery, tmp_path: object
) -> None:
    gateway, url, link, process, go, command = await mid_game(nursery, 30.0, tmp_path)
    process.kill()  # before the bot answers: the go is lost with it
    with trio.fail_after(WAIT):
        while link.up:
            await trio.sleep(0.02)
    assert not link.ended.is_set()
    again = await client(nursery, url, *command)
    with trio.fail_after(WAIT):
        answer = decode_bot_message(await link.receive())
    assert isinstance(answer, Action) and answer.id == 3 and answer.action == go.legal[0]
    assert link.connections == 2 and not link.ended.is_set()
    again.kill()


async def test_a_client_gone_past_the_window_is_a_disconnect(
    nursery: trio.Nursery, tmp_path: object
) -> None:
    gateway, _, link, process, _, _ = await mid_game(nursery, 0.5, tmp_path)
    process.kill()
    with trio.fail_after(WAIT):
        await link.ended.wait()
    with pytest.raises(EndOfStream):
        await link.receive()
    fault = link.end_fault()
    assert fault.reason == "disconnect" and "connection lost" in str(fault)
    assert gateway.current("far") is None


async def test_a_connection_the_arena_closes_while_the_bot_thinks_ends_at_once(
    nursery: trio.Nursery, tmp_path: object
) -> None:
    """A time loss, say: the arena closes with RESTART while the bot still thinks;
    arena connect stops it and is back with a fresh one at once, not after the
    bot's 20 s."""
    from arena.protocol.remote import RESTART

    gateway, _, link, process, _, _ = await mid_game(nursery, 0.0, tmp_path, think=20)
    link.close("the arena starts the bot afresh", code=RESTART)
    with trio.fail_after(10):
        again = await gateway.connection("far", trio.current_time() + 10)
    assert again is not None and again is not link
    process.kill()


async def test_a_bot_answering_garbage_to_go_is_reported_as_a_protocol_fault(
    arena: tuple[Gateway, str], nursery: trio.Nursery, tmp_path: object
) -> None:
    """A fault in ``go`` (which the client runs watching for the arena's close) is
    reported like any other, and the client comes back with a fresh bot; it used
    to escape wrapped in a nursery's group and end the client with a traceback."""
    from pathlib import Path

    script = Path(str(tmp_path)) / "garbage.py"
    script.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'identity', 'id': m['id'], 'protocol': 1,"
        " 'name': 'garbage', 'games': ['kamisado']}), flush=True)\n"
        "    elif m['type'] == 'newgame':\n"
        "        print(json.dumps({'type': 'ready', 'id': m['id']}), flush=True)\n"
        "    elif m['type'] == 'go':\n"
        "        print('garbage', flush=True)\n"
    )
    gateway, url = arena
    process, link = await greeted(nursery, gateway, url, sys.executable, str(script))
    state = get_game("kamisado").new_state("standard")
    control = TimeControl.parse("10+0.1")
    new = NewGame(
        id=2,
        game="kamisado",
        variant="standard",
        player=0,
        players=["far", "near"],
        position=state.observation_text(0),
        time_control=str(control),
    )
    assert await ask(link, new) == Ready(id=2)
    go = Go(
        id=3,
        player=0,
        position=state.observation_text(0),
        observation=state.observation(0),
        history=state.history(0),
        legal=state.legal_actions(),
        clock=clock_info([Clock(control), Clock(control)], 0),
    )
    with trio.fail_after(WAIT):
        await link.send(encode_line(go))
        await link.ended.wait()
    fault = link.end_fault()
    assert fault.reason == "protocol" and "garbage" in str(fault), fault
    with trio.fail_after(WAIT):  # connected again, with a fresh bot
        again = await gateway.connection("far", trio.current_time() + WAIT)
    assert again is not None and again is not link
    process.kill()
