"""Model watch: per-layer weight/grad norms, total grad norm, learning rates and a model summary pane."""

from __future__ import annotations

import html
import math
from typing import Any

from . import alerts as _alerts
from ._util import append_point, contained
from .dist import rank_info
from .model_views import FeatureMaps, LayerHistograms


def _count(n: int) -> str:
    return f"{n:,}"


def _norms(torch: Any, tensors: list[Any]) -> list[float]:
    """The L2 norm of each tensor: one fused kernel and one device-to-host copy per device, not one per tensor
    (a per-tensor norm and .item() cost ~30 µs a layer on a busy CPU, and a synchronisation each on CUDA)."""
    out = [0.0] * len(tensors)
    by_device: dict[Any, list[int]] = {}
    for i, t in enumerate(tensors):
        by_device.setdefault(t.device, []).append(i)
    for idx in by_device.values():
        group = [tensors[i] for i in idx]
        try:
            norms = torch._foreach_norm(group)
        except (AttributeError, NotImplementedError, RuntimeError):  # old torch, sparse gradients
            norms = [t.coalesce().values().norm() if t.is_sparse else t.norm() for t in group]
        for i, v in zip(idx, torch.stack(norms).tolist(), strict=True):
            out[i] = v
    return out


def _combined(norms: Any) -> float:
    """The L2 norm of several tensors together, from their own norms (NaN and Inf carry through)."""
    return math.sqrt(sum(v * v for v in norms))


class ModelWatch:
    """Hooks on an optimizer's step: every `every` steps, norms and learning rates go to line panes.

    Weight/gradient histograms cost about ten times more than the norms, so they are logged every `hist_every`
    steps (default 10 × `every`, and at the first logged step), like TensorBoard users log histograms less often.

    In a distributed job only rank `rank` logs (default 0: DDP gradients are identical after all-reduce);
    rank="all" logs from every rank with traces labelled "host/rankN".
    """

    def __init__(self, model: Any, client: Any, optimizer: Any = None, every: int = 100, env: str | None = None,
                 max_layers: int = 20, sample: Any = None, prefix: str = "model", alerts: bool = True,
                 rank: int | str = 0, histograms: int = 4, hist_every: int | None = None,
                 feature_maps: list[str] | None = None) -> None:
        self.model, self.client, self.optimizer, self.env = model, client, optimizer, env
        self.every, self.prefix = max(int(every), 1), prefix
        self.hist_every = max(int(hist_every), 1) if hist_every is not None else 10 * self.every
        self._hist_logged = False
        self.steps = 0
        self._logged = False
        self.ri = rank_info()
        self.active = self.ri.keeps(rank)  # False: this rank logs nothing and installs no hooks
        self._shared = rank == "all" and self.ri.distributed  # every rank appends to the same panes
        self._label = self.ri.name if rank == "all" else str
        self._handles: list[Any] = []
        self._alerts = _alerts.get(client) if alerts and self.active else None
        if not self.active:
            return
        if self._alerts is not None:
            self._alerts.track("optimizer", self, "steps")  # the stall watchdog reads self.steps: nothing per step
        # layers = modules owning parameters directly; keep the largest few so panes stay readable
        layers = []
        for name, mod in model.named_modules():
            params = [p for p in mod.parameters(recurse=False) if p.requires_grad]
            if params:
                layers.append((sum(p.numel() for p in params), name or type(mod).__name__, params))
        layers.sort(key=lambda t: -t[0])
        self.layers = [(name, params) for _, name, params in layers[:max_layers]]
        self._all_params = [p for p in model.parameters() if p.requires_grad]
        # histograms of the `histograms` largest layers (0: off), every logged step kept in the pane
        self._hist = LayerHistograms(client, env, prefix, self.layers[:max(int(histograms), 0)]) if histograms else None
        self._fmaps = FeatureMaps(client, env, prefix, model, list(feature_maps), sample) if feature_maps else None
        if optimizer is not None:
            self._handles.append(optimizer.register_step_pre_hook(self._on_step))
        if rank != "all" or self.ri.rank == 0:  # one summary per job
            self.summary(sample)

    def _on_step(self, *_: Any) -> None:
        # pre-hook: the gradients of this step are in .grad and the lr is the one about to be used
        self._advance(None)

    def _advance(self, step: int | None) -> None:
        self.steps = self.steps + 1 if step is None else int(step)
        if self.steps % self.every == 0 or not self._logged:
            self._logged = True
            self.log(self.steps)

    def step(self, step: int | None = None) -> None:
        """Call after backward() when there is no optimizer to hook: counts steps (or takes `step`), logs every `every`."""
        if self.active:
            self._advance(step)

    @contained("watch(model) log")
    def log(self, step: int) -> None:
        """Compute and append every norm now (called automatically every `every` steps)."""
        import torch

        with torch.no_grad():
            names = [n for n, _ in self.layers]
            w_norms = iter(_norms(torch, [p for _, ps in self.layers for p in ps]))
            w = [_combined(next(w_norms) for _ in ps) for _, ps in self.layers]
            with_grad = [p for p in self._all_params if p.grad is not None]
            g_of = dict(zip(map(id, with_grad), _norms(torch, [p.grad for p in with_grad]), strict=True))
            g_names, g = [], []
            for name, ps in self.layers:
                gs = [g_of[id(p)] for p in ps if id(p) in g_of]
                if gs:
                    g_names.append(name)
                    g.append(_combined(gs))
            total = _combined(g_of.values()) if g_of else None
        p, env, c, lab, sh = self.prefix, self.env, self.client, self._label, self._shared
        names, g_names = [lab(n) for n in names], [lab(n) for n in g_names]
        append_point(c, f"{p}_weight_norm", env, step, w, names, "weight norm per layer", "L2 norm", by_name=sh)
        if g:
            append_point(c, f"{p}_grad_norm", env, step, g, g_names, "gradient norm per layer", "L2 norm", by_name=sh)
        if total is not None:
            append_point(c, f"{p}_grad_norm_total", env, step, [total], [lab("total")], "total gradient norm",
                         "L2 norm", by_name=sh)
            if self._alerts is not None:
                self._alerts.check_grad_norm(total, step)
        if self.optimizer is not None:
            lrs = [float(gr.get("lr", float("nan"))) for gr in self.optimizer.param_groups]
            append_point(c, f"{p}_lr", env, step, lrs, [lab(f"group {i}") for i in range(len(lrs))],
                         "learning rate", "lr", by_name=sh)
        hist_due = step % self.hist_every == 0 or not self._hist_logged
        if self._hist is not None and hist_due and (not sh or self.ri.rank == 0):  # one pane per layer, rank 0
            self._hist_logged = True
            self._hist.log(step)
        if self._fmaps is not None and (not sh or self.ri.rank == 0):
            self._fmaps.log(step)

    @contained("watch(model) summary")
    def summary(self, sample: Any = None) -> str:
        """Send the model summary pane (layer tree, parameter counts, output shapes for `sample`)."""
        shapes: dict[str, str] = {}
        if sample is not None:
            shapes = self._output_shapes(sample)
        rows = ["<tr><th>layer</th><th>type</th><th>output shape</th><th>params</th></tr>"]
        for name, mod in self.model.named_modules():
            depth = name.count(".") + (1 if name else 0)
            own = sum(p.numel() for p in mod.parameters(recurse=False))
            label = name.rsplit(".", 1)[-1] if name else "(model)"
            rows.append(f"<tr><td>{'&nbsp;' * 4 * depth}{html.escape(label)}</td><td>{type(mod).__name__}</td>"
                        f"<td>{html.escape(shapes.get(name, ''))}</td><td>{_count(own) if own else ''}</td></tr>")
        total = sum(p.numel() for p in self.model.parameters())
        trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        text = (f"<table>{''.join(rows)}</table>total params: {_count(total)} · trainable: {_count(trainable)}")
        self.client.text(text, win=f"{self.prefix}_summary", env=self.env,
                         opts={"title": f"model summary: {type(self.model).__name__}"})
        return text

    def _output_shapes(self, sample: Any) -> dict[str, str]:
        import torch

        shapes: dict[str, str] = {}

        def hook(name: str):
            def fn(_m: Any, _i: Any, out: Any) -> None:
                o = out[0] if isinstance(out, (tuple, list)) and out else out
                if hasattr(o, "shape"):
                    shapes[name] = "×".join(str(d) for d in o.shape)
            return fn

        handles = [m.register_forward_hook(hook(n)) for n, m in self.model.named_modules()]
        was_training = self.model.training
        try:  # eval + no_grad: a summary pass must not move BatchNorm statistics or build a graph
            self.model.eval()
            with torch.no_grad():
                self.model(sample)
        finally:
            self.model.train(was_training)
            for h in handles:
                h.remove()
        return shapes

    def unwatch(self) -> None:
        """Remove every hook this watch installed."""
        for h in self._handles:
            h.remove()
        self._handles = []
        if self._alerts is not None:
            self._alerts.pause()


def watch(model: Any, client: Any, optimizer: Any = None, every: int = 100, **kw: Any) -> ModelWatch:
    """Watch a model's weights and gradients (hooked on optimizer.step; without one call .step())."""
    return ModelWatch(model, client, optimizer=optimizer, every=every, **kw)
