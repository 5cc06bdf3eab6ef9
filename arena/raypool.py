"""Ray backend: the same game slots in Ray actors, so one tournament spans a cluster.

The local backend (``arena/workers.py``) runs :class:`~arena.runner.GameSlots` in
one process per core. This one runs the same game slots inside Ray actors, one
per CPU of the cluster, so adding machines adds game slots while everything
else stays as it is: the driver (the ``arena run`` process) hands out work items
and is the only writer of the SQLite store, because each finished game comes
back to it and goes through ``on_record``. Resume, export, ratings, reports, the
live view and the fault table therefore need no change.

Shape of the exchange, and why:

* An actor keeps **one trio loop in a thread for its whole life**, so its bot
  processes stay alive across every game it plays (starting a bot costs more
  than many games of an instant bot). Bots are forked from the thread running
  that loop (see ``arena/process.py``), which lives as long as the actor, so
  ``PR_SET_PDEATHSIG`` holds here too: a killed actor takes its bots with it.
* The driver sends **batches** of work items (msgspec bytes) to
  ``play``, a streaming generator method (``num_returns="streaming"``), which
  yields each finished game as soon as it ends. Two batches are in flight per
  actor so its game slots never wait for a round trip.
* The driver's trio loop never blocks on Ray: every wait (``next`` on a
  generator, ``ray.get``, ``ray.init``) runs in a thread under the pool's own
  ``CapacityLimiter``, so waiting actors cannot starve the store's writer
  threads, which use trio's default limiter.

Failure handling: an actor (or its node) that dies loses only its unfinished
games; their work items go back to the front of the queue and a fresh actor
takes over. A game can then be played twice (it finished on the dead actor but
its record never arrived, or did arrive): the driver passes each game key to
``on_record`` once, and the store would keep the first record anyway.

Ray is imported lazily: ``import arena`` and the local backend never need it.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import re
import socket
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import suppress
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import trio

from arena.config import ConfigError, TournamentConfig, parse_config
from arena.events import EventSink, LiveEvent
from arena.record import GameRecord
from arena.runner import GameSlots, WorkItem

__all__ = [
    "EXTRA_HINT",
    "BotMissingError",
    "GameActor",
    "RayBackendError",
    "RayPool",
    "RayUnavailableError",
    "require_ray",
]

EXTRA_HINT = "the ray backend needs the 'ray' extra: pip install -e '.[ray]'"

IN_FLIGHT = 2
"""Batches outstanding per actor: one playing, one queued behind it, so that the
actor's slots never idle while the driver hands out the next batch."""

CONNECT_TIMEOUT = 10.0
"""How long the head node's port may take to accept a connection."""

CLOSE_TIMEOUT = 10.0
"""How long an actor may take to quit its bots at the end before it is killed."""

WORKING_DIR_EXCLUDES = [".git", ".venv", "results", "__pycache__", "*.sqlite*"]
"""Never shipped with a working directory: large, local, or written during the run."""


class RayUnavailableError(ValueError):
    """``backend = "ray"`` without Ray installed; the message is one line."""

    def __init__(self) -> None:
        super().__init__(EXTRA_HINT)


class RayBackendError(ValueError):
    """The cluster cannot play the tournament (a bot missing on a node, no cluster
    at the address, actors that keep dying); the message is one line."""


class BotMissingError(RuntimeError):
    """Raised inside an actor whose node cannot start a bot; the message is one line."""


def require_ray() -> ModuleType:
    """The ``ray`` module, or :class:`RayUnavailableError` with the install hint."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError() from None
    return ray


class Result(msgspec.Struct, frozen=True, array_like=True):
    """One finished game as it travels from an actor to the driver."""

    key: str
    pair_key: str
    record: GameRecord


_encoder = msgspec.msgpack.Encoder()
_items_decoder = msgspec.msgpack.Decoder(list[WorkItem])
_stream_decoder = msgspec.msgpack.Decoder(tuple[list[Result], list[LiveEvent]])

EVENT_BACKLOG = 1024
"""Live events an actor holds for one batch's stream before dropping new ones."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------- actor side


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
        self._routes: dict[str, queue.SimpleQueue[tuple[str, Any]]] = {}
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._send: trio.MemorySendChannel[WorkItem] | None = None
        self._failure: str | None = None

    # -- checks -------------------------------------------------------------------------

    def check(self) -> str:
        """Load the config on this node and make sure every bot can start here.

        Done before the first game so that a node without a bot fails the run at
        once with one readable line, instead of every game there ending in a
        "crash" fault charged to an innocent bot. Returns the node's name.
        """
        if self._config is None:
            self._config = self._load()
        return self.node

    def _load(self) -> TournamentConfig:
        if self._rebase is None:
            config = msgspec.msgpack.decode(self._config_bytes, type=TournamentConfig)
        else:
            # A shipped working directory: resolve the file again in this node's copy.
            try:
                config = parse_config(self._config_text, Path.cwd() / self._rebase)
            except ConfigError as exc:
                raise BotMissingError(self._explain(str(exc))) from None
        for bot in config.bots:
            program = bot.argv[0]
            if not os.path.isfile(program):
                raise BotMissingError(self._cannot(bot.name, f"{program} not found"))
            if not os.access(program, os.X_OK):
                raise BotMissingError(self._cannot(bot.name, f"{program} is not executable"))
            if bot.cwd is not None and not os.path.isdir(bot.cwd):
                raise BotMissingError(self._cannot(bot.name, f"folder {bot.cwd} not found"))
        return config

    def _cannot(self, bot: str, what: str) -> str:
        return f"worker on node {self.node} cannot start bot {bot}: {what}"

    def _explain(self, message: str) -> str:
        match = _BOT_KEY_RE.search(message)
        if match:
            return self._cannot(match["name"], match["detail"])
        return f"worker on node {self.node} cannot load the tournament file: {message}"

    # -- playing ------------------------------------------------------------------------

    def play(self, batch: bytes) -> Iterator[bytes]:
        """Play a batch of work items; yield each finished game at once.

        Each item yielded is a msgpack pair: the list of ``Result`` (the games
        finished since the last one) and the list of live events since then.
        Usually that is one game; when games end faster than Ray streams them,
        bundling keeps Ray's per-item cost from capping the rate, without ever
        holding back a finished game.
        """
        items = _items_decoder.decode(batch)
        self._start_loop()
        results: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        waiting = {item.task.key for item in items}
        with self._lock:
            if self._failure is not None:
                raise RuntimeError(self._failure)
            for key in waiting:
                self._routes[key] = results
        assert self._send is not None
        for item in items:
            trio.from_thread.run_sync(self._send.send_nowait, item, trio_token=self._token)
        while waiting:
            ready: list[msgspec.Raw] = []
            events: list[msgspec.Raw] = []
            message = results.get()
            while True:
                kind, payload = message
                if kind == "record":
                    ready.append(msgspec.Raw(payload))
                elif kind == "event":
                    events.append(msgspec.Raw(payload))
                elif kind == "done":
                    waiting.discard(payload)
                else:
                    raise RuntimeError(payload)
                try:
                    message = results.get_nowait()
                except queue.Empty:
                    break
            if ready or events:
                yield _encoder.encode([ready, events])

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
            await slots.run(receive, self._emit, pair_done=self._pair_done, on_event=on_event)

        try:
            trio.run(main)
        except BaseException as exc:  # noqa: BLE001 - reported to every waiting batch
            failure = f"game slots on node {self.node} failed: {_one_line(repr(exc))}"
        else:
            failure = f"game slots on node {self.node} were closed"
        with self._lock:
            self._failure = failure
            waiting = {id(q): q for q in self._routes.values()}
            self._routes.clear()
        for results in waiting.values():
            results.put(("error", failure))
        self._ready.set()

    async def _emit(self, key: str, pair_key: str, record: GameRecord) -> None:
        data = _encoder.encode(Result(key, pair_key, record))
        with self._lock:
            results = self._routes[pair_key]
        results.put(("record", data))

    def _event(self, event: LiveEvent) -> None:
        with self._lock:
            results = self._routes.get(event.key.rsplit("/", 1)[0])
        if results is not None and results.qsize() < EVENT_BACKLOG:
            results.put(("event", _encoder.encode(event)))

    async def _pair_done(self, item: WorkItem) -> None:
        with self._lock:
            results = self._routes.pop(item.task.key)
        results.put(("done", item.task.key))


def _node_name() -> str:
    host = socket.gethostname()
    try:
        import ray

        ip = ray.util.get_node_ip_address()
    except Exception:  # best effort: the host name alone still names the node
        return host
    return f"{host} ({ip})"


# --------------------------------------------------------------------------- driver side


def _no_sigterm_warning(record: logging.LogRecord) -> bool:
    return "SIGTERM handler is not set" not in record.getMessage()


def _next_result(ray: ModuleType, generator: Any) -> bytes | None:
    """The next item of a streaming generator, or None at its end (blocking).

    One thread hop per game for both the wait and the fetch.
    """
    try:
        ref = next(generator)
    except StopIteration:
        return None
    return ray.get(ref)


class RayPool:
    """Runs work items on Ray actors with game slots each; mirrors ``WorkerPool``.

    ``processes`` is the number of actors (default: one per cluster CPU, up to
    the concurrency) and ``slots`` the games each plays at once (default: the
    concurrency spread over the actors). ``address`` names a running cluster
    (default: the config's ``ray_address``, then ``RAY_ADDRESS``, else a local
    instance is started and shut down at the end). ``working_dir`` (default:
    ``ARENA_RAY_WORKING_DIR``) is shipped to every node with Ray's runtime
    environment; the tournament file must lie inside it, and each actor resolves
    the bots' commands again in its own copy. ``config``, the caller's resolved
    config, saves parsing the text again and keeps its overrides (``-j``).
    """

    def __init__(
        self,
        config_text: str,
        config_path: str,
        *,
        processes: int | None = None,
        slots: int | None = None,
        on_record: Callable[[str, str, GameRecord], Awaitable[None]],
        dispatchable: Callable[[WorkItem], bool] = lambda item: True,
        address: str | None = None,
        working_dir: str | None = None,
        batch: int | None = None,
        config: TournamentConfig | None = None,
        on_event: EventSink | None = None,
    ) -> None:
        self.ray = require_ray()
        self.on_event = on_event
        self.config = config if config is not None else parse_config(config_text, config_path)
        self.config_text = config_text
        self.config_path = Path(config_path).resolve()
        self.processes = processes
        self.slots = slots
        self.batch = batch
        self.on_record = on_record
        self.dispatchable = dispatchable
        self.address = address or self.config.ray_address or os.environ.get("RAY_ADDRESS")
        working_dir = working_dir or os.environ.get("ARENA_RAY_WORKING_DIR") or None
        self.working_dir = str(Path(working_dir).resolve()) if working_dir else None
        self.rebase: str | None = None
        if self.working_dir is not None:
            try:
                self.rebase = str(self.config_path.relative_to(self.working_dir))
            except ValueError:
                raise RayBackendError(
                    f"the tournament file {self.config_path} must lie inside the Ray working "
                    f"directory {self.working_dir}, which is what reaches the nodes"
                ) from None
        self.queue: deque[WorkItem] = deque()
        self.delivered: set[str] = set()
        """Game keys passed to ``on_record``: a game played twice is reported once."""
        self.duplicates = 0
        self.requeued = 0
        """Games handed out again because their actor died."""
        self.actors: list[Any] = []
        self.nodes: dict[str, int] = {}
        """Node name -> actors started there, for messages and tests."""
        self.started_ray = False
        self.startup_seconds = 0.0
        """Connecting, starting the first actors and checking their nodes (for benchmarks)."""
        self._limiter = trio.CapacityLimiter(8)
        self._actor_class: Any = None
        self._actor_cpus = 1.0
        self._slots_each = 1

    # ------------------------------------------------------------------ public

    async def run(self, items: list[WorkItem]) -> None:
        """Play every item; return when all are done (re-queuing a dead actor's items)."""
        self.queue.extend(items)
        if not self.queue:
            return
        started = trio.current_time()
        if self.address:
            await self._probe(self.address)
        # A Ctrl-C while Ray starts abandons the thread: a local instance started
        # meanwhile dies with this process (Ray's reaper), a connection just ends.
        self.started_ray = await trio.to_thread.run_sync(self._connect, abandon_on_cancel=True)
        try:
            count = self._plan(len(self.queue))
            self._limiter.total_tokens = max(8, (IN_FLIGHT + 2) * count)
            actors = [self._new_actor() for _ in range(count)]
            # Check every node before the first game, outside any nursery, so
            # that a missing bot is one plain error.
            await self._check(actors)
            self.startup_seconds = trio.current_time() - started
            async with trio.open_nursery() as nursery:
                for actor in actors:
                    nursery.start_soon(self._drive, actor)
        finally:
            with trio.CancelScope(shield=True):
                self.kill_all()
                if self.started_ray:
                    await trio.to_thread.run_sync(self.ray.shutdown)
                    self.started_ray = False

    def kill_all(self) -> None:
        """Second Ctrl-C or the end of a run: kill every actor (its bots die with it)."""
        for actor in self.actors:
            with suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        self.actors.clear()

    # ------------------------------------------------------------------ setup

    @staticmethod
    async def _probe(address: str) -> None:
        """Fail fast on an unreachable ``HOST:PORT``: ``ray.init`` would retry for minutes."""
        host, sep, port = address.rpartition(":")
        if not sep or not port.isdigit() or "://" in address or not host:
            return  # "auto", "ray://..." and the like: leave them to Ray
        try:
            with trio.fail_after(CONNECT_TIMEOUT):
                stream = await trio.open_tcp_stream(host.strip("[]"), int(port))
        except (OSError, trio.TooSlowError) as exc:
            reason = "no answer" if isinstance(exc, trio.TooSlowError) else exc.strerror or exc
            raise RayBackendError(
                f"cannot reach the Ray cluster at {address}: {reason} (is 'ray start --head' "
                "running there, and is the port open?)"
            ) from None
        await stream.aclose()

    def _connect(self) -> bool:
        """Join the cluster at ``address`` or start a local instance; True if we started it."""
        ray = self.ray
        if ray.is_initialized():
            if self.working_dir is not None and not ray.get_runtime_context().runtime_env.get(
                "working_dir"
            ):
                raise RayBackendError(
                    "a Ray working directory must be given when connecting to Ray, and this "
                    "process was connected already without one"
                )
            return False
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.working_dir is not None:
            # Ray uploads a local folder only for the whole job (ray.init), not per actor.
            options["runtime_env"] = {
                "working_dir": self.working_dir,
                "excludes": WORKING_DIR_EXCLUDES,
            }
        # Called in a thread on purpose (Ray's SIGTERM handler would replace the
        # arena's own); hush Ray's warning that it therefore installs none.
        logging.getLogger("ray._private.worker").addFilter(_no_sigterm_warning)
        if self.address:
            try:
                ray.init(address=self.address, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                hint = ""
                if "RAY_AUTH_MODE" not in os.environ:
                    hint = (
                        " (a cluster with token authentication needs its token here: copy the "
                        "head's ~/.ray/auth_token and set RAY_AUTH_MODE=token)"
                    )
                raise RayBackendError(
                    f"cannot connect to the Ray cluster at {self.address}: "
                    f"{_one_line(str(exc))}{hint}"
                ) from None
        else:
            cpus = max(self.processes or 0, os.cpu_count() or 1)
            ray.init(num_cpus=cpus, include_dashboard=False, **options)
        return True

    def _plan(self, work: int) -> int:
        """Actors and slots per actor for ``work`` pair tasks, from the cluster's CPUs."""
        cpus = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        concurrency = max(1, min(self.config.concurrency, work))
        count = self.processes or min(concurrency, cpus)
        count = max(1, min(count, work))
        self._slots_each = self.slots or -(-concurrency // count)
        # More actors than CPUs (asked for explicitly) share them rather than wait forever.
        self._actor_cpus = 1.0 if count <= cpus else cpus / count
        return count

    def _new_actor(self) -> Any:
        ray = self.ray
        if self._actor_class is None:
            self._actor_class = ray.remote(GameActor)
        options: dict[str, Any] = {
            "num_cpus": self._actor_cpus,
            "max_concurrency": IN_FLIGHT + 2,
            "scheduling_strategy": "SPREAD",
            "max_restarts": 0,
        }
        config = _encoder.encode(self.config) if self.rebase is None else b""
        actor = self._actor_class.options(**options).remote(
            config, self.config_text, self.rebase, self._slots_each, self.on_event is not None
        )
        self.actors.append(actor)
        return actor

    async def _check(self, actors: list[Any]) -> None:
        """Every actor's :meth:`GameActor.check`; a failure becomes a one-line error."""
        ray = self.ray
        refs = [actor.check.remote() for actor in actors]
        try:
            nodes = await self._wait(ray.get, refs)
        except ray.exceptions.RayTaskError as exc:
            raise RayBackendError(_one_line(str(exc.cause))) from None
        for node in nodes:
            self.nodes[node] = self.nodes.get(node, 0) + 1

    async def _wait(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, a blocking Ray call, in a thread: the trio loop keeps running."""
        return await trio.to_thread.run_sync(
            partial(fn, *args), limiter=self._limiter, abandon_on_cancel=True
        )

    # ------------------------------------------------------------------ driving

    def _take(self, count: int) -> list[WorkItem]:
        batch: list[WorkItem] = []
        while self.queue and len(batch) < count:
            item = self.queue.popleft()
            if self.dispatchable(item):
                batch.append(item)
        return batch

    async def _drive(self, actor: Any) -> None:
        """Keep one actor slot busy until the queue is empty; replace the actor if it dies.

        Three deaths in a row without a finished game are a fault of the cluster
        or the arena, not of a bot: give up loudly.
        """
        failures = 0
        while True:
            died, progressed = await self._serve(actor)
            if not died:
                await self._retire(actor)
                return
            self._forget(actor)
            failures = 0 if progressed else failures + 1
            if failures >= 3:
                raise RayBackendError("a Ray actor died three times without finishing a game")
            if not self.queue:
                return
            actor = self._new_actor()
            try:
                await self._check([actor])
            except self.ray.exceptions.RayActorError:
                continue  # died before playing: counts as one more failure below
            except BaseException:
                self._forget(actor)
                raise

    async def _serve(self, actor: Any) -> tuple[bool, bool]:
        """Feed ``actor`` batches until the queue is empty. Returns (died, progressed)."""
        state = {"died": False, "progressed": False}
        async with trio.open_nursery() as nursery:
            for _ in range(IN_FLIGHT):
                nursery.start_soon(self._lane, actor, state)
        return state["died"], state["progressed"]

    async def _lane(self, actor: Any, state: dict[str, bool]) -> None:
        """One in-flight batch at a time: send it, store its games as they stream back."""
        ray = self.ray
        lost_errors = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError)
        size = self.batch or self._slots_each
        while not state["died"]:
            batch = self._take(size)
            if not batch:
                return
            left = {item.task.key: (item, set(item.numbers)) for item in batch}
            try:
                generator = actor.play.options(num_returns="streaming").remote(
                    _encoder.encode(batch)
                )
                while (data := await self._wait(_next_result, ray, generator)) is not None:
                    results, events = _stream_decoder.decode(data)
                    if self.on_event is not None:
                        for event in events:
                            self.on_event(event)
                    for result in results:
                        left[result.pair_key][1].discard(int(result.key.rsplit("/", 1)[1]))
                        state["progressed"] = True
                        await self._deliver(result)
            except lost_errors:
                state["died"] = True
                lost = [WorkItem(item.task, sorted(n)) for item, n in left.values() if n]
                self.queue.extendleft(reversed(lost))
                self.requeued += sum(len(item.numbers) for item in lost)
                return
            except ray.exceptions.RayTaskError as exc:
                raise RayBackendError(_one_line(str(exc.cause))) from None
            unfinished = sum(len(n) for _, n in left.values())
            if unfinished:
                raise RayBackendError(f"an actor ended a batch with {unfinished} games unplayed")

    async def _deliver(self, result: Result) -> None:
        if result.key in self.delivered:
            self.duplicates += 1
            return
        self.delivered.add(result.key)
        await self.on_record(result.key, result.pair_key, result.record)

    async def _retire(self, actor: Any) -> None:
        """End of the work: let the actor quit its bots cleanly, then remove it."""
        with trio.move_on_after(CLOSE_TIMEOUT + 2):
            with suppress(Exception):
                await self._wait(self.ray.get, actor.close.remote())
        self._forget(actor)

    def _forget(self, actor: Any) -> None:
        with suppress(Exception):
            self.ray.kill(actor, no_restart=True)
        with suppress(ValueError):
            self.actors.remove(actor)
