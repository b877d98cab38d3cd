"""Imports into a running server (`dash-server import --server URL`): what an importing client has stored, and
binary frames stored as that client, exactly once, with NaN and ±inf carried as float64."""

from __future__ import annotations

import threading

from flask import Blueprint, Response, request

from .. import jsonio
from ..commands.clients import importer_client_error
from ..commands.envelope import EventError, check_name
from ..commands.jobs import Job, JobResult
from ..dispatch.parse import parse_batch
from ..dispatch.rejections import grouped
from ..store import Store
from .common import ApiError, json_response, services
from .frames import decode_binary

bp = Blueprint("import_api", __name__, url_prefix="/api/v1/import")
MAX_ASKED = 10_000    # clients or envs asked about in one request
STORE_TIMEOUT = 300.0  # seconds a frame may wait for the writer (a big series behind a busy queue)


def _names(body: dict, key: str) -> list[str]:
    value = body.get(key) or []
    if not isinstance(value, list) or len(value) > MAX_ASKED or not all(isinstance(v, str) for v in value):
        raise ApiError(400, f"{key} must be a list of at most {MAX_ASKED} strings")
    return value


def _env_state(store: Store, env: str) -> dict:
    run = store.get_run(env)
    held = (run.provenance or {}).get("import") if run is not None else None
    return {"exists": run is not None or store.get_env(env) is not None, "import": held}


@bp.post("/state")
def state() -> Response:
    """{"clients": [ids], "envs": [names]} -> each client's stored count (its last sequence number: an importer
    numbers its items 1..n, so it is how many landed) and, for each env, whether it exists and which peer run
    (provenance "import") it holds."""
    try:
        body = jsonio.loads(request.get_data())
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        raise ApiError(400, 'body must be {"clients": [...], "envs": [...]}')
    clients, envs = _names(body, "clients"), _names(body, "envs")
    for c in clients:
        if (refused := importer_client_error(c)) is not None:
            raise ApiError(400, f"client {c[:80]!r}: {refused}")
    for env in envs:
        try:
            check_name(env, "env")
        except EventError as exc:
            raise ApiError(400, f"{env[:80]!r}: {exc}") from None
    store = services().store
    return json_response({"clients": {c: store.client_last_seq(c) for c in clients},
                          "envs": {e: _env_state(store, e) for e in envs}})


@bp.post("/frames")
def store_frame() -> Response:
    """A binary frame (paneboard.protocol's codec) stored as ?client=ID: events it already stored are skipped
    (exactly once), as on /ingest. Answers {"ack", "last_seq", "rejected"} once committed."""
    client = request.args.get("client", "")
    if (refused := importer_client_error(client)) is not None:  # never an SDK client's sequence space
        raise ApiError(400, refused)
    svc = services()
    # Not cached on the request: the frame's bytes go once its events are cut out of them (a 64 MB body was
    # held three times over: by Flask, by the parts and by their decoded content).
    frame = decode_binary(request.get_data(cache=False), svc.settings.max_request_bytes)
    if frame.error is not None or frame.events is None:
        raise ApiError(400, frame.error or "not a binary frame")
    top = max((ev.seq for ev in frame.events if ev.seq is not None), default=0)
    commands, rejected = parse_batch([(ev.seq, ev.raw, ev.error) for ev in frame.events])
    box: list[JobResult] = []
    ready = threading.Event()

    def done(result: JobResult) -> None:
        box.append(result)
        ready.set()

    svc.writer.submit(Job(commands, client_id=client, ack_seq=top or None, done=done,
                          size=request.content_length or 1 << 20))
    if not ready.wait(STORE_TIMEOUT):
        raise ApiError(503, "the store did not commit the frame in time; ask /import/state and resend")
    if box[0].failed:
        raise ApiError(503, f"could not be stored: {box[0].failed}")
    return json_response({"ack": top, "last_seq": svc.store.client_last_seq(client),
                          "rejected": grouped(rejected + box[0].errors, "s")})
