// pages/scalars_hover.js — the Scalars charts' TensorBoard-style tooltip: every visible run at the hovered step with
// its smoothed value, raw value, step and relative time.

/** "1h 2m", "3m 4s", "5.2 s": a duration in seconds as TensorBoard's tooltip shows it. */
export function fmtRelative(sec) {
  if (!Number.isFinite(sec)) return "";
  if (sec < 60) return `${sec.toFixed(1)} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m}m ${Math.floor(sec % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/**
 * Hover fields for a smoothed trace: customdata per point [raw value, step, relative time] and the template that
 * shows them; the raw trace under it stays out of the tooltip.
 */
export function hoverFields(label, rawY, steps, walls) {
  const w0 = walls && walls.length ? walls[0] : null;
  const customdata = rawY.map((v, i) => [v, steps[i], w0 === null ? "" : fmtRelative(walls[i] - w0)]);
  const name = String(label).replace(/[<>&]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;" }[c]));
  return {
    customdata,
    hovertemplate: `<b>${name}</b><br>smoothed %{y:.4g} · value %{customdata[0]:.4g} · step %{customdata[1]:.6~g}`
      + " · %{customdata[2]}<extra></extra>",
  };
}

/** Layout settings for the tooltip: one box listing every run at the hovered x, nearest point per run. */
export const HOVER_LAYOUT = { hovermode: "x unified", hoverdistance: -1, hoverlabel: { font: { size: 11 } } };
