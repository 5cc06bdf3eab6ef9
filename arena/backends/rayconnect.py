"""Joining a Ray cluster without ever hanging, and keeping Ray's chatter off the terminal.

``ray.init(address=...)`` is patient in ways an arena run must not be: given an
address nobody listens on, or a program that is not Ray, or a loopback address
(which Ray swaps for the host's external one), it retries for many minutes and
then prints dozens of warning lines. So before Ray is asked, the address is
checked here, each step bounded by ``timeout`` seconds:

1. its form (``HOST:PORT``; ``auto`` and ``ray://`` addresses go to Ray as given);
2. a TCP connection to it;
3. an HTTP/2 greeting: Ray's head (the GCS) is a gRPC server, which answers a
   client preface with a SETTINGS frame at once. Anything else is "not a Ray
   cluster".

Only then does ``ray.init`` run, in a thread the caller abandons after a deadline
(:func:`join`, which the pool and the analysis tasks use).
A loopback address is kept as given (the driver then joins as a loopback node).

Ray also prints to the driver's stdout from threads of its own (a node that
died, "(raylet) Raylet is terminated...") and logs through the ``ray`` logger;
:func:`routed_logs` sends both to a file for the duration of a run, so that
neither the live view nor ``--quiet`` output gets them.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import trio

from arena.plan.config import one_line

__all__ = [
    "EXTRA_HINT",
    "AddressError",
    "RayBackendError",
    "RayUnavailableError",
    "check_address",
    "init_ray",
    "is_loopback",
    "join",
    "require_ray",
    "routed_logs",
]

EXTRA_HINT = "the ray backend needs the 'ray' extra: pip install -e '.[ray]'"

INIT_TIMEOUT = 60.0
"""How long ``ray.init`` may take once the address answered (it ships the working
directory, if any, to the cluster)."""

WORKING_DIR_EXCLUDES = [".git", ".venv", "results", "__pycache__", "*.sqlite*"]
"""Never shipped with a working directory: large, local, or written during the run."""


class RayUnavailableError(ValueError):
    """``backend = "ray"`` without Ray installed; the message is one line."""

    def __init__(self) -> None:
        super().__init__(EXTRA_HINT)


class RayBackendError(ValueError):
    """The cluster cannot play the tournament (a bot missing on a node, no cluster
    at the address, actors that keep dying); the message is one line."""


def require_ray() -> ModuleType:
    """The ``ray`` module, or :class:`RayUnavailableError` with the install hint."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError() from None
    return ray


H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")
"""An HTTP/2 client preface followed by an empty SETTINGS frame."""

_HOST_PORT_RE = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]+)$")


class AddressError(ValueError):
    """The address cannot be used; the message is one line."""


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` address; None for forms Ray resolves itself.

    Raises :class:`AddressError` for anything else, naming the expected form.
    """
    if address == "auto" or address.startswith("ray://"):
        return None
    match = _HOST_PORT_RE.match(address)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise AddressError(
            f"bad Ray cluster address {address!r}: expected HOST:PORT, e.g. head:6379 "
            "(the address 'ray start --head' prints)"
        )
    return match["host"].strip("[]"), int(match["port"])


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def check_address(address: str, timeout: float) -> None:
    """Make sure a Ray head answers at ``address``, each step within ``timeout`` seconds."""
    parsed = parse_address(address)
    if parsed is None:
        return
    host, port = parsed
    stream: trio.SocketStream | None = None
    try:
        with trio.fail_after(timeout):
            stream = await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        reason = (
            f"no answer within {timeout:g} s"
            if isinstance(exc, trio.TooSlowError)
            else exc.strerror or str(exc)
        )
        raise AddressError(
            f"cannot reach the Ray cluster at {address}: {reason} (is 'ray start --head' "
            "running there, and is the port open?)"
        ) from None
    try:
        with trio.move_on_after(timeout):
            await stream.send_all(H2_PREFACE)
            header = b""
            while len(header) < 9:
                chunk = await stream.receive_some(9 - len(header))
                if not chunk:
                    break
                header += chunk
            if len(header) == 9 and header[3] == 0x04:  # a SETTINGS frame: gRPC
                return
    except (OSError, trio.BrokenResourceError):
        pass
    finally:
        with contextlib.suppress(OSError, trio.BrokenResourceError):
            await stream.aclose()
    raise AddressError(
        f"{address} answers but is not a Ray cluster (no gRPC greeting within {timeout:g} s); "
        "give the address of the head node's GCS port, 6379 unless 'ray start' was told otherwise"
    )


def init_ray(ray: ModuleType, address: str | None, **options: Any) -> None:
    """``ray.init`` (blocking); a loopback ``address`` is used as given, and none
    starts a new local instance (``"local"``: never one another program left
    running on this machine, which Ray would otherwise join).

    Ray replaces ``127.0.0.1`` by the host's external address before connecting,
    which finds nothing when the cluster listens on loopback only. The swap is
    turned off for this call, and the driver joins with the loopback address.
    """
    if address is None:
        ray.init(address="local", **options)
        return
    parsed = parse_address(address)
    if parsed is None or not is_loopback(parsed[0]):
        ray.init(address=address, **options)
        return
    # Ray's private modules: untyped, and maybe not there in another Ray version.
    services: Any = getattr(getattr(ray, "_private", None), "services", None)
    with _LOOPBACK_LOCK:
        original = getattr(services, "resolve_ip_for_localhost", None)
        if original is not None:
            services.resolve_ip_for_localhost = lambda host: host
        try:
            ray.init(address=address, _node_ip_address="127.0.0.1", **options)
        finally:
            if original is not None:
                services.resolve_ip_for_localhost = original


_LOOPBACK_LOCK = threading.Lock()


@contextlib.contextmanager
def routed_logs(ray: ModuleType, path: Path | None) -> Iterator[None]:
    """Ray's log records and driver prints go to ``path`` (appended) while inside.

    With no path they are dropped. Restored on the way out.
    """
    sink: Any = None
    if path is not None:  # in a results folder: never through a link planted there
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        sink = os.fdopen(os.open(path, flags, 0o644), "a", encoding="utf-8")
    lock = threading.Lock()
    handler: logging.Handler = (
        logging.StreamHandler(sink) if sink is not None else logging.NullHandler()
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    loggers = [logging.getLogger("ray")]
    saved = [(lg, lg.handlers[:], lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.handlers = [handler]
        lg.propagate = False

    def to_file(data: dict[str, Any], ignore_prefix: bool = False) -> None:
        if sink is None:
            return
        origin = data.get("pid", "")
        with lock:
            for line in data.get("lines", ()):
                sink.write(f"({origin}) {line}\n")
            sink.flush()

    worker: Any = getattr(getattr(ray, "_private", None), "worker", None)  # private, untyped
    printer = getattr(worker, "print_to_stdstream", None)
    if printer is not None:
        worker.print_to_stdstream = to_file
    try:
        yield
    finally:
        if printer is not None:
            worker.print_to_stdstream = printer
        for lg, handlers, propagate in saved:
            lg.handlers = handlers
            lg.propagate = propagate
        if sink is not None:
            with lock:
                sink.close()


def _no_sigterm_warning(record: logging.LogRecord) -> bool:
    return "SIGTERM handler is not set" not in record.getMessage()


async def join(
    ray: ModuleType,
    address: str | None,
    *,
    connect_timeout: float,
    working_dir: str | None = None,
    local_cpus: int | None = None,
) -> bool:
    """Join the cluster at ``address`` (or start a local instance of ``local_cpus``
    CPUs) without ever hanging; True if a local instance was started (the caller
    shuts it down). Every failure is a :class:`RayBackendError` of one line.

    The address is checked first (:func:`~arena.backends.rayconnect.check_address`,
    each step within ``connect_timeout``), then ``ray.init`` runs in a thread
    abandoned after :data:`INIT_TIMEOUT`: a Ctrl-C meanwhile leaves a local
    instance to die with this process (Ray's reaper) and a connection to end.
    """
    if address:
        try:
            await check_address(address, connect_timeout)
        except AddressError as exc:
            raise RayBackendError(str(exc)) from None
    with trio.move_on_after(INIT_TIMEOUT) as init_scope:
        started = await trio.to_thread.run_sync(
            partial(_connect, ray, address, working_dir, local_cpus), abandon_on_cancel=True
        )
    if init_scope.cancelled_caught:
        raise RayBackendError(
            f"joining the Ray cluster at {address} took over {INIT_TIMEOUT:g} s; gave up"
        )
    return started


def _connect(
    ray: ModuleType, address: str | None, working_dir: str | None, local_cpus: int | None
) -> bool:
    """Join the cluster at ``address`` or start a local instance; True if we started it."""
    if ray.is_initialized():
        if working_dir is not None and not ray.get_runtime_context().runtime_env.get("working_dir"):
            raise RayBackendError(
                "a Ray working directory must be given when connecting to Ray, and this "
                "process was connected already without one"
            )
        return False
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if working_dir is not None:
        # Ray uploads a local folder only for the whole job (ray.init), not per actor.
        options["runtime_env"] = {"working_dir": working_dir, "excludes": WORKING_DIR_EXCLUDES}
    # Called in a thread on purpose (Ray's SIGTERM handler would replace the
    # arena's own); hush Ray's warning that it therefore installs none.
    logging.getLogger("ray._private.worker").addFilter(_no_sigterm_warning)
    if address:
        try:
            init_ray(ray, address, **options)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; all are one line
            hint = ""
            if isinstance(exc, ray.exceptions.AuthenticationError) or re.search(
                r"(?i)unauthenticated|auth(entication)? token", str(exc)
            ):
                hint = (
                    " (this cluster uses token authentication: copy the head's "
                    "~/.ray/auth_token here and set RAY_AUTH_MODE=token)"
                )
            raise RayBackendError(
                f"cannot connect to the Ray cluster at {address}: {one_line(str(exc))}{hint}"
            ) from None
    else:
        cpus = local_cpus or os.cpu_count() or 1
        init_ray(ray, None, num_cpus=cpus, include_dashboard=False, **options)
    return True
