"""Console capture: the job's stdout and stderr teed into memory, turned into `console` events by the sender."""

from __future__ import annotations

import logging
import os
import sys
import threading
from itertools import groupby
from operator import itemgetter
from time import time as _now
from typing import Any

from .console_screen import Line as _Line
from .console_screen import Screen, collapse, has_cursor_moves
from .console_tee import Capture
from .protocol import MAX_CONSOLE_LINE, MAX_CONSOLE_LINES

log = logging.getLogger("paneboard")
EVENT_CHARS = 1 << 20   # text per console event, so that a burst never makes one oversized event

_lock = threading.Lock()
_active: Console | None = None  # one capture per process: the first Client that asks owns it
__all__ = ["Console", "active", "collapse", "start", "stop"]


class Console:
    """The lines of one process (one rank): numbered in the order they start, stdout and stderr interleaved.

    A line still being written (a progress bar without its newline yet) goes out as it stands, marked open;
    its later states go out under the same number and replace it on the server."""

    def __init__(self, transport: Any, env: str, rank: int) -> None:
        self.transport, self.env, self.rank = transport, env, rank
        self.capture = Capture()
        self.lock = threading.Lock()  # collect() runs on the sender thread and in flush()/close()
        self.n = 0
        self.open: dict[str, _Line] = {}
        self.dirty: set[str] = set()
        self.screens: dict[str, Screen] = {}     # streams that moved their cursor up (nested progress bars)
        self.touched: dict[int, tuple[str, _Line]] = {}  # lines the screens changed since the last collection
        self.collected = _now()  # when collect() last ran: the earliest time a line written since can have

    def install(self) -> None:
        self.capture.install()

    def uninstall(self) -> None:
        self.capture.uninstall()

    def collect(self, final: bool = False) -> None:
        """Turn what was written since the last call into events (any thread; never raises)."""
        try:
            with self.lock:
                cols = self._columns(final)
            self._ship(cols)
        except Exception:  # capture is a courtesy: it never takes the job down
            log.debug("paneboard: console capture failed", exc_info=True)

    def _columns(self, final: bool) -> _Columns:
        now = _now()
        items = self.capture.take()
        cols = _Columns()
        if items:
            # The writer records no time (it would double its cost): a line's time is interpolated between the
            # last collection and this one (0.1 s apart), in the order the writes came.
            runs = sum(1 for _ in groupby(items, key=itemgetter(0)))
            t0, span, total, done = self.collected, now - self.collected, runs, 0
            for stream, group in groupby(items, key=itemgetter(0)):
                text = "".join(map(itemgetter(1), group))
                t_a = t0 + span * done / total
                done += 1
                self._feed(stream, text, t_a, t0 + span * done / total, cols)
        self.collected = now
        if self.touched or (final and self.screens):
            self._screen_lines(cols, final)
        for stream in sorted(self.dirty):
            line = self.open.get(stream)
            if line is not None and line.text.rstrip("\r"):
                cols.add(line.n, line.t, stream, line.text.rstrip("\r"), not final)
        self.dirty.clear()
        if final:
            self.open.clear()
        return cols

    def _feed(self, stream: str, text: str, t_a: float, t_b: float, cols: _Columns) -> None:
        """Split one stream's consecutive writes into lines; the last part, without its newline, stays open."""
        screen: Screen | None = self.screens.get(stream)
        if screen is not None and screen.at_bottom() and not has_cursor_moves(text):
            del self.screens[stream]  # back at the bottom row: the plain way again, on the line the cursor is on
            line = screen.cursor_line()
            for row in screen.rows:  # the rows above are done: sent closed with this collection's lines
                if row is not line and row.n in screen.sent_open:
                    self.touched.setdefault(row.n, (stream, row))
            if line is not None:
                self.touched.pop(line.n, None)  # the plain way sends it (once)
                self.open[stream] = line
                self.dirty.add(stream)
            screen = None
        if screen is None and has_cursor_moves(text):
            line = self.open.pop(stream, None)
            self.dirty.discard(stream)
            screen = self.screens[stream] = Screen([line] if line is not None else [], 0)
            if line is not None:
                self.touched[line.n] = (stream, line)  # it may have gone out open: the screen sends it from now on
        if screen is not None:
            self._feed_screen(stream, screen, text, t_a)
            return
        parts = text.split("\n")
        m = len(parts)
        step = (t_b - t_a) / m
        line = self.open.pop(stream, None)
        if line is None and m > 1 and "\r" not in text and max(map(len, parts)) <= MAX_CONSOLE_LINE:
            # The common case, a column at a time: whole lines, no carriage return, none too long. Columns of
            # plain values, not a list per line: a burst of lines would otherwise wake the garbage collector.
            k = m - 1
            cols.n.extend(range(self.n + 1, self.n + m))
            cols.t.extend([t_a + step * j for j in range(k)])
            cols.stream.extend([stream] * k)
            cols.text.extend(parts[:k])
            cols.open.extend([False] * k)
            self.n += k
            parts, m = parts[k:], 1
        for j in range(m - 1):  # each of these parts ends with a newline
            part = parts[j]
            if line is None:
                self.n += 1
                line = _Line(self.n, t_a + step * j)
            line.text = collapse(line.text + part)[-MAX_CONSOLE_LINE:]
            cols.add(line.n, line.t, stream, line.text.rstrip("\r"), False)
            line = None
        tail = parts[-1]
        if tail:
            if line is None:
                self.n += 1
                line = _Line(self.n, t_a + step * (m - 1))
            line.text = collapse(line.text + tail)[-MAX_CONSOLE_LINE:]
        if line is not None:
            self.open[stream] = line
            self.dirty.add(stream)
        else:
            self.dirty.discard(stream)

    def _feed_screen(self, stream: str, screen: Screen, text: str, t: float) -> None:
        touched: dict[int, _Line] = {}

        def new_line() -> _Line:
            self.n += 1
            return _Line(self.n, t)

        screen.feed(text, new_line, touched)
        for n, line in touched.items():
            self.touched[n] = (stream, line)

    def _screen_lines(self, cols: _Columns, final: bool) -> None:
        """The lines the screens changed, each once, and any line sent open that is done now."""
        for stream, screen in self.screens.items():
            for line in screen.rows:
                if line.n in screen.sent_open and (final or not screen.is_open(line)):
                    self.touched.setdefault(line.n, (stream, line))
        for n in sorted(self.touched):
            stream, line = self.touched[n]
            owner = self.screens.get(stream)
            is_open = not final and owner is not None and owner.is_open(line)
            if owner is not None:
                (owner.sent_open.add if is_open else owner.sent_open.discard)(n)
            cols.add(n, line.t, stream, line.text.rstrip("\r"), is_open)
        self.touched.clear()
        if final:
            self.screens.clear()

    def _ship(self, cols: _Columns) -> None:
        i, total = 0, len(cols.n)
        while i < total:
            k = min(MAX_CONSOLE_LINES, total - i)
            while k > 1 and sum(map(len, cols.text[i:i + k])) > EVENT_CHARS:
                k //= 2  # long lines: fewer per event
            ev: dict[str, Any] = {"t": _now(), "op": "console", "env": self.env, "win": None, "rank": self.rank,
                                  "n": cols.n[i:i + k], "time": cols.t[i:i + k], "text": cols.text[i:i + k]}
            streams = cols.stream[i:i + k]
            ev["stream"] = streams[0] if streams.count(streams[0]) == k else streams
            opens = cols.open[i:i + k]
            if any(opens):
                ev["open"] = opens
            self.transport.put(ev)
            i += k


class _Columns:
    """Lines as columns (see _feed)."""

    __slots__ = ("n", "t", "stream", "text", "open")

    def __init__(self) -> None:
        self.n: list[int] = []
        self.t: list[float] = []
        self.stream: list[str] = []
        self.text: list[str] = []
        self.open: list[bool] = []

    def add(self, n: int, t: float, stream: str, text: str, is_open: bool) -> None:
        self.n.append(n)
        self.t.append(t)
        self.stream.append(stream)
        self.text.append(text)
        self.open.append(is_open)


def in_notebook() -> bool:
    """A Jupyter kernel shows output in its cells already, and its streams are not a terminal's."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    try:
        return get is not None and get() is not None and "ipykernel" in sys.modules
    except Exception:
        return False


def rank_of_process() -> int:
    for var in ("RANK", "LOCAL_RANK", "SLURM_PROCID"):
        value = os.environ.get(var, "")
        if value.isdigit():
            return int(value)
    return 0


def start(transport: Any, env: str) -> Console | None:
    """Capture this process's console into `env` (None: another client captures it already, or a notebook)."""
    global _active
    if in_notebook():
        return None
    with _lock:
        if _active is not None:
            return None
        console = _active = Console(transport, env, rank_of_process())
    console.install()
    transport.add_source(console.collect)
    return console


def stop(console: Console | None) -> None:
    """Ship what is left and give the streams back (close_connection())."""
    global _active
    if console is None:
        return
    console.uninstall()  # first: what a buffered stream still holds is written out and collected below
    console.collect(final=True)
    console.transport.remove_source(console.collect)
    with _lock:
        if _active is console:
            _active = None


def _forget_in_child() -> None:
    """A forked child (a DataLoader worker) prints to the streams it inherited, not into its parent's capture."""
    global _active, _lock
    _lock = threading.Lock()
    console, _active = _active, None
    if console is not None:
        console.lock = threading.Lock()  # the parent's sender thread may have held it at the fork
        console.capture.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def active() -> Console | None:
    """The capture this process runs now (None: none), e.g. for a host that must hand the streams back."""
    return _active
