"""Red-team area of issue 40's third pass, memory: the largest legal frame or body of each kind against a real
dash-server, with its peak RSS above the baseline (VmHWM, reset before each) and another client's slowest read.

    python bench/redteam_round3_memory.py [--max-request-mb 64]   # starts its own dash-server, prints a table

Also run by bench/redteam.py (area memory3). Goal (issue 40): each case stays under 300 MB above the baseline
and other reads under 1 s, at the default 64 MB limit; tests/security/test_ingest_memory_round3.py checks a scaled size.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import free_port, rss_mb, stop  # noqa: E402
from redteam_common import ADMIN, RESULTS, Srv, check, up  # noqa: E402
from redteam_round3_ingest import _slowest_read_during, _ws  # noqa: E402

from paneboard import protocol  # noqa: E402
from paneboard.protocol import pack_frame  # noqa: E402
from paneboard.server.web.sockets import frame_limit  # noqa: E402

AREA = "memory3"
GOAL_MB = 300.0  # at the default 64 MB limit; scaled with it below
SLACK = 64 << 10  # bytes left under a limit for the frame around the events


def reset_peak(pid: int) -> None:
    """Start the process's peak RSS (VmHWM) afresh at its current RSS (Linux: clear_refs 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_mb(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/PID/status")


def _text_event(s: int, env: str, size: int) -> bytes:
    head = json.dumps({"s": s, "op": "set", "env": env, "win": "t", "kind": "text", "content": ""},
                      separators=(",", ":")).encode()[:-3]  # up to `"content":`
    return head + b'"' + b"x" * max(0, size - len(head) - 3) + b'"}'


def _texts(env: str, total: int, max_event: int) -> list[bytes]:
    """Text events of up to `max_event` bytes (each legal) adding up to `total` bytes."""
    events: list[bytes] = []
    while total > 1024:
        size = min(total, max_event - 1024)
        events.append(_text_event(len(events) + 1, env, size))
        total -= size + 1
    return events


def _values_event(env: str, item: bytes, count: int) -> bytes:
    """One event whose content is `count` copies of a JSON value: decoded in full, then rejected (a text
    pane's content is a string), which is the cost in question."""
    head = b'{"s":1,"op":"set","env":"%s","win":"t","kind":"text","content":[' % env.encode()
    return head + b",".join([item] * count) + b"]}"


def _over_socket(srv: Srv, client: str, frame: bytes | str) -> Callable[[], str]:
    def send() -> str:
        ws, _ = _ws(srv, client)
        try:
            ws.send(frame)
            return str(json.loads(ws.recv(timeout=300)))[:160]
        except Exception as exc:  # the server closing a too-big frame (1009) is an answer too
            return f"closed: {exc}"[:160]
        finally:
            ws.close()
    return send


def _posted(srv: Srv, path: str, body: bytes, ctype: str) -> Callable[[], str]:
    def send() -> str:
        status, _, answer = srv.call("POST", path, raw=body, ctype=ctype)
        return f"{status} {str(answer)[:140]}"
    return send


def cases(srv: Srv, max_request: int) -> list[tuple[str, Callable[[], Callable[[], str]]]]:
    """(name, make) for the largest legal frame or body of each kind: make() builds it (here, before the
    reader thread starts: building it under the GIL would slow that thread) and returns what sends it."""
    limit = frame_limit(max_request) - SLACK
    values = getattr(protocol, "MAX_FRAME_VALUES", None)
    floats = (limit - 200) // 4  # "0.5," each: a frame at the limit
    strings = values if values is not None else (limit - 200) // 5
    return [
        ("/ingest text frame at the frame limit", lambda: _over_socket(
            srv, "rt-mem-text", (b'{"batch":[' + b",".join(_texts("rt_mem_text", limit, max_request)) + b"]}").decode())),
        ("/ingest binary frame at the frame limit", lambda: _over_socket(
            srv, "rt-mem-bin", pack_frame(_texts("rt_mem_bin", limit, max_request)))),
        (f"/ingest frame of {floats / 1e6:.0f}M bare floats", lambda: _over_socket(
            srv, "rt-mem-floats", b'{"batch":[' + _values_event("rt_mem_f", b"0.5", floats) + b"]}")),
        (f"/ingest frame of {strings / 1e6:.0f}M short strings", lambda: _over_socket(
            srv, "rt-mem-strings", b'{"batch":[' + _values_event("rt_mem_s", b'"ab"', strings - 8) + b"]}")),
        ("POST /api/v1/events body at the limit", lambda: _posted(
            srv, "/api/v1/events", b'{"events":[' + _texts("rt_mem_post", max_request - SLACK, max_request)[0] + b"]}",
            "application/json")),
        ("POST /api/v1/import/frames body at the limit", lambda: _posted(
            srv, "/api/v1/import/frames?client=import-rt-mem", pack_frame(_texts("rt_mem_imp", max_request - SLACK,
                                                                                 max_request)),
            "application/octet-stream")),
    ]


def memory(srv: Srv, max_request: int = 64 << 20) -> list[tuple[str, float, float, str]]:
    """Each case's (name, peak RSS above the baseline in MB, slowest other read in s, answer), checked."""
    goal = GOAL_MB * max_request / (64 << 20)
    rows = []
    for name, make in cases(srv, max_request):
        send = make()
        reset_peak(srv.pid)
        base = rss_mb(srv.pid)
        slow, answer = _slowest_read_during(srv, send)
        grown = peak_mb(srv.pid) - base
        rows.append((name, grown, slow, str(answer)))
        check(AREA, f"{name}: peak RSS < {goal:.0f} MB, reads < 1 s", lambda g=grown, s=slow, a=answer: (
            g < goal and s < 1.0, f"+{g:.0f} MB, slowest read {s * 1000:.0f} ms; {str(a)[:70]}"))
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max-request-mb", type=int, default=64)
    args = p.parse_args()
    import subprocess

    tmp = Path(tempfile.mkdtemp(prefix="pb-rt-memory-"))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(tmp / "rt.db"), "--log-level", "warning", "--token", ADMIN,
                             "--max-request-mb", str(args.max_request_mb)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    srv = up(Srv(f"http://127.0.0.1:{port}", proc.pid), proc)
    try:
        print(f"frame limit {frame_limit(args.max_request_mb << 20) / 2**20:.0f} MB, baseline RSS "
              f"{rss_mb(proc.pid):.0f} MB")
        rows = memory(srv, args.max_request_mb << 20)
    finally:
        stop(proc)
    print(f"{'case':<48} {'peak RSS':>9} {'read':>7}  answer")
    for name, grown, slow, answer in rows:
        print(f"{name:<48} {grown:>+7.0f}MB {slow * 1000:>5.0f}ms  {answer[:60]}")
    return 0 if all(held for _, held, _ in RESULTS[AREA]) else 1


if __name__ == "__main__":
    sys.exit(main())
