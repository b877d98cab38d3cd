"""Which envs refer to a blob: the SqlStore's part that lets a share token see a blob only through its envs."""

from __future__ import annotations

import re

from sqlalchemy import Text, cast, select
from sqlalchemy.engine import Engine

from .models import artifact_t, env_t, pane_t, step_t, use_t

_SHA = re.compile(r"^[0-9a-f]{64}$")


class SqlBlobRefs:
    """Mixed into SqlStore; reads only. A reference is found as the blob sweep finds one: the sha256 in a pane's
    content, a step record's blob column or data (a mask over a picture), or as a file of an artifact version."""

    engine: Engine

    def blob_envs(self, sha256: str) -> set[str]:
        if not _SHA.match(sha256):
            return set()  # also keeps LIKE's wildcards out of the pattern below
        with self.engine.connect() as conn:
            by_step = select(env_t.c.name).join(pane_t, pane_t.c.env_id == env_t.c.id) \
                .join(step_t, step_t.c.pane_id == pane_t.c.id).where(step_t.c.blob == sha256)
            by_content = select(env_t.c.name).join(pane_t, pane_t.c.env_id == env_t.c.id) \
                .where(cast(pane_t.c.content, Text).like(f"%{sha256}%"))
            by_overlay = select(env_t.c.name).join(pane_t, pane_t.c.env_id == env_t.c.id) \
                .join(step_t, step_t.c.pane_id == pane_t.c.id).where(cast(step_t.c.data, Text).like(f"%{sha256}%"))
            return {name for (name,) in conn.execute(by_step.union(by_content, by_overlay))}

    def artifact_blob_envs(self, sha256: str) -> set[str]:
        if not _SHA.match(sha256):
            return set()
        a = artifact_t.c
        with self.engine.connect() as conn:
            rows = conn.execute(select(a.id, a.env, a.files).where(cast(a.files, Text).like(f"%{sha256}%"))).all()
            holding = [r for r in rows if any(f.get("sha256") == sha256 for f in r.files or ())]
            envs = {r.env for r in holding if r.env is not None}
            if holding:
                used = select(use_t.c.env).where(use_t.c.version_id.in_([r.id for r in holding]))
                envs.update(env for (env,) in conn.execute(used))
            return envs
