"""An env's console lines in an archive: JSON lines [n, t, stream, text, open] per rank, in parts of bounded size."""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from typing import Any

from .. import jsonio
from ..commands.envelope import EventError
from ..runs.console import MAX_RANK, console_row
from ..store import Store

PART_BYTES = 32 << 20  # one member's lines (a console of millions of lines spans several members)
PAGE = 10_000          # lines read per store call on export

Rows = list[tuple[int, float, str, str, bool]]
AddMember = Callable[[tarfile.TarFile, str, bytes], None]


def export_console(store: Store, env: str, tar: tarfile.TarFile, folder: str, add: AddMember) -> tuple[list[dict], int]:
    """Write the env's lines as {folder}/console/RANK.PART.jsonl; (the env.json entry of each rank, lines written)."""
    entries, total = [], 0
    for rank in store.console_ranks(env):
        parts, count, after = 0, 0, 0
        chunk: list[bytes] = []
        size = 0
        while True:
            page = store.read_console(env, rank, after, PAGE)
            for line in page:
                row = jsonio.dumps([line.n, line.t, line.stream, line.text, line.open])
                chunk.append(row)
                size += len(row) + 1
                if size >= PART_BYTES:
                    add(tar, f"{folder}/console/{rank}.{parts}.jsonl", b"\n".join(chunk) + b"\n")
                    parts, chunk, size = parts + 1, [], 0
            count += len(page)
            if len(page) < PAGE:
                break
            after = page[-1].n
        if chunk:
            add(tar, f"{folder}/console/{rank}.{parts}.jsonl", b"\n".join(chunk) + b"\n")
            parts += 1
        entries.append({"rank": rank, "parts": parts, "lines": count})
        total += count
    return entries, total


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_console(raw: Any, folder: str, member: Callable[[str], bytes],
                 bad: Callable[[str], EventError]) -> list[tuple[int, Rows]]:
    """The lines env.json's `console` lists (absent in archives of servers before it: no lines), each checked as
    the console op checks it; (rank, rows) per rank."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad(f"{folder}/env.json: console must be a list")
    out: list[tuple[int, Rows]] = []
    seen: set[int] = set()
    for entry in raw:
        if not isinstance(entry, dict):
            raise bad(f"{folder}/env.json: a console entry must be an object")
        rank, parts, lines = (_count(entry.get(k)) for k in ("rank", "parts", "lines"))
        if rank is None or parts is None or lines is None or rank > MAX_RANK or rank in seen:
            raise bad(f"{folder}/env.json: a console entry needs a rank (once each), its parts and lines counts")
        seen.add(rank)
        rows: Rows = []
        for part in range(parts):
            name = f"{folder}/console/{rank}.{part}.jsonl"
            for i, line in enumerate(member(name).splitlines()):
                if not line.strip():
                    continue
                try:
                    rows.append(console_row(jsonio.loads(line)))
                except (ValueError, RecursionError):
                    raise bad(f"{name} line {i + 1} is not JSON") from None
                except EventError as exc:
                    raise bad(f"{name} line {i + 1}: {exc}") from None
        if len(rows) != lines:
            raise bad(f"{folder}/console/{rank}.*.jsonl hold {len(rows)} lines, not {lines}")
        out.append((rank, rows))
    return out
