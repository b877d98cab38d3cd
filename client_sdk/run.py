"""A Client's run: its start (with provenance) once connected, clean end, config, tags, notes, best directions."""

from __future__ import annotations

import atexit
import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .transport import Transport

log = logging.getLogger("paneboard")
START_WAIT = 10.0  # seconds an ending run waits for its start event, so the end never overtakes the start


class _RunStart:
    """The run_start event's progress: provenance is read at once, the event goes when the client first connects
    (a client that never reaches a server starts no run: its spool, synced later, carries only its data)."""

    def __init__(self) -> None:
        self.sent = threading.Event()
        self.cancelled = False
        self.thread: threading.Thread | None = None
        self.at_exit: Callable[[], None] | None = None


class RunMethods:
    """Mixed into Client: every call enqueues one event and returns at once."""

    env: str
    transport: Transport
    _run: _RunStart | None = None
    _run_ended = False

    def _start_run(self, config: Mapping[str, Any] | None, tags: Iterable[str] | None, capture: bool) -> None:
        if config:
            self.set_config(config)
        if tags:
            self.add_tags(*tags)
        if not capture:
            return
        # Provenance (git, packages) takes tens of milliseconds: a thread, so the constructor returns at once.
        run = self._run = _RunStart()
        run.thread = threading.Thread(target=_send_start, args=(weakref.ref(self), run, self.transport),
                                      name="paneboard-provenance", daemon=True)
        run.thread.start()
        # Registered after the transport's exit flush, so it runs first (LIFO); its own partial, so that ending
        # this client unregisters it alone (a long job opening many clients keeps no list of dead ones).
        run.at_exit = functools.partial(_end_at_exit, weakref.ref(self))
        atexit.register(run.at_exit)

    def _await_start(self, timeout: float | None) -> None:
        """Once connected, the run's start counts as sent by the constructor: wait for it to be enqueued."""
        run = self._run
        if run is not None and self.transport.sender.first_welcome.is_set():
            run.sent.wait(timeout)

    def _start_pending(self) -> bool:
        run = self._run
        return run is not None and not run.sent.is_set() and not run.cancelled \
            and self.transport.sender.first_welcome.is_set()

    def _end_run(self) -> None:
        """Mark the run finished (once); called by close_connection and at interpreter exit."""
        run = self._run
        if run is None or self._run_ended:
            return
        self._run_ended = True
        if run.at_exit is not None:
            try:
                atexit.unregister(run.at_exit)
            except Exception:  # interpreter shutdown
                pass
        self._await_start(START_WAIT)
        run.cancelled = True
        if run.sent.is_set():
            self.transport.put({"t": time.time(), "op": "run_end", "env": self.env, "win": None,
                                "client": self.transport.client_id})

    def set_config(self, config: Mapping[str, Any], replace: bool = False) -> None:
        """Merge `config` into the run's config (replace=True: make it the whole config). Values are kept as JSON
        (nested dicts stay nested; numpy scalars become numbers, other objects their str())."""
        if not isinstance(config, Mapping):
            raise TypeError(f"config must be a dict, got {type(config).__name__}")
        self.transport.put({"t": time.time(), "op": "run_config", "env": self.env, "win": None,
                            "config": _json_safe(dict(config)), "replace": bool(replace)})

    def add_tags(self, *tags: str) -> None:
        """Tag the run (no spaces, commas or quotes in a tag)."""
        self._tags("add", tags)

    def remove_tags(self, *tags: str) -> None:
        self._tags("remove", tags)

    def _tags(self, how: str, tags: Iterable[str]) -> None:
        tags = list(tags)
        if not all(isinstance(t, str) for t in tags):
            raise TypeError("tags must be strings")
        self.transport.put({"t": time.time(), "op": "run_tags", "env": self.env, "win": None, how: tags})

    def note(self, markdown: str, append: bool = True) -> None:
        """Add a Markdown note to the run (append=False replaces the notes)."""
        if not isinstance(markdown, str):
            raise TypeError(f"note must be a string, got {type(markdown).__name__}")
        self.transport.put({"t": time.time(), "op": "run_note", "env": self.env, "win": None, "note": markdown,
                            "append": bool(append)})

    def set_best(self, series: str, direction: str | None) -> None:
        """Which way is better for a series: "min", "max", or None (inferred from its name: loss -> min)."""
        if direction not in ("min", "max", None):
            raise ValueError('direction must be "min", "max" or None')
        self.transport.put({"t": time.time(), "op": "run_best", "env": self.env, "win": None, "series": series,
                            "direction": direction})


def _json_safe(value: Any, depth: int = 0) -> Any:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if depth < 20 and isinstance(value, Mapping):
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
    if depth < 20 and isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in value]
    item = getattr(value, "item", None)  # numpy / torch scalars
    if callable(item) and getattr(value, "ndim", 1) == 0:
        try:
            return _json_safe(item(), depth + 1)
        except Exception:
            pass
    return str(value)


def _send_start(ref: weakref.ref[RunMethods], run: _RunStart, transport: Transport) -> None:
    from .provenance import capture

    started = time.time()
    try:
        provenance = capture()
    except Exception as exc:  # provenance is a courtesy: the run starts without it
        log.debug("paneboard: provenance capture failed: %r", exc)
        provenance = {}
    welcome = transport.sender.first_welcome
    while not welcome.wait(0.5):
        if run.cancelled or ref() is None:
            return
    client = ref()
    if client is not None and not run.cancelled:
        transport.put({"t": started, "op": "run_start", "env": client.env, "win": None,
                       "client": transport.client_id, "provenance": provenance})
        run.sent.set()


def _end_at_exit(ref: weakref.ref[RunMethods]) -> None:
    client = ref()
    if client is not None:
        try:
            client._end_run()
        except Exception:  # never fail the interpreter's exit
            pass
