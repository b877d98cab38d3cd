"""Env archives over HTTP: download envs as one tar, upload one to recreate them here (moving runs between servers)."""

from __future__ import annotations

import io
import tempfile

from flask import Blueprint, Response, request, send_file

from ..commands.envelope import EventError
from ..sharing import archive, env_import
from ..sharing.archive_limits import ArchiveLimitError, ArchiveLimits
from .api import _env_or_404, env_names_arg
from .common import ApiError, json_response, services

bp = Blueprint("archive_api", __name__, url_prefix="/api/v1")

MAX_ARCHIVE_ENVS = 1000


@bp.get("/archive")
def export_archive() -> Response:
    """?envs=a,b: a tar of those envs (meta, panes, every point exactly, step records, blobs)."""
    names = env_names_arg(MAX_ARCHIVE_ENVS)
    names = [_env_or_404(n).name for n in names]
    # Spooled: a small archive never touches the disk, a big one is not held in memory.
    out = tempfile.SpooledTemporaryFile(max_size=64 << 20)
    try:
        archive.export_envs(services().store, names, out, services().blobs)
    except EventError as exc:  # an env deleted meanwhile
        out.close()
        raise ApiError(404, str(exc)) from None
    out.seek(0)
    name = (names[0] if len(names) == 1 else f"paneboard-{len(names)}-envs") + ".tar"
    return send_file(out, mimetype="application/x-tar", as_attachment=True, download_name=name)


def _limits() -> ArchiveLimits:
    s = services().settings
    return ArchiveLimits(s.archive_member_bytes, s.archive_total_bytes, s.archive_members)


@bp.post("/archive")
def import_archive() -> Response:
    """Upload an archive (the tar body): its envs are created here; ?replace=1 overwrites envs that exist (else 409)."""
    replace = request.args.get("replace") in ("1", "true")
    try:
        envs = archive.read_archive(io.BytesIO(request.get_data()), _limits(), services().blobs)
    except ArchiveLimitError as exc:
        raise ApiError(413, str(exc)) from None
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    store = services().store
    existing = [e.name for e in envs if store.get_env(e.name) is not None]
    if existing and not replace:
        raise ApiError(409, f"envs already exist: {', '.join(existing[:20])} (add ?replace=1 to overwrite them)")
    result = services().writer.submit_wait([env_import.command(e, replace) for e in envs], timeout=600)
    if result.failed:
        raise ApiError(503, result.failed)
    if result.errors:  # an env created meanwhile by someone else
        raise ApiError(409, result.errors[0]["error"])
    return json_response({"ok": True, "envs": archive.env_names(envs), "points": sum(e.points() for e in envs),
                          "blobs": len({sha for e in envs for sha in e.blobs}),
                          "artifacts": sum(len(e.artifacts) for e in envs)})
