"""paneboard.SummaryWriter: torch.utils.tensorboard.SummaryWriter's API, streaming live to dash-server."""

from __future__ import annotations

import base64
import os
import socket
import traceback
from collections.abc import Mapping
from datetime import datetime
from time import time as _now
from types import TracebackType
from typing import Any

import numpy as np

from ..client import Client
from ..protocol import TB_XLABEL, run_name
from . import convert as tc
from . import handoff
from . import summaries as ts
from .writer_compat import WriterCompat


class SummaryWriter(WriterCompat):
    """Drop-in for torch.utils.tensorboard.SummaryWriter (torch 2.13 signatures) that logs to dash-server.

    `log_dir` names the env (default `runs/<%b%d_%H-%M-%S>_<hostname><comment>`, as torch). Keyword-only
    `server`, `port`, `base_url` choose the dash-server (defaults as paneboard.Client, PANEBOARD_URL overrides);
    `client=` reuses an existing paneboard.Client (its connection; the env is still `log_dir`).
    tensorboardX's constructor keywords work too (`logdir=` names the env; `write_to_disk`, `comet_config` and
    other keywords are accepted and kept in `kwargs`), as does the rest of both writers' surface (writer_compat.py).

    Each add_* call builds one small event and queues it; a background thread streams it, so a call never waits
    for the network and transport problems never raise here. Bad arguments raise ValueError/TypeError.

    Differences from torch, on purpose:
      * `purge_step` deletes nothing: paneboard keeps every point. A step that goes backwards (a resumed run) is
        kept as recorded, in arrival order; pick the range to look at in the UI instead.
      * `max_queue`, `flush_secs` and `filename_suffix` are accepted and ignored: there are no files, and events
        are sent as they come (the client's own buffer holds 100,000 events while the server is away).
      * Scalars are stored as float64 whatever `new_style`/`double_precision` say (torch's default is float32).
      * `log_dir` names the env as `import-tb` names that folder (protocol.run_name: "./runs/x/" and
        "<cwd>/runs/x" are env `runs/x`); tags are kept as given, as torch writes them ("train loss" stays
        "train loss"; tensorboardX would write "train_loss").
      * `add_scalars` makes one pane `main_tag` with one trace per key, not one run per key.
      * `add_hparams` logs into this env (session `run_name`, default "."), not a child run; bools stay bools.
      * Images and videos: only floats (and bools) are scaled ×255; integer images 0..255 are kept as they are.
      * `add_video` writes an animated GIF with Pillow (torch's moviepy path is broken for moviepy ≥ 2).
      * `add_embedding` from several writers in one env does not overwrite: each (tag, step) is its own pane.
      * `close()` flushes and ends the run; later add_* calls still work (they reconnect and the run goes on),
        as in torch. A transformers TensorBoardCallback that closes it at the end of train() gets it back for
        a later evaluate() (see handoff.py).
    """

    def __init__(self, log_dir: Any = None, comment: str = "", purge_step: int | None = None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "", *, server: str | None = None,
                 port: int | None = None, base_url: str | None = None, client: Client | None = None,
                 logdir: Any = None, **kwargs: Any) -> None:
        log_dir = log_dir or logdir
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        # "runs/x/", "./runs/x" and "<cwd>/runs/x" are one directory for torch, so they are one env here, the
        # env `import-tb` names the same directory (protocol.run_name).
        self.log_dir = run_name(str(log_dir))
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        if client is not None and not isinstance(client, Client):
            raise TypeError(f"client must be a paneboard.Client, got {type(client).__name__}")
        self._owns_client = client is None
        if client is None:
            kw: dict[str, Any] = {k: v for k, v in (("server", server), ("port", port), ("base_url", base_url))
                                  if v is not None}
            client = Client(env=self.log_dir, **kw)
        self.client = client
        self.env = self.log_dir
        self._put = client.transport.put  # bound once: the hot path is one dict and this call
        self._init_compat(kwargs)

    # --------------------------------------------------------------------------------------- basics

    def get_logdir(self) -> str:
        """The env name (torch: the directory of the event files)."""
        return self.log_dir

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the server stored everything logged so far (at most `timeout`, default the client's
        exit_timeout, 10 s); True if it did. Never raises."""
        return self.client.flush(self.client.transport.exit_timeout if timeout is None else timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flush; a writer that made its own client also ends its run and stops its sender. As with torch, the
        writer still works: the next add_* reconnects and the run goes on (running again, same start)."""
        handoff.keep_for_closer(self)
        if self._owns_client:
            self._put = self._put_reopening
            return self.client.close_connection(timeout)
        return self.flush(timeout)

    def _put_reopening(self, event: dict[str, Any]) -> int:
        """The first add_* after close(): the run starts again before the event, then events go straight."""
        self.client._reopen_run()
        self._put = self.client.transport.put
        return self._put(event)

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None and self._owns_client:  # the block raised: this writer's run failed
            self.client.end_run("".join(traceback.format_exception(kind, value, tb)))
        self.close()

    def __repr__(self) -> str:
        return f"<paneboard.SummaryWriter env={self.env!r} url={self.client.url!r}>"

    # -------------------------------------------------------------------------------------- scalars

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False, display_name: str | None = "",
                   summary_description: str | None = "") -> None:
        """One point (global_step, scalar_value) on line pane `tag` (trace `tag`); step None is 0, like torch.
        tensorboardX's display_name/summary_description are accepted; the pane is titled by `tag`."""
        v = scalar_value if type(scalar_value) is float else \
            float(scalar_value) if type(scalar_value) is int else tc.scalar_value(scalar_value)
        step = global_step if type(global_step) is int else tc.step_of(global_step)
        if type(tag) is not str:
            raise TypeError(f"tag must be a string, got {type(tag).__name__}")
        self._put({"t": _now() if walltime is None else float(walltime), "op": "update", "env": self.env,
                   "win": tag, "kind": "line", "mode": "append", "name": tag,
                   "opts": {"title": tag, "xlabel": TB_XLABEL},
                   "traces": [{"name": tag, "x": [step], "y": [v]}]})

    def add_scalars(self, main_tag: str, tag_scalar_dict: Mapping[str, Any], global_step: Any = None,
                    walltime: float | None = None) -> None:
        """One line pane `main_tag` with one trace per key (torch makes a run per key); one shared walltime."""
        if type(main_tag) is not str:
            raise TypeError(f"main_tag must be a string, got {type(main_tag).__name__}")
        if not isinstance(tag_scalar_dict, Mapping):
            raise TypeError(f"tag_scalar_dict must be a dict, got {type(tag_scalar_dict).__name__}")
        t = _now() if walltime is None else float(walltime)
        step = tc.step_of(global_step)
        values = [(str(k), tc.scalar_value(v, f"tag_scalar_dict[{k!r}]")) for k, v in tag_scalar_dict.items()]
        # One event per key, paired by trace name: positional pairing would mix traces when keys vary per call.
        for name, v in values:
            self.scalar_dict.setdefault(f"{self.log_dir}/{main_tag}/{name}", []).append([t, step, v])
            self._put({"t": t, "op": "update", "env": self.env, "win": main_tag, "kind": "line",
                       "mode": "append", "name": name, "opts": {"title": main_tag, "xlabel": TB_XLABEL},
                       "traces": [{"name": name, "x": [step], "y": [v]}]})

    # ------------------------------------------------------------------------------------- stepped kinds

    def _record(self, kind: str, tag: Any, record: dict[str, Any], global_step: Any, walltime: Any) -> None:
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a string, got {type(tag).__name__}")
        t = _now() if walltime is None else float(walltime)
        record["step"] = tc.step_of(global_step)
        record["wall"] = t
        self._put({"t": t, "op": "update", "env": self.env, "win": tag, "kind": kind, "mode": "append",
                   "name": None, "opts": {"title": tag}, "records": [record]})

    def add_histogram(self, tag: str, values: Any, global_step: Any = None, bins: Any = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        """Histogram of `values` (TensorBoard's exponential buckets, or any np.histogram `bins`)."""
        self._record("histogram", tag, tc.make_histogram(values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: float, sum: float,  # noqa: A002
                          sum_squares: float, bucket_limits: Any, bucket_counts: Any, global_step: Any = None,
                          walltime: float | None = None) -> None:
        """A histogram from its numbers: `bucket_limits` are right edges, one per count."""
        limits = tc.make_np(bucket_limits, "bucket_limits").astype(np.float64).reshape(-1)
        counts = tc.make_np(bucket_counts, "bucket_counts").astype(np.float64).reshape(-1)
        if len(limits) != len(counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        rec = {"min": float(min), "max": float(max), "num": float(num), "sum": float(sum),
               "sum_squares": float(sum_squares), "limits": limits.tolist(), "counts": counts.tolist()}
        self._record("histogram", tag, rec, global_step, walltime)

    def _image(self, tag: str, data: str, mime: str, global_step: Any, walltime: Any) -> None:
        self._record("media", tag, {"type": "image", "data": data, "mime": mime}, global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: float | None = None,
                  dataformats: str = "CHW") -> None:
        """One image (CHW, HWC, HW or any permutation); floats in [0, 1] are ×255, integers kept."""
        self._image(tag, tc.encode_png(tc.image_hwc(img_tensor, dataformats)), "image/png", global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: float | None = None,
                   dataformats: str = "NCHW") -> None:
        """A batch of images tiled into one grid image, 8 per row (torch's layout)."""
        self._image(tag, tc.encode_png(tc.image_hwc(img_tensor, dataformats)), "image/png", global_step, walltime)

    def add_image_with_boxes(self, tag: str, img_tensor: Any, box_tensor: Any, global_step: Any = None,
                             walltime: float | None = None, rescale: float = 1, dataformats: str = "CHW",
                             labels: Any = None, **kwargs: Any) -> None:
        """An image with red [x1, y1, x2, y2] boxes and optional labels (dropped unless one per box); tensorboardX's
        box-drawing keywords are accepted and unused."""
        boxes = tc.make_np(box_tensor, "box_tensor")
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(f"box_tensor must be N×4 (x1, y1, x2, y2), got shape {boxes.shape}")
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else list(labels)
            if len(labels) != boxes.shape[0]:
                labels = None
        png = tc.encode_png(tc.image_hwc(img_tensor, dataformats), rescale, boxes, labels)
        # The boxes are burnt in as TensorBoard draws them, and kept as data too: one toggle per label in the UI.
        record = {"type": "image", "data": png, "mime": "image/png", "boxes": tc.box_layer(boxes, labels, rescale)}
        self._record("media", tag, record, global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: Any = None, close: bool = True,
                   walltime: float | None = None) -> None:
        """A matplotlib figure rendered with Agg (a list of figures becomes one grid); closed unless close=False."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, tc.figure_to_image(figure, close), global_step, walltime, dataformats=fmt)

    def add_video(self, tag: str, vid_tensor: Any, global_step: Any = None, fps: float = 4,
                  walltime: float | None = None, dataformats: str = "NTCHW") -> None:
        """(N, T, C, H, W) frames as one animated GIF (the batch tiled in a grid); uint8 or floats in [0, 1].
        tensorboardX's `dataformats` names another order of those five letters."""
        vid = tc.make_np(vid_tensor, "vid_tensor")
        order = str(dataformats).upper()
        if order != "NTCHW":
            if sorted(order) != sorted("NTCHW") or vid.ndim != 5:
                raise ValueError(f"dataformats must order the letters NTCHW for a 5-D video, got {dataformats!r}")
            vid = vid.transpose([order.index(c) for c in "NTCHW"])
        gif = tc.encode_gif(tc.video_frames(vid), fps)
        self._image(tag, gif, "image/gif", global_step, walltime)

    def add_audio(self, tag: str, snd_tensor: Any, global_step: Any = None, sample_rate: int = 44100,
                  walltime: float | None = None) -> None:
        """Mono audio in [-1, 1] as a 16-bit PCM WAV clip."""
        rec = {"type": "audio", "data": tc.encode_wav(snd_tensor, sample_rate), "mime": "audio/wav",
               "sample_rate": int(sample_rate)}
        self._record("media", tag, rec, global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: Any = None, walltime: float | None = None) -> None:
        """Markdown text; the pane is `tag` (torch's tag + "/text_summary" is an event-file detail)."""
        if not isinstance(text_string, str):
            raise TypeError(f"text_string must be a string, got {type(text_string).__name__}")
        self._record("media", tag, {"type": "text", "text": text_string, "format": "markdown"}, global_step,
                     walltime)

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any, global_step: Any = None,
                     num_thresholds: int = 127, weights: Any = None, walltime: float | None = None) -> None:
        """Precision-recall curve of binary `labels` against `predictions` in [0, 1] (at most 127 thresholds)."""
        lab, pred = tc.make_np(labels, "labels"), tc.make_np(predictions, "predictions")
        if lab.shape != pred.shape:
            raise ValueError(f"labels {lab.shape} and predictions {pred.shape} must have one shape")
        num_thresholds = min(int(num_thresholds), 127)
        if num_thresholds < 2:
            raise ValueError(f"num_thresholds must be >= 2, got {num_thresholds}")
        data = ts.compute_curve(lab, pred, num_thresholds, weights)
        self._record("pr_curve", tag, ts.pr_record(data), global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any, false_positive_counts: Any,
                         true_negative_counts: Any, false_negative_counts: Any, precision: Any, recall: Any,
                         global_step: Any = None, num_thresholds: int = 127, weights: Any = None,
                         walltime: float | None = None) -> None:
        """A PR curve from its six arrays (one value per threshold each); num_thresholds/weights as torch: unused."""
        arrays = [tc.make_np(a, what).astype(np.float64).reshape(-1) for a, what in (
            (true_positive_counts, "true_positive_counts"), (false_positive_counts, "false_positive_counts"),
            (true_negative_counts, "true_negative_counts"), (false_negative_counts, "false_negative_counts"),
            (precision, "precision"), (recall, "recall"))]
        if len({len(a) for a in arrays}) != 1 or not len(arrays[0]):
            raise ValueError(f"the six PR arrays need one equal, non-zero length; got {[len(a) for a in arrays]}")
        self._record("pr_curve", tag, ts.pr_record(np.stack(arrays)), global_step, walltime)

    # ----------------------------------------------------------------------------------- whole panes

    def add_mesh(self, tag: str, vertices: Any, colors: Any = None, faces: Any = None,
                 config_dict: Any = None, global_step: Any = None, walltime: float | None = None) -> None:
        """A 3-D mesh (B×N×3 vertices, B×F×3 faces) or point cloud as a Plotly figure pane `tag`.

        config_dict (Three.js camera/lights/material) has no Plotly equivalent and is kept in the pane's opts.
        """
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a string, got {type(tag).__name__}")
        fig = ts.mesh_figure(vertices, colors, faces)
        opts: dict[str, Any] = {"title": tag, "step": tc.step_of(global_step)}
        if config_dict is not None:
            opts["mesh_config"] = config_dict
        self._put({"t": _now() if walltime is None else float(walltime), "op": "set", "env": self.env, "win": tag,
                   "kind": "figure", "opts": opts, "figure": fig})

    def add_embedding(self, mat: Any, metadata: Any = None, label_img: Any = None, global_step: Any = None,
                      tag: str = "default", metadata_header: Any = None) -> None:
        """Projector data: N×D `mat`, optional labels (one column, or rows with `metadata_header`) and an
        N×C×H×W `label_img` sprite. Pane `projector/<tag>/<step:05d>`; each (tag, step) is kept."""
        m = tc.make_np(mat, "mat")
        if m.ndim != 2:
            raise ValueError(f"mat should be 2D, where mat.size(0) is the number of data points; got {m.shape}")
        if m.dtype.kind not in "biuf":
            raise TypeError(f"mat must be numeric, got dtype {m.dtype}")
        n = m.shape[0]
        step = tc.step_of(global_step)
        meta = None if metadata is None else ts.metadata_table(metadata, metadata_header, n)
        sprite = None
        if label_img is not None:
            if tc.make_np(label_img, "label_img").shape[0] != n:
                raise ValueError("#images should equal with #data points")
            data, dim = ts.make_sprite(label_img)
            sprite = {"data": data, "single_image_dim": dim}
        raw = np.ascontiguousarray(m, dtype="<f4").tobytes()
        win = f"projector/{tag}/{step:05d}"  # titled as the importer titles it: by this win
        self._put({"t": _now(), "op": "set", "env": self.env, "win": win, "kind": "projector", "opts": {"title": win},
                   "projector": {"step": step, "matrix": {"shape": [n, int(m.shape[1])], "dtype": "float32",
                                                          "data": base64.b64encode(raw).decode("ascii")},
                                 "metadata": meta, "sprite": sprite}})

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The model's traced graph (torch.jit.trace of `model(input_to_model)`) as pane `graph`."""
        from .graph_trace import trace_model_graph  # lazy: imports torch

        graph = trace_model_graph(model, input_to_model, verbose=verbose, use_strict_trace=use_strict_trace)
        self._put({"t": _now(), "op": "set", "env": self.env, "win": "graph", "kind": "model_graph",
                   "opts": {"title": "graph"}, "graph": graph})

    # ------------------------------------------------------------------------------------ env-level

    def add_hparams(self, hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
                    hparam_domain_discrete: dict[str, list[Any]] | None = None, run_name: str | None = None,
                    global_step: Any = None, name: str | None = None) -> None:
        """One hparams session (`run_name`, or tensorboardX's `name`; default ".") of this env, and each metric as
        a point of line pane <metric> (trace = session) at global_step."""
        run_name = run_name or name
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        domains = hparam_domain_discrete or {}
        if not isinstance(domains, dict):
            raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
        for k, v in domains.items():
            if k not in hparam_dict or not isinstance(v, list) \
                    or not all(isinstance(d, type(hparam_dict[k])) for d in v):
                raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                                f"hparam_dict[{k}].")
        hparams = {str(k): ts.hparam_value(k, v) for k, v in hparam_dict.items() if v is not None}
        metrics = {str(k): tc.scalar_value(v, f"metric_dict[{k!r}]") for k, v in metric_dict.items()}
        session = run_name or "."
        t = _now()
        self._put({"t": t, "op": "hparams", "env": self.env, "win": None, "session": session, "hparams": hparams,
                   "metrics": metrics, "domains": {str(k): list(v) for k, v in domains.items()} or None})
        step = tc.step_of(global_step)
        for k, v in metrics.items():
            self._put({"t": t, "op": "update", "env": self.env, "win": k, "kind": "line", "mode": "append",
                       "name": session, "opts": {"title": k}, "traces": [{"name": session, "x": [step], "y": [v]}]})

    def add_custom_scalars(self, layout: dict[str, dict[str, list[Any]]]) -> None:
        """Custom-scalars layout {category: {chart: ["Multiline", [tag regexes]] | ["Margin", [v, lo, hi]]}}."""
        if not isinstance(layout, dict):
            raise TypeError(f"layout must be a dict, got {type(layout).__name__}")
        out: dict[str, dict[str, list[Any]]] = {}
        for cat, charts in layout.items():
            if not isinstance(charts, dict):
                raise TypeError(f"layout[{cat!r}] must be a dict of charts")
            out[str(cat)] = {}
            for title, spec in charts.items():
                if not isinstance(spec, (list, tuple)) or len(spec) != 2 or not isinstance(spec[1], (list, tuple)):
                    raise ValueError(f"layout[{cat!r}][{title!r}] must be [\"Multiline\"|\"Margin\", [tags]]")
                # Like torch, anything but "Margin" is a multiline chart.
                kind = "Margin" if spec[0] == "Margin" else "Multiline"
                if kind == "Margin" and len(spec[1]) != 3:
                    raise ValueError(f"layout[{cat!r}][{title!r}]: a Margin chart needs 3 tags (value, lower, upper)")
                out[str(cat)][str(title)] = [kind, [str(t) for t in spec[1]]]
        self._put({"t": _now(), "op": "custom_scalars", "env": self.env, "win": None, "layout": out})

    def add_custom_scalars_multilinechart(self, tags: list[str], category: str = "default",
                                          title: str = "untitled") -> None:
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags: list[str], category: str = "default",
                                       title: str = "untitled") -> None:
        if len(tags) != 3:
            raise ValueError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})
