"""Waiting for a condition in tests: poll it until it holds or a generous limit passes, then return its value."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(fn: Callable[[], T], timeout: float = 30.0, every: float = 0.05) -> T:
    """fn()'s first truthy value, or its value once `timeout` has passed (the caller's assert then says why)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(every)
    return fn()
