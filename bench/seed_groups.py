"""Cost of the seed-group, snapshot and archive reads on 10 runs (2 configs x 5 seeds) of 3 series each.

Prints process CPU time (the figure other work on a busy machine moves least), wall time and answer sizes:
python bench/seed_groups.py [--points-per-series 100000]. Uses the in-process Flask layer over real services.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings


def timed(client, path: str, repeat: int = 3) -> tuple[float, float, bytes]:
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        r = client.get(path)
        assert r.status_code == 200, r.get_json()
    return (time.process_time() - c0) / repeat, (time.perf_counter() - t0) / repeat, r.data


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--points-per-series", type=int, default=100_000)
    args = p.parse_args()
    n = args.points_per_series
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(db=str(Path(tmp) / "bench.db"))
        svc = Services.open(settings)
        svc.start()
        try:
            client = create_app(settings, svc).test_client()
            rng = np.random.default_rng(0)
            envs = []
            for cfg in range(2):
                for seed in range(5):
                    env = f"c{cfg}_s{seed}"
                    envs.append(env)
                    events = [{"op": "set_meta", "env": env, "meta": {"lr": cfg, "seed": seed}}]
                    events += [{"op": "set", "env": env, "win": tag, "kind": "line", "opts": {"title": tag},
                                "traces": [{"name": None, "x": list(range(n)), "y": rng.random(n).tolist()}]}
                               for tag in ("loss", "acc", "lr")]
                    assert client.post("/api/v1/events", json={"events": events}).status_code == 200
            query = "/api/v1/groups?envs=" + ",".join(envs) + "&band=ci&value=best"
            client.get(query)  # warm caches once
            for points in (2000, 20000):
                cpu, wall, data = timed(client, f"{query}&points={points}")
                print(f"groups, 10 runs x 3 series x {n:,} points, budget {points}: {cpu * 1000:.0f} ms CPU, "
                      f"{wall * 1000:.0f} ms wall, {len(data) / 1e6:.2f} MB JSON")
            cpu, wall, data = timed(client, "/api/v1/envs/c0_s0/snapshot.html")
            print(f"snapshot of one run: {cpu * 1000:.0f} ms CPU, {wall * 1000:.0f} ms wall, {len(data) / 1e6:.2f} MB "
                  "(Plotly alone is 4.8 MB)")
            cpu, wall, data = timed(client, "/api/v1/archive?envs=" + ",".join(envs), repeat=1)
            print(f"archive of 10 runs ({30 * n:,} points): {cpu:.2f} s CPU, {wall:.2f} s wall, {len(data) / 1e6:.1f} MB")
            other = Settings(db=str(Path(tmp) / "import.db"), max_request_bytes=512 << 20)  # HTTP body limit
            target = Services.open(other)
            target.start()
            try:
                c0, t0 = time.process_time(), time.perf_counter()
                r = create_app(other, target).test_client().post("/api/v1/archive", data=data)
                assert r.status_code == 200, r.get_json()
                print(f"import of that archive: {time.process_time() - c0:.2f} s CPU (writer thread included), "
                      f"{time.perf_counter() - t0:.2f} s wall")
            finally:
                target.stop()
        finally:
            svc.stop()


if __name__ == "__main__":
    main()
