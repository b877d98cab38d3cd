"""Archive import limits: a tar (plain, gzip, bzip2 or xz) is streamed once, header by header, into a spool file,
and refused at the first member, total or count over its limit, before any member is decompressed whole. Only
plain regular files (and the PAX/GNU headers that name them) are accepted: a sparse, link or device member could
make a reader produce more bytes than its header declared."""

from __future__ import annotations

import bz2
import gzip
import lzma
import tarfile
import tempfile
from dataclasses import dataclass
from typing import IO, cast

from ..commands.envelope import EventError

BLOCK = 512
CHUNK = 1 << 20          # bytes copied at a time: what one import holds in memory while streaming
SPOOL_IN_MEMORY = 16 << 20  # a small archive never touches the disk


@dataclass(frozen=True)
class ArchiveLimits:
    member_bytes: int = 512 << 20  # one member (a trace's points at 24 bytes each, a blob)
    total_bytes: int = 1 << 30     # every member together, decompressed
    members: int = 100_000         # tar entries, headers of long names included


class ArchiveLimitError(EventError):
    """The archive is over one of its limits (HTTP 413); the message names the limit."""


def _bad(message: str) -> EventError:
    return EventError(f"not a paneboard env archive: {message}")


def _decompressed(source: IO[bytes]) -> IO[bytes]:
    head = source.read(6)
    source.seek(-len(head), 1)
    if head[:2] == b"\x1f\x8b":
        return cast(IO[bytes], gzip.GzipFile(fileobj=source, mode="rb"))
    if head[:3] == b"BZh":
        return cast(IO[bytes], bz2.BZ2File(source, "rb"))
    if head == b"\xfd7zXZ\x00":
        return cast(IO[bytes], lzma.LZMAFile(source, "rb"))
    return source


# Typeflags a header may carry: regular files, directories (never read; `tar` makes them when an archive is
# repacked), and the extended headers holding a member's long name. GNU sparse ("S"), contiguous ("7"), links,
# devices, FIFOs and anything unknown are refused: tarfile would read some of them as files of another size.
_TYPEFLAGS = frozenset(b"0\0" b"5" b"xgL")
_SIZE_KEYS = ("size", "GNU.sparse.")  # PAX keywords that would replace the size the spool checked
MAX_PAX_BYTES = 64 << 10  # an extended header names one member: a long path, never more


def _pax_keys(data: bytes) -> list[str]:
    """The keywords of a PAX extended header's records ("<length> <keyword>=<value>\\n" each)."""
    keys, pos = [], 0
    while pos < len(data) and data[pos:pos + 1] != b"\0":
        space = data.find(b" ", pos)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        equals = data.find(b"=", space, pos + length)
        if length <= 0 or equals < 0:
            raise _bad("a PAX extended header is malformed")
        keys.append(data[space + 1:equals].decode(errors="replace"))
        pos += length
    return keys


def _size(field: bytes) -> int:
    if field[0] & 0x80:  # base-256 (GNU): only ever used for sizes beyond 8 GB
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise _bad("a tar header has a malformed size") from None


def spool_checked(source: IO[bytes], limits: ArchiveLimits) -> IO[bytes]:
    """The archive as a plain tar in a seekable spool file (memory up to SPOOL_IN_MEMORY, then disk), its
    headers checked against `limits` as they stream past: a bomb is refused at its first header over a limit,
    having decompressed no more than the limits allow."""
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
    try:
        stream = _decompressed(source)
        count = total = 0
        while True:
            header = stream.read(BLOCK)
            if len(header) < BLOCK or header == bytes(BLOCK):
                out.write(header)
                break
            size = _size(header[124:136])
            count += 1
            if header[156] not in _TYPEFLAGS or (header[156] == ord("5") and size):
                name = header[:100].split(b"\0", 1)[0].decode(errors="replace")
                raise _bad(f"member {name!r} is not a regular file (tar type {header[156:157]!r}): only plain "
                           "files are read")
            if count > limits.members:
                raise ArchiveLimitError(f"archive over the member-count limit of {limits.members:,} members")
            if size > limits.member_bytes:
                name = header[:100].split(b"\0", 1)[0].decode(errors="replace")
                raise ArchiveLimitError(f"archive member {name!r} declares {size:,} bytes, over the per-member "
                                        f"limit of {limits.member_bytes:,} bytes")
            total += size
            if total > limits.total_bytes:
                raise ArchiveLimitError(f"archive over the total size limit of {limits.total_bytes:,} bytes")
            out.write(header)
            left = -(-size // BLOCK) * BLOCK
            if header[156] in b"xg":
                if size > MAX_PAX_BYTES:
                    raise _bad(f"a PAX extended header of {size:,} bytes (at most {MAX_PAX_BYTES:,})")
                data = stream.read(left)
                if len(data) < left:
                    raise _bad("the tar file is truncated")
                if any(key.startswith(_SIZE_KEYS) for key in _pax_keys(data[:size])):
                    raise _bad("a PAX header changes a member's size or makes it sparse: only plain regular "
                               "files are read")
                out.write(data)
                left = 0
            while left:
                chunk = stream.read(min(CHUNK, left))
                if not chunk:
                    raise _bad("the tar file is truncated")
                out.write(chunk)
                left -= len(chunk)
        out.write(bytes(2 * BLOCK))  # an end marker, whatever the source had
        out.seek(0)
        return out
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        out.close()
        if isinstance(exc, EventError):
            raise
        raise _bad(f"not a tar file ({exc})") from None
    except BaseException:
        out.close()
        raise


def is_plain(info: tarfile.TarInfo) -> bool:
    """A regular file whose size is its header's: not sparse, not contiguous, no PAX size or sparse map."""
    return info.type in (tarfile.REGTYPE, tarfile.AREGTYPE) and info.sparse is None \
        and not any(key.startswith(_SIZE_KEYS) for key in info.pax_headers)


def check_members(tar: tarfile.TarFile, limits: ArchiveLimits) -> None:
    """Every member as tarfile parsed it (PAX headers applied) against `limits`, before any is read: the spool
    checked the raw headers, this checks what a read would produce."""
    total = 0
    for info in tar.getmembers():
        if info.isdir():
            continue  # never read (and the spool let only empty ones through)
        if not is_plain(info):
            raise _bad(f"member {info.name!r} is not a plain regular file: only plain files are read")
        if info.size > limits.member_bytes:
            raise ArchiveLimitError(f"archive member {info.name!r} holds {info.size:,} bytes, over the per-member "
                                    f"limit of {limits.member_bytes:,} bytes")
        total += info.size
        if total > limits.total_bytes:
            raise ArchiveLimitError(f"archive over the total size limit of {limits.total_bytes:,} bytes")
