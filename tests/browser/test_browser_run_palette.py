"""Run colours read on either theme (real server, Chromium, a 200-run sweep): every palette entry, as drawn, has at
least 3:1 contrast against the chart background of the theme, the entries stay distinct, and a run keeps its slot.
Contrast and colour difference are computed here, not by the code under test."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import pytest

from helpers.browser import SMOOTHED_LINES, Tab
from helpers.sweep import log_sweep

RUNS = [f"pal-{i:03d}" for i in range(200)]
CARD = "document.querySelector('[data-tag=\"train/loss\"] .js-plotly-plot')"
OKABE_ITO = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#56b4e9", "#cc79a7"]  # colour-blind-safe first


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(colour: str) -> tuple[float, float, float]:
    colour = colour.strip().lower()
    if colour.startswith("rgb"):
        r, g, b = (int(v) for v in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3])
        return r / 255, g / 255, b / 255
    digits = colour[1:] if len(colour) == 7 else "".join(d * 2 for d in colour[1:4])  # "#fff" too
    n = int(digits, 16)
    return (n >> 16 & 255) / 255, (n >> 8 & 255) / 255, (n & 255) / 255


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio."""
    la, lb = ((0.2126 * _linear(r) + 0.7152 * _linear(g) + 0.0722 * _linear(bb)) for r, g, bb in (_rgb(a), _rgb(b)))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _lab(colour: str) -> tuple[float, float, float]:
    r, g, b = (_linear(c) for c in _rgb(colour))
    x, y, z = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
               (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def delta_e(a: str, b: str) -> float:
    return math.dist(_lab(a), _lab(b))


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("palette") / "paneboard.db").start()
    log_sweep(srv, RUNS, 10, tags=("train/loss",))
    try:
        yield srv
    finally:
        srv.stop()


def drawn_colours(t: Tab) -> tuple[dict[str, str], str]:
    """Each run's line colour on the loss chart, and the chart's background."""
    t.wait(f"() => {{ const c = document.querySelector('[data-tag=\"train/loss\"]'); return !!c && "
           f"Number(c.dataset.series) === {len(RUNS)}; }}")
    pairs = [(run, colour) for run, colour, _, _ in t.js(f"() => {SMOOTHED_LINES}({CARD})")]
    return dict(pairs), t.js(f"() => {CARD}._fullLayout.paper_bgcolor")


def test_every_palette_colour_reads_on_its_theme_and_runs_keep_their_slot(server, tab: Tab):
    t = tab
    t.open(f"{server.url}/scalars")
    light, light_bg = drawn_colours(t)
    palettes = t.js("() => import('/static/js/run_palette.js').then(m => ({light: m.themePalette('light'), "
                    "dark: m.themePalette('dark'), base: m.PALETTE}))")
    t.page.emulate_media(color_scheme="dark")  # the theme follows the system: the charts redraw in dark colours
    t.wait(f"() => {CARD}._fullLayout.paper_bgcolor !== {light_bg!r}")
    t.wait(f"dark => {SMOOTHED_LINES}({CARD}).every(([, colour]) => dark.includes(colour))", palettes["dark"])
    dark, dark_bg = drawn_colours(t)
    assert palettes["base"][:6] == OKABE_ITO and len(palettes["base"]) >= 20
    for theme, bg, drawn in (("light", light_bg, light), ("dark", dark_bg, dark)):
        palette = palettes[theme]
        # Every entry reads on the chart's own background (WCAG 3:1 for graphics), not only the ones drawn here.
        low = {c: round(contrast(c, bg), 2) for c in palette if contrast(c, bg) < 3.0}
        assert low == {}, (theme, bg, low)
        # Any two entries stay apart (CIE76 ΔE; about 2.3 is just noticeable).
        close = [(a, b, round(delta_e(a, b), 1)) for a, b in itertools.combinations(palette, 2) if delta_e(a, b) < 12]
        assert close == [], (theme, close)
        assert len(set(drawn.values())) >= 20 and set(drawn.values()) <= set(palette)
    # A run keeps its slot: the same palette position in both themes, so it stays "its" colour.
    slot = {r: palettes["light"].index(c) for r, c in light.items()}
    assert {r: palettes["dark"].index(c) for r, c in dark.items()} == slot
    # Only what is unreadable moves: an entry with 3:1 already is drawn as it is; pale ones change in the light theme.
    for theme, bg in (("light", light_bg), ("dark", dark_bg)):
        kept = [c for c in palettes["base"] if contrast(c, bg) >= 3.0]
        assert [palettes[theme][palettes["base"].index(c)] for c in kept] == kept
    assert palettes["light"][palettes["base"].index("#56b4e9")] != "#56b4e9"
    # Hundreds of runs: each colour's trace is translucent, so the colour drawn last does not cover the rest.
    assert t.js(f"() => [...{CARD}.querySelectorAll('.scatterlayer .trace')].every(g => "
                "Number(getComputedStyle(g).opacity) < 1)")
    assert t.js("() => [...document.querySelectorAll('.sc-run .run-color')].every(c => c.style.background)")
    assert not t.errors, t.errors
