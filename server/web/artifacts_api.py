"""JSON API of checkpoints and history: artifact versions and their lineage, blob uploads and downloads, rewinds."""

from __future__ import annotations

import re

from flask import Blueprint, Response, request, send_file

from ..artifacts.blobs import BlobError, BlobStore
from ..artifacts.compare import compare
from .api import _env_or_404
from .common import ApiError, env_visible, header_arg, json_response, services

bp = Blueprint("artifacts_api", __name__, url_prefix="/api/v1")
_SHA = re.compile(r"^[0-9a-f]{64}$")


# -- rewinds --------------------------------------------------------------------------------------------------

@bp.get("/envs/<path:env>/rewinds")
def rewinds(env: str) -> Response:
    """The run's rewinds (the points each hid stay recoverable): {"rewinds": [{"id", "step", "wall", "points"}]}."""
    name = _env_or_404(env).name
    return json_response({"rewinds": [{"id": r.id, "step": r.step, "wall": r.wall, "points": r.points}
                                      for r in services().store.list_rewinds(name)]})


@bp.get("/envs/<path:env>/rewinds/<int:rewind_id>")
def rewind_points(env: str, rewind_id: int) -> Response:
    """The points one rewind hid: {"step", "traces": [{"win", "trace", "x", "y", "wall"}]}."""
    name = _env_or_404(env).name
    store = services().store
    found = next((r for r in store.list_rewinds(name) if r.id == rewind_id), None)
    points = store.rewound_points(rewind_id) if found is not None else None
    if found is None or points is None:
        raise ApiError(404, f"no rewind {rewind_id} in env {name!r}")
    return json_response({"step": found.step, "traces": points})


# -- artifacts ------------------------------------------------------------------------------------------------

def _visible(records: list) -> list[dict]:
    """Versions whose producing run the caller may read (a share link sees only its envs' artifacts)."""
    return [a.to_json() for a in records if a.env is None or env_visible(a.env)]


@bp.get("/envs/<path:env>/artifacts")
def run_artifacts(env: str) -> Response:
    """What the run logged and what it used: {"logged": [...], "used": [...]} (versions, oldest first)."""
    name = _env_or_404(env).name
    store = services().store
    return json_response({"logged": _visible(store.list_artifacts(env=name)),
                          "used": _visible(store.list_artifacts(used_by=name))})


@bp.get("/artifacts/<path:name>/versions")
def versions(name: str) -> Response:
    """Every version of an artifact with its lineage: the run that logged it (env) and the runs that used it."""
    return json_response({"versions": _visible(services().store.list_artifacts(name=name))})


@bp.get("/artifacts/<path:name>/compare")
def compare_versions(name: str) -> Response:
    """?a=vN|alias&b=vN|alias -> the two versions' differences: {"a", "b", "files": [{"path", "status":
    added|removed|changed|same, "a", "b": {"sha256", "size"} or null}], "metadata": [{"key", "status", "a", "b"}],
    "counts"}."""
    store = services().store
    found = []
    for side in ("a", "b"):
        which = request.args.get(side) or ""
        if not which:
            raise ApiError(400, "a and b name the two versions: vN or an alias")
        version = store.find_artifact(name, which)
        if version is None or (version.env is not None and not env_visible(version.env)):
            raise ApiError(404, f"no artifact {name}:{which}")
        found.append(version)
    return json_response(compare(found[0], found[1]))


@bp.get("/artifact")
def resolve() -> Response:
    """?ref=name:vN | name:alias | name:@uid -> that version (404 if none)."""
    ref = request.args.get("ref") or ""
    name, sep, which = ref.rpartition(":")
    if not sep or not name or not which:
        raise ApiError(400, "ref must be name:vN, name:<alias> or name:@<uid>")
    found = services().store.find_artifact(name, which)
    if found is None or (found.env is not None and not env_visible(found.env)):
        raise ApiError(404, f"no artifact {ref!r}")
    return json_response(found.to_json())


@bp.get("/artifact-blobs/<sha>")
def get_blob(sha: str) -> Response:
    """An artifact file's bytes by its sha256 (ranges supported: a download resumes)."""
    name = header_arg("name")  # the download's file name, in Content-Disposition
    blobs = services().blobs
    if not _SHA.match(sha) or blobs is None or not blobs.has(sha):
        raise ApiError(404, "no such blob")
    return send_file(blobs.open(sha), mimetype="application/octet-stream", conditional=True, max_age=0,
                     download_name=name or sha)


@bp.get("/artifact-blobs/<sha>/upload")
def upload_state(sha: str) -> Response:
    """Where an upload stands: {"stored": true} once the blob is kept, else {"offset": bytes received}."""
    blobs = _blobs(sha)
    if blobs.has(sha):
        blobs.touch(sha)  # a client is about to reference it: not for a cleanup
        return json_response({"stored": True, "offset": None})
    return json_response({"stored": False, "offset": blobs.partial_size(sha)})


@bp.put("/artifact-blobs/<sha>/upload")
def upload_chunk(sha: str) -> Response:
    """One chunk at ?offset=N (the bytes received so far); ?last=1 checks the hash and stores the blob. Served
    here only by create_app alone: dash-server streams these requests (web/blob_stream.py)."""
    blobs = _blobs(sha)
    try:
        offset = int(request.args.get("offset", ""))
    except ValueError:
        raise ApiError(400, "offset must be an integer") from None
    try:
        if blobs.has(sha):
            blobs.touch(sha)
            return json_response({"stored": True, "offset": None})
        # The body in one read of the WSGI input (the ASGI layer holds it whole): werkzeug's get_data() would
        # take it 8 KB at a time, which halves the upload speed.
        length = request.content_length or 0
        size = blobs.append(sha, offset, request.environ["wsgi.input"].read(length) if length else b"")
        if request.args.get("last") == "1":
            blobs.finish(sha)
            return json_response({"stored": True, "offset": None})
        return json_response({"stored": False, "offset": size})
    except BlobError as exc:
        raise ApiError(exc.status, str(exc), offset=blobs.partial_size(sha)) from None


def _blobs(sha: str) -> BlobStore:
    blobs = services().blobs
    if blobs is None:
        raise ApiError(503, "this server keeps no artifacts (no blob store)")
    if not _SHA.match(sha):
        raise ApiError(400, "a blob is named by its sha256 (64 lowercase hex digits)")
    return blobs
