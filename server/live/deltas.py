"""Live-update messages collected while a write transaction runs; published only after it commits."""

from __future__ import annotations

from typing import Any

import numpy as np


class Deltas:
    """Ordered browser messages (docs/WIRE.md §2); consecutive extends of one pane merge into one."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._open_extend: dict[tuple[str, str], dict[str, Any]] = {}

    def pane(self, env: str, win: str, version: int) -> None:
        self._open_extend.pop((env, win), None)
        self.messages.append({"type": "pane", "env": env, "win": win, "version": version})

    def extend(self, env: str, win: str, version: int, idx: int, name: str, x: np.ndarray, y: np.ndarray) -> None:
        key = (env, win)
        msg = self._open_extend.get(key)
        if msg is None:
            msg = {"type": "extend", "env": env, "win": win, "version": version, "traces": []}
            self.messages.append(msg)
            self._open_extend[key] = msg
        msg["version"] = version
        for entry in msg["traces"]:
            if entry["idx"] == idx:
                entry["x"] = np.concatenate([entry["x"], x])
                entry["y"] = np.concatenate([entry["y"], y])
                return
        msg["traces"].append({"idx": idx, "name": name, "x": x, "y": y})

    def close(self, env: str, win: str) -> None:
        self._open_extend.pop((env, win), None)
        self.messages.append({"type": "close", "env": env, "win": win})

    def env_deleted(self, env: str) -> None:
        self._open_extend = {k: v for k, v in self._open_extend.items() if k[0] != env}
        self.messages.append({"type": "env_deleted", "env": env})
