"""Console lines as a terminal shows them: carriage returns, and the cursor-up and erase-line sequences of nested bars."""

from __future__ import annotations

import re
from collections.abc import Callable

from .protocol import MAX_CONSOLE_LINE

# A control sequence (CSI: ESC [ parameters final-byte) or a newline, the tokens that move between rows.
_TOKEN = re.compile(r"\x1b\[([0-9;?]*)([@-~])|\n")
MAX_ROWS = 64  # rows a cursor can move back up to: as many bars as anyone nests, and some


class Line:
    __slots__ = ("n", "t", "text")

    def __init__(self, n: int, t: float) -> None:
        self.n, self.t, self.text = n, t, ""


def collapse(text: str) -> str:
    """A carriage return starts the line over (a progress bar redraws itself): keep what the terminal shows.
    A trailing one is kept, so that the next write replaces the text rather than extends it."""
    if "\r" not in text:
        return text
    parts = text.split("\r")
    if parts[-1]:
        return parts[-1]
    shown = next((p for p in reversed(parts) if p), "")
    return shown + "\r"


def has_cursor_moves(text: str) -> bool:
    return "\x1b[" in text


def _count(param: str) -> int:
    return int(param) if param.isdigit() and int(param) > 0 else 1


class Screen:
    """One stream's recent rows and its cursor row, fed the stream's text as a terminal is.

    tqdm draws a bar at position k as `\\n` k times, `\\r` and the bar, then ESC[A k times (Lightning's validation bar
    inside its training bar): each redraw rewrites the same rows, so the rows keep their numbers and the console
    shows the bars' latest states instead of one line per update. `cur == len(rows)` is the fresh row after a
    newline at the bottom, where the next text starts a new line. Rows at or below the cursor stay open (a bar may
    redraw them); rows above it are done."""

    def __init__(self, rows: list[Line], cur: int) -> None:
        self.rows, self.cur = rows, cur
        self.sent_open: set[int] = set()   # line numbers last sent open

    def at_bottom(self) -> bool:
        """Nothing below the cursor row: plain text can go the console's plain way again."""
        return self.cur >= len(self.rows) - 1

    def cursor_line(self) -> Line | None:
        return self.rows[self.cur] if self.cur < len(self.rows) else None

    def feed(self, text: str, new_line: Callable[[], Line], touched: dict[int, Line]) -> None:
        """Apply `text` to the rows; every line it changes goes into `touched` (by number)."""
        pos = 0
        for m in _TOKEN.finditer(text):
            if m.start() > pos:
                self._write(text[pos:m.start()], new_line, touched)
            pos = m.end()
            if m.group(0) == "\n":
                self._newline()
            else:
                self._control(m.group(1), m.group(2), m.group(0), new_line, touched)
        if pos < len(text):
            self._write(text[pos:], new_line, touched)
        if len(self.rows) > MAX_ROWS:  # the oldest rows scrolled out of reach: done
            drop = len(self.rows) - MAX_ROWS
            for line in self.rows[:drop]:
                if line.n in self.sent_open:
                    touched[line.n] = line
            del self.rows[:drop]
            self.cur = max(0, self.cur - drop)

    def is_open(self, line: Line) -> bool:
        return any(r is line for r in self.rows[self.cur:])

    def _write(self, text: str, new_line: Callable[[], Line], touched: dict[int, Line]) -> None:
        line = self.cursor_line()
        if line is None:
            line = new_line()
            self.rows.append(line)
        line.text = collapse(line.text + text)[-MAX_CONSOLE_LINE:]
        touched[line.n] = line

    def _newline(self) -> None:
        self.cur = min(self.cur + 1, len(self.rows))
        line = self.cursor_line()
        if line is not None and line.text and not line.text.endswith("\r"):
            line.text += "\r"  # an existing row below: the cursor is at its start, what follows overwrites it

    def _control(self, param: str, final: str, raw: str, new_line: Callable[[], Line],
                 touched: dict[int, Line]) -> None:
        line = self.cursor_line()
        if final == "A":
            self.cur = max(0, self.cur - _count(param))
        elif final == "B":
            self.cur = min(max(len(self.rows) - 1, self.cur), self.cur + _count(param))
        elif final == "K" and line is not None and (param == "2" or line.text.endswith("\r") or not line.text):
            # Erase the line (or, at its start, to its end): the row shows nothing until written again.
            line.text = "\r" if line.text else ""
            touched[line.n] = line
        elif final == "J" and param in ("", "0"):  # erase below the cursor
            for below in self.rows[self.cur + 1:]:
                below.text = ""
                touched[below.n] = below
        elif final == "G" and _count(param) == 1 and line is not None and not line.text.endswith("\r"):
            line.text += "\r"  # column 1: what follows overwrites the row
        elif final == "m":
            self._write(raw, new_line, touched)  # colours stay in the text (the console page draws them)
        # Anything else (cursor shown/hidden, scroll regions, ...) changes nothing a console line shows: dropped.
