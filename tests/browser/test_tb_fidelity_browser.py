"""TensorBoard content drawn as TensorBoard draws it, and named alike live and imported: the same calls go through
torch's own SummaryWriter (event files, then `import-tb`) and through paneboard.SummaryWriter (live), and Chromium
shows both text panes as TensorBoard's text plugin shows the summary (Markdown rendered, raw HTML escaped)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.browser import env_url
from helpers.tensorboard import writer as live_writer

pytestmark = pytest.mark.e2e  # every test runs `python -m paneboard.server` itself

torch_tb = pytest.importorskip("torch.utils.tensorboard")

TEXT = "a <b>b</b> c **bold** <em>kept</em>\n\n| k | v |\n|---|---|\n| lr | 0.1 |"
# TensorBoard (plugin_util.markdown_to_safe_html): Markdown to HTML, then bleach keeps its allowed tags (strong,
# em, table ...) and escapes every other one, so <b> is shown as literal text.
SHOWN = "a <b>b</b> c bold kept\nk\tv\nlr\t0.1"
PANE_TEXT = """win => { const m = document.querySelector(`[data-win="${win}"] .media-text`);
  return m && m.innerText.trim() ? {text: m.innerText.trim(), strong: m.querySelectorAll('strong').length,
    em: m.querySelectorAll('em').length, b: m.querySelectorAll('b').length, rows: m.querySelectorAll('tr').length}
    : null; }"""


def log_all(w) -> None:
    w.add_text("notes", TEXT, 0)
    w.add_scalar("train loss", 0.5, 0)
    w.add_embedding(np.arange(12, dtype=np.float32).reshape(4, 3), metadata=list("abcd"), global_step=0)
    w.close()


@pytest.fixture
def imported_db(tmp_path: Path, monkeypatch) -> Path:
    """torch's SummaryWriter logs run "logs/run1"; `import-tb logs` stores it in a database of its own."""
    monkeypatch.chdir(tmp_path)
    log_all(torch_tb.SummaryWriter("logs/run1"))
    db = tmp_path / "imported.db"
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "import-tb", "logs", "--db", str(db), "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return db


def names(srv) -> dict[str, dict[str, str]]:
    return {e["name"]: {p["win"]: p["title"] for p in srv.get_json(f"/api/v1/envs/{e['name']}")["panes"]}
            for e in srv.get_json("/api/v1/envs")["envs"]}


def shown(srv, tab) -> dict:
    tab.open(env_url(srv, "logs/run1"))
    tab.wait(f"() => ({PANE_TEXT})('notes')")
    return {"names": names(srv), "text": tab.js(PANE_TEXT, "notes")}


def test_text_and_names_match_tensorboard(imported_db, server_types, server, tab):
    imported = server_types.InProcessServer(db=imported_db).start()
    try:  # one server at a time: each stop() checks that the threads started since its own start are gone
        from_files = shown(imported, tab)
    finally:
        imported.stop()
    log_all(live_writer(server, "./logs/run1/"))
    live = shown(server, tab)
    assert live == from_files
    assert live["names"] == {"logs/run1": {"notes": "notes", "train loss": "train loss",
                                           "projector/default/00000": "projector/default/00000"}}
    got = live["text"]
    assert (got["strong"], got["em"], got["b"], got["rows"]) == (1, 1, 0, 2)
    assert got["text"].split() == SHOWN.split()
    assert tab.errors == []
