"""The test side of tests/server_zygote.py: start dash-server processes forked from one that imported it once."""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

ZYGOTE = Path(__file__).resolve().parent.parent / "server_zygote.py"


class ForkedServer:
    """What ServerProcess needs of a Popen (pid, poll, wait, send_signal, kill), for a dash-server process the
    zygote forked: it is the zygote's child, so its exit status comes from the zygote."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid

    @property
    def returncode(self) -> int | None:
        return self.zygote.exits.get(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self.zygote.changed:
            if not self.zygote.changed.wait_for(lambda: self.pid in self.zygote.exits, timeout):
                raise subprocess.TimeoutExpired(f"dash-server pid {self.pid}", timeout or 0)
            return self.zygote.exits[self.pid]

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """One zygote process per test worker, started on first use and ended when the worker exits."""

    _instance: Zygote | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(ZYGOTE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.exits: dict[int, int] = {}
        self.changed = threading.Condition()
        self._pids: list[int] = []
        self._spawn = threading.Lock()  # one request at a time: answers come back in order
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()
        atexit.register(self.close)

    @classmethod
    def get(cls) -> Zygote:
        with cls._instance_lock:
            if cls._instance is None or cls._instance.proc.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def spawn(self, argv: list[str], log: Path) -> ForkedServer:
        """A new `dash-server ARGV` process writing to `log`, with this process's environment and directory."""
        req = {"argv": argv, "log": str(log), "env": dict(os.environ), "cwd": os.getcwd()}
        with self._spawn, self.changed:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            if not self.changed.wait_for(lambda: self._pids, 30):
                raise RuntimeError(f"the dash-server zygote did not fork (exit code {self.proc.poll()})")
            return ForkedServer(self, self._pids.pop(0))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self.changed:
                if "pid" in msg:
                    self._pids.append(msg["pid"])
                else:
                    self.exits[msg["exit"]] = msg["code"]
                self.changed.notify_all()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
