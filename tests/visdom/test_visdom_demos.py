"""Visdom's own demo suite (example/components/*.py at v0.2.4, reference visdom.md §6) as a compatibility test.

The pip package does not ship the demos, so each test repeats one demo's client calls (same arguments, numpy
seeded with 42 like `demo.py -testing`) with the REAL visdom client against dash-server, one env per demo as
`-run NAME -env compat_NAME` does, then checks what /win_data returns against what Visdom 0.2.4 stores for
that demo (trace names, point counts, shapes, window types), not merely that the calls returned.
"""

from __future__ import annotations

import json
import math
import time
import urllib.request

import numpy as np
import pytest
import visdom  # required: a missing client fails the run


@pytest.fixture(scope="module")
def srv(tmp_path_factory, server_types):
    s = server_types.InProcessServer(db=tmp_path_factory.mktemp("demos") / "paneboard.db").start()
    yield s
    s.stop()


@pytest.fixture
def viz(srv, request):
    np.random.seed(42)
    env = "compat_" + request.node.name.removeprefix("test_")
    v = visdom.Visdom(server="http://127.0.0.1", port=srv.port, env=env, raise_exceptions=True)
    v.demo_env = env
    yield v
    v.use_socket = False
    if getattr(v, "socket", None) is not None:
        v.socket.close()
    assert " 500 " not in srv.log(), "the server answered 500 during the demo"


def env_windows(viz) -> dict[str, dict]:
    out = json.loads(viz.get_window_data(env=viz.demo_env))
    return {k: json.loads(w) if isinstance(w, str) else w for k, w in out.items()}


def only_window(viz) -> dict:
    wins = env_windows(viz)
    assert len(wins) == 1, list(wins)
    return next(iter(wins.values()))


def traces(w: dict) -> list[dict]:
    assert w["type"] == "plot"
    return w["content"]["data"]


# ---------------------------------------------------------------- text / image / misc

def test_text_basic(viz):
    viz.text("Hello World!", opts={"title": None})
    w = only_window(viz)
    assert (w["type"], w["content"]) == ("text", "Hello World!")


def test_text_update(viz):
    win = viz.text("Hello World! More text should be here")
    assert viz.text("And here it is", win=win, append=True) == win
    assert only_window(viz)["content"] == "Hello World! More text should be here<br>And here it is"


def test_text_close(viz):
    win = viz.text("Close me!")
    viz.close(win)
    assert not viz.win_exists(win)
    assert env_windows(viz) == {}


def test_image_basic_jpeg_grid_svg(viz):
    viz.image(np.random.rand(3, 512, 256), opts=dict(title="Random!", caption="How random."), win="basic")
    viz.image(np.random.randn(3, 512, 256), opts=dict(title="Random image as jpg!", caption="jpg", jpgquality=50),
              win="jpeg")
    viz.images(np.random.randn(20, 3, 64, 64), opts=dict(title="Random images", caption="How random."), win="grid")
    svg = ('<svg height="300" width="300"><ellipse cx="80" cy="80" rx="50" ry="30" '
           'style="fill:red;stroke:purple;stroke-width:2" />Sorry, no inline SVG.</svg>')
    viz.svg(svgstr=svg, opts=dict(title="Example of SVG Rendering"), win="svg")
    w = env_windows(viz)
    assert w["basic"]["type"] == "image" and w["basic"]["content"]["src"].startswith("data:image/png;base64,")
    assert w["basic"]["content"]["caption"] == "How random." and w["basic"]["title"] == "Random!"
    assert w["jpeg"]["content"]["src"].startswith("data:image/jpeg;base64,")
    assert w["grid"]["type"] == "image" and len(w["grid"]["content"]["src"]) > 10_000
    assert w["svg"]["type"] == "text" and "<ellipse" in w["svg"]["content"]


def test_image_history(viz):
    win = viz.image(np.random.rand(3, 64, 64), opts=dict(store_history=True, caption="first"))
    viz.image(np.random.rand(3, 64, 64), opts=dict(store_history=True, caption="second"), win=win)
    w = only_window(viz)
    assert w["type"] == "image_history" and len(w["content"]) == 2 and w["selected"] == 1
    assert [c["caption"] for c in w["content"]] == ["first", "second"]


def test_misc_getset_state(viz):
    win = viz.text("test one")
    data = json.loads(viz.get_window_data(win))
    data["content"] = "test two"
    viz.set_window_data(json.dumps(data), win=win)
    assert only_window(viz)["content"] == "test two"


def test_misc_arbitrary_visdom(viz):
    trace = dict(x=[1, 2, 3], y=[4, 5, 6], mode="markers+lines", type="custom",
                 marker={"color": "red", "symbol": 104, "size": "10"}, text=["one", "two", "three"], name="1st Trace")
    layout = dict(title="First Plot", xaxis={"title": "x1"}, yaxis={"title": "x2"})
    assert viz._send({"data": [trace], "layout": layout, "win": "mywin", "eid": viz.demo_env}) == "mywin"
    (t,) = traces(only_window(viz))
    assert (t["type"], t["x"], t["y"], t["name"]) == ("custom", [1, 2, 3], [4, 5, 6], "1st Trace")


def test_misc_plot_latex_update(viz):
    win = viz.line(X=[1, 2, 3, 4], Y=[1, 4, 9, 16], name=r"$\alpha_{1c} = 352 \pm 11 \text{ km s}^{-1}$",
                   opts={"showlegend": True, "title": "Demo Latex in Visdom", "xlabel": r"$\sqrt{n}$"})
    viz.line(X=[1, 2, 3, 4], Y=[0.5, 2, 4.5, 8], win=win, update="append",
             name=r"$\beta_{1c} = 25 \pm 11 \text{ km s}^{-1}$")
    ts = traces(only_window(viz))
    assert [t["name"][:8] for t in ts] == [r"$\alpha_", r"$\beta_{"]
    assert ts[1]["y"] == [0.5, 2, 4.5, 8]


def test_misc_plot_matplot(viz):
    plt = pytest.importorskip("matplotlib.pyplot")  # demo.py prints "Skipped" without matplotlib, as here
    plt.plot([1, 23, 2, 4])
    viz.matplot(plt)
    assert "<svg" in only_window(viz)["content"]


def test_misc_audio_basic_and_video_file(viz, tmp_path):
    viz.audio(tensor=np.random.uniform(-1, 1, 44100), opts={"sample_frequency": 44100}, win="audio")
    # misc_video_tensor needs PyAV to encode; a video file takes the same path to the server (base64 <video>)
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    viz.video(videofile=str(path), win="video")
    w = env_windows(viz)
    assert w["audio"]["type"] == "text" and "data:audio/wav;base64," in w["audio"]["content"]
    assert "<video" in w["video"]["content"] and "data:video/mp4;base64," in w["video"]["content"]


# ---------------------------------------------------------------- lines

def test_plot_line_basic_and_multiple(viz):
    Y = np.linspace(-5, 5, 100)
    viz.line(Y=np.column_stack((Y * Y, np.sqrt(Y + 5))), X=np.column_stack((Y, Y)), opts=dict(markers=False),
             win="basic")
    Y = np.linspace(0, 4, 200)
    viz.line(Y=np.column_stack((np.sqrt(Y), np.sqrt(Y) + 2)), X=np.column_stack((Y, Y)),
             opts=dict(showlegend=True), win="multiple")
    w = env_windows(viz)
    assert [(t["name"], len(t["x"]), t["mode"]) for t in traces(w["basic"])] == [("1", 100, "lines"),
                                                                                 ("2", 100, "lines")]
    assert [len(t["y"]) for t in traces(w["multiple"])] == [200, 200]
    assert w["multiple"]["content"]["layout"]["showlegend"] is True


def test_plot_line_update_webgl(viz):
    x = np.linspace(-1, 0, 200000)
    viz.line(X=x, Y=x ** 3, opts=dict(title="200000 points using WebGL", webgl=True), win="WebGL demo")
    viz.line(X=x + 1.0, Y=(x + 1.0) ** 3, win="WebGL demo", update="append", opts=dict(webgl=True))
    (t,) = traces(only_window(viz))
    assert t["type"] == "scattergl" and len(t["x"]) == len(t["y"]) == 400000
    assert t["x"][0] == -1.0 and t["x"][-1] == 1.0


def test_plot_line_update(viz):
    opts = {"layoutopts": {"plotly": {"legend": {"x": 0, "y": 0}}}}
    win = viz.line(X=np.column_stack((np.arange(0, 10), np.arange(0, 10))),
                   Y=np.column_stack((np.linspace(5, 10, 10), np.linspace(5, 10, 10) + 5)), opts=opts)
    viz.line(X=np.column_stack((np.arange(10, 20), np.arange(10, 20))),
             Y=np.column_stack((np.linspace(5, 10, 10), np.linspace(5, 10, 10) + 5)), win=win, update="append")
    viz.line(X=np.arange(21, 30), Y=np.arange(1, 10), win=win, name="2", update="append")
    viz.line(X=np.arange(1, 10), Y=np.arange(11, 20), win=win, name="delete this", update="append")
    viz.line(X=np.arange(1, 10), Y=np.arange(11, 20), win=win, name="4", update="insert")
    viz.line(X=None, Y=None, win=win, name="delete this", update="remove")
    ts = traces(only_window(viz))
    assert [t["name"] for t in ts] == ["1", "2", "4"]  # what Visdom 0.2.4 ends with (§6)
    assert [len(t["x"]) for t in ts] == [20, 29, 9]
    assert ts[1]["x"][-9:] == list(range(21, 30))
    assert only_window(viz)["content"]["layout"]["legend"] == {"x": 0, "y": 0}


def test_plot_line_opts_update(viz):
    win = viz.line(X=np.column_stack((np.arange(0, 10),) * 3),
                   Y=np.column_stack((np.linspace(5, 10, 10), np.linspace(5, 10, 10) + 5,
                                      np.linspace(5, 10, 10) + 10)),
                   opts={"dash": np.array(["solid", "dash", "dashdot"]),
                         "linecolor": np.array([[0, 191, 255], [0, 191, 255], [255, 0, 0]]),
                         "title": "Different line dash types"})
    viz.line(X=np.arange(0, 10), Y=np.linspace(5, 10, 10) + 15, win=win, name="4", update="insert",
             opts={"linecolor": np.array([[255, 0, 0]]), "dash": np.array(["dot"])})
    ts = traces(only_window(viz))
    assert [(t["name"], t["line"]["dash"], t["line"]["color"]) for t in ts] == [
        ("1", "solid", "#00bfff"), ("2", "dash", "#00bfff"), ("3", "dashdot", "#ff0000"), ("4", "dot", "#ff0000")]


def test_plot_line_stackedarea_and_maxsize(viz):
    Y = np.linspace(0, 4, 200)
    win = viz.line(Y=np.column_stack((np.sqrt(Y), np.sqrt(Y) + 2)), X=np.column_stack((Y, Y)),
                   opts=dict(fillarea=True, showlegend=False, width=800, height=800, xlabel="Time", ylabel="Volume",
                             ytype="log", title="Stacked area plot", marginleft=30, marginright=30,
                             marginbottom=80, margintop=30))
    w = only_window(viz)
    assert [t.get("fill") for t in traces(w)] == ["tonexty", "tonexty"]
    assert w["content"]["layout"]["yaxis"]["type"] == "log" and w["content"]["layout"]["margin"]["b"] == 80
    viz.update_window_opts(win=win, opts=dict(width=300, height=300))
    w = only_window(viz)
    assert (w["width"], w["height"]) == (300, 300) and [len(t["x"]) for t in traces(w)] == [200, 200]


def test_plot_line_doubleyaxis(viz):
    viz.dual_axis_lines(np.arange(20), np.random.randint(0, 20, 20), np.random.randint(0, 20, 20))
    w = only_window(viz)
    ts = traces(w)
    assert len(ts) == 2 and ts[1]["yaxis"] == "y2" and [len(t["y"]) for t in ts] == [20, 20]
    assert w["content"]["layout"]["yaxis2"]["overlaying"] == "y"


def test_plot_line_pytorch(viz):
    torch = pytest.importorskip("torch")
    viz.line(Y=torch.Tensor([[0.0, 0.0], [1.0, 1.0]]))
    assert [t["y"] for t in traces(only_window(viz))] == [[0, 1], [0, 1]]


def test_plot_line_stem(viz):
    Y = np.linspace(0, 2 * math.pi, 70)
    viz.stem(X=np.column_stack((np.sin(Y), np.cos(Y))), Y=Y, opts=dict(legend=["Sine", "Cosine"]))
    ts = traces(only_window(viz))
    assert [t["name"] for t in ts] == ["Sine", "Cosine"]
    assert all(len(t["x"]) == 3 * 70 and t["x"][2] is None for t in ts)  # stems: (x, 0)-(x, y) then null


# ---------------------------------------------------------------- scatter

def _scatter_basic(viz):
    Y = np.random.rand(100)
    return viz.scatter(X=np.random.rand(100, 2), Y=(Y[Y > 0] + 1.5).astype(int),
                       opts=dict(legend=["Didnt", "Update"], xtickmin=-50, xtickmax=50, xtickstep=0.5,
                                 ytickmin=-50, ytickmax=50, ytickstep=0.5, markersymbol="cross-thin-open"))


def test_plot_scatter_basic(viz):
    _scatter_basic(viz)
    ts = traces(only_window(viz))
    assert [t["name"] for t in ts] == ["Didnt", "Update"] and sum(len(t["x"]) for t in ts) == 100
    assert ts[0]["marker"]["symbol"] == "cross-thin-open"


def test_plot_scatter_update_opts(viz):
    win = _scatter_basic(viz)
    viz.update_window_opts(win=win, opts=dict(legend=["Apples", "Pears"], xtickmin=0, xtickmax=1, xtickstep=0.5,
                                              ytickmin=0, ytickmax=1, ytickstep=0.5))
    w = only_window(viz)
    assert [t["name"] for t in traces(w)] == ["Apples", "Pears"]  # the legend renames the traces
    assert sum(len(t["x"]) for t in traces(w)) == 100
    assert w["content"]["layout"]["xaxis"]["range"] == [0, 1]


def test_plot_scatter_append(viz):
    win = viz.scatter(X=np.random.rand(255, 2), opts=dict(markersize=10,
                                                          markercolor=np.floor(np.random.random((255, 3)) * 255)))
    viz.scatter(X=np.random.rand(255, 2), win=win, name="1", update="append",
                opts=dict(markercolor=np.floor(np.random.random((255, 3)) * 255)))
    viz.scatter(X=np.random.rand(255, 2), win=win, update="append")  # positional pairing, no name
    (t,) = traces(only_window(viz))
    assert len(t["x"]) == len(t["y"]) == 3 * 255


def test_plot_scatter_3d(viz):
    Y = np.random.rand(100)
    viz.scatter(X=np.random.rand(100, 3), Y=(Y + 1.5).astype(int),
                opts=dict(legend=["Men", "Women"], markersize=5, xtickmin=0, xtickmax=2, xlabel="Arbitrary",
                          xtickvals=[0, 0.75, 1.6, 2], ytickmin=0, ytickmax=2, ytickstep=0.5, ztickmin=0,
                          ztickmax=1, ztickstep=0.5))
    w = only_window(viz)
    ts = traces(w)
    assert {t["type"] for t in ts} == {"scatter3d"} and sum(len(t["z"]) for t in ts) == 100
    assert "scene" in w["content"]["layout"]


def test_plot_scatter_custom_marker_and_colors(viz):
    Y = np.random.rand(100)
    viz.scatter(X=np.random.rand(100, 2), Y=(Y + 1.5).astype(int),
                opts=dict(markersize=10, markercolor=np.random.randint(0, 255, (2, 3)), markerborderwidth=0),
                win="colors")
    ts = traces(env_windows(viz)["colors"])
    assert len(ts) == 2 and sum(len(t["x"]) for t in ts) == 100
    # K x 3 colours become one "#rrggbb" per point of each label's trace
    assert all(len(t["marker"]["color"]) == len(t["x"]) and t["marker"]["color"][0].startswith("#") for t in ts)
    assert all(t["marker"]["line"]["width"] == 0 for t in ts)


def test_plot_scatter_add_trace(viz):
    win = viz.scatter(X=np.random.rand(255, 2), Y=(np.random.rand(255) + 1.5).astype(int),
                      opts=dict(markersize=10, markercolor=np.random.randint(0, 255, (2, 3))))
    assert viz.win_exists(win)
    viz.scatter(X=np.random.rand(255), Y=np.random.rand(255), win=win, name="new_trace", update="new")
    ts = traces(only_window(viz))
    assert [t["name"] for t in ts] == ["1", "2", "new_trace"] and len(ts[2]["x"]) == 255


def test_plot_scatter_text_labels(viz):
    viz.scatter(X=np.random.rand(6, 2), opts=dict(textlabels=[f"Label {i + 1}" for i in range(6)]), win="two")
    (t,) = traces(env_windows(viz)["two"])
    assert t["mode"] == "markers+text" and t["text"] == [f"Label {i + 1}" for i in range(6)]


# ---------------------------------------------------------------- bars, heatmaps, surfaces, specials

def test_plot_bars_histogram_pie(viz):
    viz.bar(X=np.random.rand(20), win="basic")
    viz.bar(X=np.abs(np.random.rand(5, 3)), win="stacked",
            opts=dict(stacked=True, legend=["Facebook", "Google", "Twitter"],
                      rownames=["2012", "2013", "2014", "2015", "2016"]))
    viz.bar(X=np.random.rand(20, 3), win="nonstacked",
            opts=dict(stacked=False, legend=["The Netherlands", "France", "United States"]))
    viz.histogram(X=np.random.rand(10000), opts=dict(numbins=20), win="hist")
    viz.pie(X=np.asarray([19, 26, 55]), opts=dict(legend=["Residential", "Non-Residential", "Utility"]), win="pie")
    w = env_windows(viz)
    assert [len(t["y"]) for t in traces(w["basic"])] == [20]
    st = traces(w["stacked"])
    assert [t["name"] for t in st] == ["Facebook", "Google", "Twitter"] and st[0]["x"][0] == "2012"
    assert w["stacked"]["content"]["layout"]["barmode"] == "stack"
    assert len(traces(w["nonstacked"])) == 3 and "barmode" not in w["nonstacked"]["content"]["layout"]
    (h,) = traces(w["hist"])
    assert len(h["y"]) == 20 and sum(h["y"]) == 10000
    (p,) = traces(w["pie"])
    assert p["type"] == "pie" and p["values"] == [19, 26, 55]


def _heat(viz, names: bool, **kw):
    opts = dict(colormap="Electric")
    if names:
        opts.update(columnnames=list("abcdefghij"), rownames=[f"y{i}" for i in range(1, 6)])
    return viz.heatmap(X=np.outer(np.arange(1, 6), np.arange(1, 11)), opts=opts, **kw)


@pytest.mark.parametrize("names", [False, True], ids=["plain", "withnames"])
def test_plot_surface_append(viz, names):
    win = _heat(viz, names)
    steps = [("appendRow", np.outer(np.arange(6, 9), np.arange(1, 11)), "rownames", ["y6", "y7", "y8"]),
             ("appendColumn", np.outer(np.arange(1, 9), np.arange(11, 14)), "columnnames", ["k", "l", "m"]),
             ("prependRow", np.outer(np.arange(-3, 1), np.arange(1, 14)), "rownames", ["y-3", "y-2", "y-1", "y0"]),
             ("prependColumn", np.outer(np.arange(-3, 9), np.arange(-3, 1)), "columnnames", ["-d", "-c", "-b", "-a"])]
    for mode, X, key, labels in steps:
        viz.heatmap(X=X, win=win, update=mode, opts={"colormap": "Greys", **({key: labels} if names else {})})
    (t,) = traces(only_window(viz))
    z = np.array(t["z"])
    assert z.shape == (12, 17) and z[0, 0] == 9 and z[-1, -1] == 8 * 13  # (-3)*(-3) and 8*13
    assert t["colorscale"] == "Greys"
    if names:
        assert t["y"][:5] == ["y-3", "y-2", "y-1", "y0", "y1"] and t["x"][:4] == ["-d", "-c", "-b", "-a"]


def test_plot_surface_remove_and_replace(viz):
    win = _heat(viz, True, win="removed")
    viz.heatmap(X=None, win=win, update="remove")
    _heat(viz, False, win="replaced")
    viz.heatmap(X=10 * np.outer(np.arange(1, 20), np.arange(1, 25)), win="replaced", update="replace")
    w = env_windows(viz)
    assert w["removed"]["content"]["data"] == []  # the window stays, with no traces
    assert np.array(traces(w["replaced"])[0]["z"]).shape == (19, 24)


def test_plot_surface_contour_and_3d(viz):
    x = np.tile(np.arange(1, 101), (100, 1))
    X = np.exp((((x - 50) ** 2) + ((x.T - 50) ** 2)) / -(20.0 ** 2))
    viz.contour(X=X, opts=dict(colormap="Viridis"), win="contour")
    viz.surf(X=X, opts=dict(colormap="Hot"), win="surf")
    w = env_windows(viz)
    (c,), (s,) = traces(w["contour"]), traces(w["surf"])
    assert c["type"] == "contour" and np.array(c["z"]).shape == (100, 100)
    assert s["type"] == "surface" and s["colorscale"] == "Hot" and "scene" in w["surf"]["content"]["layout"]


def test_plot_special_boxplot_quiver_mesh(viz):
    X = np.random.rand(100, 2)
    X[:, 1] += 2
    viz.boxplot(X=X, opts=dict(legend=["Men", "Women"]), win="box")
    g = np.arange(0, 2.1, 0.2)
    gx = np.broadcast_to(np.expand_dims(g, axis=1), (len(g), len(g)))
    gy = np.broadcast_to(np.expand_dims(g, axis=0), (len(g), len(g)))
    viz.quiver(X=np.multiply(np.cos(gx), gy), Y=np.multiply(np.sin(gx), gy), opts=dict(normalize=0.9), win="quiver")
    verts = np.c_[[0, 0, 1, 1, 0, 0, 1, 1], [0, 1, 1, 0, 0, 1, 1, 0], [0, 0, 0, 0, 1, 1, 1, 1]]
    faces = np.c_[[7, 0, 0, 0, 4, 4, 6, 6, 4, 0, 3, 2], [3, 4, 1, 2, 5, 6, 5, 2, 0, 1, 6, 3],
                  [0, 7, 2, 3, 6, 7, 1, 1, 5, 5, 7, 6]]
    viz.mesh(X=verts, Y=faces, opts=dict(opacity=0.5), win="mesh")
    w = env_windows(viz)
    assert [(t["type"], t["name"], len(t["y"])) for t in traces(w["box"])] == [("box", "Men", 100),
                                                                               ("box", "Women", 100)]
    q = traces(w["quiver"])
    # per grid point: shaft (start, end, null) + head (tip1, end, tip2, null) in one NaN-separated trace
    assert q[0]["type"] == "scatter" and len(q[0]["x"]) == 7 * 121 and q[0]["x"][2] is None
    (m,) = traces(w["mesh"])
    assert m["type"] == "mesh3d" and len(m["i"]) == 12 and m["opacity"] == 0.5


def test_plot_sunburst(viz):
    viz.sunburst(labels=["Eve", "Cain", "Seth", "Enos", "Noam", "Abel", "Awan", "Enoch", "Azura"],
                 parents=["", "Eve", "Eve", "Seth", "Seth", "Eve", "Eve", "Awan", "Eve"],
                 values=[10, 14, 12, 10, 2, 6, 6, 4, 4], opts=dict(font_size=20, font_color="black"))
    (t,) = traces(only_window(viz))
    assert t["type"] == "sunburst" and len(t["labels"]) == 9 and t["values"][0] == 10


def test_plot_special_graph(viz):
    edges = [(0, 1), (0, 2), (1, 3), (1, 4), (1, 5), (4, 5)]
    viz.graph(edges, ["A", "B", "C", "D", "E", "F"], ["Orange", "Mango", "Apple", "Grapes", "Papaya", "kiwi"],
              opts={"showEdgeLabels": True, "showVertexLabels": True, "scheme": "different", "directed": False})
    w = only_window(viz)
    assert w["type"] == "network" and w["directed"] is False and w["showEdgeLabels"] is True
    assert [n["label"] for n in w["content"]["nodes"]][:2] == ["Orange", "Mango"]
    assert [(e["source"], e["target"]) for e in w["content"]["edges"]] == edges


def test_properties_basic(viz):
    props = [{"type": "text", "name": "Text input", "value": "initial"},
             {"type": "number", "name": "Number input", "value": "12"},
             {"type": "button", "name": "Button", "value": "Start"},
             {"type": "checkbox", "name": "Checkbox", "value": True},
             {"type": "select", "name": "Select", "value": 1, "values": ["Red", "Green", "Blue"]}]
    viz.properties(props)
    w = only_window(viz)
    assert w["type"] == "properties" and w["content"] == props


def test_embeddings_and_their_callbacks(viz, srv, monkeypatch):
    # mnist-embeddings.py needs bhtsne (not installable here): the client's t-SNE backend becomes a fixed 2-D
    # projection; every byte on the wire is still the real client's (loading window, points, handler updates).
    monkeypatch.setattr(visdom, "do_tsne", lambda X: [tuple(r) for r in np.asarray(X)[:, :2]])
    features = np.random.rand(30, 4)
    labels = [str(i % 3) for i in range(30)]
    win = viz.embeddings(features, labels, data_getter=lambda i: f"<b>item {i}</b>", data_type="html", win="emb")
    w = only_window(viz)
    assert win == "emb" and w["type"] == "embeddings" and len(w["content"]["data"]) == 30
    assert w["content"]["data"][4]["label"] == "1" and w["content"]["has_previous"] is False

    def browser_event(fields):  # what the embeddings pane posts on hover / lasso
        body = json.dumps({**fields, "target": "emb", "eid": viz.demo_env}).encode()
        urllib.request.urlopen(urllib.request.Request(srv.url + "/vis_event", data=body, method="POST"), timeout=10)

    def wait(pred):
        for _ in range(100):
            w = only_window(viz)
            if pred(w):
                return w
            time.sleep(0.05)
        raise AssertionError(w)

    browser_event({"event_type": "EntitySelected", "entityId": "Entity 4", "idx": 4})
    w = wait(lambda w: w["content"]["selected"] is not None)
    assert w["content"]["selected"] == {"html": "<b>item 4</b>", "entityId": "Entity 4"}
    browser_event({"event_type": "RegionSelected", "selectedIdxs": [1, 2, 5]})
    w = wait(lambda w: w["content"]["has_previous"])
    assert [p["idx"] for p in w["content"]["data"]] == [1, 2, 5] and len(w["old_content"][0]) == 30
