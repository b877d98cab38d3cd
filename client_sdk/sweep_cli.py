"""`paneboard sweep FILE` (and --pause/--resume/--stop/--cancel ID) and `paneboard agent SWEEP_ID [--count N]`."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from . import sweeps

ACTIONS = ("pause", "resume", "stop", "cancel")


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    p_sweep = sub.add_parser("sweep", parents=[common],
                             help="create a sweep from a W&B sweep file (prints its id), or pause/resume/stop one")
    p_sweep.add_argument("file", nargs="?", type=Path, help="the sweep configuration (YAML or JSON)")
    p_sweep.add_argument("--project", default=None, help="the project of the sweep's runs (default: the file's)")
    group = p_sweep.add_mutually_exclusive_group()
    for action in ACTIONS:
        group.add_argument(f"--{action}", metavar="SWEEP_ID", default=None, help=f"{action} the sweep")
    p_agent = sub.add_parser("agent", parents=[common], help="run a sweep's trials on this machine")
    p_agent.add_argument("sweep_id", help="the sweep's id (from `paneboard sweep FILE`)")
    p_agent.add_argument("--count", type=int, default=None, help="run at most this many trials")
    p_agent.add_argument("--heartbeat", type=float, default=10.0,
                         help="seconds between reports of a trial's metric (default 10)")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    logging.basicConfig(level=logging.INFO, format="paneboard: %(message)s")
    try:
        if args.command == "agent":
            if args.count is not None and args.count < 1:
                parser.error("--count must be >= 1")
            n = sweeps.agent(args.sweep_id, count=args.count, server=args.server, token=args.token,
                             heartbeat_s=args.heartbeat)
            print(f"agent ran {n} trial(s) of sweep {args.sweep_id}")
            return 0
        for action in ACTIONS:
            sweep_id = getattr(args, action)
            if sweep_id is not None:
                state = sweeps.set_state(sweep_id, action, server=args.server, token=args.token)["state"]
                print(f"sweep {sweep_id}: {state}")
                return 0
        if args.file is None:
            parser.error("paneboard sweep needs a sweep file (or --pause/--resume/--stop/--cancel SWEEP_ID)")
        try:
            text = args.file.read_text()
        except OSError as exc:
            print(f"paneboard sweep: cannot read {args.file}: {exc}", file=sys.stderr)
            return 1
        print(sweeps.sweep(text, args.project, server=args.server, token=args.token))
        return 0
    except sweeps.SweepApiError as exc:
        print(f"paneboard {args.command}: {exc}", file=sys.stderr)
        return 1
