"""run_all's table: rows of measure / paneboard / Visdom / TensorBoard / ratio / goal / pass, and RESULTS.md."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

Value = float | str  # a number, or an n/a reason
Spec = str | Callable[[dict[str, Any]], Any] | tuple  # dotted path, function of a run, or (p50, p99) paths

TB_PEERS = (("legacy", "open.tb_legacy"), ("fast", "open.tb_fast"))


def pick(run: dict[str, Any], spec: Spec) -> Any:
    """The value at a dotted path of one run; an n/a reason where a section says so; tuples pick each path."""
    if isinstance(spec, tuple):
        return tuple(pick(run, s) for s in spec)
    if callable(spec):
        try:
            return spec(run)
        except (KeyError, TypeError, ZeroDivisionError):
            return "n/a: not measured"
    node: Any = run
    for part in spec.split("."):
        if isinstance(node, dict) and "na" in node:
            return f"n/a: {node['na']}"
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            continue
        if not isinstance(node, dict) or part not in node:
            return "n/a: not measured"
        node = node[part]
    if isinstance(node, dict) and "na" in node:
        return f"n/a: {node['na']}"
    return "n/a: not measured" if node is None else node


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def across(runs: list[dict[str, Any]], spec: Spec) -> Any:
    """Median over runs of one cell (tuples element-wise); the first n/a reason if no run has a number."""
    vals = [pick(r, spec) for r in runs]
    if isinstance(spec, tuple):
        return tuple(across(runs, s) for s in spec)
    nums = [v for v in vals if _num(v)]
    return statistics.median(nums) if nums else next((v for v in vals if isinstance(v, str)), "n/a: not measured")


def fmt(v: Any) -> str:
    if isinstance(v, tuple):
        return " / ".join(fmt(x) for x in v)
    if not _num(v):
        return str(v)
    a = abs(v)
    return f"{v:,.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def _last(v: Any) -> Any:
    return v[-1] if isinstance(v, tuple) else v


def ratio(runs: list[dict[str, Any]], ours: Spec, peer: Spec, better: str) -> float | None:
    """Median over runs of the within-run ratio, oriented so that > 1 means paneboard is better."""
    rs = []
    for r in runs:
        o, p = _last(pick(r, ours)), _last(pick(r, peer))
        if _num(o) and _num(p) and o > 0 and p > 0:
            rs.append(p / o if better == "lower" else o / p)
    return statistics.median(rs) if rs else None


def _flat(section: str) -> Callable[[dict[str, Any]], float]:
    return lambda run: (pick(run, f"{section}.last_10pct_calls_per_s") / pick(run, f"{section}.first_10pct_calls_per_s"))


def row_specs(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    small, big = (f"{n:,}" for n in cfg["open_sizes"])
    s0, s1 = (str(n) for n in cfg["open_sizes"])
    w, rate, secs, _ = cfg["conc"]
    panes, per_pane, _ = cfg["mem"]
    vn, tn, sn = (f"{cfg[k]:,}" for k in ("visdom_n", "tb_n", "sustained_n"))
    console_rate = cfg["console"][1]
    live = [{"measure": f"4. live latency at {r:,} ev/s, p50 / p99 ms", "key": "live",
             "ours": (f"ingest.live.{r}.p50_ms", f"ingest.live.{r}.p99_ms"),
             "visdom": ("ingest.visdom_live.p50_ms", "ingest.visdom_live.p99_ms") if r == cfg["visdom_live"][0]
             else "n/a: the client is synchronous (see its calls/s in 2.)",
             "tb": "n/a: no push channel (the browser polls on a reload timer)", "better": "lower",
             "goal": "p99 ≤ 150" if r == 1000 else "—", "ok": (lambda v: v <= 150) if r == 1000 else None}
            for r in cfg["live_rates"]]
    return [
        {"measure": "1. logging call, median µs (line append / add_scalar)", "key": "call",
         "ours": "ingest.call.median_us", "visdom": "ingest.visdom_calls.median_us",
         "tb": "ingest.tb_writer.median_us", "better": "lower", "goal": "≤ 3", "ok": lambda v: v <= 3},
        {"measure": "1. SummaryWriter.add_scalar, median µs (ours vs torch's)", "key": "call", "optional": True,
         "ours": "ingest.sdk_writer.median_us", "visdom": "n/a: no SummaryWriter API",
         "tb": "ingest.tb_writer.median_us", "better": "lower", "goal": "≤ 3", "ok": lambda v: v <= 3},
        {"measure": "1. logging call, mean µs (incl. the slow calls)", "ours": "ingest.call.mean_us",
         "visdom": "ingest.visdom_calls.mean_us", "tb": "ingest.tb_writer.mean_us", "better": "lower", "goal": "—"},
        {"measure": f"2. sustained appends, first 10% calls/s (ours {sn}, Visdom {vn}, TB {tn} calls)",
         "ours": "ingest.sustained.first_10pct_calls_per_s", "visdom": "ingest.visdom_calls.first_10pct_calls_per_s",
         "tb": "ingest.tb_writer.first_10pct_calls_per_s", "better": "higher", "goal": "—"},
        {"measure": "2. sustained appends, last 10% calls/s", "ours": "ingest.sustained.last_10pct_calls_per_s",
         "visdom": "ingest.visdom_calls.last_10pct_calls_per_s", "tb": "ingest.tb_writer.last_10pct_calls_per_s",
         "better": "higher", "goal": "—"},
        {"measure": "2. sustained appends, last ÷ first 10% (flat = 1)", "key": "sustained",
         "ours": _flat("ingest.sustained"), "visdom": _flat("ingest.visdom_calls"), "tb": _flat("ingest.tb_writer"),
         "goal": "≥ 0.8", "ok": lambda v: v >= 0.8},
        {"measure": "2. sustained appends, committed calls/s", "key": "sustained",
         "ours": "ingest.sustained.committed_calls_per_s", "visdom": "ingest.visdom_calls.committed_calls_per_s",
         "tb": "ingest.tb_writer.committed_calls_per_s", "better": "higher", "goal": "≥ 50,000",
         "ok": lambda v: v >= 50_000},
        {"measure": f"3. bulk SDK → committed points/s (Visdom: {cfg['visdom_bulk'][1]:,}-point appends)",
         "key": "bulk", "ours": "ingest.bulk.points_per_s", "visdom": "ingest.visdom_bulk.points_per_s",
         "tb": "n/a: add_scalar logs one point per call (see 2.)", "better": "higher", "goal": "≥ 1,000,000",
         "ok": lambda v: v >= 1_000_000},
        {"measure": f"3. load a {cfg['tb_points']:,}-scalar logdir, s (import-tb vs EventAccumulator)",
         "optional": True, "ours": "import.import_tb.seconds", "visdom": "n/a: no TensorBoard import",
         "tb": "import.ea_reload.seconds", "better": "lower", "goal": "—"},
        *live,
        {"measure": f"5. open {small}-point series @2,000: ms (median of {cfg['open_reps']})",
         "ours": f"open.ours.{s0}.median_ms", "visdom": "open.visdom.median_ms",
         "tb": tuple(f"{p}.median_ms" for _, p in TB_PEERS), "better": "lower", "goal": "—"},
        {"measure": f"5. open {small}-point series: payload bytes (points returned)",
         "ours": f"open.ours.{s0}.bytes", "visdom": "open.visdom.bytes",
         "tb": tuple(f"{p}.bytes" for _, p in TB_PEERS), "better": "lower", "goal": "—"},
        {"measure": f"5. open {big}-point series @2,000: ms", "key": "open", "ours": f"open.ours.{s1}.median_ms",
         "visdom": "n/a: not attempted (a window is one JSON document with every point)",
         "tb": "n/a: not attempted (its loader keeps a reservoir sample per tag)", "better": "lower",
         "goal": "≤ 300", "ok": lambda v: v <= 300},
        {"measure": f"5. open {big}-point series: payload bytes", "ours": f"open.ours.{s1}.bytes",
         "visdom": "n/a: not attempted", "tb": "n/a: not attempted", "better": "lower", "goal": "—"},
        {"measure": f"5. server start → full {small}-point series answered, s", "ours": "open.ours.restart.full_data_s",
         "visdom": "n/a: RAM-only until save; not measured",
         "tb": tuple(f"{p}.full_data_s" for _, p in TB_PEERS), "better": "lower", "goal": "—"},
        {"measure": f"6. dash-server RSS after {panes * per_pane:,} points in {panes} panes, MB", "key": "mem",
         "ours": "memory.rss_final_mb", "visdom": "n/a: not attempted (every point is a Python object in RAM)",
         "tb": "n/a: not a server-side store", "better": "lower", "goal": "≤ 150", "ok": lambda v: v <= 150},
        {"measure": "6. RSS MB at 0 / 25 / 50 / 75 / 100% stored",
         "ours": tuple(f"memory.rss_samples.{i}.1" for i in range(5)), "visdom": "—", "tb": "—", "goal": "flat"},
        {"measure": "6. RSS at 100%: anonymous (heap) / file-backed MB", "key": None,
         "ours": ("memory.rss_anon_mb", "memory.rss_file_mb"), "visdom": "—", "tb": "—", "goal": "—"},
        {"measure": "6. DB bytes per point", "key": "mem", "ours": "memory.db_bytes_per_point",
         "visdom": "n/a: no store", "tb": "n/a: different data (event file)", "better": "lower", "goal": "≤ 10",
         "ok": lambda v: v <= 10},
        {"measure": f"7. {w} writers × {rate:,} ev/s for {secs:.0f} s: committed ev/s", "key": "conc",
         "ours": "concurrency.committed_per_s", "visdom": "n/a: not attempted", "tb": "n/a: no network ingest",
         "goal": f"≥ {0.95 * w * rate:,.0f}", "ok": lambda v, t=0.95 * w * rate: v >= t},
        {"measure": "7. errors (lost − SDK drops + duplicated + missing writers) / SDK drops", "key": "conc",
         "ours": ("concurrency.errors", "concurrency.dropped"), "visdom": "—", "tb": "—", "goal": "0 / 0",
         "ok": lambda v: v == 0, "both": True},
        {"measure": "7. ack latency (call → commit ack) p50 / p99 ms",
         "ours": ("concurrency.ack_p50_ms", "concurrency.ack_p99_ms"), "visdom": "—", "tb": "—", "goal": "—"},
        *({"measure": f"8. console capture per print(f-string) / print(a, b, c) to {what}, µs on the training "
                      "thread / of process CPU (sender's share too)", "key": "console",
           "ours": tuple(f"console.{name}{tty}.{cost}_us" for cost in ("wall", "cpu")
                         for name in ("fstring", "three_args")),
           "visdom": "n/a: no console capture", "tb": "n/a: no console capture", "goal": "≤ 2",
           "ok": lambda v: v <= 2, "both": True} for tty, what in (("", "a pipe"), ("_tty", "a terminal"))),
        {"measure": f"8. console lines at {console_rate:,}/s: printed lines/s / lines lost", "key": "console",
         "ours": ("console.sustained.lines_per_s", "console.sustained.lost"), "visdom": "—", "tb": "—",
         "goal": f"≥ {0.95 * console_rate:,.0f} / 0", "ok": lambda v: v == 0},
        {"measure": "8. webhook notification after the event, s (receiver up / after it came back)", "key": "console",
         "ours": ("console.notify.up_s", "console.notify.back_s"), "visdom": "n/a: no notifications",
         "tb": "n/a: no notifications", "goal": "≤ 2", "ok": lambda v: v <= 2, "both": True},
    ]


def _cell(runs: list[dict[str, Any]], spec: Spec) -> Any:
    if isinstance(spec, str) and (spec.startswith("n/a") or spec == "—"):
        return spec
    return across(runs, spec)


def build_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    runs = results["runs"]
    rows = []
    for spec in row_specs(results["config"]):
        ours = _cell(runs, spec["ours"])
        visdom, tb = _cell(runs, spec["visdom"]), _cell(runs, spec["tb"])
        ratios = []
        if spec.get("better"):
            for name, peer in (("Visdom", spec["visdom"]), ("TB", spec["tb"])):
                if isinstance(peer, tuple) and name == "TB":
                    for (label, _), p in zip(TB_PEERS, peer, strict=True):
                        ratios.append((f"TB {label}", ratio(runs, spec["ours"], p, spec["better"])))
                elif not (isinstance(peer, str) and (peer.startswith("n/a") or peer == "—")):
                    ratios.append((name, ratio(runs, spec["ours"], peer, spec["better"])))
        if isinstance(spec["tb"], tuple) and isinstance(tb, tuple):
            tb = " · ".join(f"{label} {fmt(v)}" for (label, _), v in zip(TB_PEERS, tb, strict=True))
        verdict = "—"
        if spec.get("ok"):
            vals = list(ours) if spec.get("both") and isinstance(ours, tuple) else [_last(ours)]
            verdict = ("pass" if all(spec["ok"](v) for v in vals) else "miss") if all(map(_num, vals)) else "n/a"
        rows.append({"measure": spec["measure"], "key": spec.get("key"), "paneboard": fmt(ours),
                     "visdom": fmt(visdom), "tensorboard": fmt(tb), "goal": spec["goal"], "pass": verdict,
                     "optional": bool(spec.get("optional")),
                     "ratio": " · ".join(f"{n} {v:,.1f}×" if v < 100 else f"{n} {v:,.0f}×"
                                         for n, v in ratios if v is not None) or "—"})
    return rows


def table_md(rows: list[dict[str, Any]]) -> str:
    lines = ["| measure | paneboard | Visdom | TensorBoard | ratio (>1: paneboard better) | goal | pass/miss |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['measure']} | {r['paneboard']} | {r['visdom']} | {r['tensorboard']} | {r['ratio']} | "
                     f"{r['goal']} | {r['pass']} |")
    return "\n".join(lines)

