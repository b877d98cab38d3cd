"""Stepped panes in real Chromium against one real dash-server for the module: histogram (OFFSET / OVERLAY /
DISTRIBUTION), media (image, audio, text) and pr_curve panes with their step slider over every stored step."""

from __future__ import annotations

import base64
import io
import wave
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image

from helpers.browser import Tab, env_url, http

T0 = 1_750_000_000.0  # 2025-06-15 (UTC): wall time of step 0
PLOT = "document.querySelector('[data-win=\"{win}\"] .js-plotly-plot')"
BAR = "[data-win=\"{win}\"] .step-bar"


def png(rgb: tuple[int, int, int], size: int = 8) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), rgb).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def wav(freq: float, seconds: float = 0.5, rate: int = 8000) -> str:
    t = np.arange(int(rate * seconds)) / rate
    pcm = (np.sin(2 * np.pi * freq * t) * 12000).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return base64.b64encode(buf.getvalue()).decode()


def hist_record(step: int, values: np.ndarray) -> dict:
    counts, edges = np.histogram(values, bins=40)
    return {"step": step, "wall": T0 + step, "min": float(values.min()), "max": float(values.max()),
            "num": int(values.size), "sum": float(values.sum()), "sum_squares": float((values**2).sum()),
            "limits": edges[1:].tolist(), "counts": counts.astype(float).tolist()}


def pr_record(step: int) -> dict:
    th = np.linspace(0, 1, 11)
    recall = (1 - th) ** (1 + step / 10)
    precision = 0.5 + 0.5 * th * (1 - step / 100)
    return {"step": step, "wall": T0 + step, "tp": (recall * 100).tolist(), "fp": ((1 - precision) * 100).tolist(),
            "tn": (th * 50).tolist(), "fn": ((1 - recall) * 100).tolist(), "precision": precision.tolist(),
            "recall": recall.tolist()}


def stepped(win: str, kind: str, records: list[dict], env: str = "tb") -> dict:
    return {"op": "update", "mode": "append", "env": env, "win": win, "kind": kind, "opts": {"title": win},
            "records": records}


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("tb") / "paneboard.db").start()
    rng = np.random.default_rng(3)
    hists = [hist_record(s, rng.normal(s / 5, 1 + s / 20, 2000)) for s in range(0, 100, 10)]
    colours = [(8 * i, 255 - 8 * i, (40 * i) % 256) for i in range(30)]
    events = [
        stepped("weights", "histogram", hists),
        stepped("images", "media", [{"step": 10 * i, "wall": T0 + i, "type": "image", "mime": "image/png",
                                     "data": png(c), "caption": f"sample {i}"} for i, c in enumerate(colours)]),
        stepped("sound", "media", [{"step": s, "wall": T0 + s, "type": "audio", "mime": "audio/wav",
                                    "data": wav(220 * (s + 1))} for s in range(3)]),
        stepped("notes", "media", [{"step": s, "wall": T0 + s, "type": "text", "format": "markdown",
                                    "text": f"**bold {s}** <script>window.__xss=1</script>"} for s in range(4)]),
        stepped("pr", "pr_curve", [pr_record(s) for s in (0, 5, 9)]),
    ]
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def steps_api(server, win: str, i: int, env: str = "tb") -> dict:
    q = f"i0={i}" if i == -1 else f"i0={i}&i1={i + 1}"  # slice semantics: [-1, 0) is empty, [-1:] the last
    return server.get_json(f"/api/v1/envs/{env}/panes/{win}/steps?{q}")["records"][0]


def plot_data(t: Tab, win: str) -> list[dict]:
    return t.js(f"""() => {PLOT.format(win=win)}.data.map(s => ({{meta: s.meta, name: s.name, color: s.line.color,
      x: Array.from(s.x), y: Array.from(s.y), customdata: s.customdata ? Array.from(s.customdata) : null}}))""")


def wait_mode(t: Tab, win: str, mode: str) -> None:
    t.wait(f"m => {{ const d = {PLOT.format(win=win)}; return !!(d && d.data && d.data.length && "
           "d.data.every(s => s.meta.mode === m)); }", mode)


def rebin(buckets: list, lo: float, hi: float, n: int = 30) -> np.ndarray:
    """TensorBoard's re-binning: each bucket's count spread over the equal bins it overlaps, by overlap length."""
    edges = np.linspace(lo, hi, n + 1)
    out = np.zeros(n)
    for left, right, c in buckets:
        overlap = np.clip(np.minimum(edges[1:], right) - np.maximum(edges[:-1], left), 0, None)
        out += c * overlap / (right - left)
    return out


def test_histogram_offset_overlay_and_distribution(server, tab):
    pane = server.get_json("/api/v1/envs/tb/panes/weights")["data"]
    hists, dist = pane["histograms"], pane["distribution"]
    assert len(hists) == len(dist) == 10
    tab.open(env_url(server, "tb"))
    tab.page.locator('[data-win="weights"]').scroll_into_view_if_needed()
    wait_mode(tab, "weights", "offset")  # TensorBoard's default
    lo = min(b[0] for h in hists for b in h["buckets"])
    hi = max(b[1] for h in hists for b in h["buckets"])

    offset = plot_data(tab, "weights")
    assert [s["meta"]["step"] for s in offset] == list(range(0, 100, 10))  # one ridgeline per step, oldest first
    for s, h in zip(offset, hists, strict=True):
        counts = np.array(s["customdata"][1:-1])
        assert len(counts) == 30 and s["x"][0] == lo and s["x"][-1] == hi  # 30 equal bins over the union range
        assert counts == pytest.approx(rebin(h["buckets"], lo, hi), abs=1e-6)
        assert counts.sum() == pytest.approx(h["num"])
        assert s["y"][0] == s["y"][-1] == h["step"]  # the ridge's baseline sits at its step on the depth axis
        assert max(s["y"]) == h["step"] and min(s["y"]) < h["step"]  # rising towards the older steps (reversed axis)
    y_range = f"() => {PLOT.format(win='weights')}._fullLayout.yaxis.range"
    assert tab.js(y_range)[0] > tab.js(y_range)[1]  # reversed: the newest step in front, at the bottom

    tab.page.locator('[data-win="weights"] .hist-mode[data-mode="overlay"]').click()
    wait_mode(tab, "weights", "overlay")
    overlay = plot_data(tab, "weights")
    assert len(overlay) == 10
    for s, o in zip(overlay, offset, strict=True):
        assert s["y"] == pytest.approx(o["customdata"][1:-1])  # the same counts, on one baseline
    assert len({s["color"] for s in overlay}) == 10  # coloured by recency
    assert tab.js(y_range)[0] < tab.js(y_range)[1]

    tab.page.locator('[data-win="weights"] .hist-mode[data-mode="distribution"]').click()
    wait_mode(tab, "weights", "distribution")
    bands = plot_data(tab, "weights")
    assert [(s["meta"]["band"], s["meta"]["edge"]) for s in bands] == [
        (0, "low"), (0, "high"), (1, "low"), (1, "high"), (2, "low"), (2, "high"), (3, "low"), (3, "high"), (4, "median")]
    steps = [d["step"] for d in dist]
    for j in range(4):  # nested bands: min/max, ±1.5σ, ±1σ, ±0.5σ from the 9 basis points
        assert bands[2 * j]["x"] == steps
        assert bands[2 * j]["y"] == pytest.approx([d["q"][j] for d in dist])
        assert bands[2 * j + 1]["y"] == pytest.approx([d["q"][8 - j] for d in dist])
    assert bands[8]["y"] == pytest.approx([d["q"][4] for d in dist])
    assert tab.page.locator('[data-win="weights"] .hist-mode[aria-pressed="true"]').inner_text() == "Distribution"
    tab.page.locator('[data-win="weights"] .hist-mode[data-mode="offset"]').click()
    wait_mode(tab, "weights", "offset")
    assert tab.errors == []


def shown(t: Tab, win: str) -> tuple[int, str]:
    bar = t.page.locator(BAR.format(win=win))
    return int(bar.get_attribute("data-step")), bar.locator(".step-label").inner_text()


def wait_step(t: Tab, win: str, step: int) -> None:
    t.page.locator(f'[data-win="{win}"]').scroll_into_view_if_needed()  # panes out of view are not fetched
    t.wait("([b, s]) => document.querySelector(b)?.dataset.step === s", [BAR.format(win=win), str(step)])


def test_image_slider_reaches_first_and_last_step_and_follows_new_records(server, tab):
    tab.open(env_url(server, "tb"))
    img = tab.page.locator('[data-win="images"] img')
    slider = tab.page.locator(f'{BAR.format(win="images")} input.step-slider')
    last, first = steps_api(server, "images", -1), steps_api(server, "images", 0)
    assert last["step"] == 290 and first["step"] == 0 and last["src"] != first["src"]
    # Newest by default, its step and wall time shown.
    wait_step(tab, "images", 290)
    assert img.get_attribute("src") == "/" + last["src"]
    assert shown(tab, "images") == (290, "step 290")
    assert tab.page.locator(f'{BAR.format(win="images")} .step-wall').inner_text().startswith("2025-06-1")
    assert slider.get_attribute("max") == "29"  # every stored step, not a sample of 10
    tab.wait("() => document.querySelector('[data-win=\"images\"] img').naturalWidth === 8")

    slider.fill("0")
    wait_step(tab, "images", 0)
    assert img.get_attribute("src") == "/" + first["src"] and shown(tab, "images") == (0, "step 0")
    assert tab.page.locator('[data-win="images"] figcaption').inner_text() == "sample 0"
    slider.fill("17")
    wait_step(tab, "images", 170)
    assert img.get_attribute("src") == "/" + steps_api(server, "images", 17)["src"]

    # A new record while the user holds an older step: the slider grows, the shown step stays.
    new = {"step": 300, "wall": T0 + 300, "type": "image", "mime": "image/png", "data": png((1, 2, 3))}
    http(server, "POST", "/api/v1/events", {"events": [stepped("images", "media", [new])]})
    tab.wait(f"() => document.querySelector('{BAR.format(win='images')} input').max === '30'")
    assert shown(tab, "images")[0] == 170
    slider.fill("29")
    wait_step(tab, "images", 290)
    assert img.get_attribute("src") == "/" + last["src"] and shown(tab, "images") == (290, "step 290")
    slider.fill("30")  # back at the newest: new records are followed again
    wait_step(tab, "images", 300)
    http(server, "POST", "/api/v1/events", {"events": [stepped("images", "media", [{**new, "step": 310}])]})
    wait_step(tab, "images", 310)
    assert img.get_attribute("src") == "/" + steps_api(server, "images", -1)["src"]
    assert tab.errors == []


def test_audio_and_text_panes_with_step_slider(server, tab):
    tab.open(env_url(server, "tb"))
    audio = tab.page.locator('[data-win="sound"] audio')
    wait_step(tab, "sound", 2)
    assert audio.get_attribute("controls") is not None
    assert audio.get_attribute("src") == "/" + steps_api(server, "sound", 2)["src"]
    tab.wait("() => document.querySelector('[data-win=\"sound\"] audio').readyState >= 1")
    assert tab.js("() => document.querySelector('[data-win=\"sound\"] audio').duration") == pytest.approx(0.5, abs=0.01)
    tab.page.locator(f'{BAR.format(win="sound")} input').fill("0")
    wait_step(tab, "sound", 0)
    assert audio.get_attribute("src") == "/" + steps_api(server, "sound", 0)["src"]

    text = tab.page.locator('[data-win="notes"] .media-text')
    wait_step(tab, "notes", 3)
    assert text.locator("strong").inner_text() == "bold 3"  # markdown rendered (and sanitized) by the server
    assert text.locator("script").count() == 0 and tab.js("() => window.__xss") is None
    tab.page.locator(f'{BAR.format(win="notes")} input').fill("1")
    wait_step(tab, "notes", 1)
    assert text.locator("strong").inner_text() == "bold 1" and shown(tab, "notes") == (1, "step 1")
    assert tab.errors == []


def test_pr_curve_pane_with_step_slider(server, tab):
    tab.open(env_url(server, "tb"))
    wait_step(tab, "pr", 9)
    tab.wait(f"() => !!{PLOT.format(win='pr')}?.data")
    curve = plot_data(tab, "pr")[0]
    expect = pr_record(9)
    assert curve["x"] == pytest.approx(expect["recall"]) and curve["y"] == pytest.approx(expect["precision"])
    assert tab.js(f"() => {PLOT.format(win='pr')}.layout.xaxis.title.text") == "recall"
    tab.page.locator(f'{BAR.format(win="pr")} input').fill("0")
    wait_step(tab, "pr", 0)
    tab.wait(f"() => {PLOT.format(win='pr')}.data[0].meta.step === 0")
    curve = plot_data(tab, "pr")[0]
    assert curve["x"] == pytest.approx(pr_record(0)["recall"]) and curve["y"] == pytest.approx(pr_record(0)["precision"])
    assert shown(tab, "pr") == (0, "step 0")
    assert tab.errors == []


def test_summary_writer_run_renders_every_stepped_kind_and_its_scalars(server, tab):
    """The real paneboard.SummaryWriter (torch's API) feeding the same panes and the Scalars view."""
    import paneboard

    w = paneboard.SummaryWriter("tbw", server="http://127.0.0.1", port=server.port)
    rng = np.random.default_rng(0)
    for step in range(5):
        w.add_scalar("loss/train", 1.0 / (step + 1), step, walltime=T0 + 60 * step)
        w.add_histogram("hist/w", rng.normal(step, 1, 500), step)
        w.add_image("img/x", np.full((3, 4, 4), step / 5.0), step)
        w.add_audio("snd/a", np.sin(np.arange(800) / 10.0) * 0.5, step, sample_rate=8000)
        w.add_text("txt/t", f"*step {step}*", step)
        w.add_pr_curve("pr/c", rng.integers(0, 2, 100), rng.random(100), step)
    assert w.close(timeout=10)
    tab.open(env_url(server, "tbw"))
    views = {"img/x": "img", "snd/a": "audio", "txt/t": ".media-text em", "pr/c": ".js-plotly-plot"}
    for win, sel in views.items():
        wait_step(tab, win, 4)  # the newest of the 5 steps
        tab.wait("s => !!document.querySelector(s)", f'[data-win="{win}"] {sel}')
    assert tab.page.locator('[data-win="txt/t"] .media-text em').inner_text() == "step 4"
    tab.page.locator('[data-win="hist/w"]').scroll_into_view_if_needed()
    wait_mode(tab, "hist/w", "offset")
    assert len(plot_data(tab, "hist/w")) == 5

    tab.open(f"{server.url}/scalars?envs=tbw")
    card = "document.querySelector('[data-tag=\"loss/train\"] .js-plotly-plot')"
    tab.wait(f"() => !!({card} && {card}.data && {card}.data.length === 2)")
    tab.page.locator("select.x-axis").select_option("relative")
    tab.wait(f"() => {card}.layout.xaxis.title.text === 'relative (min)'")
    assert tab.js(f"() => Array.from({card}.data[0].x)") == [0, 1, 2, 3, 4]
    assert tab.errors == []
