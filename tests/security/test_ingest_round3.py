"""Issue 40's ingest items on a real server: work bounded by what is stored (events per batch and frame,
grouped rejections), importer and SDK client ids apart, point runs carrying points only, bounded console
headers and a 400 for control characters in a header's parameter."""

from __future__ import annotations

import hashlib
import json
import struct
import tracemalloc
from typing import Any

from helpers.ingest import Ingest, batch, import_frame, point, request
from paneboard.protocol import MAX_BATCH_EVENTS, PointRun
from paneboard.server.dispatch.rejections import LISTED_PER_REASON
from paneboard.server.web.frames import decode_frame

# -- item 1: many tiny events ------------------------------------------------------------------------------------

def test_a_frame_of_a_million_empty_events_is_refused_while_still_bytes():
    frame = batch(["{}"] * 1_000_000)  # 3 MB: gigabytes of objects, rejections and ack once decoded
    tracemalloc.start()
    try:
        decoded = decode_frame(frame, 64 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert decoded.events is None and f"at most {MAX_BATCH_EVENTS} events" in (decoded.error or "")
    # Beyond the frame's own bytes (encoded once, scanned in C), nothing proportional to its events.
    assert peak < 6 * len(frame), f"{peak / 1e6:.1f} MB for a {len(frame) / 1e6:.1f} MB frame"


def test_a_batch_over_the_limit_is_refused_whole_and_the_connection_lives(server: Any):
    ing = Ingest(server.port, "flood")
    try:
        reply, _ = ing.send_text(batch([{"s": k} for k in range(1, MAX_BATCH_EVENTS + 2)]))
        assert "error" in reply and f"at most {MAX_BATCH_EVENTS} events" in reply["error"], reply
        reply, _ = ing.send_text(batch([point(1, "after_flood", 7.0)]))
        assert reply.get("ack") == 1 and not reply.get("rejected"), reply
    finally:
        ing.close()
    assert [float(row[1]) for row in server.export_rows("after_flood", "w")] == [7.0]


def test_identical_rejections_come_back_as_one_entry_with_every_seq(server: Any):
    n = 5_000
    ing = Ingest(server.port, "alike")
    try:
        reply, size = ing.send_text(batch([{"s": k} for k in range(1, n + 1)] + [point(n + 1, "alike", 1.0)]))
    finally:
        ing.close()
    assert reply["ack"] == n + 1
    listed = [r["s"] for r in reply["rejected"]]
    assert listed == list(range(1, LISTED_PER_REASON + 1)), listed  # a few alone, as SDKs before "also" read them
    assert all("op must be one of" in r["error"] for r in reply["rejected"])
    assert reply["rejected"][-1]["also"] == list(range(LISTED_PER_REASON + 1, n + 1))
    assert size < 100_000, f"an ack of {size} bytes for {n} alike rejections"
    assert [float(row[1]) for row in server.export_rows("alike", "w")] == [1.0]


def test_post_events_bounds_the_batch_and_groups_its_errors(server: Any):
    status, _, body = request(server, "POST", "/api/v1/events",
                              json.dumps({"events": [{}] * (MAX_BATCH_EVENTS + 1)}).encode())
    assert status == 413 and f"at most {MAX_BATCH_EVENTS} events" in json.loads(body)["error"]
    status, _, body = request(server, "POST", "/api/v1/events",
                              json.dumps({"events": [{}] * 3000 + [point(1, "posted", 2.0)]}).encode())
    answer = json.loads(body)
    assert status == 200 and not answer["ok"] and len(answer["errors"]) == LISTED_PER_REASON, answer
    assert [e["index"] for e in answer["errors"]] == list(range(LISTED_PER_REASON))
    assert answer["errors"][-1]["also"] == list(range(LISTED_PER_REASON, 3000))
    assert [float(row[1]) for row in server.export_rows("posted", "w")] == [2.0]


def test_an_import_frame_declaring_millions_of_events_is_refused_before_reading_them(server: Any):
    header = struct.pack("<4sI", b"PBF1", 2_000_000) + struct.pack("<BI", 0, 2) + b"{}"
    status, _, body = request(server, "POST", "/api/v1/import/frames?client=import-count", header,
                              "application/octet-stream")
    assert status == 400 and "declares 2000000 events" in json.loads(body)["error"]


# -- item 8: importer and SDK ids never share a sequence space ---------------------------------------------------

def test_an_import_frame_cannot_take_a_live_sdk_clients_sequence(server: Any):
    ing = Ingest(server.port, "live-sdk")
    try:
        assert ing.send_text(batch([point(1, "shared", 1.0)]))[0]["ack"] == 1
        hostile = json.dumps(point(1000, "shared", 99.0)).encode()
        status, answer = import_frame(server, "live-sdk", [hostile])
        assert status == 400 and "import-" in answer["error"], answer
        reply, _ = ing.send_text(batch([point(2, "shared", 2.0)]))
        assert reply["ack"] == 2 and not reply.get("rejected")
    finally:
        ing.close()
    assert [float(row[1]) for row in server.export_rows("shared", "w")] == [1.0, 2.0]


def test_an_sdk_hello_cannot_take_an_importers_id(server: Any):
    for cid in ("import-0123abcd", "tb:0123abcd"):
        ing = Ingest(server.port, cid)
        try:
            assert "importers" in ing.hello_answer.get("error", ""), ing.hello_answer
        finally:
            ing.close()


# -- item 9: a point run carries points only ---------------------------------------------------------------------

def test_a_point_run_naming_another_op_is_rejected_and_not_applied(server: Any):
    assert import_frame(server, "import-setup", [json.dumps(point(1, "keep", 1.0)).encode()])[0] == 200
    columns = struct.pack("<3d", 5.0, 5.0, 1.7e9)
    for envelope in ({"op": "delete_env", "env": "keep", "traces": [{"name": "a"}]},
                     {"op": "update", "mode": "replace", "kind": "line", "env": "keep", "win": "w",
                      "traces": [{"name": "a"}]}):
        run = PointRun(1, 1, 1.0, json.dumps(envelope).encode(), columns)
        status, answer = import_frame(server, f"import-{envelope['op']}", [run])
        assert status == 200 and "points only" in answer["rejected"][0]["error"], answer
    assert [float(row[1]) for row in server.export_rows("keep", "w")] == [1.0]


# -- item 12: bounded console headers ----------------------------------------------------------------------------

def test_the_console_ranks_header_is_bounded_and_the_full_list_has_its_route(server: Any):
    ranks = 300
    events = [{"op": "console", "env": "wide", "rank": r, "lines": [[1, 1.0, "stdout", f"rank {r}"]]}
              for r in range(ranks)]
    status, _, body = request(server, "POST", "/api/v1/events", json.dumps({"events": events}).encode())
    assert status == 200 and json.loads(body)["ok"], body
    status, headers, _ = request(server, "GET", "/api/v1/envs/wide/console?rank=0")
    listed = headers["X-Console-Ranks"].split(",")
    assert status == 200 and listed == [str(r) for r in range(256)] and headers["X-Console-Ranks-Total"] == "300"
    assert len(headers["X-Console-Ranks"]) < 4096
    assert server.get_json("/api/v1/envs/wide/console/ranks")["ranks"] == list(range(ranks))


# -- item 13: control characters in a parameter that reaches a header -----------------------------------------------

def test_crlf_in_a_blob_downloads_name_is_a_400(server: Any):
    data = b"artifact bytes"
    sha = hashlib.sha256(data).hexdigest()
    status, _, _ = request(server, "PUT", f"/api/v1/artifact-blobs/{sha}/upload?offset=0&last=1", data,
                           "application/octet-stream")
    assert status == 200
    for name in ("a%0D%0ASet-Cookie:%20x=1", "a%0Ab", "nul%00", "c1%C2%85"):
        status, headers, body = request(server, "GET", f"/api/v1/artifact-blobs/{sha}?name={name}")
        assert status == 400 and "control characters" in json.loads(body)["error"], (name, status, body)
        assert "Set-Cookie" not in headers
    status, headers, body = request(server, "GET", f"/api/v1/artifact-blobs/{sha}?name=model%20v1.pt")
    assert status == 200 and body == data and "model v1.pt" in headers["Content-Disposition"]
