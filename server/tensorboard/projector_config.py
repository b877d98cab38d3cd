"""add_embedding's projector files (projector_config.pbtxt, tensors.tsv, metadata.tsv, sprite.png) → projector panes."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from dataclasses import dataclass

import numpy as np
from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

log = logging.getLogger("paneboard.tb")

CONFIG = "projector_config.pbtxt"


@dataclass
class Embedding:
    """One embedding of a run: its files, and the client id and sequence number that make its import
    exactly-once (the seq is the newest modification time of its files, so a rewritten file imports again)."""

    client_id: str
    seq: int
    win: str
    step: int
    tensor_path: str
    metadata_path: str | None
    sprite_path: str | None
    sprite_dim: list[int]


def _path(run_dir: str, rel: str) -> str | None:
    return os.path.join(run_dir, rel) if rel else None


def embeddings(run_dir: str) -> list[Embedding]:
    """The embeddings the run's projector config lists (an unreadable config is a warning and none)."""
    cfg_path = os.path.join(run_dir, CONFIG)
    try:
        with open(cfg_path, encoding="utf-8") as f:
            cfg = text_format.Parse(f.read(), ProjectorConfig())
    except FileNotFoundError:
        return []
    except (OSError, text_format.ParseError, UnicodeDecodeError) as exc:
        log.warning("%s: unreadable projector config (%s)", cfg_path, exc)
        return []
    out = []
    for e in cfg.embeddings:
        tag, _, step_text = e.tensor_name.rpartition(":")
        step = int(step_text) if step_text.isdigit() else 0
        tag = tag or e.tensor_name
        tensor = _path(run_dir, e.tensor_path)
        if tensor is None:
            continue
        meta, sprite = _path(run_dir, e.metadata_path), _path(run_dir, e.sprite.image_path)
        try:
            seq = max(os.stat(p).st_mtime_ns // 1000 for p in (cfg_path, tensor, meta, sprite) if p)
        except OSError as exc:
            log.warning("%s: embedding %s: %s", run_dir, e.tensor_name, exc)
            continue
        cid = "tb:" + hashlib.sha1(os.path.abspath(tensor).encode()).hexdigest()
        out.append(Embedding(cid, seq, f"projector/{tag}/{step:05d}", step, tensor, meta, sprite,
                             list(e.sprite.single_image_dim)))
    return out


def _metadata(path: str) -> dict:
    """metadata.tsv: with several columns the first line is the header (TensorBoard's rule), else one label a line."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().rstrip("\n").split("\n")
    if lines and "\t" in lines[0]:
        return {"header": lines[0].split("\t"), "rows": [ln.split("\t") for ln in lines[1:]]}
    return {"header": ["label"], "rows": [[ln] for ln in lines]}


def event(env: str, emb: Embedding) -> dict:
    """The projector `set` event of one embedding (reads its files)."""
    mat = np.loadtxt(emb.tensor_path, delimiter="\t", ndmin=2, dtype=np.float32)
    sprite = None
    if emb.sprite_path:
        with open(emb.sprite_path, "rb") as f:
            sprite = {"data": base64.b64encode(f.read()).decode("ascii"), "single_image_dim": emb.sprite_dim}
    data = {"step": emb.step,
            "matrix": {"shape": list(mat.shape), "dtype": "float32",
                       "data": base64.b64encode(mat.astype("<f4").tobytes()).decode("ascii")},
            "metadata": _metadata(emb.metadata_path) if emb.metadata_path else None,
            "sprite": sprite}
    return {"op": "set", "kind": "projector", "env": env, "win": emb.win, "t": emb.seq / 1e6,
            "opts": {"title": emb.win}, "projector": data}
