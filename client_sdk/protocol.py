"""The wire vocabulary the SDK and dash-server share: pane kinds, limits and the binary frame codec.

The server imports these (it may import the SDK; the SDK never imports the server), so a limit is written
once; tests/house/test_kind_registry.py checks the JS registry and the server's against KIND_NAMES.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

# Pane kinds, each owned by one module under server/panes/ and one under static/js/panes/.
KIND_NAMES = ("line", "scatter", "text", "image", "figure", "properties", "network", "embeddings", "model_graph",
              "histogram", "media", "pr_curve", "projector", "table", "object3d")

MAX_NAME = 256           # env, window and hparam names, in characters
MAX_BUCKETS = 20_000     # histogram buckets per record
CLOUD_COLUMNS = (3, 4, 6)         # a 3D point cloud's columns: xyz, xyz + category, xyz + RGB 0-255
MAX_CLOUD_POINTS = 1_000_000      # points of one cloud: 24 MB of float32 at six columns
MAX_CLOUD_BOXES = 2_000           # 3D boxes drawn with one cloud
MAX_TAGS = 64           # tags per run
MAX_TAG = 64            # characters per tag
MAX_NOTE_BYTES = 64 * 1024        # a run's markdown note, UTF-8
MAX_DIFF_BYTES = 256 * 1024       # the git diff kept in a run's provenance (the SDK cuts it to this)
MAX_PACKAGES = 2_000              # installed distributions listed in a run's provenance
MAX_PROVENANCE_BYTES = 1024 * 1024
MAX_ERROR_BYTES = 64 * 1024       # a failed run's traceback, UTF-8 (the SDK keeps its end)
MAX_CONSOLE_LINE = 16 * 1024      # characters of one console line (the SDK cuts longer ones)
MAX_CONSOLE_LINES = 2_000         # console lines per event
# Events in one batch (an /ingest frame, POST /api/v1/events, an import frame): 5x the SDK's default batch. The
# server refuses a bigger batch whole before any per-event work, which costs ~300x the bytes of a tiny event.
MAX_BATCH_EVENTS = 10_000
# JSON objects and arrays in one frame or body (each costs 56-200+ bytes decoded, from 2 bytes on the wire).
MAX_FRAME_CONTAINERS = 1_000_000
# Values (numbers, strings, ...) in one frame or body, counted by the commas between them: a short string costs
# ~90 bytes decoded from 5 on the wire. Above what the SDK's 4 MB batches can hold (a value and its comma take 2
# bytes at least), so only an event sent alone can pass it, and that one is rejected alone.
MAX_FRAME_VALUES = 2_200_000
PR_FIELDS = ("tp", "fp", "tn", "fn", "precision", "recall")  # a PR-curve record's rows, in this order
# The x-axis title of TensorBoard scalar panes, one rule for both ways in: paneboard.SummaryWriter (live) and
# import-tb / --logdir (server/tensorboard/decode.py). TensorBoard's own x axis is the step.
TB_XLABEL = "step"


def new_win_id() -> str:
    """Client-side window id (Visdom lets the server pick; we must not wait for a round trip)."""
    return "window_" + os.urandom(6).hex()


# -- binary frames (docs/WIRE.md §1, "Binary frames"): the one codec the SDK writes and the server reads -------
BINARY_FORMAT = "bin1"  # offered by the SDK's hello, agreed in the server's welcome
BINARY_MAGIC = b"PBF1"
_HEAD = struct.Struct("<4sI")         # magic, number of events
_JSON_EVENT = struct.Struct("<BI")    # kind 0, length of the event's JSON (with "s")
_RUN = struct.Struct("<BqqdII")       # kind 1, s0, s, t, length of the envelope JSON, number of points
_POINT = 24                           # x, y and wall: three little-endian float64 columns


@dataclass(frozen=True)
class PointRun:
    """The calls s0..s of one trace's appends, one point each: the envelope JSON (one trace, no points) and the
    columns x[n], y[n], wall[n] as little-endian float64 bytes."""

    s0: int
    s: int
    t: float
    envelope: bytes
    columns: bytes


def pack_frame(events: list[bytes | PointRun]) -> bytes:
    """A binary frame of events: each an event's JSON (bytes) or a run of points."""
    out: list[bytes] = [_HEAD.pack(BINARY_MAGIC, len(events))]
    for event in events:
        if isinstance(event, bytes):
            out += (_JSON_EVENT.pack(0, len(event)), event)
        else:
            n = len(event.columns) // _POINT
            out += (_RUN.pack(1, event.s0, event.s, event.t, len(event.envelope), n), event.envelope, event.columns)
    return b"".join(out)


def unpack_frame(data: bytes, max_events: int | None = None) -> list[bytes | PointRun]:
    """The events of a binary frame; ValueError if its structure does not add up (magic, lengths, kinds), or
    if it declares more than `max_events` (checked before anything else is read)."""
    try:
        magic, count = _HEAD.unpack_from(data)
        if magic != BINARY_MAGIC:
            raise ValueError("not a binary frame")
        if max_events is not None and count > max_events:
            raise ValueError(f"the frame declares {count} events; at most {max_events} are taken per frame")
        pos = _HEAD.size
        events: list[bytes | PointRun] = []
        for _ in range(count):
            kind = data[pos]
            if kind == 0:
                _, length = _JSON_EVENT.unpack_from(data, pos)
                pos += _JSON_EVENT.size
                events.append(_slice(data, pos, length))
                pos += length
            elif kind == 1:
                _, s0, s, t, length, n = _RUN.unpack_from(data, pos)
                pos += _RUN.size
                envelope = _slice(data, pos, length)
                pos += length
                events.append(PointRun(s0, s, t, envelope, _slice(data, pos, _POINT * n)))
                pos += _POINT * n
            else:
                raise ValueError(f"unknown event kind {kind}")
    except (struct.error, IndexError) as exc:
        raise ValueError(str(exc)) from None
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} bytes after the last event")
    return events


def _slice(data: bytes, pos: int, length: int) -> bytes:
    if pos + length > len(data):
        raise ValueError("an event runs past the end of the frame")
    return data[pos:pos + length]


def visdom_text(content: object) -> str:
    """A Visdom text() content as Visdom's page shows it. Visdom stores the JSON as sent and its page sets
    innerHTML to it, so a list shows as JavaScript's String(list): items joined by ",", null as "", nested
    lists flattened the same way (torchnet's and faster-rcnn's loggers send lists)."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, bool):
        return "true" if content else "false"
    if isinstance(content, (list, tuple)):
        return ",".join("" if v is None else visdom_text(v) for v in content)
    if isinstance(content, float):
        if content.is_integer() and abs(content) < 1e21:
            return str(int(content))  # JavaScript has one number type: 2.0 prints as "2"
        return repr(content)
    if isinstance(content, dict):
        return "[object Object]"
    return str(content)


def run_name(directory: str | os.PathLike[str], logdir: str | os.PathLike[str] | None = None) -> str:
    """The env a run directory is named by, live (`SummaryWriter(log_dir)`) and imported (`import-tb LOGDIR`) alike.

    Under the working directory: its path relative to it (`runs/exp1`, also for mmengine's absolute
    `<cwd>/work_dirs/<ts>/vis_data`); the working directory itself: its folder's name. Elsewhere, an import names
    it relative to LOGDIR's parent (a server's `--logdir /data/runs` keeps `runs/exp1`) and a live writer by its
    absolute path. Separators are "/" on every system.
    """
    path, cwd = os.path.abspath(directory), os.getcwd()
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows: never under the working directory
        rel = os.pardir
    if rel == os.curdir:
        return os.path.basename(cwd) or "root"
    if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
        return rel.replace(os.sep, "/")
    if logdir is not None:
        root = os.path.abspath(logdir)
        parent = os.path.dirname(root)
        rel = os.path.relpath(path, parent if parent != root else root)
        return rel.replace(os.sep, "/") if rel != os.curdir else (os.path.basename(root) or "root")
    return path.replace(os.sep, "/")
