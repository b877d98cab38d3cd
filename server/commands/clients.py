"""Producer client ids: who may number events under which id, so that no two kinds share a sequence space.

A client's stored last sequence number decides which of its events a replay skips. An import frame under a
live SDK client's id once raised that number, and the SDK's later events were acknowledged but not stored:
importers therefore own the `import-` ids, the in-process TensorBoard importer `tb:`, and SDK clients (any
/ingest hello) the rest.
"""

from __future__ import annotations

import re

CLIENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
IMPORTER_PREFIX = "import-"   # `dash-server import` clients (server/peers/sink.py's client_id)
TB_IMPORTER_PREFIX = "tb:"    # the --logdir / import-tb watcher (server/tensorboard/importer.py)


def sdk_client_error(cid: object) -> str | None:
    """Why an /ingest hello may not use this id, or None."""
    if not isinstance(cid, str) or not CLIENT_ID.match(cid):
        return "hello.client must be 1..64 of [A-Za-z0-9_.:-]"
    if cid.startswith((IMPORTER_PREFIX, TB_IMPORTER_PREFIX)):
        return (f"hello.client may not start with {IMPORTER_PREFIX!r} or {TB_IMPORTER_PREFIX!r}: those ids "
                "belong to importers")
    return None


def importer_client_error(cid: str) -> str | None:
    """Why an import request may not use this id, or None. A TensorBoard import sent to a running server
    (`import LOGDIR --server`) numbers its runs under the same `tb:` ids as the in-process one, so that importing
    a logdir both ways, or again, stores each point once."""
    if not CLIENT_ID.match(cid) or not cid.startswith((IMPORTER_PREFIX, TB_IMPORTER_PREFIX)):
        return (f"client must be {IMPORTER_PREFIX!r} or {TB_IMPORTER_PREFIX!r} then up to 64 characters in all of "
                "[A-Za-z0-9_.:-]")
    return None
