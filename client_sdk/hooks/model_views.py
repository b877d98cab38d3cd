"""Model watch extras: weight/gradient histograms over steps, conv kernels and feature maps."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ._util import contained, deferred, warn_once


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)


class LayerHistograms:
    """Per-layer weight and gradient histograms at every logged step, one histogram-over-steps pane each."""

    def __init__(self, client: Any, env: str | None, prefix: str, layers: list[tuple[str, list[Any]]],
                 bins: int = 30) -> None:
        self.client, self.env, self.prefix, self.layers = client, env, prefix, layers
        self.bins = int(bins)

    def _values(self, params: list[Any], kind: str) -> np.ndarray | None:
        import torch

        ts = [p.detach() if kind == "weight" else p.grad.detach() for p in params
              if kind == "weight" or p.grad is not None]
        if not ts:
            return None
        return torch.cat([t.reshape(-1).float() for t in ts]).cpu().numpy()

    @contained("watch(model) histograms")
    def log(self, step: float) -> None:
        """Histogram every layer's weights and gradients now: one record appended to each layer's pane."""
        for name, params in self.layers:
            for kind in ("weight", "grad"):
                vals = self._values(params, kind)
                if vals is None or not vals.size:
                    continue
                vals = vals[np.isfinite(vals)].astype(np.float64)  # NaN gradients are the alert's job
                if not vals.size:
                    continue
                counts, edges = np.histogram(vals, bins=self.bins)
                # einsum, not `vals @ vals`: a BLAS dot wakes OpenBLAS's thread pool, which costs milliseconds
                # in the training thread when the cores are busy (measured 37 ms vs 0.01 ms on 2 loaded cores)
                record = {"step": step, "min": float(vals.min()), "max": float(vals.max()), "num": int(vals.size),
                          "sum": float(vals.sum()), "sum_squares": float(np.einsum("i,i->", vals, vals)),
                          "limits": edges[1:].tolist(), "counts": counts.tolist()}
                self.client.transport.put({
                    "t": time.time(), "op": "update", "mode": "append", "kind": "histogram",
                    "env": self.client.env if self.env is None else self.env,
                    "win": f"{self.prefix}_hist_{kind}_{_safe(name)}",
                    "opts": {"title": f"{kind} histogram: {name}"}, "records": [record]})


def _tiles(a: np.ndarray, min_px: int = 32) -> np.ndarray:
    """N×C×H×W floats -> uint8 tiles scaled to [0, 255] per tile, upscaled (nearest) to at least `min_px`."""
    lo = a.min(axis=(1, 2, 3), keepdims=True)
    hi = a.max(axis=(1, 2, 3), keepdims=True)
    a = (a - lo) / np.maximum(hi - lo, 1e-12)
    k = max(1, min_px // max(a.shape[2], a.shape[3]))
    if k > 1:
        a = a.repeat(k, axis=2).repeat(k, axis=3)
    return np.round(a * 255).astype(np.uint8)


class FeatureMaps:
    """Kernel grid of each named conv layer and its feature maps for a fixed sample (forward hooks)."""

    def __init__(self, client: Any, env: str | None, prefix: str, model: Any, names: list[str], sample: Any,
                 max_maps: int = 64) -> None:
        self.client, self.env, self.prefix, self.model, self.sample = client, env, prefix, model, sample
        self.max_maps = max_maps
        mods = dict(model.named_modules())
        self.modules: list[tuple[str, Any]] = []
        for n in names:  # a DDP/DataParallel wrapper prefixes every name with "module."
            mod = mods.get(n, mods.get(f"module.{n}"))
            if mod is None:
                warn_once(f"feature_maps {n}", f"paneboard: watch(feature_maps=...): no module named {n!r}")
            else:
                self.modules.append((n, mod))
        if sample is None and self.modules:
            warn_once("feature_maps sample", "paneboard: watch(feature_maps=...) needs sample=; kernels only")

    @contained("watch(model) feature maps")
    def log(self, step: float) -> None:
        """Send each layer's kernel grid and, with a sample, its feature maps for sample[0]."""
        import torch

        outs: dict[str, Any] = {}
        if self.sample is not None and self.modules:
            handles = [m.register_forward_hook(self._grab(n, outs)) for n, m in self.modules]
            was_training = self.model.training
            try:  # eval + no_grad: this pass must not move BatchNorm statistics or touch gradients
                self.model.eval()
                with torch.no_grad():
                    self.model(self.sample[:1])
            finally:
                self.model.train(was_training)
                for h in handles:
                    h.remove()
        with deferred(self.client):
            for name, mod in self.modules:
                w = getattr(mod, "weight", None)
                if w is not None and w.ndim == 4:
                    k = w.detach()[: self.max_maps].float().cpu().numpy()
                    k = k if k.shape[1] == 3 else k[:, :1]  # RGB kernels as colour, else each kernel's first input
                    self.client.images(_tiles(k), nrow=8, win=f"{self.prefix}_kernels_{_safe(name)}", env=self.env,
                                       opts={"title": f"kernels: {name}", "caption": f"step {step:g}"})
                out = outs.get(name)
                if out is not None and out.ndim == 4:
                    maps = out[0, : self.max_maps, None].float().cpu().numpy()
                    self.client.images(_tiles(maps), nrow=8, win=f"{self.prefix}_fmap_{_safe(name)}", env=self.env,
                                       opts={"title": f"feature maps: {name}", "caption": f"step {step:g}"})

    @staticmethod
    def _grab(name: str, outs: dict[str, Any]) -> Any:
        def fn(_m: Any, _i: Any, out: Any) -> None:
            outs[name] = (out[0] if isinstance(out, (tuple, list)) else out).detach()
        return fn
