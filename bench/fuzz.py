"""Fuzz a real dash-server over HTTP and /ingest; every answer must be a 4xx/2xx or an ack, never a 5xx or crash.

    python bench/fuzz.py [--http 10000] [--batches 5000] [--seed N]

HTTP: cases drawn by schemathesis from the server's own OpenAPI description (/api/v1/openapi.json), plus
requests built by hand and mutated at random (methods, paths with emoji/CJK names, query strings, non-ASCII
header names, deep/huge/truncated/non-UTF-8 JSON, wrong content types, chunked bodies) against every Visdom
route, the page routes and the JSON API. Ingest: batches of 1-5 mutated events of every pane kind and op over
/ingest websockets; every reply must be an ack (maybe with "rejected") or a documented {"error", "retry"}.
At the end the server log is searched for handler crashes. Exit 1 on any 5xx or crash. Loopback only.
"""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import copy
import json
import math
import random
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

ENVS = ["fz0", "fz1", "fz-😀-émoji", "实验/运行", "fz2"]
WINS = ["w0", "w1", "w2", "图", "w/😀"]
SEED_ENV = "fuzz-seed"
# Tracebacks, error-level records and the frameworks' own crash reports; not a fuzzed URL that says "Traceback".
CRASH = re.compile(r"^Traceback \(most recent call last\)| (?:ERROR|CRITICAL) |unhandled error|Exception in ASGI")
STAMP = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ |^(?:INFO|WARNING|ERROR|CRITICAL): +")


# ---------------------------------------------------------------- valid shapes


def png(w: int = 2, h: int = 2) -> bytes:
    """A tiny RGB PNG, made by hand (no imaging library needed)."""
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\x80\x40\x20" * w for _ in range(h))  # filter byte, then RGB pixels
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PNG_B64 = base64.b64encode(png()).decode()
WAV_B64 = base64.b64encode(b"RIFF" + struct.pack("<I", 36 + 8) + b"WAVEfmt " + struct.pack(
    "<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16) + b"data" + struct.pack("<I", 8) + b"\x00\x01" * 4).decode()
MATRIX_B64 = base64.b64encode(struct.pack("<6f", 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)).decode()


def records(kind: str, rng: random.Random) -> list[dict]:
    out = []
    for step in range(rng.randint(1, 3)):
        if kind == "histogram":
            out.append({"step": step, "min": 0.0, "max": 3.0, "num": 6, "sum": 9.0, "sum_squares": 17.0,
                        "limits": [1.0, 2.0, 3.0], "counts": [1, 2, 3]})
        elif kind == "pr_curve":
            out.append({"step": step, "tp": [3, 2], "fp": [2, 1], "tn": [0, 1], "fn": [0, 1],
                        "precision": [0.6, 0.66], "recall": [1.0, 0.66], "thresholds": [0.0, 1.0]})
        else:
            out.append(rng.choice([{"step": step, "type": "image", "data": PNG_B64, "mime": "image/png", "caption": "c"},
                                   {"step": step, "type": "audio", "data": WAV_B64, "mime": "audio/wav",
                                    "sample_rate": 8000},
                                   {"step": step, "type": "text", "text": "**md** <b>x</b>", "format": "markdown"}]))
    return out


def valid_event(rng: random.Random) -> dict:
    """One valid event of a random kind and op (docs/WIRE.md §1), on the small pool of envs and windows."""
    env, win = rng.choice(ENVS), rng.choice(WINS)
    ev: dict[str, Any] = {"env": env, "win": win, "t": time.time()}
    kind = rng.choice(["line", "scatter", "text", "image", "figure", "properties", "network", "embeddings",
                       "model_graph", "projector", "histogram", "media", "pr_curve", "envop", "envop"])
    op = "set" if rng.random() < 0.6 else "update"
    n = rng.randint(1, 20)
    if kind in ("line", "scatter"):
        x0 = rng.randint(0, 1000)
        ev.update(kind=kind, traces=[{"name": rng.choice(["a", "b", None]), "x": list(range(x0, x0 + n)),
                                      "y": [rng.uniform(-5, 5) for _ in range(n)], "style": {"mode": "lines"}}],
                  opts={"title": "loss", "xlabel": "step"})
        if op == "update":
            ev.update(mode=rng.choice(["append", "replace", "remove"]), name=rng.choice(["a", None]))
    elif kind == "text":
        ev.update(kind="text", content="<b>hi</b> <script>x()</script> 中文")
        if op == "update":
            ev["mode"] = rng.choice(["append", "replace"])
    elif kind == "image":
        ev.update(kind="image", image={"mime": "image/png", "data": PNG_B64, "width": 2, "height": 2},
                  opts={"caption": "img"})
        if op == "update":
            ev["mode"] = rng.choice(["append", "replace"])
    elif kind == "figure":
        if op == "set":
            ev.update(kind="figure", figure={"data": [{"type": "heatmap", "z": [[1, 2], [3, 4]], "x": ["a", "b"],
                                                        "y": ["r", "s"]}], "layout": {"title": "hm"}})
        else:
            mode = rng.choice(["append", "replace", "remove", "layout", "appendRow", "appendColumn",
                               "prependRow", "prependColumn"])
            ev.update(kind="figure", mode=mode, name=rng.choice(["t", None]), layout={"title": "u"},
                      traces=[{"type": "heatmap", "z": [[5, 6]], "y": [f"r{rng.randint(0, 99)}"]}])
    elif kind == "properties":
        ev.update(kind="properties", properties=[{"type": "text", "name": "n", "value": "v"},
                                                 {"type": "number", "name": "lr", "value": 0.1},
                                                 {"type": "select", "name": "s", "value": 0, "values": ["a", "b"]}])
        if op == "update":
            ev["mode"] = "replace"
    elif kind == "network":
        ev.update(kind="network", graph={"nodes": [{"label": "a"}, {"label": "b"}],
                                         "edges": [{"source": 0, "target": 1, "label": "e"}]},
                  opts={"directed": True})
        if op == "update":
            ev["mode"] = "replace"
    elif kind == "embeddings":
        ev.update(kind="embeddings", embeddings={"data": [{"x": 0.1, "y": 0.2, "label": "p"}], "isLoading": False})
        if op == "update":
            ev.update(mode=rng.choice(["EntitySelected", "RegionSelected"]),
                      embeddings={"selected": {"x": 1}, "points": [{"x": 0.1, "y": 0.2}]})
    elif kind == "model_graph":
        ev.update(kind="model_graph", graph={"name": "Net", "nodes": [
            {"id": "in", "label": "x", "op": "input", "scope": "", "shape": "[1, 3]", "inputs": [], "attr": ""},
            {"id": "l", "label": "linear", "op": "aten::linear", "scope": "Net/Linear[fc]", "shape": "[1, 2]",
             "inputs": ["in"], "attr": ""}]})
        if op == "update":
            ev["mode"] = "replace"
    elif kind == "projector":
        ev.update(kind="projector", win=f"projector/t/{rng.randint(0, 3):05d}",
                  projector={"step": 0, "matrix": {"shape": [3, 2], "dtype": "float32", "data": MATRIX_B64},
                             "metadata": {"header": ["label"], "rows": [["a"], ["b"], ["c"]]}, "sprite": None})
        if op == "update":
            ev["mode"] = "replace"
    elif kind in ("histogram", "media", "pr_curve"):
        ev.update(kind=kind, records=records(kind, rng))
        if op == "update":
            ev["mode"] = "append"
    else:
        op = rng.choice(["close", "delete_env", "fork_env", "rename_env", "layout", "save_view", "load_view",
                         "set_meta", "custom_scalars", "hparams"])
        extra: dict[str, Any] = {
            "close": {"win": rng.choice([win, None])},
            "delete_env": {},
            "fork_env": {"from": rng.choice(ENVS)},
            "rename_env": {"to": rng.choice(ENVS)},
            "layout": {"layout": rng.choice([{"x": 0, "y": 1, "w": 4, "h": 3}, None])},
            "save_view": {"name": rng.choice(["v1", "视图"])},
            "load_view": {"name": rng.choice(["v1", "视图"])},
            "set_meta": {"meta": {"lr": 0.1, "model": "resnet", "nested": {"a": [1, 2]}}},
            "custom_scalars": {"layout": {"cat": {"chart": ["Multiline", ["loss.*"]],
                                                  "m": ["Margin", ["v", "lo", "hi"]]}}},
            "hparams": {"session": rng.choice([".", "s1"]), "hparams": {"lr": 0.1, "opt": "adam", "bn": True},
                        "metrics": {"loss": 0.5, "acc": None}, "domains": {"opt": ["adam", "sgd"]}},
        }[op]
        ev.update(extra)
    ev["op"] = op
    return ev


# ---------------------------------------------------------------- mutation


def nasty(rng: random.Random) -> Any:
    """A value of the wrong type, range or size."""
    pick = rng.randrange(24)
    return [None, True, False, 0, -1, -2**63, 2**64, 10**40, -(10**400), 1e308, -1e308, math.nan, math.inf, -math.inf,
            "", "x" * rng.choice([300, 70_000]), "\ud800 lone", "😀🔥中文テスト", "\x00\x01\x7f", [], {},
            deep(rng.choice([40, 70, 200])), [None] * 50, {"__proto__": {"x": 1}}][pick]


def deep(n: int) -> Any:
    v: Any = 1
    for i in range(n):
        v = [v] if i % 2 else {"d": v}
    return v


def paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:8]):
            out += paths(v, prefix + (i,))
    return out


def mutate(obj: Any, rng: random.Random, rounds: int | None = None) -> Any:
    """Deep copy of obj with 0-3 random edits: deletions, type swaps, odd numbers, nesting, names, lengths."""
    obj = copy.deepcopy(obj)
    for _ in range(rng.choice([0, 1, 1, 2, 3]) if rounds is None else rounds):
        choices = paths(obj)[1:]
        if not choices:
            return nasty(rng)
        path = rng.choice(choices)
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        what = rng.randrange(8)
        if what == 0 and isinstance(parent, dict):
            del parent[key]
        elif what == 0 and isinstance(parent, list):
            parent.pop(key)
        elif what in (1, 2, 3):
            parent[key] = nasty(rng)
        elif what == 4 and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            v = parent[key]
            parent[key] = rng.choice([-v, v * 10**300 if isinstance(v, int) else v * 1e300, -1, 0, 2**53 + 1,
                                      1e-320, 10**19])
        elif what == 5 and isinstance(parent[key], list):
            parent[key] = parent[key] * rng.choice([0, 3, 1000])
        elif what == 6 and isinstance(parent[key], str):
            parent[key] = rng.choice(["", "../..", "a" * 257, "😀" * 300, "名前", "a\x00b", "\ud83d", " ", "a/b%2f"])
        elif what == 7 and isinstance(parent, dict):
            parent[rng.choice(["extra", "😀", "", "op", "kind", "mode", "s"])] = nasty(rng)
    return obj


def dumps(obj: Any) -> str:
    """JSON text, with NaN/Infinity literals and lone surrogates escaped (as a Python producer would send)."""
    try:
        return json.dumps(obj, allow_nan=True)
    except (ValueError, RecursionError, TypeError):  # (bytes or schemathesis' NotSet in a drawn case)
        return json.dumps(str(obj)[:1000])


# ---------------------------------------------------------------- the server


def start(db: Path, log: Path, port: int) -> subprocess.Popen:
    out = open(log, "ab")
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(db), "--log-level", "warning"], stdout=out, stderr=subprocess.STDOUT)
    common.wait_up(proc, f"http://127.0.0.1:{port}/api/v1/envs", "dash-server")
    return proc


def seed(port: int) -> None:
    """An env with a line, text, image and histogram pane, through the real SDK."""
    import numpy as np

    import paneboard

    client = paneboard.Client(server="http://127.0.0.1", port=port, env=SEED_ENV, spool_dir=False)
    try:
        client.line(Y=np.arange(50.0) ** 0.5, X=np.arange(50), win="loss", opts={"title": "loss"})
        client.text("<b>seed</b> 种子 😀", win="notes")
        client.image(np.random.default_rng(0).random((3, 8, 8)), win="img", opts={"caption": "noise"})
        client.histogram(np.random.default_rng(1).normal(size=200), win="hist", opts={"numbins": 10})
        if not client.flush(timeout=30):
            raise RuntimeError("the SDK could not deliver the seed data")
    finally:
        client.close_connection(timeout=10)


# ---------------------------------------------------------------- HTTP


class Tally:
    def __init__(self) -> None:
        self.classes: collections.Counter[str] = collections.Counter()
        self.errors: list[str] = []       # every 5xx
        self.no_answer: list[str] = []    # connection closed or timed out without a status line
        self.sent = 0

    def add(self, method: str, path: str, status: int, body: bytes | str, sent: bytes | str = b"") -> None:
        self.sent += 1
        if status == 0:
            self.classes["none"] += 1
            self.no_answer.append(f"{method} {path[:150]}")
            return
        self.classes[f"{status // 100}xx"] += 1
        if status >= 500:
            excerpt = body if isinstance(body, str) else body.decode("utf-8", "replace")
            sent = sent if isinstance(sent, str) else sent[:200].decode("utf-8", "replace")
            self.errors.append(f"{status} {method} {path[:200]} body={sent[:200]!r} -> {excerpt[:200]!r}")


def raw_http(port: int, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes | None,
             chunked: bool = False, timeout: float = 60) -> tuple[int, bytes]:
    """One request over a fresh connection, written byte for byte (so it may break HTTP's own rules)."""
    head = [method + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1:%d" % port, b"Connection: close"]
    head += [k + b": " + v for k, v in headers]
    if body is not None:
        if chunked:
            head.append(b"Transfer-Encoding: chunked")
            pieces = [body[i:i + 1000] for i in range(0, len(body), 1000)]
            body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
        elif not any(k.lower() == b"content-length" for k, _ in headers):
            head.append(b"Content-Length: %d" % len(body))
    data = b"\r\n".join(head) + b"\r\n\r\n" + (body or b"")
    chunks = []
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(data)
            while part := s.recv(1 << 16):
                chunks.append(part)
    except OSError:
        pass  # reset by the server after it answered (it may not read an unwanted body): keep what came
    resp = b"".join(chunks)
    while re.match(rb"HTTP/1\.[01] 1\d\d", resp):  # an interim answer (100 Continue): the real one follows
        resp = resp.partition(b"\r\n\r\n")[2]
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    if m is None:
        return 0, resp[:200]
    return int(m.group(1)), resp.partition(b"\r\n\r\n")[2]


def draw(strategy: Any, n: int, seed_: int, call: Any) -> Any:
    """A function that calls call(case) for up to n cases drawn from strategy (fewer if hypothesis runs out)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    @hseed(seed_)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate])
    @given(case=strategy)
    def run(case: Any) -> None:
        call(case)

    return run


def schemathesis_phase(port: int, n: int, seed_: int, tally: Tally) -> None:
    """About n cases drawn from the served OpenAPI description, positive and negative, per operation."""
    import requests
    import schemathesis
    from schemathesis.generation import GenerationMode

    base = f"http://127.0.0.1:{port}"
    schema = schemathesis.openapi.from_url(base + "/api/v1/openapi.json")
    ops = [r.ok() for r in schema.get_all_operations()]
    session = requests.Session()
    session.trust_env = False
    known = {"env": [SEED_ENV, *ENVS], "win": ["loss", "notes", "img", "hist", *WINS]}
    variants = []
    for op in ops:
        names = {p.name for p in op.path_parameters}
        fixed = {k: v for k, v in known.items() if k in names}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            variants.append((op, mode, None))
            if fixed:
                variants.append((op, mode, fixed))
    per = max(1, n // len(variants))
    for i, (op, mode, fixed) in enumerate(variants):
        done = 0
        while done < per:
            budget = per - done
            path_parameters = {k: random.Random(seed_ + i + done).choice(v) for k, v in fixed.items()} \
                if fixed else None
            strategy = op.as_strategy(generation_mode=mode, path_parameters=path_parameters)
            drawn = [0]

            def on_case(case: Any, drawn: list[int] = drawn) -> None:
                drawn[0] += 1
                path = case.formatted_path
                try:
                    resp = case.call(base_url=base, session=session, timeout=60)
                    status, text = resp.status_code, resp.text
                except Exception as exc:  # a request the client cannot even send (e.g. a header it refuses)
                    if isinstance(exc, requests.ConnectionError):
                        tally.add(case.method, path, 0, str(exc))
                    return
                body = case.body if isinstance(case.body, (dict, list, str, int, float, bool, type(None))) else None
                tally.add(case.method, path, status, text, "" if body is None else dumps(body))

            run = draw(strategy, budget, seed_ + i * 1000 + done, on_case)
            try:
                run()
            except Exception as exc:  # hypothesis gives up on an operation it cannot generate for
                if type(exc).__name__ != "Unsatisfiable":  # e.g. no negative case exists for a bare GET
                    print(f"  {op.method.upper()} {op.path} ({mode.value}): {type(exc).__name__}: {str(exc)[:120]}")
                break
            if drawn[0] == 0:
                break
            done += drawn[0]
            if drawn[0] < budget and not fixed:
                break  # hypothesis ran out of distinct cases: the rest goes to the mutation phase


def visdom_bodies(rng: random.Random, env: str, win: str) -> dict[str, Any]:
    """A valid body for each Visdom route (what the visdom 0.2.4 client sends)."""
    line = {"x": [1, 2, 3], "y": [4.0, 5.0, 6.0], "type": "scatter", "mode": "lines", "name": "a"}
    datas = [[line], [{"content": "hi <b>x</b>", "type": "text"}],
             [{"content": {"src": "data:image/png;base64," + PNG_B64, "caption": "c"}, "type": "image"}],
             [{"content": [{"src": "data:image/png;base64," + PNG_B64}], "type": "image_history"}],
             [{"z": [[1, 2], [3, 4]], "type": "heatmap"}], [{"x": [1, 2], "type": "bar"}],
             [{"content": [{"type": "text", "name": "n", "value": "v"}], "type": "properties"}],
             [{"content": {"nodes": [{"label": "a"}], "edges": []}, "type": "network"}],
             [{"content": {"data": [{"x": 1, "y": 2}]}, "type": "embeddings"}]]
    window = {"content": {"data": [line], "layout": {}}, "type": "plot", "title": "t", "opts": {}}
    return {
        "/events": {"eid": env, "win": win, "data": rng.choice(datas), "layout": {"title": "t"}, "opts": {"title": "t"}},
        "/update": {"eid": env, "win": win, "data": rng.choice([[line], {"update_type": "appendRow"}] + datas),
                    "append": rng.random() < 0.5, "name": rng.choice(["a", None]), "updateDir": "appendRow",
                    "opts": {"title": "u"}, "layout": {}, "delete": rng.random() < 0.1},
        "/close": {"eid": env, "win": rng.choice([win, None])},
        "/win_exists": {"eid": env, "win": win},
        "/win_hash": {"eid": env, "win": win},
        "/win_data": rng.choice([{"eid": env, "win": win}, {"eid": env},
                                 {"eid": env, "win": win, "data": json.dumps(window)},
                                 {"eid": env, "data": json.dumps({win: window})}]),
        "/env_state": {},
        "/save": {"data": [env, SEED_ENV, "nope"]},
        "/fork_env": {"prev_eid": rng.choice([SEED_ENV, env]), "eid": rng.choice(ENVS)},
        "/delete_env": {"eid": rng.choice(ENVS)},
        "/env/" + urllib.parse.quote(env, safe=""): {"eid": env},
        "/vis_socket_wrap": rng.choice([{"message_type": "init"}, {"message_type": "query", "sid": "00" * 16}]),
        "/vis_event": {"event_type": rng.choice(["KeyPress", "Click", "PropertyUpdate", "close"]), "target": win,
                       "eid": env, "key": "a", "key_code": 65, "image_coord": {"x": 1, "y": 2}, "propertyId": 0,
                       "value": "v"},
        "/": {"username": "u", "password": "0" * 64},
    }


def api_writes(rng: random.Random, env: str, env2: str, win: str) -> list[tuple[bytes, str, Any]]:
    """(method, path template, valid body) of every JSON API route that writes."""
    return [
        (b"POST", "/api/v1/events", {"events": [mutate(valid_event(rng), rng) for _ in range(rng.randint(1, 3))]}),
        (b"POST", "/api/v1/events", {"events": [valid_event(rng) for _ in range(rng.randint(1, 3))]}),
        (b"PUT", "/api/v1/envs/{e}/meta", {"config": {"lr": 0.1, "layers": [1, 2], "name": "名前"}}),
        (b"PUT", "/api/v1/envs/{e}/panes/{w}/layout", rng.choice([{"x": 0, "y": 0, "w": 6, "h": 4}, None])),
        (b"POST", "/api/v1/envs/{e}/fork", {"to": env2}),
        (b"POST", "/api/v1/envs/{e}/rename", {"to": env2}),
        (b"POST", "/api/v1/envs/{e}/views", {"name": rng.choice(["v1", "视图"])}),
        (b"POST", "/api/v1/envs/{e}/views/v1/load", {}),
        (b"DELETE", "/api/v1/envs/{e}/panes/{w}", None),
    ]


GET_PATHS = ["/", "/compare?envs={e},{e2}", "/scalars?envs={e}", "/hparams?envs={e}", "/env/{e}",
             "/api/v1/envs?q={e}&sort=size&order=desc", "/api/v1/envs/{e}", "/api/v1/envs/{e}/panes?points=10",
             "/api/v1/envs/{e}/panes/{w}?points=5&x0=1&x1=3&walls=1&steps=3", "/api/v1/envs/{e}/panes/{w}/steps?i0=-3&i1=2",
             "/api/v1/envs/{e}/panes/{w}/export?format=csv", "/api/v1/envs/{e}/meta", "/api/v1/compare?envs={e},{e2}",
             "/api/v1/hparams?envs={e}", "/api/v1/envs/{e}/panes/{w}/neighbors?i=0&k=2",
             "/api/v1/envs/{e}/panes/{w}/projection?method=pca&dims=2&wait=0", "/api/v1/envs/{e}/panes/{w}/metadata",
             "/api/v1/blobs/{hex}", "/api/v1/openapi.json", "/static/js/app.js"]
ODD_NAMES = ["😀🔥", "实验/运行", "テスト", "a" * 300, "..", "%", "%zz", "%ff%fe", "%00", "a%2Fb", "\u202e", " ",
             "main", SEED_ENV, "fz-😀-émoji", "null", "<script>", "%ed%a0%80"]
ODD_QUERY = ["", "&points=-1", "&points=99999999999999999999", "&points=NaN", "&points=1e309", "&steps=0", "&x0=inf",
             "&i0=-99999999999999999999", "&k=0", "&wait=999", "&format=xml", "&envs=", "&envs=" + ",".join(["a"] * 500),
             "&sort=%ff", "&q=%00", "&method=tsne&wait=0", "&dims=9", "&i=-1", "&x0=2&x1=1", "&😀=😀", "&a=1&a=2",
             "&walls=yes", "&step=1e999", "&metric=manhattan", "&components=9,9,9", "&order=sideways"]
ODD_HEADERS = [(b"X-\xc3\x9cnic\xc3\xb6de", b"v"), (b"X-Emoji", "😀".encode()), (b"Content-Type", b"text/plain"),
               (b"Content-Type", b"application/x-www-form-urlencoded"), (b"Content-Type", b"multipart/form-data"),
               (b"Content-Type", b"application/json; charset=latin-1"), (b"Accept-Encoding", b"gzip, br"),
               (b"Authorization", b"Bearer \xff\xfe"), (b"Cookie", b"paneboard_token=\xe2\x98\x83; x"),
               (b"Origin", b"http://evil.example"), (b"Origin", b"null"), (b"X-Long", b"a" * 20_000),
               (b"Content-Length", b"-1"), (b"Content-Length", b"5, 6"), (b"Expect", b"100-continue"),
               (b"Range", b"bytes=5-1"), (b"If-None-Match", b"*"), (b"Host", b"evil.example"),
               (b"Content-Encoding", b"gzip"), (b"Accept", b"*/*;q=\xff")]
METHODS = [b"GET", b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"HEAD", b"TRACE", b"FOO", b"G\xc3\x84T"]


def quote_name(rng: random.Random) -> str:
    name = rng.choice(ODD_NAMES + ENVS)
    return name if name.startswith("%") else urllib.parse.quote(name, safe="" if rng.random() < 0.8 else "/")


def body_bytes(obj: Any, rng: random.Random) -> tuple[bytes, str]:
    """The body to send and a word for how it was spoiled."""
    text = dumps(obj).encode("utf-8", "surrogatepass")
    how = rng.choices(["json", "truncated", "deep", "huge", "nonutf8", "form", "empty", "nan", "array", "scalar"],
                      weights=[10, 2, 1, 1, 1, 1, 1, 1, 1, 1])[0]
    if how == "truncated":
        text = text[:rng.randint(0, max(0, len(text) - 1))]
    elif how == "deep":
        d = rng.choice([100, 1000, 20_000])
        text = b'{"eid": ' + b"[" * d + b"]" * d + b"}"
    elif how == "huge":
        text = text.replace(b"1", b"1" + b"9" * rng.choice([20, 400, 5000]), 1)
    elif how == "nonutf8":
        text = text[:len(text) // 2] + b"\xff\xfe\xc3(" + text[len(text) // 2:]
    elif how == "form":
        text = b"eid=" + urllib.parse.quote(rng.choice(ENVS)).encode() + b"&win=w0&data=%7B"
    elif how == "empty":
        text = b""
    elif how == "nan":
        text = b'{"eid": "fz0", "win": "w0", "data": [{"x": [NaN, Infinity], "y": [-Infinity, 1e999]}], "opts": NaN}'
    elif how == "array":
        text = b"[" + text + b"]"
    elif how == "scalar":
        text = rng.choice([b"null", b"true", b"1e999", b'"str"', b"-0"])
    return text, how


def mutation_phase(port: int, n: int, rng: random.Random, tally: Tally) -> None:
    for _ in range(n):
        env, env2, win = rng.choice(ENVS), rng.choice(ENVS + [SEED_ENV]), rng.choice(WINS + ["loss", "img", "hist"])
        headers: list[tuple[bytes, bytes]] = []
        chunked = False
        pick = rng.random()
        if pick < 0.45:  # a Visdom route, POST with a (mutated) body
            route, obj = rng.choice(list(visdom_bodies(rng, env, win).items()))
            method, target = b"POST", route.encode()
            body, how = body_bytes(mutate(obj, rng), rng)
            chunked = rng.random() < 0.1
        elif pick < 0.65:  # a JSON API write, with a (mutated) body
            m, route, obj = rng.choice(api_writes(rng, env, env2, win))
            method = m if rng.random() < 0.9 else rng.choice(METHODS)
            target = route.format(e=urllib.parse.quote(env, safe=""), w=urllib.parse.quote(win, safe="")).encode()
            body, how = body_bytes(mutate(obj, rng), rng)
            chunked = rng.random() < 0.1
        else:  # a page or API route, GET (or another method), with odd names and query strings
            tpl = rng.choice(GET_PATHS)
            target = tpl.format(e=quote_name(rng) if rng.random() < 0.4 else urllib.parse.quote(env, safe=""),
                                e2=urllib.parse.quote(env2, safe=""), w=urllib.parse.quote(win, safe=""),
                                hex=rng.choice(["0" * 64, "zz", "a" * 64 + "/x"])).encode()
            if rng.random() < 0.5:
                target += (b"&" if b"?" in target else b"?") + "".join(
                    rng.sample(ODD_QUERY, rng.randint(1, 3))).lstrip("&").encode()
            method, body, how = b"GET", None, "none"
            if rng.random() < 0.2:
                method = rng.choice(METHODS)
                if method in (b"POST", b"PUT", b"PATCH") or rng.random() < 0.3:
                    body, how = body_bytes(mutate({"to": env, "name": "v", "config": {"a": 1}, "x": 0, "y": 0,
                                                   "w": 2, "h": 2, "events": [valid_event(rng)]}, rng), rng)
        if rng.random() < 0.3:
            headers += rng.sample(ODD_HEADERS, rng.randint(1, 3))
        if rng.random() < 0.03:
            target = target + b"/\xe4\xb8\xad\xff"  # raw, unencoded bytes in the request target
        status, answer = raw_http(port, method, target, headers, body, chunked)
        tally.add(method.decode("latin-1"), target.decode("latin-1"), status, answer,
                  f"[{how}{', chunked' if chunked else ''}] " + (body or b"")[:150].decode("utf-8", "replace"))


# ---------------------------------------------------------------- ingest


class IngestTally:
    def __init__(self) -> None:
        self.batches = self.acks = self.rejected = self.retries = self.frame_errors = self.unexpected_closes = 0
        self.bad_replies: list[str] = []
        self.lost_frames: list[str | bytes] = []  # frames after which the connection closed or went silent
        self.events = 0


def ingest_phase(port: int, m: int, rng: random.Random, tally: IngestTally) -> None:
    with contextlib.ExitStack() as stack:  # every connection is entered here, and closed (again) at the end
        _ingest(port, m, rng, tally, stack)


def _ingest(port: int, m: int, rng: random.Random, tally: IngestTally, stack: contextlib.ExitStack) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    url = f"ws://127.0.0.1:{port}/ingest"
    ws = None
    client_n, seq = 0, 0

    def open_ws(fresh: bool) -> Any:
        nonlocal client_n, seq
        if fresh:
            client_n += 1
            seq = 0
        conn = stack.enter_context(connect(url, max_size=None, compression=None, open_timeout=30, proxy=None))
        conn.send(json.dumps({"hello": {"client": f"fuzz-{client_n}", "sdk": "fuzz"}}))
        welcome = json.loads(conn.recv(timeout=30))
        if "welcome" not in welcome:
            raise RuntimeError(f"no welcome: {welcome}")
        seq = max(seq, welcome["welcome"]["last_seq"])
        return conn

    sent = 0
    while sent < m:
        if ws is None:
            ws = open_ws(fresh=True)
        batch, jump = [], False
        for _ in range(rng.randint(1, 5)):
            ev = valid_event(rng)
            seq += 1
            ev["s"] = seq
            if rng.random() < 0.6:
                ev = mutate(ev, rng)
            if rng.random() < 0.04 and isinstance(ev, dict):
                ev["s"] = rng.choice([seq - 1, -5, 0, seq, 2**63 - 1, 2**63, 1.5, "7", None])
                jump = ev["s"] in (2**63 - 1, 2**63) or jump
            batch.append(ev)
        frame: str | bytes = '{"batch": [' + ", ".join(dumps(ev) for ev in batch) + "]}"
        spoil = rng.random()
        expect_frame_error = False
        if spoil < 0.02:  # one event's text cut short: the frame is split and that event rejected alone
            parts = [dumps(ev) for ev in batch]
            k = rng.randrange(len(parts))
            parts[k] = parts[k][:max(1, len(parts[k]) // 2)]
            frame = '{"batch": [' + ", ".join(parts) + "]}"
            expect_frame_error = True  # a string left open swallows the rest: nothing can be split (WIRE.md §1.5)
        elif spoil < 0.03:  # bytes that are not UTF-8, in a binary frame
            raw = frame.encode()
            frame = raw[:len(raw) // 2] + b"\xff\xc3(" + raw[len(raw) // 2:]
        elif spoil < 0.04:  # an event nested far beyond any limit
            frame = (f'{{"batch": [{{"s": {seq + 1}, "op": "set", "env": "fz0", "win": "w0", "kind": "text", '
                     f'"content": {"[" * 3000}{"]" * 3000}}}]}}')
            seq += 1
        elif spoil < 0.05:  # not a batch at all
            frame = rng.choice(['{"batch": "x"}', "[1, 2]", "not json", '{"hello": 5}', "", '{"batch": [1, [2]], "x": ',
                                '{"hello": {"client": "bad id with spaces"}}', "null", '{"batch": {}}'])
            expect_frame_error = True
        try:
            ws.send(frame)
            tally.batches += 1
            tally.events += len(batch)
            sent += 1
            reply_text = ws.recv(timeout=60)
        except (ConnectionClosed, TimeoutError, OSError) as exc:
            tally.unexpected_closes += 1
            tally.lost_frames.append(frame)
            print(f"  ingest: connection lost ({type(exc).__name__}: {str(exc)[:100]}) after a frame of {len(frame)} "
                  f"bytes: {str(frame)[:300]!r}; reconnecting")
            ws = None
            continue
        try:
            reply = json.loads(reply_text)
        except ValueError:
            reply = None
        if isinstance(reply, dict) and isinstance(reply.get("ack"), int):
            tally.acks += 1
            rejected = reply.get("rejected", [])
            if not isinstance(rejected, list) or not all(isinstance(r, dict) and "error" in r for r in rejected):
                tally.bad_replies.append(f"malformed rejected list: {str(reply_text)[:200]}")
            tally.rejected += len(rejected) if isinstance(rejected, list) else 0
        elif isinstance(reply, dict) and isinstance(reply.get("error"), str) and reply.get("retry") is True:
            tally.retries += 1  # documented (a storage failure that may pass): the server closes; reconnect
            try:
                ws.close()
            finally:
                ws = open_ws(fresh=False)
            continue
        elif isinstance(reply, dict) and isinstance(reply.get("error"), str) and expect_frame_error:
            tally.frame_errors += 1
        else:
            tally.bad_replies.append(f"{str(frame)[:150]!r} -> {str(reply_text)[:200]!r}")
        if jump:  # the client's last_seq reached the top: later events would all be skipped, use a new client
            ws.close()
            ws = None
    if ws is not None:
        ws.close()


# ---------------------------------------------------------------- report


def crashes(log_text: str) -> tuple[int, collections.Counter[str]]:
    """Crash lines in the server log, and each traceback's first log line plus its exception line, counted."""
    lines = log_text.splitlines()
    count = sum(1 for line in lines if CRASH.search(line))
    kinds: collections.Counter[str] = collections.Counter()
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            j = i + 1
            while j < len(lines) and not STAMP.match(lines[j]) and not lines[j].startswith("Traceback"):
                j += 1
            block = lines[i:j]
            frames = [ln.strip() for ln in block if ln.strip().startswith("File ")]
            ours = [f for f in frames if "site-packages" not in f and "/lib/python" not in f]
            last = next((ln for ln in reversed(block) if ln and not ln.startswith(" ")), "?")
            last = re.sub(r"^(.*?: .{40}).+", r"\1...", last)  # one group per place and kind, not per message
            head = next((ln for ln in reversed(lines[:i]) if STAMP.match(ln)), "")
            head = STAMP.sub("", head)[:160]
            kinds[f"{head}\n      at {(ours or frames or ['?'])[-1][:200]}\n      {last[:200]}"] += 1
    return count, kinds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--http", type=int, default=10_000, help="HTTP requests to send (at least)")
    ap.add_argument("--batches", type=int, default=5_000, help="ingest batches to send")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (database and server log)")
    args = ap.parse_args()
    seed_ = args.seed if args.seed is not None else int(time.time()) % 100_000
    rng = random.Random(seed_)
    work = Path(tempfile.mkdtemp(prefix="pb-bench-fuzz-"))
    db, log = work / "fuzz.db", work / "server.log"
    port = common.free_port()
    print(f"seed {seed_}; server on port {port}, database and log in {work}")
    proc = start(db, log, port)
    t0 = time.monotonic()
    http, ingest = Tally(), IngestTally()
    try:
        seed(port)
        n_schema = args.http // 3
        print(f"HTTP: ~{n_schema} schemathesis cases from /api/v1/openapi.json ...")
        schemathesis_phase(port, n_schema, seed_, http)
        print(f"  {http.sent} sent in {time.monotonic() - t0:.0f} s; mutated requests ...")
        mutation_phase(port, max(0, args.http - http.sent), rng, http)
        t1 = time.monotonic()
        print(f"  {http.sent} sent in {t1 - t0:.0f} s; ingest: {args.batches} batches ...")
        ingest_phase(port, args.batches, rng, ingest)
        print(f"  done in {time.monotonic() - t1:.0f} s")
        alive = proc.poll() is None
        status, _ = raw_http(port, b"GET", b"/api/v1/envs", [], None) if alive else (0, b"")
    finally:
        common.stop(proc)
    log_text = log.read_text(errors="replace")
    n_crash, kinds = crashes(log_text)
    print("\nsummary")
    print(f"  HTTP requests      {http.sent}: " + ", ".join(f"{k} {v}" for k, v in sorted(http.classes.items())))
    print(f"  5xx                {len(http.errors)}")
    for line in collections.Counter(re.sub(r"body=.*? -> ", "-> ", e)[:300] for e in http.errors).most_common(40):
        print(f"    {line[1]:>4} x {line[0]}")
    for e in http.errors[:15]:
        print(f"      e.g. {e[:500]}")
    print(f"  no answer          {len(http.no_answer)}" + (f" (e.g. {http.no_answer[:3]})" if http.no_answer else ""))
    print(f"  batches sent       {ingest.batches} ({ingest.events} events)")
    print(f"  acks               {ingest.acks}")
    print(f"  rejected events    {ingest.rejected}")
    print(f"  frame errors       {ingest.frame_errors} (non-batch frames answered with an error, as documented)")
    print(f"  retry errors       {ingest.retries}")
    print(f"  bad replies        {len(ingest.bad_replies)}")
    for r in ingest.bad_replies[:10]:
        print(f"    {r}")
    print(f"  unexpected closes  {ingest.unexpected_closes}")
    print(f"  server alive after {alive} (GET /api/v1/envs -> {status})")
    print(f"  log crash lines    {n_crash}")
    for what, count in kinds.most_common(30):
        print(f"    {count:>4} x {what}")
    for i, frame in enumerate(ingest.lost_frames):
        (work / f"lost-frame-{i}.json").write_bytes(frame if isinstance(frame, bytes) else frame.encode())
    if args.keep:
        print(f"  kept {work}")
    else:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    bad = http.errors or n_crash or ingest.bad_replies or ingest.unexpected_closes or not alive or status != 200
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
