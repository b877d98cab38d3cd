"""Training-loop hooks: DataLoader profiler, system/GPU monitor, model watch and health alerts."""

from . import alerts
from .dataloader import WatchedLoader, watch_dataloader
from .system import SystemMonitor, monitor_system

__all__ = ["SystemMonitor", "WatchedLoader", "alerts", "monitor_system", "watch_dataloader"]
