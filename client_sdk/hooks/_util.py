"""Shared helpers for the training hooks: error containment and cheap multi-trace appends."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

log = logging.getLogger("paneboard")
_warned: set[str] = set()
F = TypeVar("F", bound=Callable[..., Any])


def warn_once(key: str, msg: str) -> None:
    """Log `msg` as a warning the first time `key` is seen (a hook failing every step must not flood logs)."""
    if key not in _warned:
        _warned.add(key)
        log.warning(msg)


def contained(key: str, default: Any = None) -> Callable[[F], F]:
    """Decorator: exceptions are logged once under `key` and swallowed, so a hook never raises into training."""
    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*a: Any, **kw: Any) -> Any:
            try:
                return fn(*a, **kw)
            except Exception as e:  # noqa: BLE001 - the training loop must survive any hook bug
                warn_once(key, f"paneboard: {key} failed and is skipped: {type(e).__name__}: {e}")
                return default
        return wrapper  # type: ignore[return-value]
    return deco


def deferred(client: Any) -> contextlib.AbstractContextManager:
    """Telemetry context: the client's calls inside ride its next batch (within ~1 s) instead of waking its sender
    at once; alerts stay outside it. A no-op for clients without a paneboard transport."""
    transport = getattr(client, "transport", None)
    return transport.deferred() if hasattr(transport, "deferred") else contextlib.nullcontext()


def append_point(client: Any, win: str, env: str | None, x: float, values: Sequence[float],
                 names: Sequence[str], title: str, ylabel: str = "", xlabel: str = "step",
                 by_name: bool = False) -> None:
    """Append one x with one y per named trace to line pane `win` (one event, or one per trace when by_name)."""
    if not values:
        return
    with deferred(client):
        if by_name:  # several processes share the pane: match traces by name, not by position (Visdom's default)
            opts = {"title": title, "xlabel": xlabel, "ylabel": ylabel}
            for v, n in zip(values, names, strict=True):
                client.line(Y=[float(v)], X=[float(x)], win=win, env=env, update="append", name=n, opts=opts)
            return
        # One row of plain floats: the SDK's no-numpy path (the numpy one costs ~50 µs a call on a training loop's
        # cold caches)
        client.line(Y=[[float(v) for v in values]], X=[float(x)], win=win, env=env, update="append",
                    opts={"title": title, "legend": list(names), "xlabel": xlabel, "ylabel": ylabel})
