"""Visdom-style plotting client: each call builds one wire event, enqueues it and returns the window id at once."""

from __future__ import annotations

import os
import time
import traceback
import weakref
from collections.abc import Callable, Mapping
from time import time as _now
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from . import console as console_capture
from .artifacts import ArtifactMethods
from .convert import as_float_array, encode_image, fast_floats, float_list, image_display, make_grid, to_numpy
from .never_raise import guard_methods, rejected_call
from .overlays import overlay_fields
from .point_clouds import PointCloudMethods
from .protocol import new_win_id, visdom_text
from .run_lifecycle import RunMethods
from .transport import Transport
from .transport.points import Prefixes
from .visdom_media import VisdomMediaMethods
from .visdom_methods import VisdomMethods
from .visdom_opts import STYLE_KEYS, STYLE_ONLY, check_opts, trace_name, trace_styles, wire_opts

# Visdom's update= values → WIRE.md update modes (None = op "set"); replace/new/insert are one thing on the wire.
_UPDATE_MODES: dict[str | None, str | None] = {
    None: None, "append": "append", "replace": "replace", "new": "replace", "insert": "replace",
    "remove": "remove",
}
# Visdom constructor arguments accepted for drop-in compatibility and ignored (HTTP/auth/socket details).
_VISDOM_IGNORED = frozenset((
    "endpoint", "ipv6", "http_proxy_host", "http_proxy_port", "send", "raise_exceptions",
    "use_incoming_socket", "log_to_filename", "username", "password", "proxies", "use_polling",
))


def ingest_url(server: str = "http://localhost", port: int | None = 8097, base_url: str = "") -> str:
    """ws(s)://host:port{base}/ingest; PANEBOARD_URL (http://host:port/base) overrides all three arguments."""
    env_url = os.environ.get("PANEBOARD_URL")
    if env_url:
        server, port, base_url = env_url, None, ""
    if "://" not in server:
        server = "http://" + server
    parts = urlsplit(server)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme.lower())
    if scheme is None or not parts.hostname:
        raise ValueError(f"paneboard: cannot use server URL {server!r} (want http(s)://host)")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    port = parts.port or port  # an explicit port inside the URL wins
    base = "/".join(p for p in (parts.path.strip("/"), base_url.strip("/")) if p)
    return f"{scheme}://{host}{f':{port}' if port else ''}{'/' + base if base else ''}/ingest"


def _drop_reporter(client: Client) -> Callable[[int], None]:
    """Drops (memory and spool full) become a row in the env's alerts pane: the run's page shows data is missing."""
    ref = weakref.ref(client)

    def report(n: int) -> None:
        c = ref()
        if c is not None:
            from .hooks import alerts  # late: importing the hooks pulls in torch-facing modules

            alerts.get(c).alert("dropped", None, f"{n} event(s) dropped: the memory buffer (max_queue="
                                f"{c.transport.max_queue}) and the spool were full or the spool is off")

    return report



def _json_items(items: list | tuple) -> list:
    """A text() list as JSON can carry it (what the visdom client would send); other values as their text."""
    return [_json_items(v) if isinstance(v, (list, tuple)) else
            v if v is None or isinstance(v, (str, int, float, bool)) else visdom_text(v) for v in items]

class Client(VisdomMethods, VisdomMediaMethods, PointCloudMethods, RunMethods, ArtifactMethods):
    """Non-blocking paneboard client with Visdom's plotting API (line, scatter, text, image, images, close...).

    Connection problems never raise: events are buffered (up to `max_queue`, dropping the oldest) and sent by a
    background thread. Bad input to a plotting or run call never raises either: the call is rejected with a
    warning (the first; later ones are logged at debug level) and counted in `rejected`, and flush() returns
    False; strict=True makes such calls raise ValueError/TypeError in the caller instead (tests, debugging). The env is a run: `config` and `tags`
    are its config and tags, and unless capture=False the run records this job's provenance and ends as
    finished on close_connection() or at exit (failed, with the traceback, if an exception ends the program).
    offline=True never connects: every event goes to the spool, for `paneboard sync` later (as Visdom's
    offline logs to a file). resume=True reattaches to the env's ended run (running again, same start); fork_from="a", fork_step=100
    starts this env as a run sharing a's history up to step 100 (the run records where it came from).
    In a script its stdout and stderr are the run's console (console=False leaves them alone).
    """

    def __init__(self, server: str = "http://localhost", port: int = 8097, base_url: str = "", env: str = "main",
                 *, max_queue: int = 100_000, exit_timeout: float = 10.0, spool_dir: Any = None,
                 token: str | None = None, config: Mapping[str, Any] | None = None,
                 tags: list[str] | tuple[str, ...] | None = None, capture: bool = True, console: bool = True,
                 resume: bool = False, fork_from: str | None = None, fork_step: float | None = None,
                 offline: bool = False, strict: bool = False, **visdom_kwargs: Any) -> None:
        self.strict = bool(strict)  # bad input raises instead of being rejected (never_raise.py)
        unknown = set(visdom_kwargs) - _VISDOM_IGNORED
        if unknown:
            raise TypeError(f"Client() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
        if not isinstance(env, str):
            raise TypeError(f"env must be a string, got {type(env).__name__}")
        self.env = env
        self.server, self.port, self.base_url = server, port, base_url
        self.url = ingest_url(server, port, base_url)
        # spool_dir: where events go while the server is away (default ~/.paneboard/spool; False: off)
        self.transport = Transport(self.url, max_queue=max_queue, exit_timeout=exit_timeout, spool_dir=spool_dir,
                                   token=token or os.environ.get("PANEBOARD_TOKEN") or None, offline=bool(offline))
        self.transport.on_drop = _drop_reporter(self)
        self._point_prefixes = Prefixes()
        self._append_index: dict[tuple[str, str, str | None], int] = {}  # line appends without X, per trace
        self._start_run(config, tags, capture, resume, fork_from, fork_step)
        self._start_artifacts()
        # In a script, stdout and stderr become the run's console (not in a notebook; console=False: never).
        self._console = console_capture.start(self.transport, env) if console else None

    @property
    def rejected(self) -> int:
        """Events that can never be stored (refused by the server, or not encodable here); see flush()."""
        return self.transport.rejected

    def __repr__(self) -> str:
        return f"<paneboard.Client env={self.env!r} url={self.url!r} connected={self.transport.connected}>"

    @property
    def client_id(self) -> str:
        return self.transport.client_id

    # ------------------------------------------------------------------------------------------ plots

    def line(self, Y: Any, X: Any = None, win: str | None = None, env: str | None = None,
             opts: Mapping[str, Any] | None = None, update: str | None = None, name: str | None = None) -> str:
        """Line plot: Y of shape N (one trace) or N×M (M traces); X of shape N or N×M, default 0..N-1.

        update: None (create/overwrite), "append" (without X: the trace's next indices), "replace" ("new"/"insert"), "remove" (name).
        """
        try:
            if update == "append" and win is not None and X is not None and (opts is None or type(opts) is dict) \
                    and (name is None or type(name) is str):
                # Hot path (plain Python numbers appended to a known pane: one trace, or one point for each of M
                # traces as Y=[[v1, ..., vM]], X=[x]): no numpy, no helpers. The events equal the general path's.
                ys = fast_floats(Y)
                row = fast_floats(Y[0]) if ys is None and type(Y) is list and len(Y) == 1 and name is None else None
                xs = fast_floats(X) if ys is not None or row is not None else None
                if xs is not None and len(xs) == (len(ys) if row is None else 1) \
                        and (opts is None or STYLE_KEYS.isdisjoint(opts)):
                    legend = opts.get("legend") if opts else None
                    style = {"mode": "lines+markers" if opts and opts.get("markers") else "lines"}
                    if row is None:
                        tname = name if name is not None else str(legend[0]) if legend else "1"
                        pre = self._point_prefixes.get(self.env if env is None else env, win, name, tname, opts, style) \
                            if ys is not None and len(ys) == 1 else None
                        if pre is not None and ys is not None:  # one point: queued as such (points.py)
                            self.transport.put_point(pre, xs[0], ys[0], _now())
                            return win
                        traces = [{"name": tname, "x": xs, "y": ys, "style": style}]
                    else:
                        traces = [{"name": str(legend[k]) if legend and k < len(legend) else str(k + 1), "x": xs,
                                   "y": [v], "style": style} for k, v in enumerate(row)]
                    self.transport.put({
                        "t": _now(), "op": "update", "env": self.env if env is None else env, "win": win,
                        "kind": "line", "mode": "append", "name": name, "opts": opts or {}, "traces": traces})
                    return win
            mode, win = self._xy_prelude(win, opts, update, name)
            if mode == "remove":
                return self._emit_xy("line", win, env, opts, mode, name, [])
            if mode == "append" and X is None:
                X = self._next_indices(Y, self.env if env is None else env, win, name)
            return self._emit_xy("line", win, env, opts, mode, name, self._line_traces(Y, X, opts, mode, name))
        except Exception as exc:  # never raised into the loop (strict clients do): never_raise.py
            return rejected_call(self, "line", exc, win)

    def _next_indices(self, Y: Any, env: str, win: str, name: str | None) -> np.ndarray:
        """X for an append without one: the trace's next indices, as Visdom's client counts them (this client's
        appends to the pane without X, from 0), so a loop of line(Y=[v], win=w, update="append") draws a line."""
        ya = as_float_array(Y, "Y")
        n = 1 if ya.ndim == 0 else ya.shape[0]
        key = (env, win, name)
        start = self._append_index.get(key, 0)
        self._append_index[key] = start + n
        x = np.arange(start, start + n, dtype=np.float64)
        return x if ya.ndim < 2 else np.repeat(x[:, None], ya.shape[1], axis=1)

    def scatter(self, X: Any, Y: Any = None, win: str | None = None, env: str | None = None,
                opts: Mapping[str, Any] | None = None, update: str | None = None, name: str | None = None) -> str:
        """2-D scatter: X is N×2; Y (optional) holds labels 1..K splitting the points into K traces.

        N×3 (3-D) input is rejected with ValueError for now.
        """
        mode, win = self._xy_prelude(win, opts, update, name)
        if mode == "remove":
            return self._emit_xy("scatter", win, env, opts, mode, name, [])
        xa = as_float_array(X, "X")
        if xa.ndim == 1 and xa.shape[0] == 2:
            xa = xa.reshape(1, 2)  # a single point
        if xa.ndim != 2 or xa.shape[1] not in (2, 3):
            raise ValueError(f"scatter: X must be N×2, got shape {xa.shape}")
        if xa.shape[1] == 3:
            raise ValueError("scatter: 3-D scatter (X of shape N×3) is not supported yet")
        n = xa.shape[0]
        if Y is None:
            labels = np.ones(n, dtype=np.int64)
        else:
            la = as_float_array(Y, "Y").reshape(-1)
            if la.shape[0] != n:
                raise ValueError(f"scatter: Y must hold one label per point ({n}), got {la.shape[0]}")
            if n and (not np.all(np.isfinite(la)) or np.any(la != np.rint(la)) or la.min() < 1):
                raise ValueError("scatter: Y labels must be integers >= 1")
            labels = la.astype(np.int64)
        k_max = int(labels.max()) if n else 1
        styles = trace_styles(opts, k_max, "markers")
        traces = []
        for k in range(1, k_max + 1):
            sel = labels == k
            traces.append({"name": trace_name(opts, name, k - 1, k_max, k), "x": float_list(xa[sel, 0]),
                           "y": float_list(xa[sel, 1]), "style": styles[k - 1]})
        return self._emit_xy("scatter", win, env, opts, mode, name, traces)

    def text(self, text: str | list | tuple, win: str | None = None, env: str | None = None,
             opts: Mapping[str, Any] | None = None, append: bool = False) -> str:
        """HTML text pane; append=True adds to the existing content (joined with <br> by the server). A list or
        tuple shows as Visdom shows it: its items joined by ","."""
        if not isinstance(text, (str, list, tuple)):
            raise TypeError(f"text must be a string, list or tuple, got {type(text).__name__}")
        check_opts(opts)
        if win is None:
            if append:
                raise ValueError("text(append=True) needs win")
            win = new_win_id()
        ev: dict[str, Any] = {"t": _now(), "op": "update" if append else "set",
                              "env": self.env if env is None else env, "win": win, "kind": "text"}
        if append:
            ev["mode"], ev["name"] = "append", None
        ev["opts"] = wire_opts(opts)
        ev["content"] = visdom_text(text)
        if not isinstance(text, str) and not append:
            ev["visdom_content"] = _json_items(text)  # /win_data answers the list, as Visdom does
        self.transport.put(ev)
        return win

    def image(self, img: Any, win: str | None = None, env: str | None = None,
              opts: Mapping[str, Any] | None = None, step: Any = None, boxes: Any = None,
              masks: Any = None, classes: Any = None) -> str:
        """Image pane from C×H×W / H×W (Visdom), H×W×C (last dim 1/3/4), numpy/torch, or a PIL image.

        Floats in [0, 1] are scaled by 255, floats in [0, 255] kept, other float ranges (an ImageNet-normalised
        tensor) min–max normalised per image, the original range kept as opts.value_range (shown on hover);
        PNG, or JPEG when opts['jpgquality'] is set. With `step`, the pane keeps one image per step with a step
        slider (as SummaryWriter.add_image), the caption per step from opts['caption']. `boxes` and `masks` take
        W&B's layer dicts ({'predictions': {'box_data': [...], 'class_labels': {...}}}, {'truth': {'mask_data':
        H×W ids}}) and are drawn over the picture as data with a toggle per class (a stepped pane: step 0 unless
        `step` is given).
        """
        check_opts(opts)
        if img is None:
            raise TypeError("image: img is None")
        overlays = overlay_fields(boxes, masks, classes)
        if overlays and step is None:
            step = 0  # overlays are data of a stepped media record
        hwc, value_range = image_display(img)
        wire = encode_image(hwc, (opts or {}).get("jpgquality"))
        win = new_win_id() if win is None else win
        env = self.env if env is None else env
        wopts = dict(wire_opts(opts))
        t = _now()
        if step is not None:
            rec: dict[str, Any] = {"type": "image", "data": wire["data"], "mime": wire["mime"],
                                   "step": int(step), "wall": t}
            if wopts.get("caption") is not None:
                rec["caption"] = str(wopts["caption"])
            if value_range is not None:
                rec["value_range"] = value_range
            rec.update(overlays)
            self.transport.put({"t": t, "op": "update", "env": env, "win": win, "kind": "media", "mode": "append",
                                "name": None, "opts": {"title": wopts.get("title") or win}, "records": [rec]})
            return win
        if value_range is not None:
            wopts["value_range"] = value_range
        self.transport.put({"t": t, "op": "set", "env": env, "win": win, "kind": "image", "opts": wopts,
                            "image": wire})
        return win

    def images(self, tensor: Any, nrow: int = 8, padding: int = 2, win: str | None = None,
               env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """One grid image from B×C×H×W (array/tensor) or a list of C×H×W images, nrow per row (Visdom)."""
        if not isinstance(tensor, (list, tuple)):
            a = to_numpy(tensor, "tensor")
            if a.ndim in (2, 3):
                return self.image(a, win=win, env=env, opts=opts)  # a single image, as make_grid does
            tensor = a
        return self.image(make_grid(tensor, nrow=nrow, padding=padding), win=win, env=env, opts=opts)

    # ------------------------------------------------------------------------------------ management

    def close(self, win: str | None = None, env: str | None = None) -> str | None:
        """Delete pane `win`, or every pane of the env when win is None."""
        if win is not None and not isinstance(win, str):
            raise TypeError(f"close: win must be a string or None, got {type(win).__name__}")
        self.transport.put({"t": _now(), "op": "close", "env": self.env if env is None else env, "win": win})
        return win

    def delete_env(self, env: str) -> str:
        """Delete the env and everything in it."""
        if not isinstance(env, str):
            raise TypeError(f"env must be a string, got {type(env).__name__}")
        self.transport.put({"t": _now(), "op": "delete_env", "env": env, "win": None})
        return env

    def monitor_system(self, interval: float = 1.0, **kw: Any) -> Any:
        """Start a paneboard.SystemMonitor (CPU, memory, I/O; GPUs via NVML) logging into this client; returns it."""
        from .hooks.system import SystemMonitor  # lazy: psutil is loaded only when asked for

        return SystemMonitor(self, interval=interval, **kw)

    def flush(self, timeout: float | None = None) -> bool:
        """True once every event enqueued before this call is stored, artifacts logged before it included (as
        W&B's finish() waits for them); False on timeout, or if any was rejected or failed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        left = lambda: None if deadline is None else max(0.0, deadline - time.monotonic())  # noqa: E731
        self._await_start(timeout)  # the run's start counts as enqueued by the constructor
        artifacts = self._settle_artifacts(left())  # their events are enqueued once their files are uploaded
        return self.transport.flush(left()) and artifacts

    def check_connection(self, timeout_seconds: float = 0) -> bool:
        """True if the background websocket is connected (waits up to timeout_seconds for it)."""
        deadline = time.monotonic() + timeout_seconds
        while not self.transport.connected and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.transport.connected

    def close_connection(self, timeout: float | None = None) -> bool:
        """End the run (finished), flush (up to `timeout`; by default while the server makes progress, until
        exit_timeout s pass without any, 120 s at most) and stop the background thread;
        True if all delivered. Artifact uploads still going on after the timeout resume with the env's next Client."""
        self._close_artifacts(timeout)
        console_capture.stop(self._console)
        self._console = None
        self._end_run()
        return self.transport.close(timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None:  # the block raised: the run failed (ending it twice is a no-op)
            self._end_run("".join(traceback.format_exception(kind, value, tb)))
        self.close_connection()

    # -------------------------------------------------------------------------------------- helpers

    def _xy_prelude(self, win: str | None, opts: Any, update: str | None, name: Any) -> tuple[str | None, str]:
        try:
            mode = _UPDATE_MODES[update]
        except (KeyError, TypeError):
            raise ValueError(f"update must be one of None, 'append', 'replace', 'new', 'insert', 'remove'; "
                             f"got {update!r}") from None
        check_opts(opts)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        if mode == "remove" and name is None:
            raise ValueError("update='remove' needs name= (the trace to delete)")
        if win is None:
            if mode is not None:
                raise ValueError(f"update={update!r} needs win (the pane to update)")
            win = new_win_id()
        return mode, win

    def _emit_xy(self, kind: str, win: str, env: str | None, opts: Mapping[str, Any] | None, mode: str | None,
                 name: str | None, traces: list[dict[str, Any]]) -> str:
        ev: dict[str, Any] = {"t": _now(), "op": "set" if mode is None else "update",
                              "env": self.env if env is None else env, "win": win, "kind": kind}
        if mode is not None:
            ev["mode"], ev["name"] = mode, name
        ev["opts"] = wire_opts(opts, STYLE_ONLY)
        ev["traces"] = traces
        self.transport.put(ev)
        return win

    @staticmethod
    def _line_traces(Y: Any, X: Any, opts: Mapping[str, Any] | None, mode: str | None,
                     name: str | None) -> list[dict[str, Any]]:
        ya = as_float_array(Y, "Y")
        if ya.ndim == 0:
            ya = ya.reshape(1)
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
        if ya.ndim not in (1, 2):
            raise ValueError(f"line: Y must be N or N×M, got shape {ya.shape}")
        n = ya.shape[0]
        if X is None:
            if mode == "append":
                raise ValueError("line(update='append') needs X (the x position of the new points)")
            xa = np.arange(n, dtype=np.float64)
        else:
            xa = as_float_array(X, "X")
            if xa.ndim == 0:
                xa = xa.reshape(1)
            if xa.ndim == 2 and xa.shape[1] == 1:
                xa = xa[:, 0]
        if ya.ndim == 1:
            if xa.shape != ya.shape:
                raise ValueError(f"line: X shape {xa.shape} does not match Y shape {ya.shape}")
            cols = [(xa, ya)]
        else:
            if xa.shape == (n,):
                cols = [(xa, ya[:, k]) for k in range(ya.shape[1])]
            elif xa.shape == ya.shape:
                cols = [(xa[:, k], ya[:, k]) for k in range(ya.shape[1])]
            else:
                raise ValueError(f"line: X must have shape ({n},) or {ya.shape}, got {xa.shape}")
        m = len(cols)
        line_mode = "lines+markers" if opts and opts.get("markers") else "lines"
        styles = trace_styles(opts, m, line_mode)
        return [{"name": trace_name(opts, name, k, m), "x": float_list(x), "y": float_list(y),
                 "style": styles[k]} for k, (x, y) in enumerate(cols)]


guard_methods(Client)  # a training loop's calls reject bad input instead of raising
