// run_palette.js — the run palette and its per-theme lightness cap: every entry reads on the chart background of each theme.

// Colour-blind-safe first (Okabe–Ito without black), then Paul Tol's muted set and further distinct hues, so the
// runs most likely to meet on one chart are told apart by everyone. Entries were picked so that, once capped for
// a theme below, any two stay apart (CIELAB ΔE ≥ 12 in both themes; tests/test_browser_run_palette.py checks).
export const PALETTE = [
  "#0072b2", "#e69f00", "#009e73", "#d55e00", "#56b4e9", "#cc79a7",
  "#882255", "#44aa99", "#ee8866", "#aa4499", "#6655cc", "#b66dff", "#117733", "#920000", "#ddcc77",
  "#ee3377", "#8c564b", "#7f7f7f", "#bcbd22", "#ffaabb", "#17becf", "#a6761d", "#66a61e", "#e7298a",
];

// The chart (Plotly paper) background of each theme (theme.js maps #fff to #161b22), and the contrast a line
// needs against it: WCAG's 3:1 for graphics.
export const BACKGROUND = { light: "#ffffff", dark: "#161b22" };
export const MIN_CONTRAST = 3;

const rgbOf = (hex) => {
  const n = parseInt(String(hex).slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => v / 255);
};
const hexOf = (rgb) => `#${rgb.map((v) => Math.round(Math.min(1, Math.max(0, v)) * 255).toString(16).padStart(2, "0")).join("")}`;
const toLinear = (v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
const toGamma = (v) => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055);

/** WCAG relative luminance of a "#rrggbb" colour. */
export function luminance(hex) {
  const [r, g, b] = rgbOf(hex).map(toLinear);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two "#rrggbb" colours (1 to 21). */
export function contrast(a, b) {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

const WHITE = [0.95047, 1, 1.08883]; // D65
const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
const fInv = (t) => (t ** 3 > 0.008856 ? t ** 3 : (t - 16 / 116) / 7.787);

/** CIELAB [L, a, b] of a "#rrggbb" colour. */
export function lab(hex) {
  const [r, g, b] = rgbOf(hex).map(toLinear);
  const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / WHITE[0]);
  const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / WHITE[2]);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

function fromLab([l, a, bb]) {
  const fy = (l + 16) / 116;
  const x = fInv(fy + a / 500) * WHITE[0];
  const y = fInv(fy);
  const z = fInv(fy - bb / 200) * WHITE[2];
  return hexOf([3.2406 * x - 1.5372 * y - 0.4986 * z, -0.9689 * x + 1.8758 * y + 0.0415 * z,
    0.0557 * x - 0.204 * y + 1.057 * z].map(toGamma));
}

/** CIE76 colour difference (about 2.3 is just noticeable; ours keep ≥ 12 apart). */
export function deltaE(a, b) {
  const lb = lab(b);
  return Math.hypot(...lab(a).map((v, i) => v - lb[i]));
}

/**
 * A colour moved in CIELAB lightness only (hue and chroma kept, so it stays "the same colour"), darker on a light
 * background or lighter on a dark one, just until it reaches MIN_CONTRAST against it.
 */
export function capLightness(hex, background) {
  const towardsLight = luminance(background) < 0.5;
  const [l0, a, b] = lab(hex);
  let out = String(hex).toLowerCase();
  for (let l = l0; contrast(out, background) < MIN_CONTRAST && l > 0 && l < 100; l += towardsLight ? 1 : -1) {
    out = fromLab([l, a, b]);
  }
  return out;
}

const themed = new Map(); // theme -> the capped palette (computed once)

/** The palette as drawn in a theme ("light" | "dark"): same slots, each entry capped for that background. */
export function themePalette(theme) {
  if (!themed.has(theme)) themed.set(theme, PALETTE.map((c) => capLightness(c, BACKGROUND[theme] || BACKGROUND.light)));
  return themed.get(theme);
}
