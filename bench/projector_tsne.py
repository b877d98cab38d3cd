"""t-SNE of 500 x 32 points as the projector pane asks for it: seconds to the first partial embedding and to the end.

Runs paneboard.server.projection.tsne in this process (the server's worker thread does the same), with Barnes-Hut
(the default up to PANEBOARD_TSNE_BH_POINTS points) and with FFT interpolation (what every size used before):
    python bench/projector_tsne.py [--n 500] [--d 32] [--runs 3]
Goal (issue 21): the 2-D t-SNE of 500 x 32 done in <= 3 s here, and visible while it forms.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from paneboard.server.projection import methods


def run(x: np.ndarray, bh_points: int) -> tuple[float, float, float, int]:
    """(first partial s, wall s, CPU s, partials) of one 2-D t-SNE, Barnes-Hut up to `bh_points` points."""
    methods.BH_POINTS = bh_points
    first: list[float] = []
    t0, c0 = time.perf_counter(), time.process_time()
    methods.tsne(x, 2, methods.default_perplexity(len(x)), 500,
                 lambda part: first.append(time.perf_counter() - t0))
    return first[0], time.perf_counter() - t0, time.process_time() - c0, len(first)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(c, 1.0, (args.n // 5, args.d)) for c in range(5)]).astype(np.float32)
    methods.tsne(x[:50], 2, 10, 50)  # imports and numba compilation out of the figures
    bh = methods.BH_POINTS
    for label, limit in (("Barnes-Hut (now)", bh), ("FFT (before)", 0)):
        res = [run(x, limit) for _ in range(args.runs)]
        med = [statistics.median(r[k] for r in res) for k in range(3)]
        print(f"t-SNE 2-D {len(x)} x {args.d}, {label}: first partial {med[0]:.2f} s, done {med[1]:.2f} s wall, "
              f"{med[2]:.2f} s CPU, {res[0][3]} partials (median of {args.runs})", flush=True)


if __name__ == "__main__":
    main()
