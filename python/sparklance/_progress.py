"""Progress of the command line's long work (starting Spark, running a statement, inspecting a table), on stderr.

Progress never goes to stdout, so results and JSON there stay clean. On a terminal it is one status line refreshed
in place and erased when the work ends; on anything else (a log file, a pipe) it is a plain line at most every
``interval`` seconds and a summary when the work took that long; with ``--quiet`` there is none.

The progress of Spark work comes from the SparkContext's status tracker, polled by a background thread, over the
jobs of one job group: every statement runs in a group of its own.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import shutil
import sys
import threading
import time
from typing import Callable, Hashable, Iterator, NamedTuple, Optional, TextIO, Tuple

# How often the status is polled, and how long work runs before a terminal shows a line for it (the first second
# of a short statement is not worth a flicker).
POLL_SECONDS = 0.2
LIVE_DELAY_SECONDS = 0.5
DEFAULT_INTERVAL_SECONDS = 5.0

_group_ids = itertools.count(1)


class JobsStatus(NamedTuple):
    """Stages and tasks of the jobs of one job group, completed of total."""

    jobs: int
    jobs_done: int
    stages: int
    stages_done: int
    tasks: int
    tasks_done: int
    tasks_running: int


def jobs_status(tracker, group: str) -> JobsStatus:
    """Sums what ``tracker`` (a pyspark ``StatusTracker``) knows of the jobs in ``group``.

    A stage shared by several jobs counts once. A stage of a finished job that ran no task was skipped (its shuffle
    output was reused) and does not count; a pending stage of a running job counts until then, so totals can shrink
    when a job finishes. The tracker forgets old jobs and stages; those are left out."""
    jobs = jobs_done = 0
    stages = {}
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        if job is None:
            continue
        jobs += 1
        finished = job.status in ("SUCCEEDED", "FAILED")
        jobs_done += finished
        for stage_id in job.stageIds:
            stage = stages.get(stage_id) or tracker.getStageInfo(stage_id)
            if stage is None or (finished and stage.numTasks > 0 and stage.numCompletedTasks == 0):
                continue
            stages[stage_id] = stage
    done = [s for s in stages.values() if s.numCompletedTasks >= s.numTasks]
    return JobsStatus(jobs, jobs_done, len(stages), len(done), sum(s.numTasks for s in stages.values()),
                      sum(min(s.numCompletedTasks, s.numTasks) for s in stages.values()),
                      sum(s.numActiveTasks for s in stages.values()))


def describe_running(label: str, status: JobsStatus, elapsed: float) -> str:
    if status.stages == 0:
        return f"{label}: running, {elapsed:.1f}s"
    running = f" ({status.tasks_running} running)" if status.tasks_running else ""
    return (f"{label}: stages {status.stages_done}/{status.stages}, tasks {status.tasks_done}/{status.tasks}"
            f"{running}, {elapsed:.1f}s")


def describe_done(label: str, status: JobsStatus, elapsed: float) -> str:
    if status.stages == 0:
        return f"{label}: done in {elapsed:.1f}s, no Spark jobs"
    return f"{label}: done in {elapsed:.1f}s, {_count(status.stages, 'stage')}, {_count(status.tasks_done, 'task')}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class Progress:
    """Where the command line reports long work (see the module's doc): ``stream`` is stderr; ``enabled`` is False
    for ``--quiet``; ``interval`` is the least time between plain lines."""

    def __init__(self, stream: Optional[TextIO] = None, enabled: bool = True,
                 interval: float = DEFAULT_INTERVAL_SECONDS):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.interval = interval
        self.live = enabled and _is_terminal(self.stream)

    @contextlib.contextmanager
    def phase(self, label: str) -> Iterator[None]:
        """A step with no measure of its own but time, e.g. ``starting Spark``."""
        if self.enabled and not self.live:
            self._line(f"{label} ...")
        with self._watch(lambda elapsed: (None, f"{label} ... {elapsed:.1f}s"),
                         lambda elapsed: f"{label}: {elapsed:.1f}s", plain_updates=False):
            yield

    @contextlib.contextmanager
    def spark_work(self, spark_context, label: str) -> Iterator[None]:
        """Runs the block's Spark jobs in a job group of their own and reports their stages and tasks."""
        if not self.enabled:
            yield
            return
        group = f"sparklance-cli-{next(_group_ids)}"
        spark_context.setJobGroup(group, label)
        tracker = spark_context.statusTracker()

        def running(elapsed: float) -> Tuple[JobsStatus, str]:
            status = jobs_status(tracker, group)
            return status, describe_running(label, status, elapsed)

        def done(elapsed: float) -> str:
            # The tracker learns of finished tasks and jobs from Spark's listener bus, a little after they finish.
            status, deadline = jobs_status(tracker, group), time.monotonic() + 2.0
            while status.jobs_done < status.jobs and time.monotonic() < deadline:
                time.sleep(0.05)
                status = jobs_status(tracker, group)
            return describe_done(label, status, elapsed)

        try:
            with self._watch(running, done, plain_updates=True):
                yield
        finally:
            spark_context.setLocalProperty("spark.jobGroup.id", None)
            spark_context.setLocalProperty("spark.job.description", None)

    @contextlib.contextmanager
    def _watch(self, running: Callable[[float], Tuple[Hashable, str]], done: Callable[[float], str],
               plain_updates: bool):
        """Runs the block while a thread reports ``running(elapsed)`` (a state and its text: plain lines are written
        only when the state changed); afterwards erases the live line, or (plain) writes ``done(elapsed)`` when the
        work succeeded and took ``interval`` or a line was written for it."""
        if not self.enabled:
            yield
            return
        start = time.monotonic()
        stop = threading.Event()
        wrote = [False]

        def report() -> None:
            shown = None
            last_line = start
            while not stop.wait(POLL_SECONDS):
                elapsed = time.monotonic() - start
                try:
                    state, text = running(elapsed)
                except Exception:  # the tracker is best effort: the session may be stopping
                    return
                if self.live:
                    if elapsed >= LIVE_DELAY_SECONDS:
                        self._overwrite(text)
                        wrote[0] = True
                elif plain_updates and state != shown and time.monotonic() - last_line >= self.interval:
                    self._line(text)
                    shown, last_line, wrote[0] = state, time.monotonic(), True

        thread = threading.Thread(target=report, name="sparklance-progress", daemon=True)
        thread.start()
        failed = True
        try:
            yield
            failed = False
        finally:
            stop.set()
            thread.join()
            elapsed = time.monotonic() - start
            if self.live:
                if wrote[0]:
                    self._overwrite("")
            elif not failed and (elapsed >= self.interval or wrote[0]):  # a failure is reported by its error
                try:
                    self._line(done(elapsed))
                except Exception:
                    pass

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def _overwrite(self, text: str) -> None:
        # The cursor goes back to the line's start, so that what the JVM logs to the same terminal (Spark's start-up
        # messages) overwrites the status line instead of trailing after it.
        self.stream.write("\r" + text[:_width(self.stream) - 1] + "\x1b[K\r")
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _width(stream: TextIO) -> int:
    """Columns of the terminal ``stream`` writes to (a new pseudo-terminal reports 0: then 80)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        columns = shutil.get_terminal_size((80, 24)).columns
    return columns if columns > 0 else 80
