"""Stepped panes (histogram, media, pr_curve), scalar wall times and custom-scalar layouts against a real server."""

from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request
import wave

import numpy as np
import pytest
from PIL import Image

BASIS = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)


def post(server, events: list[dict]) -> dict:
    req = urllib.request.Request(f"{server.url}/api/v1/events", data=json.dumps({"events": events}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def status_of(server, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"{server.url}{path}", timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def png(value: int, size: int = 4) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), (value, 255 - value, 7)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def wav(frames: int = 800, rate: int = 8000) -> str:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.zeros(frames, dtype=np.int16).tobytes())
    return base64.b64encode(buf.getvalue()).decode()


def hist_record(step: int, values: np.ndarray) -> dict:
    counts, edges = np.histogram(values, bins=30)
    return {"step": step, "min": float(values.min()), "max": float(values.max()), "num": len(values),
            "sum": float(values.sum()), "sum_squares": float(values @ values), "limits": edges[1:].tolist(),
            "counts": counts.tolist()}


def event(kind: str, win: str, records: list[dict], env: str = "tb", op: str = "update") -> dict:
    ev = {"op": op, "env": env, "win": win, "kind": kind, "opts": {"title": win}, "records": records}
    if op == "update":
        ev["mode"] = "append"
    return ev


def test_histogram_keeps_every_step_and_serves_a_budget(server):
    rng = np.random.default_rng(0)
    samples = {s: rng.normal(loc=s / 10, scale=1 + s / 100, size=5000) for s in range(120)}
    for s0 in range(0, 120, 40):  # three events, the writer may merge them
        assert post(server, [event("histogram", "w", [hist_record(s, samples[s]) for s in range(s0, s0 + 40)])])["ok"]
    data = server.get_json("/api/v1/envs/tb/panes/w?steps=10&points=30")["data"]
    assert data["count"] == 120 and data["steps"] == list(range(120))
    shown = [h["step"] for h in data["histograms"]]
    assert len(shown) == 10 and shown[0] == 0 and shown[-1] == 119
    last = data["histograms"][-1]
    counts, edges = np.histogram(samples[119], bins=30)
    assert sum(b[2] for b in last["buckets"]) == 5000 == last["num"]
    assert last["buckets"][0][0] == pytest.approx(samples[119].min())
    assert [b[1] for b in last["buckets"]][:-1] == pytest.approx(edges[1:-1].tolist())
    dist = data["distribution"]
    assert len(dist) == 30 and dist[-1]["step"] == 119
    q = dist[-1]["q"]
    assert q[0] == pytest.approx(samples[119].min()) and q[-1] == pytest.approx(samples[119].max())
    # Interpolated inside 30 buckets: the quantiles land within a bucket width of numpy's exact ones.
    exact = np.quantile(samples[119], [b / 10000 for b in BASIS])
    width = edges[1] - edges[0]
    assert np.all(np.abs(np.asarray(q) - exact) <= width)
    assert q == sorted(q)
    recs = server.get_json("/api/v1/envs/tb/panes/w/steps?i0=-2")["records"]
    assert [r["step"] for r in recs] == [118, 119] and recs[1]["buckets"] == last["buckets"]
    assert status_of(server, "/api/v1/envs/tb/panes/w/steps?i0=0&i1=101")[0] == 400  # one request, 100 at most


def test_media_image_audio_text_records_and_the_steps_api(server):
    assert post(server, [event("media", "img", [{"step": s, "type": "image", "data": png(s * 8),
                                                  "caption": f"s{s}"} for s in range(30)])])["ok"]
    pane = server.get_json("/api/v1/envs/tb/panes/img")
    assert pane["kind"] == "media" and pane["data"]["type"] == "image" and pane["data"]["count"] == 30
    assert pane["data"]["latest"]["step"] == 29 and pane["data"]["latest"]["caption"] == "s29"
    first = server.get_json("/api/v1/envs/tb/panes/img/steps?i0=0&i1=1")["records"][0]
    blob = urllib.request.urlopen(f"{server.url}/{first['src']}", timeout=10).read()
    assert Image.open(io.BytesIO(blob)).getpixel((0, 0)) == (0, 255, 7)
    by_step = server.get_json("/api/v1/envs/tb/panes/img/steps?step=17")["records"][0]
    assert by_step["index"] == 17 and by_step["caption"] == "s17"
    assert status_of(server, "/api/v1/envs/tb/panes/img/steps?step=99")[0] == 404
    assert len(server.get_json("/api/v1/envs/tb/panes/img/steps?i0=0&i1=500")["records"]) == 30  # clamped
    assert status_of(server, "/api/v1/envs/tb/panes/img/steps?i0=x")[0] == 400

    assert post(server, [event("media", "snd", [{"step": 3, "type": "audio", "data": wav(), "mime": "audio/wav"}])])["ok"]
    snd = server.get_json("/api/v1/envs/tb/panes/snd")["data"]["latest"]
    assert snd["sample_rate"] == 8000 and snd["frames"] == 800 and snd["mime"] == "audio/wav"

    md = "# Title\n\n**bold** <script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    assert post(server, [event("media", "notes", [{"step": 1, "type": "text", "text": md}])])["ok"]
    html = server.get_json("/api/v1/envs/tb/panes/notes")["data"]["latest"]["html"]
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html and "<table>" in html
    assert "<script" not in html

    mixed = post(server, [event("media", "img", [{"step": 30, "type": "text", "text": "x"}])])
    assert not mixed["ok"] and "holds image records" in mixed["errors"][0]["error"]
    assert server.get_json("/api/v1/envs/tb/panes/img")["data"]["count"] == 30


def test_pr_curve_records(server):
    t = 11
    rec = {"step": 5, "tp": list(range(t, 0, -1)), "fp": [t - i for i in range(t)], "tn": list(range(t)),
           "fn": list(range(t)), "precision": [0.5] * t, "recall": np.linspace(1, 0, t).tolist()}
    assert post(server, [event("pr_curve", "pr", [rec])])["ok"]
    latest = server.get_json("/api/v1/envs/tb/panes/pr")["data"]["latest"]
    assert latest["step"] == 5 and latest["tp"] == rec["tp"] and latest["recall"] == pytest.approx(rec["recall"])
    assert latest["thresholds"] == pytest.approx(np.linspace(0, 1, t).tolist())
    bad = post(server, [event("pr_curve", "pr", [{**rec, "fp": [1, 2]}])])
    assert not bad["ok"] and "expected 11" in bad["errors"][0]["error"]


@pytest.mark.parametrize("bad, message", [
    ({"records": []}, "records must be a list"),
    ({"records": [{"step": "x", "limits": [1], "counts": [1]}]}, "step must be a finite number"),
    ({"records": [{"step": 1, "limits": [2, 1], "counts": [1, 1]}]}, "limits must be increasing"),
    ({"records": [{"step": 1, "limits": [1, 2], "counts": [1]}]}, "same length"),
    ({"records": [{"step": 1, "limits": [1], "counts": [-1]}]}, "non-negative"),
])
def test_bad_histogram_events_are_refused_and_nothing_is_touched(server, bad, message):
    assert post(server, [event("histogram", "h", [hist_record(0, np.arange(10.0))])])["ok"]
    got = post(server, [{**event("histogram", "h", []), **bad}])
    assert not got["ok"] and message in got["errors"][0]["error"]
    assert server.get_json("/api/v1/envs/tb/panes/h")["data"]["count"] == 1


def test_set_replaces_records_and_fork_copies_them(server):
    assert post(server, [event("histogram", "h", [hist_record(s, np.arange(10.0) + s) for s in range(5)])])["ok"]
    assert post(server, [event("histogram", "h", [hist_record(9, np.arange(10.0))], op="set")])["ok"]
    assert server.get_json("/api/v1/envs/tb/panes/h")["data"]["steps"] == [9]
    req = urllib.request.Request(f"{server.url}/api/v1/envs/tb/fork", data=json.dumps({"to": "tb2"}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    urllib.request.urlopen(req, timeout=30).read()
    assert post(server, [event("histogram", "h", [hist_record(10, np.arange(10.0))])])["ok"]
    assert server.get_json("/api/v1/envs/tb2/panes/h")["data"]["steps"] == [9]
    assert server.get_json("/api/v1/envs/tb/panes/h")["data"]["steps"] == [9, 10]
    assert post(server, [{"op": "close", "env": "tb", "win": "h"}])["ok"]
    assert server.get_json("/api/v1/envs/tb2/panes/h")["data"]["count"] == 1


def test_scalar_reads_carry_the_wall_time_of_each_point(server):
    walls = 1_700_000_000.0 + np.arange(5000) * 0.25
    events = [{"op": "update", "env": "w", "win": "loss", "kind": "line", "mode": "append", "name": "loss",
               "t": float(walls[i]), "traces": [{"name": "loss", "x": [i], "y": [float(np.sin(i / 50))]}]}
              for i in range(5000)]
    for i in range(0, 5000, 1000):
        assert post(server, events[i:i + 1000])["ok"]
    (trace,) = server.get_json("/api/v1/envs/w/panes/loss?points=200&walls=1")["data"]["traces"]
    assert trace["downsampled"] and len(trace["wall"]) == len(trace["x"])
    assert trace["wall"] == pytest.approx([walls[int(x)] for x in trace["x"]])
    assert "wall" not in server.get_json("/api/v1/envs/w/panes/loss?points=200")["data"]["traces"][0]
    compared = server.get_json("/api/v1/compare?envs=w&walls=1&points=50")["panes"][0]["traces"][0]
    assert compared["wall"] == pytest.approx([walls[int(x)] for x in compared["x"]])


def test_custom_scalars_layout_lands_in_the_env_meta(server):
    layout = {"Losses": {"both": ["Multiline", ["loss/train", "loss/val"]],
                         "band": ["Margin", ["m/mid", "m/lo", "m/hi"]]}}
    assert post(server, [{"op": "custom_scalars", "env": "cs", "layout": layout}])["ok"]
    assert server.get_json("/api/v1/envs/cs/meta")["meta"]["custom_scalars"] == layout
    bad = post(server, [{"op": "custom_scalars", "env": "cs", "layout": {"x": {"c": ["Margin", ["a"]]}}}])
    assert not bad["ok"] and "Margin" in bad["errors"][0]["error"]
