"""Stall detection from step counters sampled by a watchdog tick: nothing is timed on the training thread."""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Hashable, Mapping
from typing import Any


class StallDetector:
    """Fed every step source's count once per watchdog tick; knows the usual step interval and the silence.

    A source's usual interval is the median, over its recent moves, of (time between the ticks that saw it move) /
    (steps it moved by): per-step timing would cost the training thread a clock read and a few dict and deque
    operations every step, a counter costs it nothing. The silence is the time since any source last moved.
    """

    def __init__(self, history: int = 50) -> None:
        self._last: dict[Hashable, tuple[float | None, int]] = {}  # source -> (tick it last moved at, count)
        self._intervals: dict[Hashable, deque[float]] = {}
        self._steps: dict[Hashable, int] = {}  # steps seen moving per source (an estimate needs >= 5)
        self._history = history
        self.moved_at: float | None = None  # the last tick any source moved at; None: none since the last rebase
        self.last_count: Any = None  # the count of the source that moved last (the step a stall is reported at)

    def rebase(self, counts: Mapping[Hashable, int]) -> None:
        """A pause (an epoch's end, unwatch): `counts` become the baseline and no interval spans the pause."""
        self._last = {k: (None, c) for k, c in counts.items()}
        self.moved_at = None

    def observe(self, now: float, counts: Mapping[Hashable, int]) -> bool:
        """Take one tick's counts; True when any source moved since the previous tick."""
        moved = False
        for key, c in counts.items():
            t_prev, c_prev = self._last.get(key, (None, 0))
            if c == c_prev:
                continue
            if t_prev is not None:  # a move after a move: one interval estimate (a baseline gives none)
                n = abs(c - c_prev)
                self._intervals.setdefault(key, deque(maxlen=self._history)).append((now - t_prev) / n)
                self._steps[key] = self._steps.get(key, 0) + n
            self._last[key] = (now, c)
            self.moved_at, self.last_count, moved = now, c, True
        return moved

    def threshold(self, factor: float, minimum: float) -> float | None:
        """Seconds of silence that count as a stall: factor × the slowest source's usual interval, at least
        `minimum`; None until some source was seen moving for 5 steps."""
        meds = [statistics.median(ivs) for key, ivs in self._intervals.items() if self._steps.get(key, 0) >= 5]
        return max(factor * max(meds), minimum) if meds else None
