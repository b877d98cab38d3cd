"""TensorBoard beside bench/sweep_ui.py: the sweep written as a TensorBoard logdir (one run folder per run, the same
values), TensorBoard started on it, and the time its scalars page takes to draw every run in the same Chromium."""

from __future__ import annotations

import struct
import subprocess
import sys
import time
from pathlib import Path

import google_crc32c
import numpy as np
from common import wait_up

# A run's three tags ride in one event per step (one Summary, three values), as tf.summary writes a step's scalars.
_HEADER = struct.Struct("<Q")
_MASK = 0xA282EAD8


def _masked_crc(data: bytes) -> bytes:
    crc = google_crc32c.value(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + _MASK) & 0xFFFFFFFF)


def _record(data: bytes) -> bytes:
    """One TFRecord: length, its masked CRC-32C, the bytes, their masked CRC-32C."""
    head = _HEADER.pack(len(data))
    return head + _masked_crc(head) + data + _masked_crc(data)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _event(wall: float, step: int, values: list[tuple[bytes, float]]) -> bytes:
    """An Event proto by hand (wall_time=1 double, step=2 varint, summary=5 {value=1 {tag=1, simple_value=2 float}}):
    protobuf's Python objects would make writing a 1,000-run sweep take minutes."""
    summary = b"".join(_field(1, _field(1, tag) + b"\x15" + struct.pack("<f", v)) for tag, v in values)
    return b"\x09" + struct.pack("<d", wall) + b"\x10" + _varint(step) + _field(5, summary)


def write_logdir(root: Path, runs: dict[str, dict[str, np.ndarray]], wall0: float) -> None:
    """runs: run name -> {tag: y per step 0..n-1}; one events file per run folder."""
    for run, tags in runs.items():
        folder = root / run
        folder.mkdir(parents=True)
        names = [t.encode() for t in tags]
        cols = list(tags.values())
        n = len(cols[0])
        parts = [_record(b"\x09" + struct.pack("<d", wall0) + _field(3, b"brain.Event:2"))]
        for i in range(n):
            parts.append(_record(_event(wall0 + i, i, [(t, float(c[i])) for t, c in zip(names, cols, strict=True)])))
        (folder / f"events.out.tfevents.{int(wall0)}.bench").write_bytes(b"".join(parts))


def start(logdir: Path, port: int) -> subprocess.Popen:
    """`python -m tensorboard.main` on loopback, in its own session (its data server is a child to stop with it);
    load_fast as TensorBoard picks it (RustBoard when its binary is installed)."""
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--port", str(port),
                             "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    wait_up(proc, f"http://127.0.0.1:{port}/data/runs", "tensorboard", timeout=120)
    return proc


def wait_loaded(base: str, runs: list[str], tag: str, last_step: int, timeout: float = 900) -> float:
    """Seconds until TensorBoard serves every run and the last run's `tag` up to its last step (its reload is done)."""
    import json
    import urllib.parse
    import urllib.request

    t0 = time.perf_counter()
    url = f"{base}/data/plugin/scalars/scalars?run={urllib.parse.quote(runs[-1])}&tag={urllib.parse.quote(tag)}"
    while time.perf_counter() - t0 < timeout:
        try:
            with urllib.request.urlopen(f"{base}/data/runs", timeout=10) as r:
                listed = json.load(r)
            with urllib.request.urlopen(url, timeout=10) as r:
                data = json.load(r)
            if len(listed) >= len(runs) and data and data[-1][1] >= last_step:
                return time.perf_counter() - t0
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"tensorboard did not load the logdir in {timeout:.0f} s")


# Two animation frames after the data is in hand: what the page shows then is drawn.
_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def _asks_for(request, tag: str) -> bool:
    """Whether a timeSeries POST asks for `tag` (its form field `requests`, multipart: a JSON list of {plugin, tag})."""
    import json

    return f'"tag":{json.dumps(tag)}' in (request.post_data or "")


def _has_lines(png: bytes, share: float = 0.01) -> bool:
    """Whether a chart's picture holds coloured lines (more than `share` saturated pixels; the grid and axes are grey):
    TensorBoard draws every run's line in one pass on its canvas, in a worker the page cannot wait for."""
    import io

    from PIL import Image

    px = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    spread = px.max(axis=2) - px.min(axis=2)
    return float((spread > 60).mean()) > share


# TensorBoard ticks no run by default when it has this many: its runs table's header box selects them all.
_SELECT_ALL = "runs-selector div.header mat-checkbox input[type=checkbox]"


def page_draw(page, base: str, tag: str, timeout: float = 300, share: float = 0.01) -> dict[str, float]:
    """TensorBoard's scalars (its Time Series page, the default) from navigation: `data`, the seconds until the answer
    holding every run's `tag` has arrived (TensorBoard has loaded every run by then: wait_loaded); `drawn`, until
    every run is ticked (a sweep's runs start unticked: the header box, clicked as a user would) and the chart's
    picture shows lines (TensorBoard draws on a canvas, with no element per run to count; `share`: the saturated
    pixels that count as lines, lower for a few thin lines).
    (Its answers are not read back: one holds a million points, more than DevTools keeps.)"""
    done: list[float] = []
    page.goto("about:blank")  # a new document each time: the same URL again would only change its hash
    t0 = time.perf_counter()

    def finished(request) -> None:
        if "/timeseries/timeSeries" in request.url and _asks_for(request, tag):
            done.append(time.perf_counter() - t0)

    page.on("requestfinished", finished)
    try:
        page.goto(base + "/#timeseries")
        while not done:
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"tensorboard's page did not read {tag} in {timeout:.0f} s")
            page.wait_for_timeout(5)
        box = page.locator(_SELECT_ALL).first
        if not box.is_checked():
            box.click()
        page.evaluate(_FRAMES)
        chart = page.locator("scalar-card", has=page.locator(f"tb-truncated-path[title='{tag}'], :text-is('{tag}')"))
        while not _has_lines(chart.first.locator("line-chart").first.screenshot(), share):
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"tensorboard drew no line of {tag} in {timeout:.0f} s")
        return {"data": done[0], "drawn": time.perf_counter() - t0}
    finally:
        page.remove_listener("requestfinished", finished)
