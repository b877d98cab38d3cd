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
from .labels import LabelCounter, label_like

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


def _image_grid(x: Any) -> np.ndarray | None:
    """First 16 images of an N×C×H×W batch (C 1 or 3) as uint8, each stretched to 0..255, else None."""
    if getattr(x, "ndim", 0) != 4 or x.shape[1] not in (1, 3) or min(x.shape[2], x.shape[3]) < 4:
        return None
    a = x[:16].detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x[:16])
    if a.dtype == np.uint8:
        return a
    a = np.nan_to_num(a.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    lo = a.min(axis=(1, 2, 3), keepdims=True)
    hi = a.max(axis=(1, 2, 3), keepdims=True)
    # normalized inputs (mean/std) are not in [0, 1]: stretch each image so the grid is viewable; uint8 here
    # spares the image path its own scaling passes
    return ((a - lo) * (255.0 / np.maximum(hi - lo, 1e-12)) + 0.5).astype(np.uint8)


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
        if self._alerts is not None:
            self._alerts.track("data", self, "step")  # the stall watchdog reads self.step: nothing per batch
        self._settings_sent = False
        self._labels = LabelCounter()
        self._tensor = getattr(sys.modules.get("torch"), "Tensor", None)  # None without torch: no fast path
        self._reset_window()

    # DataLoader-like surface: len() and every other attribute come from the wrapped loader
    def __len__(self) -> int:
        return len(self._loader)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_loader"], name)

    def _reset_window(self) -> None:
        self._w_skipped = 0

    def __iter__(self) -> Iterator[Any]:
        self.epoch += 1
        self._epoch_start()
        it = iter(self._loader)
        perf, every, tensor, labels = time.perf_counter, self._every, self._tensor, self._labels
        held, hold, bs = labels.held, labels.hold, self._bs or 0
        # The window's timings and sample count are locals (a window never spans epochs): per batch two clock
        # reads, a few local additions and the step counter; everything else waits for the window's flush.
        wait = compute = startup = 0.0
        steps = samples = i = 0
        pair: type | None = None  # list or tuple: the first batch's type, whose later batches may go inline
        try:  # finally: a loop that breaks early still reports its partial epoch
            t0 = perf()
            while True:
                if steps >= every:
                    self._flush_window(wait, compute, startup, steps, samples)
                    wait = compute = startup = 0.0
                    steps = samples = 0
                    t0 = perf()  # the flush is our own time, neither data wait nor compute
                try:
                    batch = next(it)
                except StopIteration:
                    break
                handed = perf()
                wait += handed - t0
                self.step += 1
                steps += 1
                try:
                    # The default collate's batch, inline: every line here runs per step on caches the training
                    # step has just evicted, where a method call or len() of a tensor (a Python function in
                    # torch) costs microseconds. The first batch and other forms take the general path.
                    if type(batch) is pair and len(batch) >= 2 and type(x := batch[0]) is tensor \
                            and (shape := x.shape):  # a 0-d x has no batch dimension: the general path
                        n = shape[0]
                        samples += n
                        if n < bs:
                            self._check_short(n, i)
                        if labels.active:
                            held.append(batch[1])
                            if len(held) >= hold:
                                labels.count()
                    else:
                        samples += self._on_batch(batch, i)
                        if i == 0 and type(batch) in (list, tuple):
                            pair = type(batch)
                except Exception:  # noqa: BLE001 - an odd batch must not break the user's loop
                    pass
                if i == 0:
                    startup = handed - t0  # worker start-up: reported, but not a starvation signal
                i += 1
                yield batch  # the loop body (compute) runs while we are suspended here
                t0 = perf()  # the end of this step's compute is the start of the next batch's wait
                compute += t0 - handed
        finally:
            # A loop left mid-epoch keeps this generator suspended until the interpreter finalizes it: by then
            # nothing can be sent, and touching tensors during finalization can abort torch. Report only if alive.
            if not sys.is_finalizing():
                if steps:
                    self._flush_window(wait, compute, startup, steps, samples)
                self._epoch_end(i)

    # -------------------------------------------------------------------------------- per batch

    def _on_batch(self, batch: Any, i: int) -> int:
        """Any batch's bookkeeping (the first of each epoch, forms other than the inline path's): samples served
        (returned) and skipped, targets held, the first inputs kept."""
        x, y = _split(batch)
        n = _first_dim(batch)
        if n is not None:
            bs = self._bs
            if bs is None or n < bs:  # a batch can only be short of its expected size when below batch_size
                self._check_short(n, i)
        labels = self._labels
        if labels.active:
            if i == 0:
                self._first_inputs = x
                if not label_like(y):  # e.g. regression or segmentation targets: nothing to count this epoch
                    labels.active = False
                    return n or 0
            if y is not None:
                labels.add(y)
        return n or 0

    def _check_short(self, n: int, i: int) -> None:
        exp = self._expected[i] if i < len(self._expected) else self._bs
        if exp is not None and n < exp:
            if self._expected:
                self._skip(exp - n)
            else:  # unknown sizes (iterable): the last short batch of each worker is no skip
                self._pending.append(exp - n)
                if len(self._pending) > self._tails:
                    self._skip(self._pending.popleft())

    def _skip(self, k: int) -> None:
        self._w_skipped += k
        self._e_skipped += k

    @contained("watch_dataloader window")
    def _flush_window(self, wait: float, compute: float, startup: float, steps: int, samples: int) -> None:
        total = wait + compute
        if total > 0:
            env, p, x, nm, bn = self._env, self._prefix, self.step, self._ri.name, self._ri.distributed
            append_point(self._client, f"{p}_wait_fraction", env, x, [wait / total], [nm("data wait")],
                         "data wait fraction (time blocked in next() / step time)", "fraction", by_name=bn)
            append_point(self._client, f"{p}_batches_per_s", env, x, [steps / total], [nm("batches/s")],
                         "batches/s", "batches/s", by_name=bn)
            append_point(self._client, f"{p}_samples_per_s", env, x, [samples / total], [nm("samples/s")],
                         "samples/s", "samples/s", by_name=bn)
            append_point(self._client, f"{p}_skipped", env, x, [self._w_skipped], [nm("skipped samples")],
                         "samples dropped by collate_fn (expected − actual batch size)", "samples", by_name=bn)
            steady = total - startup
            if self._alerts is not None and steady > 0:
                self._alerts.check_data_wait((wait - startup) / steady, x)
        self._reset_window()

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
        self._labels.reset()
        self._first_inputs = None
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
        self._labels.count()
        counts = self._labels.counts
        p, env = self._prefix, self._env
        with deferred(self._client):
            if counts:
                keys = sorted(counts)
                self._client.bar(X=[counts[k] for k in keys], Y=[str(k) for k in keys],
                                 win=self._ri.win(f"{p}_labels"), env=env,
                                 opts={"title": f"labels served, epoch {self.epoch} ({n_batches} batches)",
                                       "xlabel": "label", "ylabel": "samples"})
            grid = _image_grid(self._first_inputs) if self._first_inputs is not None else None
            if grid is not None:
                # JPEG: a 16-image ImageNet grid costs the training thread ~100 ms as PNG, ~3 ms as JPEG
                self._client.images(grid, nrow=8, win=self._ri.win(f"{p}_first_batch"), env=env,
                                    opts={"caption": f"first batch of epoch {self.epoch}",
                                          "title": "first batch", "jpgquality": 90})
            self._first_inputs = None
            if self._e_skipped:
                self._client.text(f"epoch {self.epoch}: {self._e_skipped} samples dropped by collate_fn",
                                  win=self._ri.win(f"{p}_skipped_log"), env=env, append=True)


def watch_dataloader(loader: Any, client: Any, every: int = 50, env: str | None = None,
                     **kw: Any) -> WatchedLoader:
    """Wrap a DataLoader (or any iterable of batches) so its input pipeline is profiled into `client`."""
    return WatchedLoader(loader, client, every=every, env=env, **kw)
