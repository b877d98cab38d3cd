"""paneboard.Visdom's plotlyplot, matplot, audio, video, embeddings and replay_log against a real server."""

from __future__ import annotations

import json
import time
import urllib.request

import matplotlib
import numpy as np
import plotly.graph_objects as go
import pytest

import paneboard

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture
def viz(server):
    v = paneboard.Visdom(server="http://127.0.0.1", port=server.port, env="media")
    yield v
    v.close_connection(timeout=5)


def pane(server, win: str) -> dict:
    return server.get_json(f"/api/v1/envs/media/panes/{win}")


def test_plotly_and_matplotlib_figures(server, viz):
    viz.plotlyplot(go.Figure(data=[go.Bar(x=["a", "b"], y=[3, 4])], layout={"title": {"text": "bars"}}), win="pl")
    fig = plt.figure()
    plt.plot([0, 1, 2], [2, 1, 3])
    viz.matplot(plt, win="mpl")
    plt.close(fig)
    assert viz.flush(timeout=15)
    p = pane(server, "pl")
    assert p["kind"] == "figure" and p["data"]["data"][0]["type"] == "bar" and p["data"]["data"][0]["y"] == [3, 4]
    assert "<svg" in pane(server, "mpl")["data"]["html"]


def test_audio_and_video_become_players(server, viz, tmp_path):
    viz.audio(tensor=np.sin(np.linspace(0, 2 * np.pi * 440, 4000)), win="snd", opts={"sample_frequency": 8000})
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(64))
    viz.video(videofile=str(clip), win="vid")
    viz.video(tensor=np.zeros((2, 4, 4, 3)))  # no encoder for a tensor here: rejected (counted), not raised
    assert viz.rejected == 1
    assert viz.flush(timeout=15) is False  # flush() reports the rejection; everything else is stored
    assert '<audio controls="" src="data:audio/wav;base64,' in pane(server, "snd")["data"]["html"].replace(
        "<audio controls src", '<audio controls="" src')
    assert "data:video/mp4;base64," in pane(server, "vid")["data"]["html"]


def test_embeddings_answer_hover_and_lasso_from_the_browser(server, viz):
    rng = np.random.default_rng(0)
    features = rng.random((30, 5))
    labels = [i % 3 for i in range(30)]
    win = viz.embeddings(features, labels, data_getter=lambda i: f"<b>item {i}</b>", data_type="html", win="emb")
    assert viz.flush(timeout=15) and win == "emb"
    data = pane(server, "emb")["data"]
    assert len(data["points"]) == 30 and {p["label"] for p in data["points"]} == {"0", "1", "2"}
    assert viz._events.connected.wait(10)

    def browser_event(fields: dict) -> None:  # exactly what the embeddings pane posts
        body = json.dumps({**fields, "target": "emb", "eid": "media"}).encode()
        urllib.request.urlopen(urllib.request.Request(server.url + "/vis_event", data=body, method="POST"),
                               timeout=10).close()

    def wait(pred) -> dict:
        for _ in range(100):
            d = pane(server, "emb")["data"]
            if pred(d):
                return d
            time.sleep(0.05)
        raise AssertionError(d)

    browser_event({"event_type": "EntitySelected", "entityId": "Entity 7", "idx": 7})
    d = wait(lambda d: d["selected"] is not None)
    assert d["selected"]["html"] == "<b>item 7</b>"
    browser_event({"event_type": "RegionSelected", "selectedIdxs": [3, 4, 5, 6]})
    d = wait(lambda d: d["has_previous"])
    assert sorted(p["idx"] for p in d["points"]) == [3, 4, 5, 6]


def test_replay_log_resends_a_visdom_log(server, viz, tmp_path):
    log = tmp_path / "visdom.log"
    log.write_text(json.dumps(["events", {"data": [{"content": "from the log", "type": "text"}], "win": "logged",
                                          "eid": "media", "opts": {}}]) + "\n")
    viz.replay_log(str(log))
    assert pane(server, "logged")["data"]["html"] == "from the log"
