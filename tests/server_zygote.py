"""A dash-server zygote for the test suite: imports the server once, then forks a dash-server process per request.

Started by conftest's ServerProcess, one per test worker. Each request (a JSON line on stdin) names the arguments,
environment, working directory and log file of one `dash-server`; the zygote forks, and the child runs the CLI's
main() exactly as `python -m paneboard.server ARGS` would, in a process of its own: kill -9, SIGTERM and restarts
on the same database behave as for an exec'd server. What forking saves is the ~0.8 s of CPU each exec spent
importing Flask, SQLAlchemy, Alembic and uvicorn again. The zygote answers {"pid": N} per request and
{"exit": N, "code": C} (Popen's returncode: negative for a signal) when a child ends; it exits at end of input.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import traceback

# What serving imports (cli.main's serve() imports the app and uvicorn lazily): imported here, once.
import uvicorn  # noqa: F401
import uvicorn.lifespan.on  # noqa: F401
import uvicorn.loops.auto  # noqa: F401
import uvicorn.protocols.http.auto  # noqa: F401
import uvicorn.protocols.websockets.auto  # noqa: F401

import paneboard.server.app  # noqa: F401
import paneboard.server.store.instance_lock  # noqa: F401
import paneboard.server.store.schema  # noqa: F401
import paneboard.server.web.guard  # noqa: F401
import paneboard.server.web.quiet_server  # noqa: F401
from paneboard.server.cli.main import main

paneboard.server.store.schema.head_revision()  # read once here, for every child


def child(req: dict) -> None:
    """In the forked child: become `dash-server ARGS`, and never return into the zygote's loop."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        sys.argv = ["dash-server", *req["argv"]]
        code = main(req["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def reap(out) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        out.write(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}) + "\n")
        out.flush()


def serve() -> None:
    out = sys.stdout
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)  # a child's exit wakes the select below
    signal.signal(signal.SIGCHLD, lambda *_: None)
    requests = sys.stdin.buffer
    pending = b""
    while True:
        ready, _, _ = select.select([requests, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 512)
        reap(out)
        if requests not in ready:
            continue
        chunk = os.read(requests.fileno(), 65536)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            req = json.loads(line)
            out.flush()
            pid = os.fork()
            if pid == 0:
                child(req)
            out.write(json.dumps({"pid": pid}) + "\n")
            out.flush()


if __name__ == "__main__":
    serve()
