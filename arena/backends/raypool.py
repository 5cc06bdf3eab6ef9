"""Ray backend: the same game slots in Ray actors, so one tournament spans a cluster.

The local backend (``arena/backends/workers.py``) runs :class:`~arena.backends.slots.GameSlots` in
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
  that loop (see ``arena/engine/process.py``), which lives as long as the actor, so
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
The actor's side is ``rayactor.py``; joining the cluster, ``rayconnect.py``.
"""

from __future__ import annotations

import os
import tomllib
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import trio

from arena.backends.pool import FaultGate, WorkItem, split
from arena.backends.rayactor import CLOSE_TIMEOUT, BotMissingError, GameActor
from arena.backends.rayconnect import RayBackendError, join, require_ray, routed_logs
from arena.backends.slots import FinishedGame
from arena.match.events import EventSink, LiveEvent
from arena.match.record import GameRecord
from arena.plan.config import TournamentConfig, one_line, parse_config

__all__ = ["RayPool"]

IN_FLIGHT = 2
"""Batches outstanding per actor: one playing, one queued behind it, so that the
actor's slots never idle while the driver hands out the next batch."""

CHECK_TIMEOUT = 60.0
"""How long a new actor may take to start and check its node (a first actor on a
node may wait for Ray to unpack the working directory there)."""

MAX_START_FAILURES = 5
"""Actors a seat may fail to start in a row before the run gives up."""

MAX_GAME_LOSSES = 3
"""Times a game may be lost with its actor before the run gives up."""

_encoder = msgspec.msgpack.Encoder()
_stream_decoder = msgspec.msgpack.Decoder(
    tuple[list[FinishedGame], list[LiveEvent], list[tuple[str, str]]]
)


def _next_result(ray: ModuleType, generator: Any) -> bytes | None:
    """The next item of a streaming generator, or None at its end (blocking).

    One thread hop per game for both the wait and the fetch.
    """
    try:
        ref = next(generator)
    except StopIteration:
        return None
    data: bytes = ray.get(ref)  # the actor streams encoded batches
    return data


def _first(group: BaseExceptionGroup, kind: type[BaseException]) -> BaseException | None:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = _first(exc, kind)
            if found is not None:
                return found
        elif isinstance(exc, kind):
            return exc
    return None


@dataclass(eq=False)
class Node:
    """One Ray node as the driver sees it, for placing actors and for messages."""

    id: str
    label: str
    """``ADDRESS [first 8 hex digits of the node id]``: addresses repeat on one host."""
    cpus: int
    actors: int = 0
    """Our live actors placed here."""
    suspect: bool = False
    """An actor here was lost while Ray still calls the node alive: Ray takes many
    seconds to notice a killed node, so other nodes are preferred meanwhile."""
    lost: bool = False
    sandbox: str | None = None
    """The sandbox its actors checked (``bwrap`` or ``none``)."""
    raylet: tuple[str, int] | None = None
    """The node manager's address: whether it still accepts connections tells a
    dead node from a lost actor long before Ray's health check does."""

    async def answers(self, timeout: float) -> bool:
        if self.raylet is None:
            return True
        try:
            with trio.fail_after(timeout):
                stream = await trio.open_tcp_stream(*self.raylet)
        except (OSError, trio.TooSlowError):
            return False
        await stream.aclose()
        return True


class _ActorLost(Exception):
    """An actor (or its node) is gone; ``args[0]`` says why, in one line."""


class RayPool:
    """Runs work items on Ray actors with game slots each (a
    :class:`~arena.backends.pool.Pool`, as ``WorkerPool`` is).

    ``processes`` is the number of actors (default: one per cluster CPU, up to
    the concurrency) and ``slots`` the games each plays at once (default: the
    concurrency spread over the actors). ``concurrency`` (``-j``) overrides the
    file's; a file without one plays as many games at once as the cluster has
    CPUs. ``address`` names a running cluster (default: the config's
    ``ray_address``, then ``RAY_ADDRESS``, else a local instance is started and
    shut down at the end, or, with ``keep_local``, when the caller says).
    ``working_dir`` (default: ``ARENA_RAY_WORKING_DIR``) is shipped to every node
    with Ray's runtime environment; the tournament file must lie inside it, and
    each actor resolves the bots' commands again in its own copy. ``config``, the
    caller's resolved config, saves parsing the text again. ``log_path`` receives
    Ray's own log lines (else they are dropped).

    Every Ray failure after joining (an actor that cannot be placed, checked or
    streamed from) is the loss of an actor, and of its node if Ray says so: its
    unfinished games go back to the front of the queue and its seat is given to
    a new actor on a live node with a free CPU, if there is one. A game lost
    ``MAX_GAME_LOSSES`` times, or a seat that cannot start an actor
    ``MAX_START_FAILURES`` times in a row, ends the run with one line.
    """

    def __init__(
        self,
        config_text: str,
        config_path: str,
        *,
        processes: int | None = None,
        slots: int | None = None,
        on_record: Callable[[str, str, GameRecord], Awaitable[None]],
        gate: FaultGate | None = None,
        address: str | None = None,
        working_dir: str | None = None,
        batch: int | None = None,
        config: TournamentConfig | None = None,
        on_event: EventSink | None = None,
        concurrency: int | None = None,
        connect_timeout: float | None = None,
        log_path: Path | None = None,
        keep_local: bool = False,
    ) -> None:
        self.ray = require_ray()
        self.keep_local = keep_local
        """A local instance started here outlives the run, for what follows in this
        process (``arena run --analyze``: Ray's start costs seconds); the caller
        ends it with :meth:`release_ray`."""
        self.on_event = on_event
        self.config = config if config is not None else parse_config(config_text, config_path)
        self.config_text = config_text
        self.config_path = Path(config_path).resolve()
        self.processes = processes
        self.slots = slots
        self.batch = batch
        self.on_record = on_record
        self.gate = gate or FaultGate()
        self._last: tuple[list[str], list[str]] | None = None
        self.address = address or self.config.ray_address or os.environ.get("RAY_ADDRESS")
        self.concurrency = concurrency
        self.connect_timeout = connect_timeout or self.config.ray_connect_timeout
        self.log_path = log_path
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
        self.requeued_games: set[str] = set()
        """Games handed out again because their actor was lost (each counted once)."""
        self.actors_lost = 0
        self.losses: dict[str, int] = {}
        """Game key -> how many times it was lost with its actor."""
        self.actors: list[Any] = []
        self.cluster: dict[str, Node] = {}
        """Node id -> what we know of it."""
        self.nodes: dict[str, int] = {}
        """Node label -> actors started (and checked) there, for messages and tests."""
        self.started_ray = False
        self.startup_seconds = 0.0
        """Connecting, starting the first actors and checking their nodes (for benchmarks)."""
        self.planned = 0
        """Actors asked for (seats): the concurrency over the slots per actor."""
        self._limiter = trio.CapacityLimiter(8)
        self._actor_class: Any = None
        self._actor_cpus = 1.0
        self._slots_each = 1
        self._placement = trio.Lock()
        self._started = 0.0
        self._playing = 0
        """Seats with a live actor; a seat without room waits for one of them."""
        self._freed = trio.Event()
        """Set (and replaced) whenever an actor is removed: a CPU may be free."""
        self._gave_up: str | None = None
        """Why the run ends: a game lost with its actor too many times."""

    # ------------------------------------------------------------------ public

    @property
    def requeued(self) -> int:
        return len(self.requeued_games)

    @property
    def nodes_lost(self) -> list[Node]:
        return [node for node in self.cluster.values() if node.lost]

    def summary(self) -> str:
        """One line for the end of a run: where games ran and what was lost."""
        line = f"ray: {sum(self.nodes.values())} actors on {len(self.nodes)} nodes"
        lost = self.nodes_lost
        line += f"; nodes lost: {len(lost)}"
        if lost:
            line += f" ({', '.join(node.label for node in lost)})"
        line += f"; actors lost: {self.actors_lost}; games re-queued: {self.requeued}"
        modes = sorted({n.sandbox for n in self.cluster.values() if n.sandbox is not None})
        return f"{line}; sandbox: {', '.join(modes) or 'none'}, checked on each node"

    async def run(self, items: list[WorkItem]) -> None:
        """Play every item; return when all are done (re-queuing lost actors' items)."""
        self.queue.extend(items)
        if not self.queue:
            return
        with routed_logs(self.ray, self.log_path):
            await self._run()

    async def _run(self) -> None:
        self._started = trio.current_time()
        self.started_ray = await join(
            self.ray,
            self.address,
            connect_timeout=self.connect_timeout,
            working_dir=self.working_dir,
            local_cpus=max(self.processes or 0, os.cpu_count() or 1),
        )
        try:
            await self._refresh()
            seats = self._plan(len(self.queue))
            self.planned = seats
            self._limiter.total_tokens = max(8, (IN_FLIGHT + 2) * seats)
            try:
                async with trio.open_nursery() as nursery:
                    for _ in range(seats):
                        nursery.start_soon(self._seat)
            except BaseExceptionGroup as group:
                first = _first(group, RayBackendError)
                if first is not None:
                    raise first from None
                raise
            if self.queue:
                unplayed = sum(len(item.numbers) for item in self.queue)
                raise RayBackendError(self._no_node_left(unplayed))
            await self._sweep()
        finally:
            with trio.CancelScope(shield=True):
                self.kill_all()
                if not self.keep_local:
                    await trio.to_thread.run_sync(self.release_ray)

    def release_ray(self) -> None:
        """Shut down the local Ray instance this pool started, if it did."""
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False

    def kill_all(self) -> None:
        """Second Ctrl-C or the end of a run: kill every actor (its bots die with it)."""
        for actor in self.actors:
            with suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        self.actors.clear()

    # ------------------------------------------------------------------ setup

    def _concurrency(self, cpus: int) -> int:
        """``-j``, else the file's ``concurrency``, else the cluster's CPUs."""
        if self.concurrency is not None:
            return self.concurrency
        try:
            in_file = "concurrency" in tomllib.loads(self.config_text)
        except tomllib.TOMLDecodeError:
            in_file = True
        return self.config.concurrency if in_file else cpus

    def _plan(self, work: int) -> int:
        """Actors (and slots per actor) for ``work`` pair tasks: the local backend's
        split (:func:`~arena.backends.pool.split`) over the cluster's CPUs."""
        cpus = max(1, sum(node.cpus for node in self.cluster.values() if not node.lost))
        count, slots = split(self._concurrency(cpus), work, cpus, self.processes)
        self._slots_each = self.slots or slots
        # More actors than CPUs (asked for explicitly) share them rather than wait forever.
        self._actor_cpus = 1.0 if count <= cpus else 0.0
        return count

    async def _refresh(self) -> None:
        """Update :attr:`cluster` from Ray's node table (new nodes, nodes Ray calls dead)."""
        try:
            table = await self._wait(self.ray.nodes)
        except Exception as exc:  # noqa: BLE001 - the head is gone: nothing can go on
            raise RayBackendError(f"lost the Ray cluster: {one_line(str(exc))}") from None
        for entry in table:
            node_id = entry.get("NodeID", "")
            known = self.cluster.get(node_id)
            if not entry.get("Alive"):
                if known is not None:
                    known.lost = True
                continue
            if known is None:
                address = entry.get("NodeName") or entry.get("NodeManagerAddress") or "?"
                cpus = int(entry.get("Resources", {}).get("CPU", 0))
                node = Node(node_id, f"{address} [{node_id[:8]}]", cpus)
                port = entry.get("NodeManagerPort")
                if entry.get("NodeManagerAddress") and isinstance(port, int) and port > 0:
                    node.raylet = (entry["NodeManagerAddress"], port)
                self.cluster[node_id] = node

    def _choose(self) -> Node | None:
        """A live node with room for one more actor; nodes without a recent loss first."""
        live = [node for node in self.cluster.values() if not node.lost and node.cpus > 0]
        if self._actor_cpus:
            live = [node for node in live if node.actors < node.cpus]
        if not live:
            return None
        return min(live, key=lambda node: (node.suspect, node.actors / node.cpus, -node.cpus))

    def _new_actor(self, node: Node) -> Any:
        ray = self.ray
        if self._actor_class is None:
            # A verdict must not wait behind the batch that waits for it: a thread
            # of its own, whatever the batches in flight hold.
            self._actor_class = ray.remote(concurrency_groups={"verdicts": 1})(GameActor)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options: dict[str, Any] = {
            "num_cpus": self._actor_cpus,
            "max_concurrency": IN_FLIGHT + 2,
            # Placed by the driver, which knows which nodes just lost an actor.
            "scheduling_strategy": NodeAffinitySchedulingStrategy(node.id, soft=False),
            "max_restarts": 0,
        }
        config = _encoder.encode(self.config)  # with a rebase: for its resolved sandbox
        actor = self._actor_class.options(**options).remote(
            config, self.config_text, self.rebase, self._slots_each, self.on_event is not None
        )
        self.actors.append(actor)
        node.actors += 1
        return actor

    async def _check(self, actor: Any, node: Node) -> None:
        """The actor's :meth:`GameActor.check`: a missing bot is one line for the whole run;
        any other failure is the actor's loss (:class:`_ActorLost`)."""
        ray = self.ray
        try:
            mode = await self._wait(partial(ray.get, timeout=CHECK_TIMEOUT), actor.check.remote())
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, BotMissingError):
                raise RayBackendError(
                    f"worker on node {node.label} {one_line(str(exc.cause))}"
                ) from None
            raise _ActorLost(one_line(str(exc.cause))) from None
        except Exception as exc:  # noqa: BLE001 - every Ray failure is a loss
            if isinstance(exc, ray.exceptions.GetTimeoutError):
                raise _ActorLost(f"not started within {CHECK_TIMEOUT:g} s") from None
            raise _ActorLost(_reason(exc)) from None
        node.suspect = False
        node.sandbox = mode
        self.nodes[node.label] = self.nodes.get(node.label, 0) + 1

    async def _wait(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, a blocking Ray call, in a thread: the trio loop keeps running."""
        return await trio.to_thread.run_sync(
            partial(fn, *args), limiter=self._limiter, abandon_on_cancel=True
        )

    async def _lose(self, actor: Any, node: Node, reason: str) -> None:
        """Count an actor's loss, and its node's if Ray says (or will say) it is gone."""
        self.actors_lost += 1
        self._forget(actor, node)
        await self._refresh()
        if node.lost:
            return
        if "node has died" in reason or not await node.answers(self.connect_timeout):
            node.lost = True
        else:
            node.suspect = True  # alive for now, but prefer other nodes

    async def _sweep(self) -> None:
        """At the end: a node that played and no longer answers was lost too, even
        if its actor had finished (the summary counts every node lost)."""
        await self._refresh()
        for node in self.cluster.values():
            if node.label in self.nodes and not node.lost:
                node.lost = not await node.answers(self.connect_timeout)

    def _no_node_left(self, unplayed: int) -> str:
        lost = ", ".join(node.label for node in self.nodes_lost) or "none"
        return (
            f"no Ray node is left to play the {unplayed} remaining games "
            f"(nodes lost: {lost}); run the same command again to resume"
        )

    # ------------------------------------------------------------------ driving

    async def _seat(self) -> None:
        """One actor's place: start and check an actor on a live node, keep it busy until
        the queue is empty, and start another if it is lost."""
        failures = 0
        last = ""
        while self.queue:
            async with self._placement:
                await self._refresh()
                node = self._choose()
                if node is not None:
                    actor = self._new_actor(node)
                    self._playing += 1
            if node is None:
                if not self._playing:
                    return  # no live node has room and no actor is left to free one
                # Wait for another seat's actor to finish or be lost: lost games
                # re-queued meanwhile may need this seat.
                await self._freed.wait()
                continue
            try:
                await self._check(actor, node)
            except _ActorLost as lost:
                last = f"node {node.label}: {lost.args[0]}"
                await self._lose(actor, node, lost.args[0])
                failures += 1
                if failures >= MAX_START_FAILURES:
                    raise RayBackendError(
                        f"could not start a game actor {failures} times in a row (last on {last})"
                    ) from None
                continue
            except BaseException:
                self._forget(actor, node)
                raise
            failures = 0
            if not self.startup_seconds:
                self.startup_seconds = trio.current_time() - self._started
            reason = await self._serve(actor, node)
            if reason is None:
                await self._retire(actor, node)
                return
            await self._lose(actor, node, reason)
            if self._gave_up is not None:  # raised once the loss is counted
                raise RayBackendError(self._gave_up)

    async def _serve(self, actor: Any, node: Node) -> str | None:
        """Feed ``actor`` batches until the queue is empty. Returns why it was lost, if it was."""
        state: dict[str, str | None] = {"lost": None}
        async with trio.open_nursery() as nursery:
            for _ in range(IN_FLIGHT):
                nursery.start_soon(self._lane, actor, node, state)
        return state["lost"]

    async def _lane(self, actor: Any, node: Node, state: dict[str, str | None]) -> None:
        """One in-flight batch at a time: send it, store its games as they stream back."""
        ray = self.ray
        size = self.batch or self._slots_each
        while state["lost"] is None:
            batch = self._take(size)
            if not batch:
                return
            left = {item.task.key: (item, set(item.numbers)) for item in batch}
            try:
                generator = actor.play.options(num_returns="streaming").remote(
                    _encoder.encode(batch), _encoder.encode(self.gate.verdict())
                )
                while (data := await self._wait(_next_result, ray, generator)) is not None:
                    results, events, skipped = _stream_decoder.decode(data)
                    if self.on_event is not None:
                        for event in events:
                            self.on_event(event)
                    for key, pair_key in skipped:
                        left[pair_key][1].discard(int(key.rsplit("/", 1)[1]))
                        self.gate.skipped(1)
                    for result in results:
                        left[result.pair_key][1].discard(int(result.key.rsplit("/", 1)[1]))
                        await self._deliver(result)
                        if self.gate.answers(result.record):
                            self._tell(actor, result.key)
            except Exception as exc:  # noqa: BLE001 - every Ray failure is a loss
                if not isinstance(exc, ray.exceptions.RayError):
                    raise
                reason = _reason(exc)
                if state["lost"] is None:
                    state["lost"] = reason
                self._requeue(
                    [WorkItem(item.task, sorted(n)) for item, n in left.values() if n], node, reason
                )
                return
            unfinished = sum(len(n) for _, n in left.values())
            if unfinished:
                raise RayBackendError(f"an actor ended a batch with {unfinished} games unplayed")

    def _take(self, count: int) -> list[WorkItem]:
        batch: list[WorkItem] = []
        while self.queue and len(batch) < count:
            item = self.queue.popleft()
            if self.gate.admits(item):
                batch.append(item)
        return batch

    def _tell(self, actor: Any, ack: str) -> None:
        """Answer ``actor``'s game ``ack``, and tell every other actor if the verdict
        changed (a bot out or with a first fault). Not waited for: a lost actor is
        found by its stream."""
        verdict = self.gate.verdict(ack)
        changed = self._last != (verdict.out, verdict.faulted)
        self._last = (verdict.out, verdict.faulted)
        for other in list(self.actors):
            if other is actor or changed:
                told = verdict if other is actor else msgspec.structs.replace(verdict, ack=None)
                with suppress(Exception):
                    other.verdict.options(concurrency_group="verdicts").remote(
                        _encoder.encode(told)
                    )

    def _requeue(self, lost: list[WorkItem], node: Node, reason: str) -> None:
        """Put a lost actor's unfinished games back at the front of the queue."""
        for item in lost:
            for key in (item.task.game_key(n) for n in item.numbers):
                self.requeued_games.add(key)
                self.losses[key] = count = self.losses.get(key, 0) + 1
                if count >= MAX_GAME_LOSSES and self._gave_up is None:
                    self._gave_up = (
                        f"game {key} was lost with its actor {count} times (last on node "
                        f"{node.label}: {reason}); giving up"
                    )
        self.queue.extendleft(reversed(lost))

    async def _deliver(self, result: FinishedGame) -> None:
        if result.key in self.delivered:
            self.duplicates += 1
            return
        self.delivered.add(result.key)
        await self.on_record(result.key, result.pair_key, result.record)

    async def _retire(self, actor: Any, node: Node) -> None:
        """End of the work: let the actor quit its bots cleanly, then remove it."""
        with trio.move_on_after(CLOSE_TIMEOUT + 2):
            try:
                await self._wait(self.ray.get, actor.close.remote())
            except Exception as exc:  # noqa: BLE001 - lost on the way out: count it
                if isinstance(exc, self.ray.exceptions.RayError):
                    await self._lose(actor, node, _reason(exc))
                    return
        self._forget(actor, node)

    def _forget(self, actor: Any, node: Node) -> None:
        with suppress(Exception):
            self.ray.kill(actor, no_restart=True)
        with suppress(ValueError):
            self.actors.remove(actor)
            node.actors -= 1
            self._playing -= 1
            self._freed.set()
            self._freed = trio.Event()


def _reason(exc: BaseException) -> str:
    """The gist of a Ray error in one line (Ray's messages run over many lines)."""
    cause = getattr(exc, "cause", None)
    text = str(cause if isinstance(cause, BaseException) else exc)
    if "node has died" in text or "its node" in text:
        return "its node has died"
    return one_line(f"{type(exc).__name__}: {text}")[:300]
