"""DataLoader profiler: data wait vs compute, throughput, served-label histogram, first-batch images."""

from __future__ import annotations

import html
import sys
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import alerts as _alerts
from ._util import append_point, contained, deferred
from .dist import rank_info

_TARGET_KEYS = ("label", "labels", "target", "targets", "y")
_INPUT_KEYS = ("image", "images", "input", "inputs", "x", "img", "pixel_values")


def _first_dim(obj: Any) -> int | None:
    """Batch size: leading dim of the first tensor/array found in the batch (lists: their length)."""
    for _ in range(4):  # nested tuples/dicts are shallow in practice; bound the walk
        shape = getattr(obj, "shape", None)
        if shape is not None:
            return int(shape[0]) if len(shape) else None
        if isinstance(obj, dict):
            obj = next(iter(obj.values()), None)
        elif isinstance(obj, (list, tuple)):
            if not obj:
                return 0
            if not hasattr(obj[0], "shape") and not isinstance(obj[0], (list, tuple, dict)):
                return len(obj)
            obj = obj[0]
        else:
            return None
    return None


def _split(batch: Any) -> tuple[Any, Any]:
    """(inputs, targets) of a batch: (x, y, ...) tuples or dicts with conventional keys."""
    if isinstance(batch, (list, tuple)) and len(batch) >= 2:
        return batch[0], batch[1]
    if isinstance(batch, dict):
        x = next((batch[k] for k in _INPUT_KEYS if k in batch), None)
        y = next((batch[k] for k in _TARGET_KEYS if k in batch), None)
        return x, y
    return batch, None


def _int_labels(ys: list[Any]) -> np.ndarray | None:
    """A window's class targets as one 1-D int64 array, or None when they are not classification labels.

    Tensors are concatenated first: one device-to-host copy per window instead of one per batch (the per-batch
    conversions cost ~3 µs a batch on CPU, and a synchronisation each on CUDA).
    """
    if all(hasattr(y, "detach") for y in ys):
        dims = {y.ndim for y in ys}
        if not dims <= {0, 1}:
            return None
        # torch.cat straight away: a reshape or detach per tensor would cost as much as the rest together
        a = sys.modules["torch"].cat(ys if dims == {1} else [y.reshape(-1) for y in ys]).detach()
        if a.dtype.is_floating_point or a.dtype.is_complex:
            return None
        return a.cpu().numpy().astype(np.int64, copy=False)
    parts = []
    for y in ys:
        a = y.detach().cpu().numpy() if hasattr(y, "detach") else np.asarray(y)
        if a.dtype.kind not in "iub" or a.ndim > 1:
            return None
        parts.append(a.reshape(-1).astype(np.int64, copy=False))
    return np.concatenate(parts)


def _image_grid(x: Any) -> np.ndarray | None:
    """First 16 images of an N×C×H×W batch (C 1 or 3) scaled to [0, 1] per image, else None."""
    if getattr(x, "ndim", 0) != 4 or x.shape[1] not in (1, 3) or min(x.shape[2], x.shape[3]) < 4:
        return None
    a = x[:16].detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x[:16])
    if a.dtype == np.uint8:
        return a
    a = a.astype(np.float32)
    lo = a.min(axis=(1, 2, 3), keepdims=True)
    hi = a.max(axis=(1, 2, 3), keepdims=True)
    # normalized inputs (mean/std) are not in [0, 1]; stretch each image so the grid is viewable
    return (a - lo) / np.maximum(hi - lo, 1e-12)


class WatchedLoader:
    """A DataLoader wrapper that profiles the input pipeline; iterate it like the loader it wraps.

    In a distributed job every rank reports: traces labelled "host/rankN", other panes suffixed "_r<rank>".
    """

    def __init__(self, loader: Any, client: Any, every: int = 50, env: str | None = None, prefix: str = "data",
                 alerts: bool = True) -> None:
        self._loader, self._client, self._env = loader, client, env
        self._every, self._prefix = max(int(every), 1), prefix
        self._alerts = _alerts.get(client) if alerts else None
        self._ri = rank_info()
        self.epoch = 0
        self.step = 0  # batches served across epochs
        self._settings_sent = False
        self._reset_window()

    # DataLoader-like surface: len() and every other attribute come from the wrapped loader
    def __len__(self) -> int:
        return len(self._loader)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_loader"], name)

    def _reset_window(self) -> None:
        self._w_wait = self._w_compute = self._w_startup = 0.0
        self._w_steps = self._w_samples = self._w_skipped = 0

    def __iter__(self) -> Iterator[Any]:
        self.epoch += 1
        self._epoch_start()
        it = iter(self._loader)
        perf = time.perf_counter
        beat = self._alerts.beat if self._alerts is not None else None
        i = 0
        try:  # finally: a loop that breaks early still reports its partial epoch
            while True:
                if self._w_steps >= self._every:
                    self._flush_window()
                t0 = perf()
                try:
                    batch = next(it)
                except StopIteration:
                    break
                t1 = perf()
                self._w_wait += t1 - t0
                if i == 0:
                    self._w_startup += t1 - t0  # worker start-up: reported, but not a starvation signal
                # Per batch only counters and one list append (about 2 µs); the rest waits for the window flush.
                self.step += 1
                self._w_steps += 1
                try:
                    self._on_batch(batch, i)
                    if beat is not None:
                        beat("data", self.step)
                except Exception:  # noqa: BLE001 - an odd batch must not break the user's loop
                    pass
                i += 1
                handed = perf()
                yield batch  # the loop body (compute) runs while we are suspended here
                self._w_compute += perf() - handed
        finally:
            # A loop left mid-epoch keeps this generator suspended until the interpreter finalizes it: by then
            # nothing can be sent, and touching tensors during finalization can abort torch. Report only if alive.
            if not sys.is_finalizing():
                if self._w_steps:
                    self._flush_window()
                self._epoch_end(i)

    # -------------------------------------------------------------------------------- per batch

    def _on_batch(self, batch: Any, i: int) -> None:
        """Samples served (and skipped), targets and the first inputs of one batch."""
        if type(batch) in (list, tuple) and len(batch) >= 2:  # default collate's (x, y, ...): the common case
            x, y = batch[0], batch[1]
            shape = getattr(x, "shape", None)
            n = int(shape[0]) if shape else _first_dim(batch)
        else:
            n = _first_dim(batch)
            x, y = _split(batch)
        if n is not None:
            self._w_samples += n
            exp = self._expected[i] if i < len(self._expected) else self._bs
            if exp is not None and n < exp:
                if self._expected:
                    self._skip(exp - n)
                else:  # unknown sizes (iterable): the last short batch of each worker is no skip
                    self._pending.append(exp - n)
                    if len(self._pending) > self._tails:
                        self._skip(self._pending.popleft())
        if self._track_labels:
            if y is not None:
                self._targets.append(y)
            if i == 0:
                self._first_inputs = x

    def _skip(self, k: int) -> None:
        self._w_skipped += k
        self._e_skipped += k

    @contained("watch_dataloader window")
    def _flush_window(self) -> None:
        total = self._w_wait + self._w_compute
        if total > 0:
            env, p, x, nm, bn = self._env, self._prefix, self.step, self._ri.name, self._ri.distributed
            frac = self._w_wait / total
            append_point(self._client, f"{p}_wait_fraction", env, x, [frac], [nm("data wait")],
                         "data wait fraction (time blocked in next() / step time)", "fraction", by_name=bn)
            append_point(self._client, f"{p}_batches_per_s", env, x, [self._w_steps / total], [nm("batches/s")],
                         "batches/s", "batches/s", by_name=bn)
            append_point(self._client, f"{p}_samples_per_s", env, x, [self._w_samples / total], [nm("samples/s")],
                         "samples/s", "samples/s", by_name=bn)
            append_point(self._client, f"{p}_skipped", env, x, [self._w_skipped], [nm("skipped samples")],
                         "samples dropped by collate_fn (expected − actual batch size)", "samples", by_name=bn)
            steady = total - self._w_startup
            if self._alerts is not None and steady > 0:
                self._alerts.check_data_wait((self._w_wait - self._w_startup) / steady, x)
        if self._track_labels and self._targets:
            self._count_labels()
        self._reset_window()

    def _count_labels(self) -> None:
        labels = _int_labels(self._targets)
        self._targets = []
        if labels is None:
            return
        if labels.size and labels.min() >= 0:
            bc = np.bincount(labels)
        else:  # negative labels (e.g. an ignore index): count by value
            vals, cnt = np.unique(labels, return_counts=True)
            for v, c in zip(vals.tolist(), cnt.tolist(), strict=True):
                self._label_counts[v] = self._label_counts.get(v, 0) + c
            return
        for v in np.nonzero(bc)[0].tolist():
            self._label_counts[v] = self._label_counts.get(v, 0) + int(bc[v])

    # ---------------------------------------------------------------------------------- per epoch

    @contained("watch_dataloader epoch start")
    def _epoch_start(self) -> None:
        ld = self._loader
        self._bs = getattr(ld, "batch_size", None)
        self._expected: list[int | None] = []
        self._e_skipped = 0
        # short batches of an iterable dataset held back: up to one per worker is that worker's natural tail
        self._pending: deque[int] = deque()
        self._tails = max(1, int(getattr(ld, "num_workers", 0) or 0))
        self._targets: list[Any] = []
        self._label_counts: dict[int, int] = {}
        self._first_inputs = None
        self._track_labels = True
        try:  # map-style with a known sampler length: the last batch may legitimately be short
            n_samples = len(ld.sampler)
            if self._bs and not getattr(ld, "drop_last", False):
                n_batches = -(-n_samples // self._bs)
                self._expected = [self._bs] * (n_batches - 1) + [n_samples - (n_batches - 1) * self._bs]
        except (TypeError, AttributeError):
            pass
        if not self._settings_sent:
            self._settings_sent = True
            self._send_settings()

    def _send_settings(self) -> None:
        ld = self._loader
        ds = getattr(ld, "dataset", None)
        try:
            ds_len = len(ds)
        except TypeError:
            ds_len = "iterable"
        rows = {
            "loader": type(ld).__name__, "dataset": f"{type(ds).__name__} ({ds_len})",
            "batch_size": getattr(ld, "batch_size", None), "num_workers": getattr(ld, "num_workers", None),
            "prefetch_factor": getattr(ld, "prefetch_factor", None), "pin_memory": getattr(ld, "pin_memory", None),
            "persistent_workers": getattr(ld, "persistent_workers", None),
            "drop_last": getattr(ld, "drop_last", None),
            "sampler": type(getattr(ld, "sampler", None)).__name__,
            "batch_sampler": type(getattr(ld, "batch_sampler", None)).__name__,
            "collate_fn": getattr(getattr(ld, "collate_fn", None), "__name__", None),
        }
        body = "<br>".join(f"{k}: <code>{html.escape(str(v))}</code>" for k, v in rows.items())
        self._client.text(body, win=self._ri.win(f"{self._prefix}_loader"), env=self._env,
                          opts={"title": "DataLoader settings"})

    @contained("watch_dataloader epoch end")
    def _epoch_end(self, n_batches: int) -> None:
        if self._alerts is not None:
            self._alerts.pause()  # evaluation or checkpointing between epochs is not a stall
        p, env = self._prefix, self._env
        with deferred(self._client):
            if self._label_counts:
                keys = sorted(self._label_counts)
                self._client.bar(X=[self._label_counts[k] for k in keys], Y=[str(k) for k in keys],
                                 win=self._ri.win(f"{p}_labels"), env=env,
                                 opts={"title": f"labels served, epoch {self.epoch} ({n_batches} batches)",
                                       "xlabel": "label", "ylabel": "samples"})
            grid = _image_grid(self._first_inputs) if self._first_inputs is not None else None
            if grid is not None:
                self._client.images(grid, nrow=8, win=self._ri.win(f"{p}_first_batch"), env=env,
                                    opts={"caption": f"first batch of epoch {self.epoch}",
                                          "title": "first batch"})
            self._first_inputs = None
            if self._e_skipped:
                self._client.text(f"epoch {self.epoch}: {self._e_skipped} samples dropped by collate_fn",
                                  win=self._ri.win(f"{p}_skipped_log"), env=env, append=True)


def watch_dataloader(loader: Any, client: Any, every: int = 50, env: str | None = None,
                     **kw: Any) -> WatchedLoader:
    """Wrap a DataLoader (or any iterable of batches) so its input pipeline is profiled into `client`."""
    return WatchedLoader(loader, client, every=every, env=env, **kw)
