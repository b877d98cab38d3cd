"""System and GPU monitor: psutil CPU/memory/disk/network and NVML GPU panes from a daemon thread."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import alerts as _alerts
from ._util import append_point, contained, log, warn_once
from .dist import rank_info

NOTE_WIN = "sys_note"
_GB = 1024 ** 3
_MB = 1024 ** 2


class _Nvml:
    """NVML handles and per-metric readers; a metric a GPU does not support is dropped after its first error."""

    def __init__(self) -> None:
        import pynvml  # optional dependency (nvidia-ml-py): ImportError means "no GPU panes"

        pynvml.nvmlInit()
        self.nv = pynvml
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        self.names = [f"gpu{i}" for i in range(len(self.handles))]
        self.broken: set[str] = set()
        # newer drivers renamed throttle reasons to "clocks event reasons"; take whichever exists
        self._reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None)

    def read(self, metric: str, fn: Callable[[Any], float]) -> list[float] | None:
        if metric in self.broken:
            return None
        try:
            return [fn(h) for h in self.handles]
        except Exception as e:  # noqa: BLE001 - NVMLError_NotSupported and friends
            self.broken.add(metric)
            log.info("paneboard: NVML %s not available (%s); that pane is skipped", metric, e)
            return None

    def proc_mem(self, h: Any) -> float:
        pid = os.getpid()
        used = 0
        for p in self.nv.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == pid and p.usedGpuMemory:
                used += p.usedGpuMemory
        return used / _GB


@dataclass(frozen=True)
class HostMetric:
    """One psutil pane: its window suffix, title, unit, trace names and how a sample reads its values."""

    win: str
    title: str
    unit: str
    names: tuple[str, ...]
    read: Callable[[SystemMonitor], list[float] | None]


def _cpu(m: SystemMonitor) -> list[float]:
    return [m._ps.cpu_percent(None), m._proc.cpu_percent(None)]


def _memory(m: SystemMonitor) -> list[float]:
    vm = m._ps.virtual_memory()
    return [m._proc.memory_info().rss / _GB, (vm.total - vm.available) / _GB, vm.total / _GB]


def _disk(m: SystemMonitor) -> list[float] | None:
    return m.rate("disk", m._ps.disk_io_counters(), ("read_bytes", "write_bytes"), _MB)


def _net(m: SystemMonitor) -> list[float] | None:
    return m.rate("net", m._ps.net_io_counters(), ("bytes_recv", "bytes_sent"), _MB)


# The host metrics every sample records, one pane each: a new psutil metric is one more row.
HOST_METRICS: tuple[HostMetric, ...] = (
    HostMetric("cpu", "CPU %", "%", ("system CPU %", "this process CPU %"), _cpu),
    HostMetric("memory", "memory (GiB)", "GiB", ("process RSS", "system used", "system total"), _memory),
    HostMetric("disk", "disk I/O (MiB/s)", "MiB/s", ("read MB/s", "write MB/s"), _disk),
    HostMetric("net", "network I/O (MiB/s)", "MiB/s", ("recv MB/s", "sent MB/s"), _net),
)


class SystemMonitor:
    """Samples CPU, memory, disk and network (psutil) and every GPU (NVML) every `interval` s in a daemon thread.

    x is seconds since start unless `step_fn` (e.g. lambda: loader.step) gives the current training step.
    In a distributed job every rank samples; traces are labelled "host/rankN" and share the panes.
    """

    def __init__(self, client: Any, interval: float = 1.0, env: str | None = None, prefix: str = "sys",
                 step_fn: Callable[[], float] | None = None, gpu: bool = True, start: bool = True,
                 alerts: bool = True) -> None:
        self.client, self.interval, self.env, self.prefix = client, float(interval), env, prefix
        self.ri = rank_info()
        self._alerts = _alerts.get(client) if alerts else None
        self.step_fn, self._want_gpu = step_fn, gpu
        self.samples = 0
        self.gpu_note: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._proc: Any = None  # psutil.Process once the first start() has set up psutil and NVML
        if start:
            self.start()

    def start(self) -> SystemMonitor:
        """Start the sampling thread (idempotent)."""
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="paneboard-system-monitor", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop sampling and join the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> SystemMonitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------------------------ thread

    def _run(self) -> None:
        try:
            if self._proc is None:
                self._setup()
            else:  # a restart after stop(): psutil and NVML are set up already; only re-prime the CPU counters
                self._proc.cpu_percent(None)
                self._ps.cpu_percent(None)
        except Exception as e:  # noqa: BLE001 - a monitor must never take the job down
            warn_once("system monitor setup", f"paneboard: system monitor disabled: {type(e).__name__}: {e}")
            return
        # Wait a full interval before each sample, the first included: CPU % is CPU time over wall time since
        # the previous reading, and over the few ms after priming the 10 ms CPU-time ticks make it garbage.
        while not self._stop.wait(self.interval):
            try:
                self.sample()
            except Exception as e:  # noqa: BLE001
                warn_once("system monitor sample", f"paneboard: system sample failed: {type(e).__name__}: {e}")

    def _setup(self) -> None:
        import psutil

        self._ps = psutil
        proc = psutil.Process()
        proc.cpu_percent(None)  # the first call only primes the counters
        psutil.cpu_percent(None)
        self._t0 = time.monotonic()
        self._last_counters: dict[str, tuple[float, Any]] = {}
        self._nvml: _Nvml | None = None
        if not self._want_gpu:
            self.gpu_note = "GPU monitoring off (gpu=False)"
        else:
            try:
                self._nvml = _Nvml()
                if not self._nvml.handles:
                    self._nvml, self.gpu_note = None, "no GPU: NVML found 0 devices"
            except ImportError:
                self.gpu_note = "no GPU panes: nvidia-ml-py is not installed (pip install nvidia-ml-py)"
            except Exception as e:  # noqa: BLE001 - NVMLError_LibraryNotFound / DriverNotLoaded / ...
                self.gpu_note = f"no GPU panes: NVML unavailable ({type(e).__name__}: {e})"
        if self.gpu_note:
            note = f"{self.ri.label}: {self.gpu_note}" if self.ri.distributed else self.gpu_note
            self.client.text(note, win=self.ri.win(NOTE_WIN), env=self.env, opts={"title": "system monitor"})
        self._proc = proc  # last: set up once, and completely, before a restart may skip this

    def _line(self, win: str, x: float, values: list[float], names: list[str], title: str, unit: str,
              xl: str) -> None:
        append_point(self.client, win, self.env, x, values, [self.ri.name(n) for n in names], title, unit, xl,
                     by_name=self.ri.distributed)

    @contained("system monitor GPU memory alert")
    def check_gpu_memory(self, readings: dict[str, tuple[float, float]], step: Any = None) -> list[str]:
        """Feed {device: (used, total)} GPU memory readings to the near-limit alert; returns devices that alerted."""
        if self._alerts is None:
            return []
        return [dev for dev, (used, total) in readings.items()
                if self._alerts.check_gpu_memory(used, total, self.ri.name(dev), step)]

    def _x(self) -> float:
        if self.step_fn is not None:
            try:
                return float(self.step_fn())
            except Exception:  # noqa: BLE001 - fall back to time
                pass
        return time.monotonic() - self._t0

    def sample(self) -> None:
        """Take one sample of every metric and append it to the panes."""
        x = self._x()
        xl = "step" if self.step_fn is not None else "seconds since start"
        for metric in HOST_METRICS:
            values = metric.read(self)
            if values is not None:
                self._line(f"{self.prefix}_{metric.win}", x, values, list(metric.names), metric.title, metric.unit,
                           xl)
        if self._nvml is not None:
            self._sample_gpu(x, xl)
        self._sample_torch(x, xl)
        self.samples += 1

    def rate(self, key: str, counters: Any, fields: tuple[str, ...], scale: float) -> list[float] | None:
        """Per-second change of psutil counters since the previous sample (None on the first one)."""
        now = time.monotonic()
        prev = self._last_counters.get(key)
        self._last_counters[key] = (now, counters)
        if counters is None or prev is None or prev[1] is None:
            return None
        dt = max(now - prev[0], 1e-6)
        return [(getattr(counters, f) - getattr(prev[1], f)) / scale / dt for f in fields]

    def _sample_gpu(self, x: float, xl: str) -> None:
        nv, n = self._nvml.nv, self._nvml
        names = n.names
        metrics = [
            ("gpu_util", "GPU utilization (%)", "%", lambda h: nv.nvmlDeviceGetUtilizationRates(h).gpu),
            ("gpu_mem_used", "GPU memory used (GiB)", "GiB", lambda h: nv.nvmlDeviceGetMemoryInfo(h).used / _GB),
            ("gpu_mem_total", "GPU memory total (GiB)", "GiB", lambda h: nv.nvmlDeviceGetMemoryInfo(h).total / _GB),
            ("gpu_temp", "GPU temperature (°C)", "°C", lambda h: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            ("gpu_power", "GPU power draw (W)", "W", lambda h: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
            ("gpu_power_limit", "GPU power limit (W)", "W", lambda h: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
            ("gpu_sm_clock", "GPU SM clock (MHz)", "MHz", lambda h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            ("gpu_proc_mem", "this process's GPU memory (GiB)", "GiB", n.proc_mem),
        ]
        if n._reasons is not None:
            metrics.append(("gpu_throttle", "GPU throttle / clock-event reasons (bitmask)", "bits", n._reasons))
        mem: dict[str, list[float]] = {}
        for win, title, unit, fn in metrics:
            vals = n.read(win, fn)
            if vals is not None:
                mem[win] = vals
                self._line(f"{self.prefix}_{win}", x, vals, names, title, unit, xl)
        if "gpu_util" in mem and mem["gpu_util"] and self._alerts is not None:
            self._alerts.note_gpu_util(sum(mem["gpu_util"]) / len(mem["gpu_util"]))
        if "gpu_mem_used" in mem and "gpu_mem_total" in mem:
            self.check_gpu_memory({nm: (u, t) for nm, u, t in zip(names, mem["gpu_mem_used"], mem["gpu_mem_total"],
                                                                   strict=True)}, x)

    def _sample_torch(self, x: float, xl: str) -> None:
        torch = sys.modules.get("torch")  # only if the job imported torch: never import it ourselves
        if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
            return
        vals, names = [], []
        readings: dict[str, tuple[float, float]] = {}
        for d in range(torch.cuda.device_count()):
            if self._nvml is None:  # NVML already reports device memory; without it the allocator is the source
                readings[f"cuda:{d}"] = (torch.cuda.memory_reserved(d) / _GB,
                                         torch.cuda.get_device_properties(d).total_memory / _GB)
            vals += [torch.cuda.memory_allocated(d) / _GB, torch.cuda.memory_reserved(d) / _GB,
                     torch.cuda.max_memory_allocated(d) / _GB]
            names += [f"cuda:{d} allocated", f"cuda:{d} reserved", f"cuda:{d} max allocated"]
        self._line(f"{self.prefix}_cuda_alloc", x, vals, names, "torch CUDA allocator (GiB)", "GiB", xl)
        self.check_gpu_memory(readings, x)


def monitor_system(client: Any, interval: float = 1.0, **kw: Any) -> SystemMonitor:
    """Start a SystemMonitor for `client` and return it (call .stop() when done)."""
    return SystemMonitor(client, interval=interval, **kw)
