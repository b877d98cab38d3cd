"""On-disk spool of encoded events for when the server is unreachable; `paneboard sync` uploads one later."""

from __future__ import annotations

import bisect
import json
import os
from pathlib import Path
from typing import BinaryIO

from .points import Data, encoded

HEADER_KEY = "paneboard_spool"


def default_dir() -> Path:
    return Path(os.environ.get("PANEBOARD_SPOOL_DIR") or Path.home() / ".paneboard" / "spool")


class Spool:
    """One append-only file per client id: a JSON header line, then one `<seq>\\t<event json>` line per event.

    Events keep their client id and sequence numbers, so uploading a spool twice, or after part of it
    reached the server, stores every event exactly once (the server skips sequence numbers it has). Lines may
    be appended out of seq order (a lost connection saves its in-flight events after newer spilled ones), so
    readers go through an index sorted by seq. The file is only deleted once the server acknowledged all of it.
    """

    def __init__(self, path: Path, url: str, client_id: str, max_bytes: int) -> None:
        self.path = Path(path)
        self.url = url
        self.client_id = client_id
        self.max_bytes = max_bytes
        self._index: list[tuple[int, int, int]] = []  # (seq, offset of the event json, its length)
        self._sorted = True
        self._reader: BinaryIO | None = None
        self.size = 0
        if self.path.exists():
            self._load()

    @classmethod
    def for_client(cls, directory: Path, url: str, client_id: str, max_bytes: int) -> Spool:
        return cls(Path(directory) / f"{client_id}.spool", url, client_id, max_bytes)

    # ------------------------------------------------------------------------------------------- state

    def __len__(self) -> int:
        return len(self._index)

    @property
    def first_s(self) -> int | None:
        """Oldest spooled seq (None: nothing spooled)."""
        return self._sorted_index()[0][0] if self._index else None

    @property
    def last_s(self) -> int:
        """Newest spooled seq (0: nothing spooled)."""
        return self._sorted_index()[-1][0] if self._index else 0

    def count_after(self, s: int) -> int:
        """How many spooled events have a seq above `s`."""
        index = self._sorted_index()
        return len(index) - bisect.bisect_right(index, (s, 1 << 62, 0))

    def first_after(self, s: int) -> int | None:
        """The oldest spooled seq above `s`, or None."""
        index = self._sorted_index()
        i = bisect.bisect_right(index, (s, 1 << 62, 0))
        return index[i][0] if i < len(index) else None

    # ------------------------------------------------------------------------------------------- write

    def append(self, items: list[tuple[int, Data]]) -> int:
        """Write events and fsync; returns how many fit under max_bytes (the rest are not written)."""
        if not items:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines: list[bytes] = []
        offset = self.size
        if self.size == 0:
            header = (json.dumps({HEADER_KEY: 1, "url": self.url, "client": self.client_id}) + "\n").encode()
            lines.append(header)
            offset += len(header)
        budget = self.max_bytes - offset
        entries = []
        for s, data in items:
            prefix = b"%d\t" % s
            data = encoded(data, s)
            line = prefix + data + b"\n"
            if len(line) > budget:
                break
            budget -= len(line)
            lines.append(line)
            entries.append((s, offset + len(prefix), len(data)))
            offset += len(line)
        if not entries:
            return 0
        blob = b"".join(lines)
        with open(self.path, "ab") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())  # a spool exists to survive crashes
        self.size += len(blob)
        if self._index and entries[0][0] < self._index[-1][0]:
            self._sorted = False
        self._index += entries
        return len(entries)

    def clear(self) -> None:
        """Delete the file: only once the server has acknowledged every event in it."""
        self._close_reader()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        self._index, self._sorted, self.size = [], True, 0

    # -------------------------------------------------------------------------------------------- read

    def read_after(self, s: int, max_events: int, max_bytes: int) -> list[tuple[int, Data]]:
        """Up to max_events events (max_bytes in all, at least one) with seq above `s`, in seq order."""
        index = self._sorted_index()
        i = bisect.bisect_right(index, (s, 1 << 62, 0))
        out: list[tuple[int, Data]] = []  # encoded events only (Data: the outbox's item type)
        size = 0
        last = s
        reader = self._open_reader()
        while i < len(index) and len(out) < max_events:
            seq, offset, length = index[i]
            i += 1
            if seq == last:
                continue  # the same event saved twice
            size += length + 16
            if out and size > max_bytes:
                break
            reader.seek(offset)
            out.append((seq, reader.read(length)))
            last = seq
        return out

    def read(self) -> list[tuple[int, Data]]:
        """Every spooled event, oldest first."""
        return self.read_after(-1, 1 << 62, 1 << 62)

    # --------------------------------------------------------------------------------------- internals

    def _sorted_index(self) -> list[tuple[int, int, int]]:
        if not self._sorted:
            self._index = sorted(self._index)  # a new list: a reader on another thread never sees it half-sorted
            self._sorted = True
        return self._index

    def _open_reader(self) -> BinaryIO:
        if self._reader is None:
            self._reader = open(self.path, "rb")
        return self._reader

    def _close_reader(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _load(self) -> None:
        """Index an existing file; a torn last line (a crash mid-write) is cut off so appends stay parseable."""
        with open(self.path, "rb") as f:
            data = f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(end)
        pos = data.find(b"\n") + 1  # after the header
        if pos == 0:
            pos = end
        while pos < end:
            nl = data.index(b"\n", pos)
            tab = data.find(b"\t", pos, nl)
            if tab > pos:
                try:
                    self._index.append((int(data[pos:tab]), tab + 1, nl - tab - 1))
                except ValueError:
                    pass
            pos = nl + 1
        self.size = end
        self._sorted = False


def read_header(path: Path) -> dict:
    with open(path, "rb") as f:
        header = json.loads(f.readline() or b"{}")
    if not isinstance(header, dict) or header.get(HEADER_KEY) != 1:
        raise ValueError(f"{path} is not a paneboard spool file")
    return header
