"""On-disk spool of encoded events for when the server is unreachable; `paneboard sync` uploads one later."""

from __future__ import annotations

import json
import os
from pathlib import Path

HEADER_KEY = "paneboard_spool"


def default_dir() -> Path:
    return Path(os.environ.get("PANEBOARD_SPOOL_DIR") or Path.home() / ".paneboard" / "spool")


class Spool:
    """One append-only file per client id: a JSON header line, then one `<seq>\\t<event json>` line per event.

    Events keep their client id and sequence numbers, so uploading a spool twice, or after part of it
    reached the server, stores every event exactly once (the server skips sequence numbers it has).
    """

    def __init__(self, path: Path, url: str, client_id: str, max_bytes: int) -> None:
        self.path = Path(path)
        self.url = url
        self.client_id = client_id
        self.max_bytes = max_bytes
        self.first_s: int | None = None   # oldest spooled seq (None: nothing spooled)
        self.last_s = 0
        self.size = self.path.stat().st_size if self.path.exists() else 0
        if self.size:
            items = self.read()
            if items:
                self.first_s, self.last_s = items[0][0], items[-1][0]

    @classmethod
    def for_client(cls, directory: Path, url: str, client_id: str, max_bytes: int) -> Spool:
        return cls(Path(directory) / f"{client_id}.spool", url, client_id, max_bytes)

    def append(self, items: list[tuple[int, bytes]]) -> int:
        """Write events (oldest first); returns how many fit under max_bytes (the rest are not written)."""
        if not items:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        if self.size == 0:
            header = json.dumps({HEADER_KEY: 1, "url": self.url, "client": self.client_id}) + "\n"
            lines.append(header.encode())
        written = 0
        budget = self.max_bytes - self.size - sum(len(b) for b in lines)
        for s, data in items:
            line = b"%d\t" % s + data + b"\n"
            if len(line) > budget:
                break
            budget -= len(line)
            lines.append(line)
            written += 1
        if written:
            blob = b"".join(lines)
            with open(self.path, "ab") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())  # a spool exists to survive crashes
            self.size += len(blob)
            if self.first_s is None:
                self.first_s = items[0][0]
            self.last_s = items[written - 1][0]
        return written

    def read(self) -> list[tuple[int, bytes]]:
        """Every complete record, oldest first (a torn last line from a crash is ignored)."""
        if not self.path.exists():
            return []
        out = []
        with open(self.path, "rb") as f:
            f.readline()  # header
            for line in f:
                if not line.endswith(b"\n") or b"\t" not in line:
                    continue
                s, _, data = line[:-1].partition(b"\t")
                try:
                    out.append((int(s), data))
                except ValueError:
                    continue
        return out

    def clear(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        self.size, self.first_s, self.last_s = 0, None, 0


def read_header(path: Path) -> dict:
    with open(path, "rb") as f:
        header = json.loads(f.readline() or b"{}")
    if not isinstance(header, dict) or header.get(HEADER_KEY) != 1:
        raise ValueError(f"{path} is not a paneboard spool file")
    return header
