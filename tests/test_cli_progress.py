"""Progress of the ``sparklance`` command line: the status arithmetic and the reporter against fake status
trackers, then the CLI itself on a small warehouse, with stderr a pipe, a pseudo-terminal, and ``--quiet``.

In every run stdout must hold exactly the query's result, whatever progress went to stderr."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark import SparkJobInfo, SparkStageInfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import JAR, PYTHON_DIR, require_jar  # noqa: E402

from sparklance import _progress  # noqa: E402
from sparklance._progress import JobsStatus, Progress, describe_done, describe_running, jobs_status  # noqa: E402


def stage(stage_id, tasks, done, running=0):
    return SparkStageInfo(stage_id, 0, f"stage {stage_id}", tasks, running, done, 0)


class FakeTracker:
    """A status tracker whose jobs and stages a test sets."""

    def __init__(self):
        self.groups, self.jobs, self.stages = {}, {}, {}

    def getJobIdsForGroup(self, group):
        return list(self.groups.get(group, []))

    def getJobInfo(self, job_id):
        return self.jobs.get(job_id)

    def getStageInfo(self, stage_id):
        return self.stages.get(stage_id)


class FakeSparkContext:
    def __init__(self):
        self.tracker = FakeTracker()
        self.properties = {}

    def setJobGroup(self, group, description):
        self.properties.update({"spark.jobGroup.id": group, "spark.job.description": description})

    def setLocalProperty(self, key, value):
        self.properties[key] = value

    def statusTracker(self):
        return self.tracker

    def run(self, jobs, stages):
        """Jobs (id -> (status, stage ids)) and stages of the current job group."""
        group = self.properties["spark.jobGroup.id"]
        self.tracker.groups[group] = list(jobs)
        self.tracker.jobs.update({j: SparkJobInfo(j, ids, status) for j, (status, ids) in jobs.items()})
        self.tracker.stages.update(stages)


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(_progress, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(_progress, "LIVE_DELAY_SECONDS", 0.0)


def test_jobs_status_counts_shared_stages_once_and_skipped_stages_not_at_all():
    t = FakeTracker()
    t.groups["g"] = [1, 2, 3, 4]
    t.jobs = {1: SparkJobInfo(1, [0], "SUCCEEDED"),
              2: SparkJobInfo(2, [0, 1, 5], "RUNNING"),      # 0 again; 5 pending
              3: SparkJobInfo(3, [2, 3, 4], "SUCCEEDED")}    # 2 skipped; 4 forgotten by the tracker; job 4 too
    t.stages = {0: stage(0, 4, 4), 1: stage(1, 3, 1, running=2), 5: stage(5, 2, 0), 2: stage(2, 5, 0),
                3: stage(3, 2, 2)}
    status = jobs_status(t, "g")
    assert status == JobsStatus(jobs=3, jobs_done=2, stages=4, stages_done=2, tasks=11, tasks_done=7,
                                tasks_running=2)
    assert describe_running("sql", status, 1.3) == "sql: stages 2/4, tasks 7/11 (2 running), 1.3s"
    assert describe_done("sql", JobsStatus(1, 1, 1, 1, 1, 1, 0), 0.5) == "sql: done in 0.5s, 1 stage, 1 task"
    assert describe_running("sql", jobs_status(t, "other"), 0.2) == "sql: running, 0.2s"
    assert describe_done("sql", jobs_status(t, "other"), 0.2) == "sql: done in 0.2s, no Spark jobs"


def test_plain_lines_follow_the_tracker_and_end_with_a_summary(fast):
    sc, err = FakeSparkContext(), io.StringIO()
    with Progress(err, interval=0).spark_work(sc, "sql"):
        sc.run({7: ("RUNNING", [0])}, {0: stage(0, 4, 1, running=1)})
        time.sleep(0.2)
        sc.run({7: ("SUCCEEDED", [0])}, {0: stage(0, 4, 4)})
        time.sleep(0.2)
    lines = err.getvalue().splitlines()
    assert "sql: stages 0/1, tasks 1/4 (1 running)" in [line.rsplit(",", 1)[0] for line in lines]
    assert re.fullmatch(r"sql: done in \d+\.\ds, 1 stage, 4 tasks", lines[-1])
    assert len(lines) == len(set(line.rsplit(",", 1)[0] for line in lines))   # a line only when something changed
    assert sc.properties == {"spark.jobGroup.id": None, "spark.job.description": None}


def test_plain_lines_wait_for_the_interval(fast):
    sc, err = FakeSparkContext(), io.StringIO()
    with Progress(err, interval=60).spark_work(sc, "sql"):
        sc.run({1: ("SUCCEEDED", [0])}, {0: stage(0, 2, 2)})
        time.sleep(0.1)
    with Progress(err, interval=60).phase("starting Spark"):
        pass
    assert err.getvalue() == "starting Spark ...\n"                # quick work: no updates and no summary


def test_failed_work_gets_no_summary(fast):
    sc, err = FakeSparkContext(), io.StringIO()
    with pytest.raises(RuntimeError):
        with Progress(err, interval=0).spark_work(sc, "sql"):
            sc.run({1: ("FAILED", [0])}, {0: stage(0, 2, 1)})
            time.sleep(0.1)
            raise RuntimeError("the statement failed")
    assert err.getvalue() and "done" not in err.getvalue()
    assert sc.properties["spark.jobGroup.id"] is None


def test_a_terminal_gets_one_line_rewritten_in_place_then_erased(fast):
    sc, err = FakeSparkContext(), Terminal()
    progress = Progress(err, interval=0)
    assert progress.live
    with progress.spark_work(sc, "sql"):
        sc.run({1: ("RUNNING", [0])}, {0: stage(0, 3, 2, running=1)})
        time.sleep(0.1)
    text = err.getvalue()
    assert "\n" not in text
    assert re.search(r"\rsql: stages 0/1, tasks 2/3 \(1 running\), \d+\.\ds\x1b\[K\r", text)
    assert text.endswith("\r\x1b[K\r")


def test_quiet_reports_nothing_and_leaves_job_groups_alone(fast):
    sc, err = FakeSparkContext(), Terminal()
    progress = Progress(err, enabled=False)
    with progress.phase("starting Spark"), progress.spark_work(sc, "sql"):
        time.sleep(0.05)
    assert err.getvalue() == "" and sc.properties == {}


# The CLI on a real warehouse. Four fragments of five rows, read as four partitions, and a tenth of a second per row
# (Thread.sleep through java_method, whose result, the string "null", is never NULL), so the scan takes a while.
QUERY = ("SELECT s, count(*) AS n FROM lance.db.events WITH ('rows_per_partition' = '5') "
         "WHERE java_method('java.lang.Thread', 'sleep', 100L) IS NOT NULL GROUP BY s ORDER BY s")
RESULT = """+---+---+
|s  |n  |
+---+---+
|a  |5  |
|b  |5  |
|c  |5  |
|d  |5  |
+---+---+

"""
RUNNING = re.compile(r"sql: stages \d+/\d+, tasks \d+/\d+")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    import lance

    root = tmp_path_factory.mktemp("cli_progress_wh")
    for k in range(4):
        ids = list(range(5 * k, 5 * k + 5))
        lance.write_dataset(pa.table({"id": pa.array(ids, pa.int64()), "s": ["abcd"[i % 4] for i in ids]}),
                            str(root / "db" / "events.lance"), mode="append" if k else "create")
    return root


def cli(*args: str) -> list:
    require_jar()
    return [sys.executable, "-m", "sparklance", *args]


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(PYTHON_DIR), SPARKLANCE_JAR=str(JAR))


def test_cli_sql_writes_progress_lines_to_a_pipe_and_only_the_result_to_stdout(warehouse):
    out = subprocess.run(cli("sql", "--warehouse", str(warehouse), "--progress-interval", "0", QUERY), env=env(),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == RESULT
    lines = out.stderr.splitlines()
    assert "starting Spark ..." in lines
    assert any(re.fullmatch(r"starting Spark: \d+\.\ds", line) for line in lines)
    assert any(RUNNING.match(line) for line in lines), out.stderr
    done = [m for m in map(re.compile(r"sql: done in \d+\.\ds, (\d+) stages?, (\d+) tasks?").fullmatch, lines) if m]
    assert len(done) == 1, out.stderr
    stages, tasks = map(int, done[0].groups())
    assert stages >= 2 and tasks >= 5                          # four scan tasks, then the aggregation


def on_terminal(args) -> tuple:
    """Runs the CLI with stderr on a pseudo-terminal and stdout a pipe: (exit code, stdout, what the terminal got)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(cli(*args), env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:                                    # the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        stdout, _ = proc.communicate(timeout=300)
    finally:
        reader.join(timeout=10)
        os.close(master)
    return proc.returncode, stdout.decode(), b"".join(chunks).decode("utf-8", "replace")


def test_cli_sql_refreshes_one_line_on_a_terminal(warehouse):
    code, stdout, err = on_terminal(["sql", "--warehouse", str(warehouse), QUERY])
    assert code == 0, err[-3000:]
    assert stdout == RESULT
    assert re.search(r"\rstarting Spark \.\.\. \d+\.\ds\x1b\[K\r", err)
    assert re.search(r"\r" + RUNNING.pattern + r"[^\r\n]*\x1b\[K\r", err), err[-3000:]
    assert "\r\x1b[K\r" in err                                 # erased before the result was printed
    assert "sql: done" not in err and "starting Spark ...\r\n" not in err


def test_cli_inspect_shows_its_phase_on_a_terminal_only(warehouse):
    table = str(warehouse / "db" / "events.lance")
    plain = subprocess.run(cli("inspect", table), env=env(), capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and plain.stderr == ""        # no progress lines where scripts read stderr
    assert plain.stdout.startswith(f"Table     {table}\n")
    code, stdout, err = on_terminal(["inspect", table])
    assert code == 0 and stdout == plain.stdout
    assert re.search(r"\rinspect: starting the JVM core and reading the table \.\.\. \d+\.\ds\x1b\[K\r", err)
    assert err.endswith("\r\x1b[K\r")
    code, stdout, err = on_terminal(["inspect", table, "--json", "--quiet"])
    assert code == 0 and err == "" and json.loads(stdout)["version"] == 4
    code, stdout, err = on_terminal(["inspect", str(warehouse / "db" / "missing.lance"), "-q"])
    assert code == 1 and stdout == "" and err.startswith("error [LANCE_NOT_A_TABLE]: ")


def test_cli_sql_quiet_prints_results_and_no_progress(warehouse):
    out = subprocess.run(cli("sql", "--warehouse", str(warehouse), "--quiet", "--progress-interval", "0"),
                         input=QUERY + "\nSELECT count(*) AS rows FROM lance.db.events\n", env=env(),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == RESULT + "+----+\n|rows|\n+----+\n|20  |\n+----+\n\n"   # no prompts: stdin is a pipe
    assert "starting Spark" not in out.stderr and "sql:" not in out.stderr
