"""Health alerts: NaN/Inf loss or gradients, loss divergence, stalled training and data starvation."""

from __future__ import annotations

import html
import math
import statistics
import threading
import time
import weakref
from collections import deque
from typing import Any

from ._util import contained, log
from .dist import rank_info
from .stall import StallDetector

ALERTS_WIN = "alerts"
_registry: weakref.WeakKeyDictionary[Any, Alerts] = weakref.WeakKeyDictionary()
_registry_lock = threading.Lock()


class Alerts:
    """Per-client alert state: rules feed it, each alert appends a row to the env's "alerts" text pane."""

    def __init__(self, client: Any, env: str | None = None, divergence_factor: float = 10.0,
                 stall_factor: float = 10.0, min_stall_s: float = 30.0, starved_fraction: float = 0.5,
                 cooldown_s: float = 30.0, gpu_mem_fraction: float = 0.95, busy_gpu_util: float = 50.0) -> None:
        # weak: the registry is keyed weakly by client, so a strong ref here would keep every client alive
        self._client_ref = weakref.ref(client)
        self.env, self.gpu_mem_fraction, self.busy_gpu_util = env, gpu_mem_fraction, busy_gpu_util
        self._gpu_util: tuple[float, float] | None = None  # (monotonic time, mean GPU utilization %)
        ri = rank_info()
        self._who = f"{ri.label}: " if ri.distributed else ""
        self.divergence_factor, self.starved_fraction = divergence_factor, starved_fraction
        self.stall_factor, self.min_stall_s, self.cooldown_s = stall_factor, min_stall_s, cooldown_s
        self.fired: dict[str, int] = {}           # kind -> how many times the rule triggered
        self._last_row: dict[str, float] = {}     # kind -> monotonic time of its last pane row (cooldown)
        self._losses: deque[float] = deque(maxlen=200)
        # Step sources of the stall watchdog: counts of beat() calls, and hooks' own step counters it reads
        self._counts: dict[str, int] = {}
        self._tracked: dict[str, tuple[weakref.ref, str]] = {}  # key -> (owner, name of its step attribute)
        self._detector = StallDetector()
        self._pauses = 0
        self._paused_counts: dict[str, int] = {}  # the counts at the last pause(): the watchdog's new baseline
        self._last_step: Any = None
        self._stalled = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._header_sent = False

    @property
    def client(self) -> Any:
        """The client alerts are written to (None once it was garbage-collected)."""
        return self._client_ref()

    # ----------------------------------------------------------------------------------- emitting

    def alert(self, kind: str, step: Any, message: str) -> None:
        """Record one alert: a row in the alerts pane (rate-limited per kind) and one warning per kind."""
        with self._lock:
            n = self.fired[kind] = self.fired.get(kind, 0) + 1
            now = time.monotonic()
            if kind in self._last_row and now - self._last_row[kind] < self.cooldown_s:
                return  # a NaN every step must not write a row every step
            self._last_row[kind] = now
            first_header = not self._header_sent
            self._header_sent = True
        client = self.client
        if client is None:
            return
        message = self._who + message
        if n == 1:
            log.warning("paneboard alert [%s] at step %s: %s", kind, step, message)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        row = f"{stamp} · step {html.escape(str(step))} · <b>{html.escape(kind)}</b>: {html.escape(message)}"
        # always an append (it creates the pane): another rank or an earlier run may have written rows already
        if first_header:
            head = "" if self._who else "<b>alerts</b> (time · step · rule: message)<br>"
            client.text(head + row, win=ALERTS_WIN, env=self.env, opts={"title": "alerts"}, append=True)
        else:
            client.text(row, win=ALERTS_WIN, env=self.env, append=True)

    # -------------------------------------------------------------------------------------- rules

    @contained("alerts.check_loss", False)
    def check_loss(self, value: Any, step: Any = None) -> bool:
        """Check one loss value (NaN/Inf, > divergence_factor × running median); True if it alerted."""
        v = float(value.item() if hasattr(value, "item") else value)  # one sync per call: the caller logs it anyway
        self.beat("loss", step)
        if not math.isfinite(v):
            self.alert("loss_nonfinite", step, f"loss is {v}")
            return True
        hist = self._losses
        hit = False
        if len(hist) >= 10:
            med = statistics.median(hist)
            if med > 0 and v > self.divergence_factor * med:
                self.alert("loss_divergence", step, f"loss {v:.4g} > {self.divergence_factor:g}× running median "
                                                    f"{med:.4g}")
                hit = True
        hist.append(v)
        return hit

    def check_grad_norm(self, total_norm: float, step: Any = None) -> bool:
        """Alert when the total gradient norm is NaN/Inf (one non-finite grad makes it so)."""
        if not math.isfinite(total_norm):
            self.alert("grad_nonfinite", step, f"total gradient norm is {total_norm}")
            return True
        return False

    def note_gpu_util(self, percent: float) -> None:
        """A GPU utilization reading (%, e.g. the SystemMonitor's NVML mean): data waits on a busy GPU are no starvation."""
        self._gpu_util = (time.monotonic(), float(percent))

    def check_data_wait(self, fraction: float, step: Any = None) -> bool:
        """Alert when more than starved_fraction of a window was spent waiting for data and the GPU (if known) idles."""
        if fraction <= self.starved_fraction:
            return False
        util = self._gpu_util
        if util is not None and time.monotonic() - util[0] < 10.0 and util[1] >= self.busy_gpu_util:
            return False  # the GPU is busy anyway: the input pipeline is not what holds it back
        gpu = f" while GPU utilization is {util[1]:.0f}%" if util is not None else ""
        self.alert("data_starved", step, f"{fraction:.0%} of the last window was spent waiting for data{gpu}")
        return True

    def check_gpu_memory(self, used: float, total: float, device: str = "gpu0", step: Any = None) -> bool:
        """Alert when `used` / `total` GPU memory (any one unit) reaches gpu_mem_fraction of the limit."""
        if total > 0 and used / total >= self.gpu_mem_fraction:
            self.alert(f"gpu_memory {device}", step, f"{device} memory {used / total:.0%} of its limit "
                                                     f"({used:.2f} / {total:.2f} GiB)")
            return True
        return False

    # ---------------------------------------------------------------------------------- watchdog

    def beat(self, source: str, step: Any = None) -> None:
        """A training step happened (from `source`, e.g. "loss"): counts it for the stall watchdog (started on the
        first beat), which reads the counts every tick; nothing is timed here."""
        self._counts[source] = self._counts.get(source, 0) + 1
        if step is not None:
            self._last_step = step
        if self._watchdog is None:
            self._start_watchdog()

    def track(self, source: str, owner: Any, attr: str) -> None:
        """Make `owner.<attr>`, a step count the owner keeps anyway, a step source: the watchdog reads it every
        tick, so the training hooks cost the training thread nothing per step. Held weakly."""
        self._tracked[f"{source}#{id(owner)}"] = (weakref.ref(owner), attr)
        if self._watchdog is None:
            self._start_watchdog()

    def pause(self) -> None:
        """Stop expecting steps (end of an epoch or of training) until some source moves again."""
        counts = self._read_counts()
        with self._lock:
            self._pauses += 1
            self._paused_counts = counts

    def stall_threshold(self) -> float | None:
        """Seconds of silence that count as a stall, from the slowest source's median step interval."""
        return self._detector.threshold(self.stall_factor, self.min_stall_s)

    def _read_counts(self) -> dict[str, int]:
        counts = dict(self._counts)
        for key, (ref, attr) in list(self._tracked.items()):
            owner = ref()
            if owner is None:
                self._tracked.pop(key, None)
            else:
                counts[key] = int(getattr(owner, attr))
        return counts

    def _start_watchdog(self) -> None:
        with self._lock:
            if self._watchdog is not None:
                return
            self._watchdog = threading.Thread(target=self._watch, name="paneboard-stall-watchdog", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        det, pauses = self._detector, 0
        while not self._stop.wait(0.05 if self.min_stall_s < 1 else 0.5):
            try:
                with self._lock:
                    if self._pauses != pauses:
                        pauses = self._pauses
                        det.rebase(self._paused_counts)
                now = time.monotonic()
                if det.observe(now, self._read_counts()):
                    self._stalled = False  # steps again: the next stall alerts again
                if self._stalled or det.moved_at is None:
                    continue  # alerted already, or paused (no source moved since)
                thr = det.threshold(self.stall_factor, self.min_stall_s)
                silent = now - det.moved_at
                if thr is not None and silent > thr:
                    self._stalled = True  # one alert per stall
                    step = self._last_step if self._last_step is not None else det.last_count
                    self.alert("stall", step, f"no training step for {silent:.1f} s (threshold {thr:.2f} s)")
            except Exception as e:  # noqa: BLE001 - a watchdog bug must not kill anything
                log.debug("paneboard stall watchdog: %s", e)

    def stop(self) -> None:
        """Stop the watchdog thread."""
        self._stop.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=2)


def get(client: Any, **settings: Any) -> Alerts:
    """The Alerts of `client` (created on first use); keyword settings update its thresholds."""
    with _registry_lock:
        a = _registry.get(client)
        if a is None:
            a = _registry[client] = Alerts(client)
    for k, v in settings.items():
        if not hasattr(a, k) or k.startswith("_"):
            raise TypeError(f"unknown alert setting {k!r}")
        setattr(a, k, v)
    return a


configure = get


def check_loss(client: Any, value: Any, step: Any = None) -> bool:
    """Check a loss value for NaN/Inf and divergence (and count it as a step for the stall watchdog)."""
    return get(client).check_loss(value, step)
