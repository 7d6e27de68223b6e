# sparklance: `make demo` runs the main job end to end, `make test` runs every test. Both bootstrap what they need
# on a fresh machine (Java 17, Maven and Python 3 are assumed): the sbt launcher (fetched from the Maven repository
# with mvn) and a .venv with the pinned Python packages, whose pyspark also supplies Spark's jars to the build.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
VERSION := $(shell cat VERSION)
JAR := build/sparklance-$(VERSION).jar

SBT_VERSION := 1.11.7
SBT_LAUNCHER := build/tools/sbt-launch-$(SBT_VERSION).jar
# All sbt state lives under build/: nothing depends on a user-wide sbt or ivy set-up.
SBT_OPTS := -Dsbt.repository.config=project/repositories -Dsbt.override.build.repos=true \
  -Dsbt.boot.directory=$(CURDIR)/build/sbt-boot -Dsbt.global.base=$(CURDIR)/build/sbt-global \
  -Dsbt.ivy.home=$(CURDIR)/build/ivy -Dsbt.coursier.home=$(CURDIR)/build/coursier \
  -Dsbt.server.forcestart=false -Dsbt.color=false -Dsbt.supershell=false -Dsbt.ci=true \
  -Xms512m -Xmx2g -Xss4m
SBT := java $(SBT_OPTS) -jar $(SBT_LAUNCHER)

.PHONY: help venv sbt jar wheel publish-local s3-classpath test test-jvm test-python fuzz demo bench clean

help:
	@echo "make demo   build everything and run the demo pipeline over a local Lance warehouse"
	@echo "make test   run every test (JVM unit tests, then the pytest suites against pylance)"
	@echo "make fuzz   round-trip fuzzing against pylance, long budget (SEED=... N=...)"
	@echo "make jar    build the runtime jar $(JAR)"
	@echo "make wheel  build the Python wheel (with the jar inside) into build/dist/"
	@echo "make publish-local  publish the jar to build/m2 for spark-submit --packages"

# The package itself is installed in editable mode, so that `import sparklance` and the `sparklance` command work
# from .venv; it finds the jar `make jar` builds in build/.
$(VENV)/.installed: python/requirements-dev.txt python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r python/requirements-dev.txt
	SPARKLANCE_NO_JAR=1 $(VENV)/bin/pip install -q --no-deps -e ./python
	touch $@

venv: $(VENV)/.installed

$(SBT_LAUNCHER):
	mkdir -p build/tools
	mvn -q -B dependency:copy -Dartifact=org.scala-sbt:sbt-launch:$(SBT_VERSION) -DoutputDirectory=build/tools
	test -s $@

sbt: $(SBT_LAUNCHER)

# sbt compiles incrementally, so this is cheap when nothing changed.
jar: venv sbt
	$(SBT) spark/assembly
	mkdir -p build && cp jvm/spark/target/scala-2.13/sparklance-$(VERSION).jar $(JAR)

test-jvm: venv sbt
	$(SBT) test spark/assembly
	mkdir -p build && cp jvm/spark/target/scala-2.13/sparklance-$(VERSION).jar $(JAR)

# The wheel carries the jar and the VERSION file; one version number for both.
WHEEL := build/dist/sparklance-$(VERSION)-py3-none-any.whl
wheel: jar
	mkdir -p python/sparklance/jars build/dist
	rm -f python/sparklance/jars/*.jar && cp $(JAR) python/sparklance/jars/
	cp VERSION python/sparklance/VERSION
	rm -rf python/build && $(VPY) -m pip wheel -q --no-deps -w build/dist ./python

# A Maven repository inside build/ holding the runtime jar, so that `spark-submit --packages
# io.sparklance:sparklance-spark_2.13:<version> --repositories file://<repo>/build/m2` resolves it offline.
M2 := build/m2
publish-local: jar
	mvn -q -B org.apache.maven.plugins:maven-install-plugin:3.1.2:install-file -Dfile=$(JAR) \
	  -DgroupId=io.sparklance -DartifactId=sparklance-spark_2.13 -Dversion=$(VERSION) -Dpackaging=jar \
	  -DgeneratePom=true -DlocalRepositoryPath=$(M2)

# hadoop-aws and the AWS SDK modules S3A needs, minus what Spark ships, for the S3 tests' Spark drivers.
S3_CLASSPATH := build/s3-classpath.txt
$(S3_CLASSPATH): build.sbt integration/s3_classpath.py | venv sbt
	mkdir -p build
	$(SBT) 'export s3deps/runtime:fullClasspath' | tail -1 | $(VPY) integration/s3_classpath.py > $@.tmp
	mv $@.tmp $@

s3-classpath: $(S3_CLASSPATH)

test-python: venv wheel publish-local $(S3_CLASSPATH)
	$(VPY) -m pytest tests -q -p no:cacheprovider

test: test-jvm test-python

# Round-trip fuzzing against pylance with a long budget: `make fuzz SEED=7 N=400` (N cases per file version and
# direction). `make test` runs the same module with its small fixed budget.
SEED ?= 20261123
N ?= 200
fuzz: venv jar
	SPARKLANCE_FUZZ_SEED=$(SEED) SPARKLANCE_FUZZ_N=$(N) $(VPY) -m pytest tests/fuzz -q -p no:cacheprovider

demo: jar
	$(VPY) integration/demo.py build/demo-warehouse

clean:
	rm -rf build/demo-warehouse jvm/*/target target project/target

# Benchmarks: speed targets are checked here, not in tests.
BENCH_DIR := build/bench
bench: venv sbt
	$(SBT) bench/compile 'export bench/runtime:fullClasspath' | tail -1 > build/bench-classpath.txt
	$(VPY) integration/bench/file_read_bench.py $(BENCH_DIR)/files java -Xmx6g -Xss4m \
	  --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$$(cat build/bench-classpath.txt)" io.sparklance.bench.FileReadBench
	$(MAKE) jar
	$(VPY) integration/bench/spark_read_bench.py $(BENCH_DIR)/spark
	$(VPY) integration/bench/spark_write_bench.py $(BENCH_DIR)/spark_write
	$(VPY) integration/bench/rowlevel_bench.py $(BENCH_DIR)/rowlevel
	$(MAKE) s3-classpath
	$(VPY) integration/bench/s3_read_bench.py $(BENCH_DIR)/s3
