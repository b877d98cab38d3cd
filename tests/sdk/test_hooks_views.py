"""watch(model) extras against a real dash-server: histograms over steps, kernels and feature maps."""

from __future__ import annotations

import io
import urllib.request

import numpy as np
import pytest
import torch
from PIL import Image

import paneboard


def client_for(server, env: str) -> paneboard.Client:
    return server.client(env)


def small_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(4 * 6 * 6, 3))


def pane_image(server, env: str, win: str) -> np.ndarray:
    src = server.get_json(f"/api/v1/envs/{env}/panes/{win}")["data"]["src"]  # api/v1/blobs/<sha256>
    with urllib.request.urlopen(f"{server.url}/{src}", timeout=30) as r:
        return np.asarray(Image.open(io.BytesIO(r.read())))


def test_weight_and_gradient_histograms_keep_every_logged_step(server):
    client = client_for(server, "hist")
    model = small_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 3, (16,))
    paneboard.watch(model, client, optimizer=opt, every=1, hist_every=2)
    truth = {}
    for step in range(1, 11):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        if step == 1 or step % 2 == 0:  # logged: the first step, then every 2 (weights about to be applied)
            truth[step] = (torch.cat([model[3].weight.detach().reshape(-1), model[3].bias.detach()]).numpy(),
                           torch.cat([model[3].weight.grad.reshape(-1), model[3].bias.grad]).numpy())
        opt.step()
    assert client.flush(timeout=30)
    for kind, k in (("weight", 0), ("grad", 1)):
        pane = server.get_json(f"/api/v1/envs/hist/panes/model_hist_{kind}_3")
        assert pane["kind"] == "histogram" and pane["data"]["steps"] == [1, 2, 4, 6, 8, 10]
        for h in pane["data"]["histograms"]:
            values = truth[h["step"]][k].astype(np.float64)
            counts, edges = np.histogram(values, bins=30)
            nz = np.flatnonzero(counts)  # the read API drops empty outer buckets
            assert [b[2] for b in h["buckets"]] == counts[nz[0]:nz[-1] + 1].tolist()
            assert h["min"] == pytest.approx(values.min()) and h["max"] == pytest.approx(values.max())
            assert h["num"] == values.size and h["sum"] == pytest.approx(values.sum())
    client.close_connection(timeout=5)


def test_kernels_and_feature_maps_of_a_fixed_sample(server):
    client = client_for(server, "fmap")
    model = small_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 3, (8,))
    sample = x[:2].clone()
    paneboard.watch(model, client, optimizer=opt, every=5, histograms=0, feature_maps=["0", "nope"], sample=sample)
    for step in range(1, 6):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        if step == 5:
            with torch.no_grad():
                want_maps = model[0](sample[:1])[0].numpy()  # what the hook saw at step 5, before the update
                want_kernels = model[0].weight[:, 0].numpy().copy()
        opt.step()
    assert client.flush(timeout=30)
    panes = {p["win"] for p in server.get_json("/api/v1/envs/fmap")["panes"]}
    assert {"model_fmap_0", "model_kernels_0"} <= panes and not any("hist" in w for w in panes)
    for win, want, size in (("model_fmap_0", want_maps, 6), ("model_kernels_0", want_kernels, 3)):
        img = pane_image(server, "fmap", win)
        k = 32 // size  # tiles are upscaled (nearest) to >= 32 px
        tile = size * k
        assert img.shape[:2] == (tile + 4, 4 * (tile + 4))  # one row of 4 tiles, padding 2
        for c in range(4):
            got = img[2:2 + tile:k, 2 + c * (tile + 4):2 + c * (tile + 4) + tile:k]
            got = got[..., 0] if got.ndim == 3 else got
            m = want[c]
            exp = np.round((m - m.min()) / (m.max() - m.min()) * 255)
            assert np.abs(got.astype(float) - exp).max() <= 1, (win, c)
    client.close_connection(timeout=5)
