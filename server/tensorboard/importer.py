"""TensorBoard logdir → envs, exactly once: `dash-server import-tb LOGDIR` and the `--logdir` watcher.

Runs: every directory under LOGDIR that holds an event file (name containing "tfevents") or a
projector_config.pbtxt. A run's env is named as `paneboard.SummaryWriter(log_dir=<that directory>)` names it
live (paneboard.protocol.run_name): its path under the working directory ("runs/exp1" for `import-tb runs` or
`import-tb runs/exp1`), else its path relative to LOGDIR's *parent*.

Exactly once: each event file is one writer client ("tb:" + sha1 of its absolute path) whose sequence numbers
are byte offsets: a batch of complete records [a, b) becomes one writer job with seq b, committed in the same
transaction as its data, so the client's committed `last_seq` is where to resume after a restart or a crash. A
short trailing record is a writer still writing: it is read again later from the same offset.

Restarted runs (one rule): every record is kept, in file order (a run's files in name order); a step that goes
backwards is kept as a new point; purge_step's SessionLog START purges nothing.
"""

from __future__ import annotations

import hashlib
import html
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paneboard.protocol import run_name

from ..commands.envelope import Command, EventError
from ..commands.jobs import Job, JobResult, Submit
from ..dispatch.parse import parse_event

if TYPE_CHECKING:  # tensorboard's protos load only when a logdir is imported
    from .decode import RunState, Skip

log = logging.getLogger("paneboard.tb")

BATCH_BYTES = 64 << 20     # file bytes per writer job (a job is one transaction)
MAX_IN_FLIGHT = 3          # jobs queued at the writer: parse the next batch while it commits this one
POLL_SECONDS = 1.5
ALERTS_WIN = "alerts"      # the env's alerts pane (the env page's banner reads it): skipped records are counted there


def client_id(path: str) -> str:
    return "tb:" + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()


def env_name(logdir: Path, run_dir: Path) -> str:
    """The run's env, as a live `paneboard.SummaryWriter(run_dir)` names it (paneboard.protocol.run_name)."""
    return run_name(run_dir, logdir)


def find_runs(logdir: Path) -> dict[Path, list[Path]]:
    """Run directories → their event files in name order (TensorBoard's order). Unreadable dirs are warnings."""
    runs: dict[Path, list[Path]] = {}

    def onerror(exc: OSError) -> None:
        log.warning("cannot read %s: %s", exc.filename, exc.strerror)

    for dirpath, dirnames, filenames in os.walk(logdir, onerror=onerror, followlinks=True):
        dirnames.sort()
        files = sorted(f for f in filenames if "tfevents" in f)
        if files or "projector_config.pbtxt" in filenames:
            runs[Path(dirpath)] = [Path(dirpath, f) for f in files]
    return runs


@dataclass
class Stats:
    bytes: int = 0
    events: int = 0        # TensorBoard's events read (records of the event files, headers included)
    points: int = 0        # scalar points stored
    steps: int = 0         # step records stored (histograms, images, PR curves ... per step)
    problems: int = 0
    skipped: list[str] = field(default_factory=list)  # "env: tag 'x' step 3: reason", one per skipped record


@dataclass
class _File:
    client_id: str
    offset: int           # next byte to read (all before it is committed or queued at the writer)
    broken: bool = False  # a corrupt length: nothing after it can be framed
    shrunk: bool = False


class JobWriter(Protocol):
    """What the importer writes through: the server's writer, or a running server's HTTP API (remote.py)."""

    def submit(self, job: Job) -> None: ...


@dataclass
class _TbJob(Job):
    raws: list[dict] = field(default_factory=list)  # its events before parsing, for a remote writer (remote.py)


@dataclass
class _Run:
    state: RunState
    files: dict[str, _File] = field(default_factory=dict)
    embeddings: dict[str, int] = field(default_factory=dict)  # client id -> seq imported (or found committed)


class TbImporter:
    """Imports whatever is new in a logdir on each `import_pass`; keeps per-file offsets and per-run state."""

    def __init__(self, writer: JobWriter, store, logdir: str | Path) -> None:
        from .decode import RunState  # tensorboard's protos: only servers that import logs load them

        self._RunState = RunState
        self.writer = writer
        self.store = store
        self.logdir = Path(logdir)
        self.runs: dict[Path, _Run] = {}
        self.stats = Stats()
        self._slots = threading.Semaphore(MAX_IN_FLIGHT)
        self._idle = threading.Condition()
        self._in_flight = 0

    # -- discovery ---------------------------------------------------------------------------------------------
    def pending(self) -> tuple[dict[Path, list[Path]], int]:
        """The runs and how many bytes of their files are not imported yet."""
        runs = find_runs(self.logdir)
        total = 0
        for run_dir, files in runs.items():
            run = self._run(run_dir)
            for path in files:
                f = self._file(run, path)
                try:
                    total += max(0, os.path.getsize(path) - f.offset)
                except OSError:
                    pass
        return runs, total

    def _run(self, run_dir: Path) -> _Run:
        run = self.runs.get(run_dir)
        if run is None:
            run = self.runs[run_dir] = _Run(self._RunState(env_name(self.logdir, run_dir)))
        return run

    def _file(self, run: _Run, path: Path) -> _File:
        f = run.files.get(str(path))
        if f is None:
            cid = client_id(str(path))
            f = run.files[str(path)] = _File(cid, self.store.client_last_seq(cid))
        return f

    # -- importing ---------------------------------------------------------------------------------------------
    def import_pass(self, progress=None) -> Stats:
        """One pass over the logdir: new runs, new files and new bytes; returns once everything is committed."""
        before = Stats(**{**vars(self.stats), "skipped": list(self.stats.skipped)})
        runs, _ = self.pending()
        for run_dir, files in runs.items():
            try:
                self._import_run(run_dir, files, progress)
            except Exception:  # one run's surprise must not stop the others
                log.exception("%s: import failed", run_dir)
                self.stats.problems += 1
        self.wait()
        counts = {k: getattr(self.stats, k) - getattr(before, k) for k in vars(before) if k != "skipped"}
        return Stats(**counts, skipped=self.stats.skipped[len(before.skipped):])

    def _import_run(self, run_dir: Path, files: list[Path], progress) -> None:
        run = self._run(run_dir)
        skips_before = (run.state.skip_count, len(run.state.skipped))
        try:
            self._import_files(run, files, progress)
            self._projector(run_dir, run)
        finally:
            self._report_skips(run, *skips_before)

    def _import_files(self, run: _Run, files: list[Path], progress) -> None:
        from .records import read_frames

        sizes = {}
        for path in files:
            f = self._file(run, path)
            try:
                sizes[str(path)] = os.path.getsize(path)
            except OSError as exc:
                log.warning("%s: %s", path, exc)
        new = [p for p in files if str(p) in sizes and sizes[str(p)] > run.files[str(p)].offset]
        if new and not run.state.restored:
            self._restore(run, files)
        for path in files:
            f = run.files[str(path)]
            size = sizes.get(str(path))
            if size is None or f.broken:
                continue
            if size < f.offset and not f.shrunk:
                f.shrunk = True  # rewritten or truncated: re-reading it would duplicate what is stored
                log.warning("%s: the file shrank below the %d bytes already imported; it is not read again",
                            path, f.offset)
            while f.offset < size and not f.broken:
                try:
                    frames = read_frames(str(path), f.offset, BATCH_BYTES)
                except OSError as exc:
                    log.warning("%s: %s", path, exc)
                    break
                if frames.broken:
                    log.warning("%s: %s; the rest of the file is skipped", path, frames.broken)
                    f.broken = True
                    self.stats.problems += 1
                for off in frames.skipped:
                    log.warning("%s: skipped a record with a bad CRC at offset %d", path, off)
                    self.stats.problems += 1
                if frames.end == f.offset:
                    break  # only a partial record: the writer is still writing it
                self._submit(run, f, frames)
                if progress is not None:
                    progress(frames.end - frames.base)

    def _report_skips(self, run: _Run, count_before: int, named_before: int) -> None:
        """This pass's skipped records: named in the stats (the command prints them) and counted in a row of
        the env's alerts pane, so a user who never saw the import's output still learns that records are missing."""
        count = run.state.skip_count - count_before
        if count <= 0:
            return
        self.wait()  # the row goes after the records that were stored
        named = run.state.skipped[named_before:]
        self.stats.problems += count
        self.stats.skipped += [f"{run.state.env}: {s.describe()}" for s in named]
        if count > len(named):
            self.stats.skipped.append(f"{run.state.env}: {count - len(named)} more skipped records")
        try:
            self._wait_job(Job([parse_event(skipped_alert(self.store, run.state.env, count, named))]))
        except EventError as exc:
            log.warning("%s: the alerts pane could not be updated: %s", run.state.env, exc)

    def _restore(self, run: _Run, files: list[Path]) -> None:
        """Replay the run's already imported bytes into its state (plugin metadata, hparams, last scalars)
        without emitting: needed once per process when a run imported earlier grows."""
        from .decode import Batch
        from .records import read_frames

        run.state.restored = True
        skips = (run.state.skip_count, len(run.state.skipped))
        for path in files:
            f = run.files[str(path)]
            off = 0
            while off < f.offset:
                frames = read_frames(str(path), off, min(BATCH_BYTES, f.offset - off))
                if frames.end == off:
                    break
                batch = Batch(run.state, emit=False)
                batch.add_frames(frames)
                batch.events()
                off = frames.end
        # What the replay skips was reported when those bytes were imported.
        run.state.skip_count = skips[0]
        del run.state.skipped[skips[1]:]

    def _submit(self, run: _Run, f: _File, frames) -> None:
        from .decode import Batch

        batch = Batch(run.state)
        batch.add_frames(frames)
        parsed = []
        for raw in batch.events():
            parsed += self._parse(run, raw)
            self.stats.points += sum(len(t.get("x", ())) for t in raw.get("traces") or ())
            self.stats.steps += len(raw.get("records") or ())
        commands = [cmd for _raw, cmd in parsed]
        for cmd in commands:
            cmd.seq = frames.end
        self.stats.events += len(frames)
        self.stats.bytes += frames.end - frames.base
        f.offset = frames.end
        self._slots.acquire()
        with self._idle:
            self._in_flight += 1

        def done(result: JobResult, f: _File = f, env: str = run.state.env) -> None:
            if result.failed:
                log.error("%s: a batch could not be stored (%s); it is read again on the next pass", env,
                          result.failed)
                f.offset = min(f.offset, frames.base)
                self.stats.problems += 1
            for err in result.errors:
                run.state.warn_once(f"store:{err['error']}", "not stored: %s", err["error"])
            self._slots.release()
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

        # The job's ack_seq moves the file's last_seq to frames.end in the transaction that stores its data:
        # a batch that decodes to nothing (headers only) still moves it.
        self.writer.submit(_TbJob(commands, client_id=f.client_id, ack_seq=frames.end, done=done,
                                  raws=[raw for raw, _cmd in parsed]))

    def _parse(self, run: _Run, raw: dict) -> list[tuple[dict, Command]]:
        """(event, its command) for each event that parses: the good records of a chunk as events of their own."""
        try:
            return [(raw, parse_event(raw))]
        except EventError as exc:
            records = raw.get("records")
            if isinstance(records, list) and len(records) > 1:  # keep the good records of a chunk
                return [c for rec in records for c in self._parse(run, {**raw, "records": [rec]})]
            step = records[0].get("step") if isinstance(records, list) and isinstance(records[0], dict) else None
            run.state.skip(str(raw.get("win") or raw.get("op")), step if isinstance(step, int) else None,
                           f"{raw.get('kind') or raw.get('op')} refused: {exc}")
            return []

    def _projector(self, run_dir: Path, run: _Run) -> None:
        from . import projector_config as tb_projector

        for emb in tb_projector.embeddings(str(run_dir)):
            if emb.client_id not in run.embeddings:
                run.embeddings[emb.client_id] = self.store.client_last_seq(emb.client_id)
            if run.embeddings[emb.client_id] >= emb.seq:
                continue  # imported already (and not rewritten since)
            run.embeddings[emb.client_id] = emb.seq
            try:
                parsed = self._parse(run, tb_projector.event(run.state.env, emb))
            except (OSError, ValueError) as exc:
                run.state.warn_once(f"projector:{emb.win}:{exc}", "embedding %s skipped: %s", emb.win, exc)
                continue
            for _raw, cmd in parsed:
                cmd.seq = emb.seq
            result = self._wait_job(_TbJob([cmd for _raw, cmd in parsed], client_id=emb.client_id,
                                           ack_seq=emb.seq, raws=[raw for raw, _cmd in parsed]))
            if result.failed:
                log.error("%s: embedding %s could not be stored (%s)", run.state.env, emb.win, result.failed)

    def _wait_job(self, job: Job) -> JobResult:
        box: list[JobResult] = []
        ready = threading.Event()

        def done(result: JobResult) -> None:
            box.append(result)
            ready.set()

        job.done = done
        self.writer.submit(job)
        ready.wait()
        return box[0]

    def wait(self) -> None:
        """Until every submitted job is committed (or failed)."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0)


def skipped_alert(store, env: str, count: int, named: list[Skip]) -> dict:
    """The alerts-pane row (an append event) that counts a pass's skipped records and names the first few."""
    fresh = store.get_pane(env, ALERTS_WIN) is None
    head = "<b>alerts</b> (time · step · rule: message)<br>" if fresh else ""
    names = "; ".join(s.describe() for s in named[:5]) + ("; …" if count > 5 else "")
    row = (f"{time.strftime('%Y-%m-%d %H:%M:%S')} · import · <b>skipped records</b>: {count} TensorBoard "
           f"record{'s' if count != 1 else ''} not imported ({html.escape(names)})")
    return {"op": "update", "kind": "text", "mode": "append", "env": env, "win": ALERTS_WIN,
            "opts": {"title": "alerts"}, "content": head + row}


class TbWatcher:
    """`dash-server --logdir`: an import pass at start, then one every POLL_SECONDS, and a last one at stop."""

    def __init__(self, writer: Submit, store, logdir: str, interval: float = POLL_SECONDS) -> None:
        self.importer = TbImporter(writer, store, logdir)
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="paneboard-tb-watch", daemon=True)

    def start(self) -> None:
        log.info("watching TensorBoard logdir %s", self.importer.logdir)
        self._thread.start()

    def stop(self, timeout: float = 60.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            stopping = self._stop.is_set()
            try:
                got = self.importer.import_pass()
                if got.events:
                    log.info("logdir: imported %d TensorBoard events (%d points, %d step records)", got.events,
                             got.points, got.steps)
            except Exception:
                log.exception("logdir pass failed")
            if stopping or self._stop.wait(self.interval):
                if not stopping:
                    continue  # one last pass after stop(): what training wrote since the previous pass
                return
