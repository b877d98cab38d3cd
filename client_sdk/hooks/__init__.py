"""Training-loop hooks: DataLoader profiler, system/GPU monitor, model watch and health alerts."""

from . import alerts
from .dataloader import WatchedLoader, watch_dataloader
from .model import ModelWatch, watch
from .system import SystemMonitor, monitor_system

__all__ = ["ModelWatch", "SystemMonitor", "WatchedLoader", "alerts", "monitor_system", "watch", "watch_dataloader"]
