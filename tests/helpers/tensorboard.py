"""Helpers shared by the paneboard.SummaryWriter test modules: a writer on the test server, reads of what it stored."""

from __future__ import annotations

import io
import urllib.parse
import urllib.request

import numpy as np
from PIL import Image

from paneboard import SummaryWriter


def writer(server, log_dir: str, **kw) -> SummaryWriter:
    return SummaryWriter(log_dir, server="http://127.0.0.1", port=server.port, **kw)


def q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def records(server, env: str, win: str) -> list[dict]:
    """Every stored record of a stepped pane, oldest first (the /steps API serves 100 per request)."""
    out: list[dict] = []
    while True:
        page = server.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/steps?i0={len(out)}&i1={len(out) + 100}")
        out += page["records"]
        if len(out) >= page["count"] or not page["records"]:
            return out


def blob(server, src: str) -> bytes:
    with urllib.request.urlopen(f"{server.url}/{src}", timeout=30) as r:
        return r.read()


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def exported(server, env: str, win: str) -> dict[str, dict]:
    data = server.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/export?format=json")
    return {t["name"]: t for t in data["traces"]}


def torch_png(proto) -> np.ndarray:
    return pixels(proto.value[0].image.encoded_image_string)
