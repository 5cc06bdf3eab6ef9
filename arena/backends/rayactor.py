"""The actor side of the Ray backend: game slots in one Ray actor, fed batches of
work items by the driver (:mod:`arena.backends.raypool`).

An actor keeps one trio loop in a thread for its whole life, so its bot processes
stay alive across every game it plays, and ``PR_SET_PDEATHSIG`` holds (a killed
actor takes its bots with it). It checks on its node that every bot can start
before the first game, streams each finished game back at once, and follows the
driver's fault policy (its verdicts) through a :class:`~arena.backends.slots.RemoteGate`.

Nothing here imports Ray at module level: the driver decorates :class:`GameActor`
with ``ray.remote`` itself.
"""

from __future__ import annotations

import math
import os
import queue
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.backends.pool import Verdict, WorkItem
from arena.backends.slots import FinishedGame, GameSlots, RemoteGate
from arena.match.events import EVENT_BACKLOG, LiveEvent
from arena.match.record import GameRecord
from arena.plan.config import ConfigError, TournamentConfig, one_line, parse_config
from arena.plan.prepare import prepare

__all__ = ["CLOSE_TIMEOUT", "BotMissingError", "GameActor"]

CLOSE_TIMEOUT = 10.0
"""How long an actor may take to quit its bots at the end before it is killed."""

_ENCODER = msgspec.msgpack.Encoder()
_ITEMS = msgspec.msgpack.Decoder(list[WorkItem])
_VERDICT = msgspec.msgpack.Decoder(Verdict)


class BotMissingError(RuntimeError):
    """Raised inside an actor whose node cannot start a bot; the message is one line."""


_BOT_KEY_RE = re.compile(r"bots\[\d+\] \((?P<name>[^)]*)\)\.(?:command|cwd): (?P<detail>.*)$")


class GameActor:
    """Game slots in one Ray actor: a trio loop in a thread, fed batches of work items.

    Decorated with ``ray.remote`` by the driver (so that this module imports
    without Ray). Runs as a threaded actor: each in-flight ``play`` call waits in
    its own thread on a queue that the trio loop fills.
    """

    def __init__(
        self, config: bytes, config_text: str, rebase: str | None, slots: int, events: bool = False
    ) -> None:
        self._events = events
        self._config_bytes = config
        self._config_text = config_text
        self._rebase = rebase
        self._slots = slots
        self.node = _node_name()
        self._config: TournamentConfig | None = None
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)
        """Notified when a pair task's route is removed: a batch holding the same pair
        task again (handed out twice) waits for the first to finish."""
        self._routes: dict[str, queue.SimpleQueue[tuple[str, Any]]] = {}
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._send: trio.MemorySendChannel[WorkItem] | None = None
        self._failure: str | None = None
        self._gate = RemoteGate()

    # -- checks -------------------------------------------------------------------------

    def check(self) -> str:
        """Load the config on this node and make sure every bot can start here.

        Done before the first game so that a node without a bot fails the run at
        once with one readable line, instead of every game there ending in a
        "crash" fault charged to an innocent bot; so does a node where the sandbox
        the driver chose does not work. The built-in bots are prepared here too
        (``arena/plan/prepare.py``: nothing to do where the node's cache is built).
        Returns that sandbox mode.
        """
        if self._config is None:
            self._config = self._load()
        mode = self._check_sandbox(self._config.sandbox.mode)
        trio.run(_prepare, self._config)
        return mode

    @staticmethod
    def _check_sandbox(mode: str) -> str:
        """The sandbox in force here: the driver's resolved mode, which every node must
        honour the same way (a node without a working bwrap cannot play)."""
        if mode == "none":
            return "none"
        from arena.engine import sandbox

        reason = sandbox.probe()
        if reason is not None and mode == "auto":
            return "none"  # what the engine does with "auto" here (the driver did not decide)
        if reason is not None:
            raise BotMissingError(
                f"cannot sandbox bots: {reason}; {sandbox.INSTALL_HINT} on that node, or run "
                "with --sandbox none"
            )
        return "bwrap"

    def _load(self) -> TournamentConfig:
        if self._rebase is None:
            config = msgspec.msgpack.decode(self._config_bytes, type=TournamentConfig)
        else:
            # A shipped working directory: resolve the file again in this node's copy.
            try:
                config = parse_config(self._config_text, Path.cwd() / self._rebase)
                shipped = msgspec.msgpack.decode(self._config_bytes, type=TournamentConfig)
                config = msgspec.structs.replace(config, sandbox=shipped.sandbox)
            except ConfigError as exc:
                raise BotMissingError(self._explain(str(exc))) from None
        for bot in config.bots:
            if bot.remote:  # played where the gateway is, never on a node
                continue
            program = bot.argv[0]
            if not os.path.isfile(program):
                raise BotMissingError(self._cannot(bot.name, f"{program} not found"))
            if not os.access(program, os.X_OK):
                raise BotMissingError(self._cannot(bot.name, f"{program} is not executable"))
            if bot.cwd is not None and not os.path.isdir(bot.cwd):
                raise BotMissingError(self._cannot(bot.name, f"folder {bot.cwd} not found"))
        return config

    @staticmethod
    def _cannot(bot: str, what: str) -> str:
        """The driver adds "worker on node NODE" (it knows where it placed the actor)."""
        return f"cannot start bot {bot}: {what}"

    def _explain(self, message: str) -> str:
        match = _BOT_KEY_RE.search(message)
        if match:
            return self._cannot(match["name"], match["detail"])
        return f"cannot load the tournament file: {message}"

    # -- playing ------------------------------------------------------------------------

    def play(self, batch: bytes, verdict: bytes | None = None) -> Iterator[bytes]:
        """Play a batch of work items; yield each finished game at once.

        ``verdict`` is the fault policy's state when the batch was handed out
        (:class:`~arena.backends.pool.Verdict`). Each item yielded is a msgpack
        triple: the list of ``FinishedGame`` (the games finished since the last
        one), the list of live events since then and the (game key, pair key) of
        each game skipped since then (a bot out).
        Usually that is one game; when games end faster than Ray streams them,
        bundling keeps Ray's per-item cost from capping the rate, without ever
        holding back a finished game.
        """
        items = _ITEMS.decode(batch)
        self._start_loop()
        results: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        waiting = {item.task.key for item in items}
        with self._lock:
            while self._failure is None and not waiting.isdisjoint(self._routes):
                self._freed.wait()
            if self._failure is not None:
                raise RuntimeError(self._failure)
            for key in waiting:
                self._routes[key] = results
        assert self._send is not None
        if verdict is not None:
            self.verdict(verdict)
        for item in items:
            trio.from_thread.run_sync(self._send.send_nowait, item, trio_token=self._token)
        while waiting:
            ready: list[msgspec.Raw] = []
            events: list[msgspec.Raw] = []
            skipped: list[tuple[str, str]] = []
            message = results.get()
            while True:
                kind, payload = message
                if kind == "record":
                    ready.append(msgspec.Raw(payload))
                elif kind == "event":
                    events.append(msgspec.Raw(payload))
                elif kind == "skipped":
                    skipped.append(payload)
                elif kind == "done":
                    waiting.discard(payload)
                else:
                    raise RuntimeError(payload)
                try:
                    message = results.get_nowait()
                except queue.Empty:
                    break
            if ready or events or skipped:
                yield _ENCODER.encode([ready, events, skipped])

    def verdict(self, data: bytes) -> None:
        """The fault policy's state from the driver, maybe answering a game sent."""
        verdict = _VERDICT.decode(data)
        self._start_loop()
        with suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(self._gate.update, verdict, trio_token=self._token)

    def close(self) -> None:
        """No more work: let the slots finish, quit every bot, end the loop."""
        if self._thread is None:
            return
        with suppress(trio.RunFinishedError):
            assert self._send is not None
            trio.from_thread.run_sync(self._send.close, trio_token=self._token)
        self._thread.join(CLOSE_TIMEOUT)

    def _start_loop(self) -> None:
        with self._lock:
            if self._thread is None:
                if self._config is None:
                    self._config = self._load()
                self._thread = threading.Thread(target=self._serve, name="arena-trio", daemon=True)
                self._thread.start()
        self._ready.wait()

    def _serve(self) -> None:
        """The actor's trio loop: game slots fed from a channel until it closes."""
        assert self._config is not None
        slots = GameSlots(self._config, self._slots)

        async def main() -> None:
            send, receive = trio.open_memory_channel[WorkItem](math.inf)
            self._send = send
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            on_event = self._event if self._events else None

            # Closures, not methods: one coroutine method would make Ray run the
            # actor as an asyncio one, whose plain calls take turns on one loop
            # (the second batch in flight, and a verdict, waiting for the first).
            async def emit(key: str, pair_key: str, record: GameRecord) -> None:
                answer = self._gate.expect(key, record)
                self._put(
                    pair_key, ("record", _ENCODER.encode(FinishedGame(key, pair_key, record)))
                )
                await self._gate.wait(key, answer)

            async def skipped(key: str, pair_key: str) -> None:
                self._put(pair_key, ("skipped", (key, pair_key)))

            async def pair_done(item: WorkItem) -> None:
                with self._lock:
                    results = self._routes.pop(item.task.key)
                    self._freed.notify_all()
                results.put(("done", item.task.key))

            await slots.run(
                receive,
                emit,
                pair_done=pair_done,
                skip=self._gate.out,
                skipped=skipped,
                on_event=on_event,
            )

        try:
            trio.run(main)
        except BaseException as exc:  # noqa: BLE001 - reported to every waiting batch
            failure = f"game slots on node {self.node} failed: {one_line(repr(exc))}"
        else:
            failure = f"game slots on node {self.node} were closed"
        with self._lock:
            self._failure = failure
            waiting = {id(q): q for q in self._routes.values()}
            self._routes.clear()
            self._freed.notify_all()
        for results in waiting.values():
            results.put(("error", failure))
        self._ready.set()

    def _put(self, pair_key: str, message: tuple[str, Any]) -> None:
        """Hand ``message`` to the batch waiting for pair task ``pair_key``."""
        with self._lock:
            results = self._routes[pair_key]
        results.put(message)

    def _event(self, event: LiveEvent) -> None:
        with self._lock:
            results = self._routes.get(event.key.rsplit("/", 1)[0])
        if results is not None and results.qsize() < EVENT_BACKLOG:
            results.put(("event", _ENCODER.encode(event)))


async def _prepare(config: TournamentConfig) -> None:
    """The built-in bots' preparation on this node (its own cache, built once per node)."""
    for bot in config.bots:
        await prepare(bot.builtin)


def _node_name() -> str:
    host = socket.gethostname()
    try:
        import ray

        ip = ray.util.get_node_ip_address()
    except Exception:  # best effort: the host name alone still names the node
        return host
    return f"{host} ({ip})"
