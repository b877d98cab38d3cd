"""A Client's run: its start (with provenance), its end (finished or failed), config, tags, notes, best directions."""

from __future__ import annotations

import atexit
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import failures
from .protocol import MAX_ERROR_BYTES
from .transport import Transport

log = logging.getLogger("paneboard")
START_WAIT = 10.0  # seconds an ending run waits for its provenance, so that its start goes out with it


class _Run:
    """One client's run: its start goes out as soon as the provenance is read, connected or not (a spooled start
    is delivered with the data, so a short job, or a server that is away, still gets its run); its end goes out
    once, after the start. It holds no reference to its client: a Client made inside a function and dropped
    still starts and ends its run (the transport lives on until the exit flush)."""

    def __init__(self, env: str, transport: Transport, resume: bool = False) -> None:
        self.env, self.transport, self.resume = env, transport, resume
        self.started = time.time()
        self.lock = threading.Lock()
        self.provenance: dict[str, Any] | None = None
        self.captured = threading.Event()  # the provenance was read (or failed)
        self.sent = threading.Event()      # the run_start is enqueued
        self.ended = False
        self.at_exit: Callable[[], None] | None = None

    def capture(self) -> None:
        from .provenance import capture

        try:
            self.provenance = capture()
        except Exception as exc:  # provenance is a courtesy: the run starts without it
            log.debug("paneboard: provenance capture failed: %r", exc)
        self.captured.set()
        self.send_start()

    def send_start(self) -> None:
        with self.lock:
            if self.sent.is_set():
                return
            ev = {"t": self.started, "op": "run_start", "env": self.env, "win": None,
                  "client": self.transport.client_id, "provenance": self.provenance or {}}
            if self.resume:
                ev["resume"] = True
            self.transport.put(ev)
            self.sent.set()

    def reopen(self) -> None:
        """Logging again after the end (a SummaryWriter used after close(), as torch allows): the same start
        again, so the run is running with its first start time and provenance, and ends again at exit."""
        with self.lock:
            if not self.ended:
                return
            self.ended = False
            self.sent.clear()
        self.send_start()
        if self.at_exit is not None:
            atexit.register(self.at_exit)

    def end(self, error: str | None = None) -> None:
        """Enqueue the run's end (once): finished, or failed with `error` (a traceback)."""
        with self.lock:
            if self.ended:
                return
            self.ended = True
        if self.at_exit is not None:
            try:
                atexit.unregister(self.at_exit)
            except Exception:  # interpreter shutdown
                pass
        self.captured.wait(START_WAIT)  # a start without its provenance rather than no end
        self.send_start()
        ev: dict[str, Any] = {"t": time.time(), "op": "run_end", "env": self.env, "win": None,
                              "client": self.transport.client_id}
        if error is not None:
            # The end of a traceback says the most: keep that part of a long one.
            ev["status"], ev["error"] = "failed", error.encode("utf-8", "replace")[-MAX_ERROR_BYTES:].decode(
                "utf-8", "ignore")
        self.transport.put(ev)


class RunMethods:
    """Mixed into Client: every call enqueues one event and returns at once."""

    env: str
    transport: Transport
    _run: _Run | None = None

    def _start_run(self, config: Mapping[str, Any] | None, tags: Iterable[str] | None, capture: bool,
                   resume: bool = False, fork_from: str | None = None, fork_step: float | None = None) -> None:
        if fork_from is not None:  # first: the fork makes the env, which the config would otherwise make
            if not isinstance(fork_from, str):
                raise TypeError(f"fork_from must be an env name, got {type(fork_from).__name__}")
            self.transport.put({"t": time.time(), "op": "run_fork", "env": self.env, "win": None, "from": fork_from,
                                "step": _step(fork_step, "fork_step") if fork_step is not None else None})
        if config:
            self.set_config(config)
        if tags:
            self.add_tags(*tags)
        if not capture:
            return
        failures.install()
        run = self._run = _Run(self.env, self.transport, resume=resume)
        # Provenance (git, packages) takes tens of milliseconds: a thread, so the constructor returns at once.
        threading.Thread(target=run.capture, name="paneboard-provenance", daemon=True).start()
        # Registered after the transport's exit flush, so it runs first (LIFO); its own partial, so that ending
        # this run unregisters it alone (a long job opening many clients keeps no list of dead ones).
        run.at_exit = functools.partial(_end_at_exit, run)
        atexit.register(run.at_exit)

    def _await_start(self, timeout: float | None) -> None:
        """The run's start counts as enqueued by the constructor: wait (at most `timeout`) until it is."""
        if self._run is not None:
            self._run.sent.wait(timeout)

    def _end_run(self, error: str | None = None) -> None:
        if self._run is not None:
            self._run.end(error)

    def _reopen_run(self) -> None:
        if self._run is not None:
            self._run.reopen()

    def end_run(self, error: str | None = None) -> None:
        """End this client's run now: `finished`, or `failed` with `error` (e.g. a traceback). Without a call
        the run ends at close_connection() or at exit (failed if an exception ended the program)."""
        if error is not None and not isinstance(error, str):
            raise TypeError(f"error must be a string, got {type(error).__name__}")
        self._end_run(error)

    def rewind(self, step: float) -> None:
        """Hide every point of this run after `step` (kept on the server, recoverable), so that a job restarted
        from its checkpoint at `step` logs a clean continuation. Call it before logging the new points."""
        self.transport.put({"t": time.time(), "op": "run_rewind", "env": self.env, "win": None,
                            "step": _step(step, "step")})

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


def _step(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(float(value)) < float("inf"):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return float(value)


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


def _end_at_exit(run: _Run) -> None:
    try:
        run.end(failures.uncaught())
    except Exception:  # never fail the interpreter's exit
        pass
