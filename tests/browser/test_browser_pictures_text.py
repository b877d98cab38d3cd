"""Pictures and HTML as their authors made them (Chromium, real server): a tall matplotlib figure fits its pane
whole, and a text pane keeps its own <style> (CycleGAN's label table), scoped to the pane, running nothing."""

from __future__ import annotations

import os

import numpy as np

from helpers.browser import env_url
from helpers.tensorboard import writer

# Set to a folder to keep the screenshots (they are taken either way: what a person would look at).
SHOTS = os.environ.get("PANEBOARD_SHOTS")


def shot(locator, name: str, tmp_path) -> None:
    locator.screenshot(path=os.path.join(SHOTS or str(tmp_path), name))


# Where the picture's pixels are drawn (object-fit: contain letterboxes them) and the pane's visible box.
DRAWN = """(win) => {
  const card = document.querySelector(`[data-win="${win}"]`), img = card.querySelector('.media-pane img');
  if (!img || !img.complete || !img.naturalWidth) return null;
  const r = img.getBoundingClientRect(), fit = getComputedStyle(img).objectFit === 'contain';
  const s = fit ? Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight) : r.width / img.naturalWidth;
  const w = img.naturalWidth * s, h = img.naturalHeight * s;
  const top = r.top + (fit ? (r.height - h) / 2 : 0), left = r.left + (fit ? (r.width - w) / 2 : 0);
  const box = card.querySelector('.media-pane').getBoundingClientRect();
  return { natural: [img.naturalWidth, img.naturalHeight], drawn: [left, top, w, h],
           box: [box.left, box.top, box.width, box.height] };
}"""


def test_a_tall_figure_fits_its_pane_whole(server, tab, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # The PyTorch TensorBoard tutorial's plot_classes_preds: one column of images, 12 x 48 inches at 100 dpi.
    fig = plt.figure(figsize=(12, 48), dpi=100)
    rng = np.random.default_rng(0)
    for i in range(4):
        ax = fig.add_subplot(4, 1, i + 1, xticks=[], yticks=[])
        ax.imshow(rng.random((8, 8)), cmap="viridis")
        ax.set_title(f"class {i}, 97.0%\n(label: {i})", color="green")
    with writer(server, "tall") as w:
        w.add_figure("predictions vs. actuals", fig, global_step=0)
        assert w.flush(20)
    tab.open(env_url(server, "tall"))
    tab.wait(f"{DRAWN}", "predictions vs. actuals")
    d = tab.js(DRAWN, "predictions vs. actuals")
    assert d["natural"] == [1200, 4800]
    left, top, w, h = d["drawn"]
    bl, bt, bw, bh = d["box"]
    # Every pixel of the figure is inside the pane's visible box, drawn at a readable size, aspect kept.
    assert bt - 1 <= top and top + h <= bt + bh + 1 and bl - 1 <= left and left + w <= bl + bw + 1, d
    assert h >= bh - 20 and abs(w / h - 0.25) < 0.01, d
    shot(tab.page.locator('[data-win="predictions vs. actuals"]'), "tall_figure.png", tmp_path)
    assert tab.errors == []


# CycleGAN's util/visualizer.py: a <style> before the label table it sends with vis.text().
CYCLEGAN = """<style>
    table {border-collapse: separate; border-spacing: 4px; white-space: nowrap; text-align: center}
    table td {width: 64px; height: 64px; padding: 4px; outline: 4px solid black}
</style><table><tr><td>real_A</td><td>fake_B</td><td>rec_A</td></tr>
<tr><td>real_B</td><td>fake_A</td><td>rec_B</td></tr></table>"""


def test_a_text_panes_own_style_draws_its_table(server, viz, tab, tmp_path):
    viz.text(CYCLEGAN, win="labels", opts={"title": "cyclegan labels"})
    viz.text("<style>td {position: fixed; inset: 0; z-index: 99; outline: 9px solid red}</style>"
             "<table><tr><td>other</td></tr></table><script>window.__ran = 1</script>", win="other")
    viz.text("<table><tr><td>plain</td></tr></table>", win="plain")
    tab.open(env_url(server, "vb"))
    cell = """([win, text]) => { const td = [...document.querySelectorAll(`[data-win="${win}"] td`)]
        .find((c) => c.textContent === text); if (!td) return null; const s = getComputedStyle(td);
        return { outline: `${s.outlineWidth} ${s.outlineStyle} ${s.outlineColor}`, width: td.getBoundingClientRect().width,
                 position: s.position, spacing: getComputedStyle(td.closest('table')).borderSpacing }; }"""
    tab.wait(f"(a) => !!({cell})(a)", ["labels", "real_A"])
    labels = tab.js(cell, ["labels", "real_A"])
    assert labels["outline"] == "4px solid rgb(0, 0, 0)" and labels["spacing"] in ("4px", "4px 4px")
    assert labels["width"] >= 64
    # The rules reach only their own pane: the plain table next to it keeps the page's look.
    tab.wait(f"(a) => !!({cell})(a)", ["plain", "plain"])
    assert " none " in tab.js(cell, ["plain", "plain"])["outline"]
    # A pane's rules cannot lift its cells over the page, and its script never runs.
    other = tab.js(cell, ["other", "other"])
    assert other["position"] == "static" and other["outline"] == "9px solid rgb(255, 0, 0)"
    assert tab.js("() => window.__ran === undefined")
    shot(tab.page.locator('[data-win="labels"]'), "cyclegan_labels.png", tmp_path)
    assert [e for e in tab.errors if "Content Security Policy" not in e] == []
