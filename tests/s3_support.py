"""An S3 and DynamoDB stand-in on loopback (moto's server, from the pinned test requirements) and a runner for
Spark jobs against it.

Spark jobs run in their own processes: S3A must be on the driver's class path when its JVM starts
(`spark.driver.extraClassPath` from build/s3-classpath.txt, which `make s3-classpath` writes), and the pytest
process's JVM, shared by the other modules, is started without it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Dict, List

import pytest

REPO = Path(__file__).resolve().parents[1]
VERSION = (REPO / "VERSION").read_text().strip()
sys.path.insert(0, str(REPO / "tests"))
from conftest import JAR  # noqa: E402
S3_CLASSPATH = REPO / "build" / "s3-classpath.txt"
KEY, SECRET, REGION = "testing-key", "testing-secret", "us-east-1"
JOB_TIMEOUT_S = 300

PREAMBLE = """
import json, os, sys
sys.path.insert(0, {python_dir!r})
import sparklance
CONF = json.loads({conf!r})
spark = sparklance.session({warehouse!r}, app_name="s3-job", **CONF)
spark.sparkContext.setLogLevel("ERROR")
jvm = spark._jvm
def hadoop_conf(**extra):
    c = spark._jsc.hadoopConfiguration()
    conf = jvm.org.apache.hadoop.conf.Configuration(c)
    for k, v in extra.items():
        conf.set(k.replace("__", "."), v)
    return conf
def emit(value):
    print("RESULT " + json.dumps(value, default=str), flush=True)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stand:
    """moto's server on a free loopback port; S3 buckets and DynamoDB tables in it; Spark jobs against it."""

    def __init__(self, log_dir: Path):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / "moto.log"
        server = Path(sys.executable).parent / "moto_server"
        self.proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=self.log.open("w"), stderr=subprocess.STDOUT,
                                     # Unbuffered: its log of requests is read while it runs (the S3 benchmark).
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"))
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1)
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    self.stop()
                    pytest.fail(f"moto's server did not start on {self.endpoint}:\n{self.log.read_text()[-2000:]}",
                                pytrace=False)
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def client(self, service: str):
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                            region_name=REGION)

    def bucket(self, name: str) -> str:
        self.client("s3").create_bucket(Bucket=name)
        return name

    def manifest_table(self, name: str) -> str:
        """A DynamoDB table laid out as pylance's external manifest store expects."""
        ddb = self.client("dynamodb")
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "base_uri", "KeyType": "HASH"},
                                    {"AttributeName": "version", "KeyType": "RANGE"}],
                         AttributeDefinitions=[{"AttributeName": "base_uri", "AttributeType": "S"},
                                               {"AttributeName": "version", "AttributeType": "N"}])
        return name

    @property
    def storage_options(self) -> Dict[str, str]:
        """pylance's options for this S3 (its paths are s3://bucket/key, the same objects as s3a://bucket/key)."""
        return {"aws_endpoint": self.endpoint, "aws_access_key_id": KEY, "aws_secret_access_key": SECRET,
                "aws_region": REGION, "allow_http": "true"}

    def spark_conf(self, **extra: str) -> Dict[str, str]:
        if not S3_CLASSPATH.is_file():
            pytest.fail("build/s3-classpath.txt does not exist: run `make s3-classpath` first", pytrace=False)
        conf = {
            "spark.driver.extraClassPath": S3_CLASSPATH.read_text().strip(),
            "spark.hadoop.fs.s3a.endpoint": self.endpoint,
            "spark.hadoop.fs.s3a.endpoint.region": REGION,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.access.key": KEY,
            "spark.hadoop.fs.s3a.secret.key": SECRET,
        }
        conf.update(extra)
        return conf

    def ddb_spark_conf(self, table: str, **extra: str) -> Dict[str, str]:
        """Spark settings that commit through the DynamoDB manifest store ``table``, with S3's conditional writes
        turned off (so that the store alone keeps commits safe)."""
        return self.spark_conf(**{
            "spark.hadoop.fs.s3a.create.conditional.enabled": "false",
            "spark.hadoop.sparklance.commit.external-store": "dynamodb",
            "spark.hadoop.sparklance.commit.dynamodb.table": table,
            "spark.hadoop.sparklance.commit.dynamodb.endpoint": self.endpoint,
            **extra,
        })

    def start_job(self, body: str, warehouse: str, conf: Dict[str, str], workdir: Path) -> subprocess.Popen:
        workdir = Path(workdir).resolve()
        script = workdir / f"job-{time.time_ns()}.py"
        script.write_text(PREAMBLE.format(python_dir=str(REPO / "python"), conf=json.dumps(conf),
                                          warehouse=warehouse) + textwrap.dedent(body) + "\nspark.stop()\n")
        env = dict(os.environ, SPARKLANCE_JAR=str(JAR))
        return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=str(workdir))

    @staticmethod
    def results(proc: subprocess.Popen) -> List:
        """The values a job emitted; fails the test with the job's stderr if it failed."""
        try:
            out, err = proc.communicate(timeout=JOB_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"Spark job did not finish within {JOB_TIMEOUT_S}s:\n{err[-3000:]}", pytrace=False)
        if proc.returncode != 0:
            # The JVM's stack frames drown the causes: keep the Python traceback and every cause line.
            lines = [line for line in err.splitlines() if not line.lstrip().startswith(("at ", "... "))]
            pytest.fail(f"Spark job failed ({proc.returncode}):\n" + "\n".join(lines)[-6000:], pytrace=False)
        return [json.loads(line[len("RESULT "):]) for line in out.splitlines() if line.startswith("RESULT ")]

    def run_job(self, body: str, warehouse: str, conf: Dict[str, str], workdir: Path) -> List:
        return self.results(self.start_job(body, warehouse, conf, workdir))
