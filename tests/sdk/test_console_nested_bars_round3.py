"""Consoles of nested progress bars (Lightning's validation bar inside its training bar: real tqdm, cursor-up
sequences) show what a terminal shows: the bars' final lines, no raw escapes, no line per update."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

from paneboard.console_screen import Line, Screen

JOB = textwrap.dedent("""
    import sys, paneboard
    from tqdm import tqdm
    c = paneboard.Client(port=int(sys.argv[1]), env=sys.argv[2])
    print("start")
    # Lightning's TQDMProgressBar: the training bar at position 0 (kept), each validation bar at position 1
    # (left=False); mininterval=0 draws every update, as a fast loop on a terminal does.
    train = tqdm(total=60, desc="Epoch", position=0, leave=True, mininterval=0, ncols=80, file=sys.stderr)
    for epoch in range(3):
        for step in range(20):
            train.update(1)
            train.set_postfix(loss=1.0 / (1 + epoch * 20 + step), refresh=True)
        val = tqdm(total=10, desc="Validation", position=1, leave=False, mininterval=0, ncols=80, file=sys.stderr)
        for _ in range(10):
            val.update(1)
        val.close()
    train.close()
    print("done")
    c.close_connection()
""")


def console(srv: Any, env: str) -> list[dict]:
    text = srv.get_text(f"/api/v1/envs/{env}/console?limit=10000")
    return [json.loads(line) for line in text.splitlines()]


def run_job(srv: Any, env: str, tmp_path: Any) -> str:
    out = subprocess.run([sys.executable, "-c", JOB, str(srv.port), env], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    assert out.returncode == 0, out.stderr
    return out.stderr


def test_nested_tqdm_bars_collapse_to_their_final_lines(server: Any, tmp_path: Any):
    written = run_job(server, "bars", tmp_path)
    assert written.count("\x1b[A") >= 30  # tqdm moved the cursor up: the case at hand, not plain \r redraws
    got = [(g["stream"], g["text"]) for g in console(server, "bars")]
    texts = [t for _, t in got]
    assert not any("\x1b" in t for t in texts), texts
    assert not any(g.get("open") for g in console(server, "bars"))  # the job ended: nothing left open
    bars = [t for t in texts if t.startswith("Epoch")]
    assert len(bars) == 1 and "60/60" in bars[0] and "100%" in bars[0], texts
    # The validation bars left nothing (leave=False clears their row) and "done" went where the terminal puts it.
    assert not any("Validation" in t for t in texts), texts
    assert [t for t in texts if t.strip()] == ["start", bars[0], "done"], texts


def screen_lines(text: str) -> list[str]:
    """What a stream's screen holds after `text` (the rows as the console sends them)."""
    screen, made = Screen([], 0), []

    def new_line() -> Line:
        made.append(Line(len(made) + 1, 0.0))
        return made[-1]

    screen.feed(text, new_line, {})
    return [line.text.rstrip("\r") for line in made]


def test_erase_line_colours_and_other_sequences_as_a_terminal_shows_them():
    # rich's live bars: erase the whole line, then redraw; the cursor hidden and shown again.
    assert screen_lines("\x1b[?25lstep 1\r\x1b[2Kstep 2\r\x1b[2Kstep 3\x1b[?25h") == ["step 3"]
    assert screen_lines("\x1b[31mred\x1b[0m plain") == ["\x1b[31mred\x1b[0m plain"]  # colours stay for the page
    # Two bars redrawn three times: two rows; a row erased from its start stays empty.
    assert screen_lines("".join(f"\ra {k}\n\rb {k}\x1b[A" for k in range(3))) == ["a 2", "b 2"]
    assert screen_lines("\ra\n\rb\x1b[A\n\r\x1b[K\x1b[A\ra!") == ["a!", ""]
    assert screen_lines("x\x1b[5Ay") == ["xy"]  # up past the first row: the cursor stays on it
