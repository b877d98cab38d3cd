"""`dash-server import` of a W&B run's console, from a run made by wandb's own client (offline, console captured)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from paneboard.server.cli.main import main as dash_server
from paneboard.server.peers import wandb_log as wl
from paneboard.server.store import open_store

SCRIPT = """
import sys, wandb
run = wandb.init(project="proj", name="con", dir=sys.argv[1], settings=wandb.Settings(console="wrap"))
for i in range(3):
    print(f"step {i} loss {1 / (i + 1):.3f} é")
    run.log({"loss": 1 / (i + 1)})
for k in range(0, 101, 20):  # a progress bar: redrawn after carriage returns
    sys.stderr.write(f"\\r{k:3d}%|{'#' * (k // 10):10s}|")
    sys.stderr.flush()
sys.stderr.write("\\n")
print("Traceback (most recent call last):", file=sys.stderr)
print("done", flush=True)
run.finish()
"""
WANT = ["step 0 loss 1.000 é", "step 1 loss 0.500 é", "step 2 loss 0.333 é", "100%|##########|",
        "Traceback (most recent call last):", "done"]


def write_run_file(path: Path, payloads: list[bytes]) -> None:
    """A run-*.wandb file of these records, framed as wandb's datastore frames them (32 KiB blocks)."""
    out = bytearray(wl.HEADER.pack(wl.IDENT, wl.MAGIC, 0))
    for data in payloads:
        done, first = 0, True
        while True:
            left = wl.BLOCK - len(out) % wl.BLOCK
            if left < wl.RECORD.size:
                out += bytes(left)
                continue
            chunk = data[done:done + left - wl.RECORD.size]
            done += len(chunk)
            end = done >= len(data)
            kind = wl.FULL if first and end else wl.FIRST if first else wl.LAST if end else wl.MIDDLE
            out += wl.RECORD.pack(zlib.crc32(chunk, zlib.crc32(bytes([kind]))), len(chunk), kind) + chunk
            first = False
            if end:
                break
    path.write_bytes(bytes(out))


def console(db: Path, env: str) -> list[tuple[str, str]]:
    store = open_store(f"sqlite:///{db}")
    try:
        return [(line.stream, line.text) for line in store.read_console(env, 0)]
    finally:
        store.close()


@pytest.mark.e2e
def test_a_wandb_runs_console_is_imported_from_its_output_records_else_output_log(tmp_path, capsys):
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true"}
    subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = tmp_path / "imported.db"
    assert dash_server(["import", str(tmp_path / "wandb"), "--db", str(db)]) == 0
    got = console(db, "proj/con")
    assert [text for _, text in got] == WANT  # in order, the bar as its last state
    assert [stream for stream, _ in got] == ["stdout"] * 3 + ["stderr", "stderr", "stdout"]
    assert dash_server(["import", str(tmp_path / "wandb"), "--db", str(db)]) == 0
    assert console(db, "proj/con") == got  # a second import adds nothing

    # A run file without output records (as older wandb wrote them): W&B's files/output.log is the console.
    run_file = next((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    kept = []
    for data in wl.records(run_file):
        record = pb.Record()
        record.ParseFromString(data)
        if record.WhichOneof("record_type") not in ("output", "output_raw"):
            kept.append(data)
    copy = tmp_path / "old" / run_file.parent.name
    shutil.copytree(run_file.parent / "files", copy / "files")
    write_run_file(copy / run_file.name, kept)
    old_db = tmp_path / "old.db"
    assert dash_server(["import", str(tmp_path / "old"), "--db", str(old_db)]) == 0
    capsys.readouterr()
    assert console(old_db, "proj/con") == [("stdout", text) for text in WANT]
