"""A W&B run's console into the env's: its output records (stream and time of each write), else files/output.log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paneboard.protocol import MAX_CONSOLE_LINE, MAX_CONSOLE_LINES

from .sink import Sink, client_id

STDERR = 0  # wandb's OutputRecord.output_type: STDERR = 0, STDOUT = 1
Row = list[Any]  # [n, t, stream, text]


def collapse(text: str) -> str:
    """What a terminal shows of a line redrawn after carriage returns (a progress bar): its last state."""
    if "\r" not in text:
        return text
    return next((p for p in reversed(text.split("\r")) if p), "")


def output_write(record: Any) -> tuple[str, float, str]:
    """(stream, time, text) of one output or output_raw record: one write of the job, not always a whole line."""
    stream = "stderr" if record.output_type == STDERR else "stdout"
    return stream, record.timestamp.seconds + record.timestamp.nanos / 1e9, record.line


def lines_of_writes(writes: list[tuple[str, float, str]]) -> list[Row]:
    """Writes into lines, numbered in the order they start (stdout and stderr interleaved), each timed by the
    write that started it; a line without its newline at the end is kept as it stands."""
    rows: list[Row] = []
    open_rows: dict[str, Row] = {}
    for stream, t, text in writes:
        parts = text.split("\n")
        for k, part in enumerate(parts):
            row = open_rows.get(stream)
            if row is None:
                if k == len(parts) - 1 and not part:
                    break  # the write ended with its newline: nothing of the next line yet
                row = [len(rows) + 1, t, stream, ""]
                rows.append(row)
                open_rows[stream] = row
            row[3] = (row[3] + part)[-4 * MAX_CONSOLE_LINE:]  # a bar redrawn a million times stays bounded
            if k < len(parts) - 1:
                del open_rows[stream]
    for row in rows:
        row[3] = collapse(row[3])[-MAX_CONSOLE_LINE:]
    return rows


def lines_of_log(path: Path, t: float) -> list[Row]:
    """files/output.log: W&B's text of the console, without streams or times (all lines get `t`)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    if not text:
        return []
    return [[n, t, "stdout", collapse(line)[-MAX_CONSOLE_LINE:]] for n, line in enumerate(text.split("\n"), 1)]


def import_console(sink: Sink, env: str, source: str, writes: list[tuple[str, float, str]], run_file: Path,
                   started: float | None) -> int:
    """Store the run's console (rank 0) past what an earlier import stored; returns the lines stored now."""
    rows = lines_of_writes(writes)
    log = run_file.parent / "files" / "output.log"
    if not rows and log.is_file():
        rows = lines_of_log(log, started or log.stat().st_mtime)
    cid = client_id(source, "console")
    done = sink.imported(cid)
    for k in range(done, len(rows), MAX_CONSOLE_LINES):
        chunk = rows[k:k + MAX_CONSOLE_LINES]
        sink.events(cid, k + len(chunk), [{"op": "console", "env": env, "rank": 0, "lines": chunk}])
    return max(0, len(rows) - done)
