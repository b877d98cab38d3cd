"""The single writer thread: batches commands into transactions; acks and live pushes only after commit."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from sqlalchemy.exc import DataError, DBAPIError

from ..commands.envelope import Command, EventError
from ..commands.jobs import Job, JobResult
from ..dispatch.batch import coalesce, first_seq, unstored
from ..dispatch.table import apply_command
from ..live.deltas import Deltas
from ..store import Store, StoreTx
from .blob_sweep import SWEEP_EVERY, BlobSweeper
from .memtrim import Trimmer
from .space_reclaim import SpaceReclaimer

log = logging.getLogger("paneboard.writer")

MAX_COMMANDS_PER_TXN = 20_000
ENV_SUMMARY_INTERVAL = 0.5  # seconds between env-list refreshes for an env that keeps changing
# Group commit: a job that arrives within BUSY_GAP of the last commit waits up to GROUP_LINGER for others to
# share its transaction, commit and acks (a commit has a fixed CPU cost however little it holds); a job that
# finds the writer idle is committed at once, so a lone event is not delayed.
BUSY_GAP = 0.010
GROUP_LINGER = 0.005


def is_transient(exc: BaseException) -> bool:
    """A failure of the storage rather than of the data (lock, disk full, connection, key conflict): the
    same command may commit later, so it must be retried, never reported as rejected."""
    if isinstance(exc, DataError):  # a value the column cannot hold: the same data fails every time
        return False
    return isinstance(exc, (DBAPIError, OSError, MemoryError, TimeoutError))


def _describe(exc: BaseException) -> str:
    """One short line: SQLAlchemy's own text repeats the statement and its (maybe megabytes of) parameters."""
    lines = str(getattr(exc, "orig", None) or exc).splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


class Writer:
    """The one thread that writes: implements commands.jobs.Submit for every producer."""

    def __init__(self, store: Store, publish: Callable[[list[dict]], None],
                 listening: Callable[[], bool] | None = None) -> None:
        self.store = store
        self.publish = publish
        # Whether anyone receives what is published (a local browser, or other servers): with nobody, live
        # messages are not sent and env summaries not computed (a page loads its env list when it opens).
        self.listening = listening or (lambda: True)
        self.group_linger, self.busy_gap = GROUP_LINGER, BUSY_GAP
        self._last_commit = 0.0  # monotonic time the last transaction ended
        self.commits = 0  # transactions of ingested jobs so far (diagnostics, tests)
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="paneboard-writer", daemon=True)
        self._dirty_envs: dict[str, float] = {}   # env -> when it last changed
        self._sent_envs: dict[str, float] = {}    # env -> when its summary was last published
        self._trimmer = Trimmer()
        self.on_commit: list[Callable[[set[str]], None]] = []  # told the envs each commit touched (runs index)
        self._blobs = BlobSweeper(store)
        self.space = SpaceReclaimer(store)  # gives deleted rows' pages back to the disk

    # -- producer side ----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Apply everything already queued, then stop."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)

    def submit(self, job: Job) -> None:
        self._queue.put(job)

    def submit_wait(self, commands: list[Command], timeout: float = 60.0) -> JobResult:
        """For synchronous producers (HTTP): returns once the commands are committed."""
        done = threading.Event()
        box: list[JobResult] = []

        def finish(result: JobResult) -> None:
            box.append(result)
            done.set()

        self.submit(Job(commands, done=finish))
        if not done.wait(timeout):
            return JobResult(failed="timed out waiting for the writer")
        return box[0]

    @property
    def backlog(self) -> int:
        return self._queue.qsize()

    # -- writer thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        stopping = False
        while not stopping:
            try:
                waits = [w for w in (ENV_SUMMARY_INTERVAL if self._dirty_envs else None, self._trimmer.due_in(),
                                     SWEEP_EVERY if self._blobs.dirty else None, self.space.due_in())
                         if w is not None]
                first = self._queue.get(timeout=min(waits) if waits else None)
            except queue.Empty:
                self._publish_env_summaries(force=True)
                self._blobs.maybe_sweep(idle=True)
                self.space.maybe_step(idle=True)  # after the sweep: the blobs it deleted free pages too
                self._trimmer.maybe_trim()  # idle: give the heap pages of the last burst back
                continue
            jobs: list[Job] = []
            if first is None:
                stopping = True
            else:
                jobs.append(first)
            ncmd = len(first.commands) if first else 0
            busy = time.monotonic() - self._last_commit < self.busy_gap
            until = time.monotonic() + self.group_linger if busy else 0.0
            while ncmd < MAX_COMMANDS_PER_TXN and not stopping:  # group waiting jobs into one transaction
                try:
                    left = until - time.monotonic()
                    nxt = self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stopping = True
                    break
                jobs.append(nxt)
                ncmd += len(nxt.commands)
            if jobs:
                self._process(jobs)
                self._last_commit = time.monotonic()
                self.commits += 1
                for job in jobs:
                    self._blobs.note(job.commands)
                    self.space.note(job.commands)
                self._blobs.maybe_sweep()
                self.space.maybe_step()
                self._trimmer.note_work(sum(job.size for job in jobs))
                if self._queue.empty():  # the burst is over (for now): give its heap pages back
                    self._trimmer.maybe_trim()
        self._publish_env_summaries(force=True)

    def _process(self, jobs: list[Job]) -> None:
        try:
            results, deltas, envs = self._commit(jobs)
        except Exception:
            log.exception("a batch of %d jobs failed to commit; retrying them one by one", len(jobs))
            results, messages = [], []
            for job in jobs:
                result, job_deltas = self._commit_isolated(job)
                results.append(result)
                messages += job_deltas
            self._finish(jobs, results, messages)
            return
        self._touched(envs, deltas.messages)
        self._finish(jobs, results, deltas.messages)

    def _commit(self, jobs: list[Job]) -> tuple[list[JobResult], Deltas, set[str]]:
        deltas = Deltas()
        with self.store.transaction() as tx:
            results = [self._apply_job(tx, job, deltas) for job in jobs]
            envs = set(tx.touched_envs)
        return results, deltas, envs

    def _apply_job(self, tx: StoreTx, job: Job, deltas: Deltas) -> JobResult:
        if job.stream is not None and job.stream.broken:
            return JobResult(failed=job.stream.broken)  # nothing of it: see Stream
        result = JobResult()
        last = tx.client_last_seq(job.client_id) if job.client_id else 0
        # A seq at or below `last` was committed by an earlier delivery of the same event (of a coalesced
        # append's calls, those at or below it).
        fresh = unstored(job.commands, last) if job.client_id else job.commands
        # Merge only after that filter, so a replay that overlaps a committed batch stays exact.
        for cmd in coalesce(fresh):
            try:
                apply_command(tx, cmd, deltas)
            except EventError as exc:
                result.errors.append({"s": cmd.seq, "error": str(exc)})
            # Any other exception aborts the whole transaction: _commit_isolated then finds the culprit.
        if job.client_id and job.ack_seq is not None and job.ack_seq > last:
            tx.set_client_last_seq(job.client_id, job.ack_seq)
        return result

    def _commit_isolated(self, job: Job) -> tuple[JobResult, list[dict]]:
        """After a failed batch: the job alone, then halves of it, down to single commands, in seq order.

        A command that raises for its data alone is rejected for good and the rest goes on. The first
        storage failure stops the job: each stored run of commands moved last_seq to its own last seq in its
        own transaction, so last_seq ends just below the failed command. Storing a later command would move
        it past, and the resend would skip the failed one as already stored; so it, the rest of this job and
        every later job of the connection (Stream.broken) stay unstored until the client resends them.
        """
        if job.stream is not None and job.stream.broken:
            return JobResult(failed=job.stream.broken), []
        result = JobResult()
        messages: list[dict] = []
        failed = self._store_run(job, job.commands, result, messages)
        if failed is not None and job.stream is not None:
            job.stream.broken = result.failed
        if job.client_id and job.ack_seq is not None:
            # Past the events rejected for good (also those rejected before the writer): all of the job, or
            # up to just below the failed command (rejected events may sit there), never beyond it.
            upto = job.ack_seq if failed is None else (first_seq(failed) or 1) - 1
            try:
                with self.store.transaction() as tx:
                    if upto > tx.client_last_seq(job.client_id):
                        tx.set_client_last_seq(job.client_id, upto)
            except Exception as exc:
                log.error("could not record the sequence number of client %s: %s", job.client_id, _describe(exc))
                if not result.failed:
                    result.failed = _describe(exc)
                    if job.stream is not None:
                        job.stream.broken = result.failed
        return result, messages

    def _store_run(self, job: Job, cmds: list[Command], result: JobResult, messages: list[dict]) -> Command | None:
        """Store `cmds` in one transaction, else each half in turn (O(log n) transactions per bad command);
        the command whose storage failed transiently, if any (nothing after it is tried)."""
        seqs = [cmd.seq for cmd in cmds if cmd.seq is not None]
        try:
            res, deltas, envs = self._commit([Job(cmds, job.client_id, ack_seq=max(seqs, default=None))])
        except Exception as exc:
            if len(cmds) > 1:
                mid = len(cmds) // 2
                return (self._store_run(job, cmds[:mid], result, messages)
                        or self._store_run(job, cmds[mid:], result, messages))
            cmd = cmds[0]
            where = f"{cmd.op} on {cmd.env}/{cmd.win} (s={cmd.seq})"
            if is_transient(exc):
                log.error("%s could not be stored, its producer must resend it: %s", where, _describe(exc))
                result.failed = f"{_describe(exc)} (event s={cmd.seq})"
                return cmd
            log.error("%s rejected: %s", where, _describe(exc), exc_info=exc)
            result.errors.append({"s": cmd.seq, "error": f"could not be applied: {_describe(exc)}"})
            return None
        result.errors += res[0].errors
        messages += deltas.messages
        self._touched(envs, deltas.messages)
        return None

    def _touched(self, envs: set[str], messages: list[dict]) -> None:
        self._dirty_envs.update(dict.fromkeys(envs, time.time()))
        if self.on_commit:
            # A deleted or renamed env leaves the transaction's touched set (nothing of it to stamp), and live
            # messages are not published while nobody listens: the listeners hear of it here.
            changed = envs | {name for m in messages if m["type"] in ("env_deleted", "env_renamed")
                              for name in (m["env"], m.get("to")) if isinstance(name, str)}
            for listener in self.on_commit:
                listener(changed)

    def _finish(self, jobs: list[Job], results: list[JobResult], messages: list[dict]) -> None:
        for job, result in zip(jobs, results, strict=False):
            if job.done is not None:
                try:
                    job.done(result)
                except Exception:
                    log.exception("ack callback failed")
        for msg in messages:
            if msg["type"] == "env_deleted":
                self._sent_envs.pop(msg["env"], None)  # a re-created env gets its summary at once
        if messages and self.listening():
            self.publish(messages)
        self._publish_env_summaries(force=False)

    def _publish_env_summaries(self, force: bool) -> None:
        """Env list rows change with every append; refresh them at most every ENV_SUMMARY_INTERVAL."""
        if self._dirty_envs and not self.listening():
            self._dirty_envs.clear()  # nobody to tell: spare the summary queries
            return
        now = time.time()
        due = [env for env in self._dirty_envs
               if force or env not in self._sent_envs or now - self._sent_envs[env] >= ENV_SUMMARY_INTERVAL]
        if not due:
            return
        messages = []
        for env in due:
            del self._dirty_envs[env]
            self._sent_envs[env] = now
            try:
                summary = self.store.get_env(env)
            except Exception:
                log.exception("could not read the summary of env %s", env)
                continue
            if summary is not None:
                messages.append({"type": "env", "env": summary.to_json()})
        if messages:
            self.publish(messages)
