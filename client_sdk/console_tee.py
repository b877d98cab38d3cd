"""The process's stdout and stderr teed into (stream, text) items, at the least cost to the writing thread."""

from __future__ import annotations

import atexit
import logging
import sys
import threading
from io import StringIO
from typing import Any

log = logging.getLogger("paneboard")
MAX_CHARS = 64 << 20  # text kept between two takes; beyond, the oldest half goes (memory stays bounded)
ECHO_EVERY = 0.05     # s between two drains: a buffered stream's text reaches the stream, all of it the items
SWAP_CHARS = 1 << 16  # a tee's StringIO is replaced once it holds this much


class _Teed:
    """What both tees share: the text written since the last take, in a StringIO (a C write, no list of items)."""

    __slots__ = ("_pb_stream", "_pb_name", "_pb_capture", "_pb_buf", "_pb_taken", "_pb_old")
    echoes = False  # whether a drain writes the text to the stream (else the write did)

    def __init__(self, stream: Any, name: str, capture: Capture) -> None:
        self._pb_stream, self._pb_name, self._pb_capture = stream, name, capture
        self._pb_buf = StringIO(newline="")
        self._pb_taken = 0
        self._pb_old: tuple[StringIO, int] | None = None
        self._pb_bind()

    def _pb_bind(self) -> None:
        raise NotImplementedError

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)  # type: ignore[attr-defined]  # each subclass has its write

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding ... of the real stream
        return getattr(self._pb_stream, name)

    def take(self) -> str:
        """The text written since the last take (under the capture's lock)."""
        late = ""
        if self._pb_old is not None:
            # A write that looked the StringIO's write up before the last swap (print() while str() of an
            # argument ran Python code) wrote into the one replaced then.
            old, taken = self._pb_old
            late = old.getvalue()[taken:]
            self._pb_old = None
        text = self._pb_buf.getvalue()
        new = text[self._pb_taken:]
        if len(text) >= SWAP_CHARS:
            self._pb_old = (self._pb_buf, len(text))
            self._pb_buf = StringIO(newline="")
            self._pb_taken = 0
            self._pb_bind()
        else:
            self._pb_taken = len(text)
        return late + new


class _Tee(_Teed):
    """Stands in for a line-buffered stream (a terminal; stderr always): each write goes through at once."""

    __slots__ = ("_pb_write", "_pb_keep")

    def _pb_bind(self) -> None:
        self._pb_write = self._pb_stream.write
        self._pb_keep = self._pb_buf.write

    def write(self, s: str) -> int:
        if self._pb_capture.last is not self:
            self._pb_capture.switch(self)  # what the other stream holds was written first: it goes first
        n = self._pb_write(s)
        self._pb_keep(s)
        return n

    def flush(self) -> None:
        self._pb_stream.flush()


class _TeeBesideBuffered(_Tee):
    """A line-buffered stream beside a buffered one (stderr beside a piped stdout): the other's text is written
    out before each write, and this write goes straight to the items, so that the two keep their order."""

    __slots__ = ()

    def write(self, s: str) -> int:
        capture = self._pb_capture
        with capture.lock:
            capture._drain()
            n = self._pb_write(s)
            capture.items.append((self._pb_name, s))
            capture.chars += len(s)
        return n


class _BufferedTee(_Teed):
    """Stands in for a block-buffered stream (a pipe or a file: a remote job's stdout): `write` is the StringIO's
    own, so a print costs no Python call at all. The text reaches the stream at each drain: every ECHO_EVERY s,
    at flush(), and before any write to the other stream (their order is kept). The stream's own 8 KiB buffer
    would have held it back longer."""

    __slots__ = ("write",)
    echoes = True

    def _pb_bind(self) -> None:
        self.write = self._pb_buf.write

    def flush(self) -> None:
        self._pb_capture.drain(timeout=1.0)  # at exit, never wait forever on a lock a frozen thread held
        self._pb_stream.flush()


class Capture:
    """The tees of this process's stdout and stderr, and the text they took, in order, as (stream, text)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []
        self.chars = 0  # in items
        self.lock = threading.Lock()  # drains and takes (a tee's write takes it only to switch streams)
        self.tees: list[tuple[str, _Teed]] = []
        self.last: _Teed | None = None  # the tee written last (line-buffered ones): a write to another drains
        self.dropped = 0
        self._stop = threading.Event()
        self._echo: threading.Thread | None = None

    def install(self) -> None:
        streams = [(name, getattr(sys, name)) for name in ("stdout", "stderr")]
        streams = [(name, stream) for name, stream in streams if stream is not None and not isinstance(stream, _Teed)]
        buffered = next((name for name, stream in streams if not _line_buffered(stream)), None)
        for name, stream in streams:
            kind = _BufferedTee if name == buffered else _Tee if buffered is None else _TeeBesideBuffered
            tee = kind(stream, name, self)
            setattr(sys, name, tee)
            self.tees.append((name, tee))
        if self.tees:
            self._echo = threading.Thread(target=self._echo_loop, name="paneboard-console", daemon=True)
            self._echo.start()
            atexit.register(self._at_exit)

    def uninstall(self) -> None:
        """Give the streams back, then write out (and keep) what a buffered one still held."""
        for name, tee in self.tees:
            if getattr(sys, name) is tee:  # someone else replaced it since: leave theirs alone
                setattr(sys, name, tee._pb_stream)
        self._stop.set()
        if self._echo is not None and self._echo is not threading.current_thread():
            self._echo.join(5)
        atexit.unregister(self._at_exit)
        self.drain()
        self.tees, self.last = [], None

    def _at_exit(self) -> None:
        """Before the interpreter freezes its daemon threads: stop the echo thread (were it frozen holding the
        lock, the final flush of stdout would wait on it) and write out what is held (registered after the
        transport's close, so it runs before it and the close collects this too)."""
        self._stop.set()
        if self._echo is not None:
            self._echo.join(1)
        self.drain(timeout=1.0)

    def forget(self) -> None:
        """In a forked child: the streams back as they were, no thread; the parent writes out what it held."""
        for name, tee in self.tees:
            if getattr(sys, name) is tee:
                setattr(sys, name, tee._pb_stream)
        self.tees, self.last, self.items = [], None, []
        self.lock = threading.Lock()  # the parent's echo thread may have held it at the fork

    def switch(self, tee: _Teed) -> None:
        with self.lock:
            self._drain()
            self.last = tee

    def drain(self, timeout: float = -1) -> None:
        if not self.lock.acquire(timeout=timeout):
            return
        try:
            self._drain()
        finally:
            self.lock.release()

    def _drain(self) -> None:
        """Move each tee's new text to the items (the one written last goes last); a buffered tee's to its stream."""
        for _name, tee in sorted(self.tees, key=lambda nt: nt[1] is self.last):
            text = tee.take()
            if not text:
                continue
            self.items.append((tee._pb_name, text))
            self.chars += len(text)
            if tee.echoes:
                try:
                    tee._pb_stream.write(text)
                except Exception:  # a closed or broken stream: the capture goes on
                    log.debug("paneboard: console echo failed", exc_info=True)
        if self.chars > MAX_CHARS:  # nobody takes them (a stalled sender): the oldest go
            while self.chars > MAX_CHARS // 2 and self.items:
                self.chars -= len(self.items.pop(0)[1])
                self.dropped += 1

    def take(self) -> list[tuple[str, str]]:
        """The text written since the last take, in order."""
        with self.lock:
            self._drain()
            items, self.items, self.chars = self.items, [], 0
        return items

    def _echo_loop(self) -> None:
        while not self._stop.wait(ECHO_EVERY):
            try:
                self.drain()
            except Exception:
                log.debug("paneboard: console drain failed", exc_info=True)


def _line_buffered(stream: Any) -> bool:
    """A terminal's stream (or stderr, line-buffered since Python 3.9): each line must go out as it is written."""
    if getattr(stream, "line_buffering", False) or getattr(stream, "write_through", False):
        return True
    try:
        return bool(stream.isatty())
    except Exception:
        return False
