"""JSON API of checkpoints and history: artifact versions and their lineage, blob uploads and downloads, rewinds."""

from __future__ import annotations

import re

from flask import Blueprint, Response, g, request, send_file
from werkzeug.exceptions import RequestedRangeNotSatisfiable
from werkzeug.wsgi import wrap_file

from ..artifacts.blobs import BlobError, BlobStore
from ..artifacts.compare import compare
from ..artifacts.s3_blobs import BlobStoreUnavailable
from .api import _env_or_404
from .common import ApiError, env_visible, header_arg, json_response, services, share_limit

bp = Blueprint("artifacts_api", __name__, url_prefix="/api/v1")
_SHA = re.compile(r"^[0-9a-f]{64}$")
DOWNLOAD_BLOCK = 1 << 20


@bp.errorhandler(BlobStoreUnavailable)
def store_unavailable(exc: BlobStoreUnavailable) -> Response:
    """The bucket did not answer: a clear 503 the SDK retries later, not a 500."""
    return json_response({"error": f"the artifact store is unavailable: {exc}"}, 503)


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


# The artifact's name is <artifact>, never <name> or <env>: auth.check_shared takes those for env names, and
# would refuse a share link every artifact not named like one of its envs.
@bp.get("/artifacts/<path:artifact>/versions")
def versions(artifact: str) -> Response:
    """Every version of an artifact with its lineage: the run that logged it (env) and the runs that used it."""
    return json_response({"versions": _visible(services().store.list_artifacts(name=artifact))})


@bp.get("/artifacts/<path:artifact>/compare")
def compare_versions(artifact: str) -> Response:
    """?a=vN|alias&b=vN|alias -> the two versions' differences: {"a", "b", "files": [{"path", "status":
    added|removed|changed|same, "a", "b": {"sha256", "size"} or null}], "metadata": [{"key", "status", "a", "b"}],
    "counts"}."""
    store = services().store
    found = []
    for side in ("a", "b"):
        which = request.args.get(side) or ""
        if not which:
            raise ApiError(400, "a and b name the two versions: vN or an alias")
        version = store.find_artifact(artifact, which)
        if version is None or (version.env is not None and not env_visible(version.env)):
            raise ApiError(404, f"no artifact {artifact}:{which}")
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
    limit = share_limit()
    if limit is not None and not limit & services().store.artifact_blob_envs(sha):
        raise ApiError(404, "no such blob")  # a share token reads only the files of its envs' versions
    size = blobs.size(sha) or 0
    f = blobs.open(sha)
    resp = send_file(f, mimetype="application/octet-stream", max_age=0, etag=sha,
                     download_name=name or sha)
    # send_file hands the server 8 KB at a time: each block a hop from the WSGI thread to the event loop, which
    # held downloads near 85 MB/s. Blocks of 1 MB take the same path a hundred times less often.
    resp.response = wrap_file(request.environ, f, buffer_size=DOWNLOAD_BLOCK)
    resp.content_length = size
    # send_file takes ranges only with the size, which it cannot learn from an open file: given here, a
    # download resumes (206), and a range past the end is a 416 naming the size.
    try:
        resp.make_conditional(request.environ, accept_ranges=True, complete_length=size)  # in place
    except RequestedRangeNotSatisfiable:
        f.close()
        refused = json_response({"error": f"range not satisfiable: the file holds {size} bytes"}, 416)
        refused.headers["Content-Range"] = f"bytes */{size}"
        return refused
    return resp


@bp.get("/artifact-blobs/<sha>/upload")
def upload_state(sha: str) -> Response:
    """Where an upload stands: {"stored": true} once the blob is kept, else {"offset": bytes received}."""
    if g.get("share") is not None:  # the answer confirms a file exists anywhere, and touching it keeps it
        raise ApiError(403, "read-only share link: the upload state is for writers")
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
