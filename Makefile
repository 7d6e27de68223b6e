# sparklance: `make demo` runs the main job end to end, `make test` runs every test. Both bootstrap what they need
# on a fresh machine (Java 17, Maven and Python 3 are assumed): the sbt launcher (fetched from the Maven repository
# with mvn) and a .venv with the pinned Python packages, whose pyspark also supplies Spark's jars to the build.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
VERSION := $(shell cat VERSION)
# One runtime jar per Spark line (build.sbt, project/SparkLines.scala), all in build/jars/; `make jar` builds the
# Spark 4.3 one, which the .venv and most tests use, `make jars` all of them.
JARS_DIR := build/jars
JAR := $(JARS_DIR)/sparklance-spark-4.3_2.13-$(VERSION).jar
LINE_PROJECTS := spark34_212 spark34_213 spark35_212 spark35_213 spark40 spark41 spark42
ALL_ASSEMBLIES := spark/assembly $(addsuffix /assembly,$(LINE_PROJECTS))

SBT_VERSION := 1.11.7
SBT_LAUNCHER := build/tools/sbt-launch-$(SBT_VERSION).jar
# All sbt state lives under build/: nothing depends on a user-wide sbt or ivy set-up.
SBT_OPTS := -Dsbt.repository.config=project/repositories -Dsbt.override.build.repos=true \
  -Dsbt.boot.directory=$(CURDIR)/build/sbt-boot -Dsbt.global.base=$(CURDIR)/build/sbt-global \
  -Dsbt.ivy.home=$(CURDIR)/build/ivy -Dsbt.coursier.home=$(CURDIR)/build/coursier \
  -Dsbt.server.forcestart=false -Dsbt.color=false -Dsbt.supershell=false -Dsbt.ci=true \
  -Xms512m -Xmx2g -Xss4m
SBT := java $(SBT_OPTS) -jar $(SBT_LAUNCHER)

.PHONY: help venv sbt jar jars wheel publish-local s3-classpath test test-jvm test-python test-lines test-all-sparks \
  fuzz demo bench bench-tpch bench-tpcds tpcds-tools clean

help:
	@echo "make demo   build everything and run the demo pipeline over a local Lance warehouse"
	@echo "make test   run every test (JVM unit tests, then the pytest suites against pylance)"
	@echo "make fuzz   round-trip fuzzing and the seeded differential suites against pylance, long budget (SEED=... N=... TABLES=...)"
	@echo "make jar    build the runtime jar for Spark 4.3, $(JAR)"
	@echo "make jars   build the runtime jars of every Spark line (3.4, 3.5, 4.0-4.3) into $(JARS_DIR)/"
	@echo "make wheel  build the Python wheel (with every jar inside) into build/dist/"
	@echo "make publish-local  publish every jar to build/m2 for spark-submit --packages"
	@echo "make test-all-sparks  the cross-version suite on every Spark line"
	@echo "make bench-tpch SF=1  TPC-H through Spark: Lance (ours and pylance-written) against Parquet, into $(BENCH_DIR)/"
	@echo "make bench-tpcds SF=1  TPC-DS (99 queries) the same way, into $(BENCH_DIR)/tpcds/ (SF 0.1 unless given)"

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

jars: venv sbt
	$(SBT) $(ALL_ASSEMBLIES)

test-jvm: venv sbt
	$(SBT) test $(ALL_ASSEMBLIES)

# The wheel carries every line's jar and the VERSION file; one version number for all.
WHEEL := build/dist/sparklance-$(VERSION)-py3-none-any.whl
wheel: jars
	mkdir -p python/sparklance/jars build/dist
	rm -f python/sparklance/jars/*.jar && cp $(JARS_DIR)/sparklance-spark-*-$(VERSION).jar python/sparklance/jars/
	cp VERSION python/sparklance/VERSION
	rm -rf python/build && $(VPY) -m pip wheel -q --no-deps -w build/dist ./python

# A Maven repository inside build/ holding every line's jar, so that `spark-submit --packages
# io.sparklance:sparklance-spark-3.5_2.12:<version> --repositories file://<repo>/build/m2` resolves it offline.
M2 := build/m2
publish-local: jars
	for jar in $(JARS_DIR)/sparklance-spark-*-$(VERSION).jar; do \
	  artifact=$$(basename $$jar -$(VERSION).jar); \
	  mvn -q -B org.apache.maven.plugins:maven-install-plugin:3.1.2:install-file -Dfile=$$jar \
	    -DgroupId=io.sparklance -DartifactId=$$artifact -Dversion=$(VERSION) -Dpackaging=jar \
	    -DgeneratePom=true -DlocalRepositoryPath=$(M2) || exit 1; \
	done

# hadoop-aws and the AWS SDK modules S3A needs, minus what Spark ships, for the S3 tests' Spark drivers.
S3_CLASSPATH := build/s3-classpath.txt
$(S3_CLASSPATH): build.sbt integration/s3_classpath.py | venv sbt
	mkdir -p build
	$(SBT) 'export s3deps/runtime:fullClasspath' | tail -1 | $(VPY) integration/s3_classpath.py > $@.tmp
	mv $@.tmp $@

s3-classpath: $(S3_CLASSPATH)

test-python: venv wheel publish-local $(S3_CLASSPATH)
	$(VPY) -m pytest tests -q -p no:cacheprovider --durations=25

# The other Spark lines' Python environments: the pyspark of the line, with pylance and the test tools pinned as for
# .venv. The Scala 2.12 builds of 3.4 and 3.5 are what their pyspark packages run.
PYSPARK_3.4 := 3.4.4
PYSPARK_3.5 := 3.5.9
PYSPARK_4.0 := 4.0.5
PYSPARK_4.1 := 4.1.4
PYSPARK_4.2 := 4.2.1
.venv-spark%/.installed: python/requirements-dev.txt python/pyproject.toml
	$(PYTHON) -m venv .venv-spark$*
	.venv-spark$*/bin/pip install -q --upgrade pip
	.venv-spark$*/bin/pip install -q -r <(grep -v '^pyspark==' python/requirements-dev.txt) pyspark==$(PYSPARK_$*)
	SPARKLANCE_NO_JAR=1 .venv-spark$*/bin/pip install -q --no-deps -e ./python
	touch $@

# Spark 3.4 and 3.5 with Scala 2.13 are not on PyPI: a SPARK_HOME of their Maven Central jars (build.sbt's
# sparkhome projects) and the scripts of the line's pyspark, which then launches that Spark.
build/spark-homes/%_2.13/.ready: build.sbt | .venv-spark%/.installed sbt
	rm -rf build/spark-homes/$*_2.13/jars && mkdir -p build/spark-homes/$*_2.13/jars
	$(SBT) 'export sparkhome$(subst .,,$*)_213/runtime:fullClasspath' | tail -1 | tr ':' '\n' | grep '\.jar$$' \
	  | xargs -I{} cp {} build/spark-homes/$*_2.13/jars/
	cp -r .venv-spark$*/lib/python3*/site-packages/pyspark/bin build/spark-homes/$*_2.13/
	touch $@

# The cross-version suite (tests marked cross_version) on other Spark lines: `make test` runs it on 3.5 and 4.0,
# `make test-all-sparks` on every line. A line is the pyspark of .venv-spark<line>, with the Scala 2.12 build for
# 3.4 and 3.5, or <line>_2.13 for their Scala 2.13 build in a SPARK_HOME (whose Python workers need the venv's
# python: that SPARK_HOME has no python/ directory of its own).
define run-lines
	for line in $(1); do \
	  echo "== cross-version suite on Spark $$line"; \
	  home=$$(case $$line in *_2.13) echo $(CURDIR)/build/spark-homes/$$line;; esac); \
	  py=$(CURDIR)/.venv-spark$${line%_2.13}/bin/python; \
	  env -u SPARK_HOME $${home:+SPARK_HOME=$$home} PYSPARK_PYTHON=$$py $$py -m pytest tests -m cross_version \
	    -q -p no:cacheprovider \
	    || exit 1; \
	done
endef
TEST_LINES := 3.5 4.0
ALL_LINES := 3.4 3.4_2.13 3.5 3.5_2.13 4.0 4.1 4.2
test-lines: jars publish-local $(S3_CLASSPATH) $(foreach l,$(TEST_LINES),.venv-spark$(l)/.installed)
	$(call run-lines,$(TEST_LINES))

test-all-sparks: jars publish-local $(S3_CLASSPATH) $(foreach l,3.4 3.5 4.0 4.1 4.2,.venv-spark$(l)/.installed) \
  build/spark-homes/3.4_2.13/.ready build/spark-homes/3.5_2.13/.ready
	$(call run-lines,$(ALL_LINES))

test: test-jvm test-python test-lines

# Round-trip fuzzing against pylance with a long budget: `make fuzz SEED=7 N=400` (N cases per file version and
# direction), then the seeded differential suites with TABLES random tables each (indexes, driver-side lookups,
# data evolution, vector and full-text search; properties and tag sequences take the seed). `make test` runs the same modules with
# their small fixed budgets.
SEED ?= 20261123
N ?= 200
TABLES ?= 12
SEEDED_TESTS := tests/test_scalar_indexes.py tests/test_index_types.py tests/test_index_life.py \
  tests/test_driver_lookups.py tests/test_add_columns_from.py tests/test_vector_search.py \
  tests/test_vector_index_search.py tests/test_spark_alter.py tests/test_spark_maintenance_sql.py \
  tests/test_streaming_write.py tests/test_streaming_read.py tests/test_branches.py tests/test_vector_index_build.py \
  tests/test_full_text_search.py tests/test_fts_characters.py tests/test_ranked_search.py tests/test_vector_index_hnsw.py \
  tests/test_vector_search_arrow.py tests/test_vector_search_driver.py tests/test_stable_row_ids.py tests/test_primary_key.py \
  tests/test_fts_index_build.py tests/test_fts_index_optimize.py tests/test_ngram_index.py tests/test_spark_blobs.py \
  tests/test_spark_column_shapes.py tests/test_vector_index_optimize.py tests/test_vector_types.py tests/test_fts_stemming.py \
  tests/test_compaction_remap.py tests/test_topn_aggregates.py tests/test_file_writer_dictionary.py \
  tests/test_rtree_index.py tests/test_vector_index_pq4.py tests/test_vector_types_optimize.py \
  tests/test_topn_btree.py tests/test_filter_estimate.py tests/test_runtime_filters.py tests/test_arrow_deletion_files.py \
  tests/test_file_writer_decimals.py tests/test_rowlevel_nested.py
# The damage fuzz's mutants (tests/fuzz/test_damage_fuzz.py; `make test` runs 1000).
DAMAGE ?= 5000
fuzz: venv jar
	SPARKLANCE_FUZZ_SEED=$(SEED) SPARKLANCE_FUZZ_N=$(N) SPARKLANCE_DAMAGE_N=$(DAMAGE) $(VPY) -m pytest tests/fuzz -q -p no:cacheprovider
	SPARKLANCE_FUZZ_SEED=$(SEED) SPARKLANCE_FUZZ_N=$(TABLES) $(VPY) -m pytest $(SEEDED_TESTS) -q -p no:cacheprovider

demo: jar
	$(VPY) integration/demo.py build/demo-warehouse

clean:
	rm -rf build/demo-warehouse build/jars jvm/*/target target project/target

# Benchmarks: speed targets are checked here, not in tests.
BENCH_DIR := build/bench
bench: venv sbt
	$(SBT) bench/compile 'export bench/runtime:fullClasspath' | tail -1 > build/bench-classpath.txt
	$(VPY) integration/bench/file_read_bench.py $(BENCH_DIR)/files java -Xmx6g -Xss4m \
	  --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$$(cat build/bench-classpath.txt)" io.sparklance.bench.FileReadBench
	$(MAKE) jar
	$(VPY) integration/bench/spark_read_bench.py $(BENCH_DIR)/spark
	$(VPY) integration/bench/topn_agg_bench.py $(BENCH_DIR)/topn
	$(VPY) integration/bench/index_bench.py $(BENCH_DIR)/index
	$(VPY) integration/bench/vector_bench.py $(BENCH_DIR)/vector
	$(VPY) integration/bench/vector_build_bench.py $(BENCH_DIR)/vector_build
	$(VPY) integration/bench/index_optimize_bench.py $(BENCH_DIR)/index_optimize
	$(VPY) integration/bench/file_size_bench.py $(BENCH_DIR)/file_sizes
	$(MAKE) jars .venv-spark3.5/.installed
	@echo "== the same scans on Spark 3.5 (Scala 2.12)"
	.venv-spark3.5/bin/python integration/bench/spark_read_bench.py $(BENCH_DIR)/spark-3.5
	$(VPY) integration/bench/spark_write_bench.py $(BENCH_DIR)/spark_write
	$(VPY) integration/bench/rowlevel_bench.py $(BENCH_DIR)/rowlevel
	$(VPY) integration/bench/branch_bench.py $(BENCH_DIR)/branch
	$(MAKE) s3-classpath
	$(VPY) integration/bench/s3_read_bench.py $(BENCH_DIR)/s3
	$(MAKE) bench-tpch
	$(MAKE) bench-tpcds

# TPC-H (tpchgen-cli data) at scale factor SF: per-query times, ratios, geometric means, sizes, and a chart.
SF ?= 1
ROUNDS ?= 3
bench-tpch: venv jar
	$(VPY) integration/bench/tpch_bench.py $(BENCH_DIR)/tpch $(SF) --rounds $(ROUNDS)

# TPC-DS: the data generator is Trino's Java port of dsdgen (io.trino.tpcds, with its runtime dependencies), the
# 99 queries are Spark's own copies (tpcds/q*.sql in spark-sql's tests jar). Both come from Maven Central: a file is
# kept under build/tools/m2/ at its repository path once its SHA-1 matches the .sha1 the repository serves. The
# query files are extracted into build/tools/tpcds-queries/, never committed (they are TPC's and Spark's text).
MAVEN_CENTRAL := https://repo1.maven.org/maven2
M2_TOOLS := build/tools/m2
TPCDS_GEN_JARS := $(addprefix $(M2_TOOLS)/,io/trino/tpcds/tpcds/1.4/tpcds-1.4.jar \
  com/google/guava/guava/33.4.8-jre/guava-33.4.8-jre.jar io/airlift/airline/0.9/airline-0.9.jar \
  javax/inject/javax.inject/1/javax.inject-1.jar \
  com/google/code/findbugs/jsr305/3.0.2/jsr305-3.0.2.jar)
SPARK_SQL_TESTS_JAR := $(M2_TOOLS)/org/apache/spark/spark-sql_2.13/4.0.1/spark-sql_2.13-4.0.1-tests.jar
TPCDS_QUERIES := build/tools/tpcds-queries
$(M2_TOOLS)/%:
	mkdir -p $(@D)
	curl -fsSL --retry 3 -o $@.part $(MAVEN_CENTRAL)/$*
	echo "$$(curl -fsSL --retry 3 $(MAVEN_CENTRAL)/$*.sha1 | cut -c1-40)  $@.part" | sha1sum -c --quiet -
	mv $@.part $@

$(TPCDS_QUERIES)/.ready: $(SPARK_SQL_TESTS_JAR)
	rm -rf $(TPCDS_QUERIES) && mkdir -p $(TPCDS_QUERIES)
	$(PYTHON) -c 'import re, sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
	  [open(sys.argv[2] + "/" + n[6:], "wb").write(z.read(n)) for n in z.namelist() if re.fullmatch(r"tpcds/q.*\.sql", n)]' \
	  $< $(TPCDS_QUERIES)
	test $$(ls $(TPCDS_QUERIES)/q*.sql | wc -l) -eq 103
	touch $@

tpcds-tools: $(TPCDS_GEN_JARS) $(TPCDS_QUERIES)/.ready

# TPC-DS at scale factor SF given on the command line, else 0.1 (TPCDS_SF sets it for this target alone): the same
# steps and outputs as TPC-H; QUERIES=q1,q14a,... runs those query files alone. SF=1 takes about 15 minutes on 2
# cores with ROUNDS=1 (14 minutes measured: 103 query files, three sets), so `make bench` runs the 0.1 default.
TPCDS_SF ?= $(if $(filter command line,$(origin SF)),$(SF),0.1)
bench-tpcds: venv jar tpcds-tools
	$(VPY) integration/bench/tpcds_bench.py $(BENCH_DIR)/tpcds $(TPCDS_SF) --rounds $(ROUNDS) \
	  --generator "$(subst $(eval) ,:,$(abspath $(TPCDS_GEN_JARS)))" --queries-dir $(TPCDS_QUERIES) \
	  $(if $(QUERIES),--queries $(QUERIES))
