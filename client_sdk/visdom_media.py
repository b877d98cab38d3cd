"""The rest of Visdom's client API: plotly/matplotlib figures, audio, video, embeddings and replay_log."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Mapping
from time import time as _now
from typing import Any

import numpy as np

from .convert import to_numpy
from .protocol import new_win_id


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _wav(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM WAV of mono (N) or N x channels float samples in [-1, 1] (stdlib only)."""
    a = np.asarray(samples, dtype=np.float64)
    a = a.reshape(len(a), -1) if a.ndim > 1 else a.reshape(-1, 1)
    pcm = (np.clip(a, -1.0, 1.0) * 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(pcm.shape[1])
        w.setsampwidth(2)
        w.setframerate(int(rate))
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def _projection_2d(features: np.ndarray) -> np.ndarray:
    """PCA to 2-D: Visdom uses t-SNE (bhtsne, rarely installable); PCA is exact, fast and dependency-free."""
    X = np.asarray(features, dtype=np.float64)
    X = X - X.mean(axis=0)
    if X.shape[1] == 1:
        return np.hstack([X, np.zeros_like(X)])
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    return X @ vt[:2].T


class VisdomMediaMethods:
    """Mixed into Client; figures go to `figure` panes, media and SVG to sanitized `text` panes."""

    env: str
    transport: Any

    def plotlyplot(self, figure: Any, win: str | None = None, env: str | None = None) -> str:
        """A plotly.graph_objects Figure (or its dict) as a figure pane."""
        fig = figure.to_plotly_json() if hasattr(figure, "to_plotly_json") else dict(figure)
        data = json.loads(json.dumps(fig.get("data", []), default=_jsonable))
        layout = json.loads(json.dumps(fig.get("layout", {}), default=_jsonable))
        return self._figure(list(data), dict(layout), win, env, None)  # type: ignore[attr-defined]

    def matplot(self, plot: Any, opts: Mapping[str, Any] | None = None, env: str | None = None,
                win: str | None = None) -> str:
        """A matplotlib figure (or pyplot) as SVG in a text pane, as Visdom does."""
        buf = io.StringIO()
        fig = plot.gcf() if hasattr(plot, "gcf") else plot
        fig.savefig(buf, format="svg")
        return self.svg(svgstr=buf.getvalue(), win=win, env=env, opts=opts)  # type: ignore[attr-defined]

    def audio(self, tensor: Any = None, audiofile: str | None = None, win: str | None = None,
              env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """Samples (N or N x channels, floats in [-1, 1]) at opts.sample_frequency, or a wav/mp3/ogg file."""
        opts = dict(opts or {})
        if audiofile is not None:
            ext = audiofile.rsplit(".", 1)[-1].lower()
            with open(audiofile, "rb") as f:
                uri = _data_uri(f.read(), {"mp3": "audio/mpeg", "ogg": "audio/ogg"}.get(ext, "audio/wav"))
        elif tensor is not None:
            uri = _data_uri(_wav(to_numpy(tensor), int(opts.get("sample_frequency", 44100))), "audio/wav")
        else:
            raise ValueError("audio: give tensor or audiofile")
        return self.text(f'<audio controls src="{uri}"></audio>', win=win, env=env,  # type: ignore[attr-defined]
                         opts=opts)

    def video(self, tensor: Any = None, videofile: str | None = None, win: str | None = None,
              env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """A video file (mp4/webm/ogv) in a player; tensors need an encoder, which is not bundled."""
        if videofile is None:
            raise ValueError("video: encoding a tensor needs PyAV or OpenCV; write the frames to a file "
                             "and pass videofile=")
        ext = videofile.rsplit(".", 1)[-1].lower()
        mime = {"webm": "video/webm", "ogv": "video/ogg", "ogg": "video/ogg"}.get(ext, "video/mp4")
        with open(videofile, "rb") as f:
            uri = _data_uri(f.read(), mime)
        return self.text(f'<video controls src="{uri}"></video>', win=win, env=env,  # type: ignore[attr-defined]
                         opts=opts)

    def embeddings(self, features: Any, labels: Any, data_getter: Any = None, data_type: str | None = None,
                   win: str | None = None, env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """Labelled 2-D embedding (PCA) with Visdom's hover preview (data_getter) and lasso re-projection."""

        feats = np.asarray(to_numpy(features), dtype=np.float64)
        labels = [str(v) for v in np.asarray(to_numpy(labels)).reshape(-1).tolist()]
        if feats.ndim != 2 or len(feats) != len(labels):
            raise ValueError("embeddings: features must be N x D with one label per row")
        win = new_win_id() if win is None else win
        env = self.env if env is None else env
        label_set = sorted(set(labels))

        def points(idxs: list[int]) -> list[dict]:
            xy = _projection_2d(feats[idxs]) if len(idxs) > 1 else np.zeros((len(idxs), 2))
            return [{"group": label_set.index(labels[i]), "name": f"Entity {i}", "label": labels[i],
                     "position": [float(a), float(b)], "idx": i} for i, (a, b) in zip(idxs, xy, strict=True)]

        def send(mode: str | None, content: dict) -> None:
            ev = {"t": _now(), "op": "set" if mode is None else "update", "env": env, "win": win,
                  "kind": "embeddings", "opts": dict(opts or {}), "embeddings": content}
            if mode is not None:
                ev["mode"] = mode
            self.transport.put(ev)

        send(None, {"data": points(list(range(len(labels))))})

        def on_event(event: dict) -> None:
            if event.get("event_type") == "EntitySelected" and data_getter is not None and data_type == "html":
                idx = int(event.get("idx", -1))
                if 0 <= idx < len(labels):
                    send("EntitySelected", {"selected": {"html": str(data_getter(idx)),
                                                         "entityId": event.get("entityId")}})
            elif event.get("event_type") == "RegionSelected":
                idxs = [int(i) for i in event.get("selectedIdxs") or [] if 0 <= int(i) < len(labels)]
                if idxs:
                    send("RegionSelected", {"points": points(idxs)})

        self.register_event_handler(on_event, win)  # type: ignore[attr-defined]
        return win

    def replay_log(self, log_filename: str) -> None:
        """Re-send a Visdom log (log_to_filename: one JSON [endpoint, msg] per line) to this server."""
        with open(log_filename, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    endpoint, msg = json.loads(line)
                    self._send(msg, endpoint=endpoint, from_log=True)  # type: ignore[attr-defined]


def _jsonable(obj: Any) -> Any:
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)
