"""Training-loop hooks: DataLoader profiler, system/GPU monitor, model watch and health alerts."""

from . import alerts
from .dataloader import WatchedLoader, watch_dataloader

__all__ = ["WatchedLoader", "alerts", "watch_dataloader"]
