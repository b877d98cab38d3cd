"""Figures of the server's house from its import graph: rooms, arrows between them, arrows back up, loose modules.

python bench/import_graph.py [--root CHECKOUT]  (another checkout, e.g. a `git worktree` of an older commit,
is measured with this script's own rules). A room is a first-level package of server/ (a module loose in
server/ is a room of its own); an arrow is one room importing another; an arrow back up is one that lies on a
cycle of rooms (a room that imports a room that, directly or not, imports it back).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers import imports  # noqa: E402

ASSEMBLY = {"__init__", "__main__"}


def figures(root: Path) -> dict[str, object]:
    imports.ROOT = root
    g = imports.graph()
    server = root / "server"
    loose = sorted(p.stem for p in server.glob("*.py") if p.stem not in ASSEMBLY)
    rooms = {imports.room_of(m) for m in g} - {None}
    arrows = imports.room_arrows(g)
    room_graph = imports.room_graph(g)
    on_cycle = {frozenset(c) for c in imports.cycles(room_graph)}
    up = sorted((s, d) for s, d in arrows if any(s in c and d in c for c in on_cycle))
    return {"rooms": len(rooms), "packages": len(rooms) - len(loose), "arrows": len(arrows), "arrows_back_up": len(up),
            "loose_modules": len(loose), "loose": loose, "cycles_of_rooms": [sorted(c) for c in on_cycle],
            "up": up}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = ap.parse_args()
    f = figures(args.root.resolve())
    print(f"rooms {f['rooms']} (packages {f['packages']}, loose modules {f['loose_modules']}), "
          f"arrows {f['arrows']}, arrows back up {f['arrows_back_up']}")
    print("loose:", ", ".join(f["loose"]))  # type: ignore[arg-type]
    for cycle in f["cycles_of_rooms"]:  # type: ignore[attr-defined]
        print("rooms on one cycle:", " <-> ".join(cycle))


if __name__ == "__main__":
    main()
