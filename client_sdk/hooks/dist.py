"""Distributed (DDP) awareness for the hooks: which rank this process is and how its panes are labelled."""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RankInfo:
    """This process's place in a distributed job (rank 0 of 1 when not distributed)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    host: str = ""

    @property
    def distributed(self) -> bool:
        """True when the job has more than one process."""
        return self.world_size > 1

    @property
    def label(self) -> str:
        """Trace/pane label of this process, e.g. "node1/rank3"."""
        return f"{self.host}/rank{self.rank}"

    def name(self, trace: str) -> str:
        """A trace name labelled by host and rank in a distributed job, unchanged otherwise."""
        return f"{self.label} {trace}" if self.distributed else trace

    def win(self, win: str) -> str:
        """A per-rank pane id (`win_r<rank>`) in a distributed job, unchanged otherwise."""
        return f"{win}_r{self.rank}" if self.distributed else win

    def keeps(self, rank: int | str) -> bool:
        """Whether a hook asked to log from `rank` (an int or "all") logs from this process."""
        return rank == "all" or int(rank) == self.rank


def _env_int(*names: str, default: int) -> int:
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v)
            except ValueError:
                continue
    return default


def rank_info() -> RankInfo:
    """torch.distributed's rank/world size when a process group is initialized, else RANK/WORLD_SIZE env vars."""
    host = socket.gethostname()
    local = _env_int("LOCAL_RANK", default=0)
    torch = sys.modules.get("torch")  # never import torch just to ask
    dist: Any = getattr(torch, "distributed", None) if torch is not None else None
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return RankInfo(dist.get_rank(), dist.get_world_size(), local, host)
    except Exception:  # noqa: BLE001 - a half-torn-down group: fall back to the launcher's env vars
        pass
    rank = _env_int("RANK", "LOCAL_RANK", default=0)
    world = _env_int("WORLD_SIZE", "LOCAL_WORLD_SIZE", default=1)
    return RankInfo(rank, max(world, rank + 1), local, host)
