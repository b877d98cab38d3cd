"""Mask PNGs of image overlays are blobs named only in step data: the sweep keeps them while a record needs them,
a share sees them through their env, and an env archive carries them."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest

import paneboard
from paneboard.server.dispatch.parse import parse_event
from paneboard.server.services import Services
from paneboard.server.settings import Settings
from paneboard.server.sharing.archive import export_envs, read_archive


@pytest.fixture
def services(tmp_path: Path):
    svc = Services.open(Settings(db=str(tmp_path / "ov.db")))
    svc.start()
    yield svc
    svc.stop()


def _event(op: str, mask_value: int) -> object:
    rec = paneboard.Image(np.zeros((16, 16, 3), np.uint8),
                          masks={"m": {"mask_data": np.full((16, 16), mask_value, np.uint8)}}).record()
    return parse_event({"s": None, "t": time.time(), "op": op, "env": "ov", "win": "seg", "kind": "media",
                        "mode": "append", "name": None, "opts": {}, "records": [{**rec, "step": 0}]})


def _mask_sha(svc: Services) -> str:
    pane = svc.store.get_pane("ov", "seg")
    (row,) = svc.store.read_steps(pane, [0])
    return row.data["overlays"]["masks"]["m"]["blob"]


def test_a_mask_blob_lives_while_a_record_refers_to_it(services: Services) -> None:
    assert services.writer.submit_wait([_event("update", 1)]).errors == []
    first = _mask_sha(services)
    with services.store.transaction() as tx:
        tx.sweep_blobs()
    assert services.store.get_blob(first) is not None
    assert services.store.blob_envs(first) == {"ov"}
    assert services.writer.submit_wait([_event("set", 2)]).errors == []  # replaces the record and its mask
    with services.store.transaction() as tx:
        tx.sweep_blobs()
    assert services.store.get_blob(first) is None
    assert services.store.get_blob(_mask_sha(services)) is not None


def test_an_env_archive_carries_the_masks_and_reads_back(services: Services) -> None:
    assert services.writer.submit_wait([_event("update", 3)]).errors == []
    sha = _mask_sha(services)
    buf = io.BytesIO()
    export_envs(services.store, ["ov"], buf)
    (env,) = read_archive(io.BytesIO(buf.getvalue()))  # checks every record's overlays against its blobs
    assert sha in env.blobs
    (pane,) = env.panes
    assert pane.steps[0][2]["overlays"]["masks"]["m"]["blob"] == sha
