"""Artifacts benchmark: log_artifact latency in the training thread, upload speed to the local store, memory.

Starts dash-server on a temp database (artifacts in the folder beside it), writes a file of random bytes (1 GB by
default) and logs it from this process with the real SDK. Prints:
  - log_artifact: the call's time in the calling thread (median and max of --calls calls on the big file; each
    call logs a new version, so the uploads of the later ones find every byte stored and skip it);
  - upload: the first version's bytes over the seconds from the call to ref.wait() returning "name:v1" (hashing
    here, chunked HTTP upload, the server's hash check and fsync, the version recorded), in MB/s;
  - peak RSS above each process's baseline (this one, the SDK side, and dash-server's), sampled every 5 ms;
  - CPU seconds each process spent on that first upload (user + system): on a busy machine the MB/s figure
    shrinks with the share of the cores the bench gets, this one does not.
  - download: use_artifact of the file into an empty cache, in MB/s.
Goals (issue 32): < 1 ms per call, >= 200 MB/s, < 100 MB above baseline.
With --s3 the server keeps the bytes in a bucket (--artifacts-url s3://...) on moto's S3 server, started in its
own process on loopback (issue 47's goals: upload >= 150 MB/s, dash-server RSS <= 100 MB above baseline,
use_artifact >= 200 MB/s), and measures that server's own ceiling before and after ours (bench/s3_endpoint.py: boto3 straight
to it, no dash-server between) for the ratio of ours to it; dash-server's RSS is also sampled during use_artifact
(a read that buffered whole objects would show).
    python bench/artifacts.py [--mb 1024] [--calls 20] [--s3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, rss_mb, start_server, stop, temp_dir, wait_up  # noqa: E402
from s3_endpoint import BUCKET, ceiling, start_s3  # noqa: E402


def start_s3_server(db: Path, port: int, env: dict[str, str]) -> subprocess.Popen:
    """dash-server on loopback with its own SQLite file and its artifacts in the bench bucket."""
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(db), "--log-level", "warning", "--artifacts-url", f"s3://{BUCKET}/bench"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env})
    wait_up(proc, f"http://127.0.0.1:{port}/api/v1/envs", "dash-server")
    return proc


class PeakRss:
    """The highest RSS of each pid, sampled in a thread until stop()."""

    def __init__(self, pids: list[int], every: float = 0.005) -> None:
        self.base = {pid: rss_mb(pid) for pid in pids}
        self.peak = dict(self.base)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            for pid in self.peak:
                self.peak[pid] = max(self.peak[pid], rss_mb(pid))

    def stop(self) -> dict[int, float]:
        self._stop.set()
        self._thread.join()
        return {pid: self.peak[pid] - self.base[pid] for pid in self.peak}


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=1024, help="size of the artifact file")
    ap.add_argument("--calls", type=int, default=20, help="log_artifact calls timed")
    ap.add_argument("--s3", action="store_true", help="artifacts in a bucket on moto's S3 server (loopback)")
    args = ap.parse_args()
    root = temp_dir("artifacts")
    big = root / "model.bin"
    block = os.urandom(1 << 20)
    with open(big, "wb") as f:
        for i in range(args.mb):  # every MB differs (a counter in front): no chunk repeats another
            f.write(i.to_bytes(8, "little") + block[8:])
    os.environ["PANEBOARD_SPOOL_DIR"] = str(root / "spool")
    port = free_port()
    s3 = None
    endpoint: dict[str, float] = {}
    if args.s3:
        s3, s3_env = start_s3(root)
        endpoint = ceiling(s3_env, big)
        server = start_s3_server(root / "bench.db", port, s3_env)
    else:
        server = start_server(root / "bench.db", port)
    try:
        import paneboard

        client = paneboard.Client(port=port, env="bench", spool_dir=root / "spool")
        assert client.flush(30)
        warm = root / "warm.bin"
        warm.write_bytes(b"warm")
        client.log_artifact(warm, name="warm").wait(30)  # the uploader thread and connections are up
        rss = PeakRss([os.getpid(), server.pid])
        pids = [os.getpid(), server.pid] + ([s3.pid] if s3 is not None else [])
        cpu0 = {pid: cpu_s(pid) for pid in pids}
        t0 = time.perf_counter()
        ref = client.log_artifact(big, name="model")
        first_call = time.perf_counter() - t0
        got = ref.wait(600)
        upload_s = time.perf_counter() - t0
        cpu = {pid: cpu_s(pid) - before for pid, before in cpu0.items()}
        peaks = rss.stop()
        assert got == "model:v1", got
        if args.s3:  # the ceiling again: on a shared machine the load moves, ours is compared with both
            after = ceiling(s3_env, big)
            endpoint = {k: (endpoint[k] + after[k]) / 2 for k in endpoint}
        calls = []
        refs = []
        for _ in range(args.calls):
            t = time.perf_counter()
            refs.append(client.log_artifact(big, name="model"))
            calls.append(time.perf_counter() - t)
            time.sleep(0.01)
        assert all(r.wait(600) for r in refs)
        reading = PeakRss([server.pid])
        t = time.perf_counter()
        used = Path(client.use_artifact("model:v1", root=root / "cache"))
        download_s = time.perf_counter() - t
        read_peak = reading.stop()[server.pid]
        assert used.stat().st_size == big.stat().st_size
        client.close_connection(30)
        stored = 0 if args.s3 else sum(p.stat().st_size for p in (root / "artifacts" / "objects").rglob("*")
                                       if p.is_file())
    finally:
        stop(server)
        if s3 is not None:
            stop(s3)
        shutil.rmtree(root, ignore_errors=True)  # two copies of the file: gigabytes
    mb = args.mb * (1 << 20) / 1e6
    where = f"an S3 bucket (moto on loopback, s3://{BUCKET}/bench)" if args.s3 else "the local store"
    print(f"artifact file: {args.mb} MiB ({mb:.0f} MB); {args.calls + 1} versions logged"
          + ("" if args.s3 else f", {stored / 1e6:.0f} MB stored (one copy)"))
    print(f"log_artifact in the training thread: first {first_call * 1e3:.3f} ms; next {args.calls}: median "
          f"{statistics.median(calls) * 1e3:.3f} ms, max {max(calls) * 1e3:.3f} ms (goal < 1 ms)")
    print(f"upload to {where}: {mb / upload_s:.0f} MB/s ({upload_s:.2f} s from the call to name:v1 "
          f"acknowledged; goal >= {150 if args.s3 else 200} MB/s)")
    if endpoint:
        print(f"the S3 endpoint's own ceiling (boto3 straight to moto, 8 MiB parts; the mean of a run before and "
              f"one after ours): upload_file on 4 threads "
              f"{mb / endpoint['threaded']:.0f} MB/s, one part after the other {mb / endpoint['single']:.0f} MB/s, "
              f"get_object {mb / endpoint['download']:.0f} MB/s; ours / best upload "
              f"{min(endpoint['threaded'], endpoint['single']) / upload_s:.2f} (load {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores)")
    print(f"use_artifact (download into an empty cache): {mb / download_s:.0f} MB/s ({download_s:.2f} s; "
          f"goal >= 200 MB/s); dash-server peak RSS above baseline meanwhile {read_peak:.1f} MB")
    print(f"peak RSS above baseline: SDK process {peaks[os.getpid()]:.1f} MB, dash-server "
          f"{peaks[server.pid]:.1f} MB (goal < 100 MB)")
    print(f"CPU for the upload: SDK process {cpu[os.getpid()]:.2f} s, dash-server {cpu[server.pid]:.2f} s "
          f"({(cpu[os.getpid()] + cpu[server.pid]) / (mb / 1e3):.2f} CPU-s per GB)"
          + (f"; the S3 server (moto) {cpu[s3.pid]:.2f} s" if s3 is not None else ""))


if __name__ == "__main__":
    main()
