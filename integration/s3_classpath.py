"""Print the S3 jars (hadoop-aws and the AWS SDK modules it needs) that Spark's own distribution lacks.

Reads the classpath sbt exports for the `s3deps` project on stdin and drops what pyspark already ships (netty,
slf4j, httpclient, ... at Spark's versions win), directories and the Scala library. The result is a ':'-separated
classpath for `--driver-class-path` / `spark.jars`, written by `make s3-classpath` to build/s3-classpath.txt.
"""

import re
import sys
from pathlib import Path

import pyspark


def artifact(jar: str) -> str:
    return re.sub(r"-\d[\w.\-]*\.jar$", "", Path(jar).name)


def main() -> None:
    line = sys.stdin.read().strip().splitlines()[-1]
    spark_has = {artifact(j.name) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    keep = [e for e in line.split(":") if e.endswith(".jar") and artifact(e) not in spark_has
            and not Path(e).name.startswith(("scala-", "commons-logging-"))]
    if not any(Path(e).name.startswith("hadoop-aws-") for e in keep):
        sys.exit(f"hadoop-aws is not on the exported classpath: {line[:200]}")
    print(":".join(keep))


if __name__ == "__main__":
    main()
