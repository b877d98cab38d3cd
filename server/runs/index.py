"""The runs listing kept in memory: every env's run dict, re-read from the store only for envs that changed.

A query over 10,000 runs then costs the predicate over cached dicts, not 10,000 rows and 30,000 summaries read
and decoded again. Envs are marked stale by every commit of this server's writer (the envs it touched) and by the messages other
servers publish on PostgreSQL (pane, extend, meta, run, env, env_deleted, env_renamed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..store import Store
from .budget import select
from .listing import run_dict
from .query import compile_query
from .series import summaries_by_env

FULL_RELOAD = 2_000  # stale envs beyond which one full read is cheaper than the per-env ones


class RunIndex:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._runs: dict[str, dict[str, Any]] = {}
        self._stale: set[str] | None = None  # None: everything (not loaded yet)
        self._lock = threading.Lock()        # refreshes
        self._mark = threading.Lock()        # the stale set (taken by the writer thread: kept short)

    def note(self, messages: list[dict[str, Any]]) -> None:
        """Hub listener: mark the envs these committed changes touched as stale."""
        with self._mark:
            stale = self._stale
            if stale is None:
                return
            for m in messages:
                env = m.get("env")
                if isinstance(env, dict):  # an env-list summary
                    env = env.get("name")
                if isinstance(env, str):
                    stale.add(env)
                to = m.get("to")
                if isinstance(to, str):
                    stale.add(to)

    def touched(self, envs: set[str]) -> None:
        """Writer listener: envs a commit of this process changed (a fork or a deletion included)."""
        with self._mark:
            if self._stale is not None:
                self._stale |= envs

    def invalidate(self) -> None:
        with self._mark:
            self._stale = None

    def runs(self, query: str | None = None, visible: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
        """Runs `visible` lets the caller read that match `query` (QueryError if malformed or over its time
        budget), most recently updated first."""
        predicate = compile_query(query or "")
        with self._lock:
            self._refresh()
            runs = list(self._runs.values())
        out = select(runs, predicate, visible)
        out.sort(key=lambda r: r["updated"], reverse=True)
        return out

    def _refresh(self) -> None:
        with self._mark:
            stale, self._stale = self._stale, set()
        if stale is not None and not stale:
            return
        envs = None if stale is None or len(stale) > FULL_RELOAD else sorted(stale)
        try:
            rows = self.store.list_runs(envs)
            series = self.store.list_series(envs)
        except BaseException:
            with self._mark:  # not refreshed: still stale
                if self._stale is not None:
                    self._stale = None if stale is None else self._stale | stale
            raise
        summaries = summaries_by_env(series, {r.env: r.best for r in rows if r.best})
        fresh = {r.env: run_dict(r, summaries.get(r.env, {})) for r in rows}
        if envs is None:
            self._runs = fresh
        else:
            for env in envs:  # a stale env the store no longer has was deleted (or renamed away)
                if env in fresh:
                    self._runs[env] = fresh[env]
                else:
                    self._runs.pop(env, None)
