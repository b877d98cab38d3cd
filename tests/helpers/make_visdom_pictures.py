"""Record what Visdom 0.2.4 itself stores for its 62 demos, as the pictures tests/browser/test_visdom_fidelity_browser.py
expects: `cd tests && python -m helpers.make_visdom_pictures PORT` against a real Visdom server, started offline
with `python -c "import sys; sys.argv=['visdom','-port','PORT','-env_path','/tmp/vs']; from visdom.server.run_server
import main; main()"` (the `visdom.server` entry point first downloads its browser scripts). Writes
helpers/visdom_demo_pictures.json."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import visdom

from .visdom_fidelity import env_windows, pictures, run_demos

OUT = Path(__file__).with_name("visdom_demo_pictures.json")


def main(port: int) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    viz = visdom.Visdom(server="http://127.0.0.1", port=port, raise_exceptions=True)
    touched = run_demos(viz)
    expected = pictures(touched, env_windows(viz))
    OUT.write_text(json.dumps({"visdom": visdom.__version__, "demos": expected}, indent=1, sort_keys=True) + "\n")
    print(f"{OUT}: {len(expected)} demos, {sum(len(v) for v in expected.values())} windows")
    viz.use_socket = False
    if getattr(viz, "socket", None) is not None:
        viz.socket.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
