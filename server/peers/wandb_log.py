"""W&B's transaction log (run-*.wandb): its LevelDB-style framing, each record one of wandb's own protobufs."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

# The framing of wandb's datastore (its Python reader left the package when the Go core took over writing):
# a 7-byte file header, then 32 KiB blocks of records, each record a 7-byte header (CRC-32 of type + data,
# length, type) and data; a record that does not fit its block continues in FIRST/MIDDLE/LAST pieces.
HEADER = struct.Struct("<4sHB")
IDENT, MAGIC = b":W&B", 0xBEE1
RECORD = struct.Struct("<IHB")
BLOCK = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
_TYPE_CRC = {t: zlib.crc32(bytes([t])) for t in (FULL, FIRST, MIDDLE, LAST)}


class WandbLogError(ValueError):
    """A run-*.wandb file that is not one, or is damaged before its end."""


def records(path: Path) -> Iterator[bytes]:
    """The serialized Record protobufs of a run-*.wandb file, in order; a torn tail (a run still writing or
    killed mid-record) ends the iteration quietly, as wandb's own reader does."""
    data = path.read_bytes()
    if len(data) < HEADER.size:
        raise WandbLogError(f"{path}: too short for a W&B run file")
    ident, magic, version = HEADER.unpack_from(data, 0)
    if ident != IDENT or magic != MAGIC:
        raise WandbLogError(f"{path}: not a W&B run file (no :W&B header)")
    if version != 0:
        raise WandbLogError(f"{path}: W&B log version {version} is not supported")
    pos, pending = HEADER.size, bytearray()
    size, head, unpack, crc32 = len(data), RECORD.size, RECORD.unpack_from, zlib.crc32  # locals: a hot loop
    while pos + head <= size:
        left = BLOCK - pos % BLOCK
        if left < head:  # the block's tail is padding
            pos += left
            continue
        crc, length, kind = unpack(data, pos)
        start = pos + head
        chunk = data[start:start + length]
        if kind == 0 and length == 0 or kind not in _TYPE_CRC or len(chunk) < length:
            return  # zero padding past the last record, or a torn write
        if crc32(chunk, _TYPE_CRC[kind]) != crc:
            raise WandbLogError(f"{path}: checksum mismatch at byte {pos}")
        pos = start + length
        if kind == FULL:
            yield chunk
        elif kind == FIRST:
            pending = bytearray(chunk)
        else:
            pending += chunk
            if kind == LAST:
                yield bytes(pending)
                pending = bytearray()
