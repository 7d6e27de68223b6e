"""Lance tables on S3 (moto's server on loopback standing in for S3 and DynamoDB): pylance and sparklance share one
table in both directions, concurrent writers through S3 lose nothing, manifests are created conditionally (and
commits are refused where they cannot be), and the DynamoDB external manifest store commits and finishes the version
of a writer that died after recording it."""

from __future__ import annotations

import threading

import lance
import pyarrow as pa

from s3_support import Stand


def v2_name(version: int) -> str:
    return f"{2**64 - 1 - version:020d}.manifest"


def events(start: int, stop: int) -> pa.Table:
    ids = list(range(start, stop))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"n{i}" for i in ids]),
        "score": pa.array([i * 0.25 for i in ids], pa.float64()),
        "tags": pa.array([[f"t{i % 3}"] * (i % 3) for i in ids], pa.list_(pa.string())),
    })


def test_pylance_and_spark_share_one_s3_table(stand, tmp_path):
    bucket = stand.bucket("shared")
    uri, s3a = f"s3://{bucket}/lake/events.lance", f"s3a://{bucket}/lake/events.lance"
    lance.write_dataset(events(0, 1000), uri, storage_options=stand.storage_options, max_rows_per_file=400)

    out = stand.run_job(f"""
        import lance
        import pyarrow as pa
        df = spark.read.format("lance").load({s3a!r})
        emit(df.count())
        emit([[r.id, r.name, r.score, r.tags] for r in df.where("id % 250 = 1").orderBy("id").collect()])
        spark.range(1000, 1100).selectExpr("id", "concat('n', id) AS name", "CAST(id * 0.25 AS DOUBLE) AS score",
                                           "CAST(array() AS ARRAY<STRING>) AS tags").write.format("lance").mode("append").save({s3a!r})
        spark.sql("DELETE FROM lance.`{s3a}` WHERE id < 10")
        spark.sql("UPDATE lance.`{s3a}` SET name = 'changed' WHERE id = 500")
        spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.db")
        spark.sql("CREATE TABLE lance.db.summary AS SELECT id % 10 AS k, count(*) AS n FROM lance.`{s3a}` GROUP BY 1")
        # pylance appends between two Spark reads of the same table.
        so = {stand.storage_options!r}
        lance.write_dataset(pa.table({{"id": pa.array(range(2000, 2005), pa.int64()), "name": ["p"] * 5,
                                      "score": [0.5] * 5, "tags": pa.array([["p"]] * 5, pa.list_(pa.string()))}}),
                            {uri!r}, storage_options=so, mode="append")
        emit(spark.read.format("lance").load({s3a!r}).count())
        emit(spark.read.format("lance").option("version", 1).load({s3a!r}).count())
    """, warehouse=f"s3a://{bucket}/wh", conf=stand.spark_conf(), workdir=tmp_path)

    assert out[0] == 1000
    assert out[1] == [[1, "n1", 0.25, ["t1"]], [251, "n251", 62.75, ["t2", "t2"]], [501, "n501", 125.25, []],
                      [751, "n751", 187.75, ["t1"]]]
    assert out[2:] == [1095, 1000]

    ds = lance.dataset(uri, storage_options=stand.storage_options)
    ds.validate()
    t = ds.to_table().sort_by("id")
    assert t.column("id").to_pylist() == list(range(10, 1100)) + list(range(2000, 2005))
    assert t.filter(pa.compute.equal(t["id"], 500))["name"].to_pylist() == ["changed"]
    assert ds.version == 5  # pylance's create, Spark's append, delete and update, pylance's append
    summary = lance.dataset(f"s3://{bucket}/wh/db/summary.lance", storage_options=stand.storage_options)
    summary.validate()
    assert sorted(summary.to_table().column("k").to_pylist()) == list(range(10))
    assert sum(summary.to_table().column("n").to_pylist()) == 1090


def test_concurrent_appends_through_s3_lose_nothing(stand, tmp_path):
    bucket = stand.bucket("concurrent")
    uri, s3a = f"s3://{bucket}/t.lance", f"s3a://{bucket}/t.lance"
    lance.write_dataset(events(0, 10), uri, storage_options=stand.storage_options)
    job = """
        base = int(sys.argv[1]) if len(sys.argv) > 1 else 0
        for i in range({appends}):
            start = {offset} + i * 50
            spark.range(start, start + 50).selectExpr("id", "concat('s', id) AS name", "CAST(id * 0.25 AS DOUBLE) AS score",
                                                      "CAST(array() AS ARRAY<STRING>) AS tags").write.format("lance").mode("append").save({s3a!r})
        emit("done")
    """
    jobs = [stand.start_job(job.format(appends=4, offset=10_000 * (w + 1), s3a=s3a), f"s3a://{bucket}/wh",
                            stand.spark_conf(), tmp_path) for w in range(2)]
    # pylance appends at the same time.
    errors = []

    def pylance_appends():
        try:
            for k in range(3):
                lance.write_dataset(events(100 + 10 * k, 110 + 10 * k), uri, storage_options=stand.storage_options,
                                    mode="append")
        except Exception as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=pylance_appends)
    t.start()
    for j in jobs:
        assert Stand.results(j) == ["done"]
    t.join()
    assert not errors, errors

    ds = lance.dataset(uri, storage_options=stand.storage_options)
    ds.validate()
    expected = set(range(10)) | set(range(100, 130)) | {
        10_000 * (w + 1) + i for w in range(2) for i in range(200)}
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    assert len(ids) == len(expected) and set(ids) == expected
    assert [v["version"] for v in ds.versions()] == list(range(1, 1 + 1 + 2 * 4 + 3))


def test_manifests_are_created_conditionally_and_unsafe_commits_are_refused(stand, tmp_path):
    bucket = stand.bucket("conditional")
    out = stand.run_job(f"""
        S = jvm.io.sparklance.core.storage.HadoopStorage
        H = jvm.io.sparklance.core.commit.FileSystemCommitHandler
        st = S(hadoop_conf())
        p = "s3a://{bucket}/x.lance/_versions/1.manifest"
        emit([H.forStorage(st).createIfAbsent(p, bytearray(b"first")), H.forStorage(st).createIfAbsent(p, bytearray(b"second"))])
        emit(bytes(st.readAll(p)).decode())
        off = dict(fs__s3a__create__conditional__enabled="false", fs__s3a__impl__disable__cache="true")
        try:
            H.forStorage(S(hadoop_conf(**off))).createIfAbsent("s3a://{bucket}/x.lance/_versions/2.manifest", bytearray(b"x"))
            emit("committed")
        except Exception as e:
            emit(str(e))
        unsafe = H.forStorage(S(hadoop_conf(sparklance__commit__unsafe="true", **off)))
        q = "s3a://{bucket}/x.lance/_versions/3.manifest"
        emit([unsafe.createIfAbsent(q, bytearray(b"one")), unsafe.createIfAbsent(q, bytearray(b"two"))])
        # A Spark write to a store without conditional writes is refused and leaves no version behind.
        hc = spark._jsc.hadoopConfiguration()
        hc.set("fs.s3a.create.conditional.enabled", "false"); hc.set("fs.s3a.impl.disable.cache", "true")
        try:
            spark.range(5).write.format("lance").save("s3a://{bucket}/refused.lance")
            emit("written")
        except Exception as e:
            emit(str(e))
    """, warehouse=f"s3a://{bucket}/wh", conf=stand.spark_conf(), workdir=tmp_path)
    assert out[0] == [True, False]
    assert out[1] == "first"
    assert "put-if-absent" in out[2] and "fs.s3a.create.conditional.enabled" in out[2] and \
        "sparklance.commit.external-store" in out[2] and "sparklance.commit.unsafe" in out[2], out[2]
    assert out[3] == [True, False]
    assert "put-if-absent" in out[4], out[4]
    listed = stand.client("s3").list_objects_v2(Bucket=bucket, Prefix="refused.lance/_versions/")
    assert [o["Key"] for o in listed.get("Contents", []) if o["Key"].endswith(".manifest")] == []


def test_dynamodb_external_store_commits_and_finishes_a_dead_writers_version(stand, tmp_path):
    bucket, table = stand.bucket("ddb"), stand.manifest_table("lance-manifests")
    uri, s3a = f"s3://{bucket}/t.lance", f"s3a://{bucket}/t.lance"
    conf = stand.ddb_spark_conf(table)
    out = stand.run_job(f"""
        import threading
        spark.range(0, 10).selectExpr("id").write.format("lance").save({s3a!r})
        def appends(w):
            for i in range(3):
                start = 100 * (w + 1) + 10 * i
                spark.range(start, start + 10).selectExpr("id").write.format("lance").mode("append").save({s3a!r})
        threads = [threading.Thread(target=appends, args=(w,)) for w in range(3)]
        [t.start() for t in threads]; [t.join() for t in threads]
        emit(spark.read.format("lance").load({s3a!r}).count())
        # A writer that dies after recording its staged manifest (step 2): version 11, a copy of version 10.
        storage = jvm.io.sparklance.core.storage.HadoopStorage(hadoop_conf())
        MF = jvm.io.sparklance.core.format.ManifestFile
        final10 = {s3a!r} + "/_versions/" + {v2_name(10)!r}
        staged = {s3a!r} + "/_versions/" + {v2_name(11)!r} + "-00000000dead"
        proto = MF.decode(final10, storage.readAll(final10)).toBuilder().setVersion(11).build()
        data = MF.encode(proto, jvm.scala.Option.empty())
        storage.create(staged, data)
        store = jvm.io.sparklance.core.commit.DynamoDbManifestStore(hadoop_conf())
        emit(store.putIfNotExists("t.lance", 11, "t.lance/_versions/" + {v2_name(11)!r} + "-00000000dead", len(data)))
        emit(store.putIfNotExists("t.lance", 11, "t.lance/_versions/other", 1))
    """, warehouse=f"s3a://{bucket}/wh", conf=conf, workdir=tmp_path)
    assert out == [100, True, False]

    ddb = stand.client("dynamodb")
    # The second job's session has no store: its path reads and writes name it in their options, its second
    # catalog in the catalog's options.
    without_store = {k: v for k, v in conf.items() if "sparklance.commit" not in k}
    store_options = {"sparklance.commit.external-store": "dynamodb", "sparklance.commit.dynamodb.table": table,
                     "sparklance.commit.dynamodb.endpoint": stand.endpoint}
    item = ddb.get_item(TableName=table, ConsistentRead=True,
                        Key={"base_uri": {"S": "t.lance"}, "version": {"N": "10"}})["Item"]
    assert item["path"]["S"] == f"t.lance/_versions/{v2_name(10)}"
    # A reader that does not know the store is one version behind, as the format allows.
    assert lance.dataset(uri, storage_options=stand.storage_options).version == 10

    out = stand.run_job(f"""
        store = {store_options!r}
        emit(spark.read.format("lance").options(**store).load({s3a!r}).count())
        spark.range(1000, 1005).selectExpr("id").write.format("lance").options(**store).mode("append").save({s3a!r})
        emit(spark.read.format("lance").options(**store).load({s3a!r}).count())
        # A second catalog that carries the external store in its own options (the session has none).
        for key, value in {{"": "io.sparklance.spark.LanceCatalog", ".warehouse": "s3a://{bucket}/wh2",
                           ".sparklance.commit.external-store": "dynamodb",
                           ".hadoop.sparklance.commit.dynamodb.table": {table!r},
                           ".sparklance.commit.dynamodb.endpoint": {stand.endpoint!r}}}.items():
            spark.conf.set("spark.sql.catalog.ddbcat" + key, value)
        spark.sql("CREATE NAMESPACE ddbcat.db")
        spark.sql("CREATE TABLE ddbcat.db.t2 AS SELECT id FROM range(7)")
        spark.sql("INSERT INTO ddbcat.db.t2 VALUES (7)")
        emit(spark.sql("SELECT count(*) FROM ddbcat.db.t2").collect()[0][0])
        # Maintenance of the catalog's table commits through the catalog's store too.
        emit(spark.sql("OPTIMIZE ddbcat.db.t2").collect()[0][0])
    """, warehouse=f"s3a://{bucket}/wh", conf=without_store, workdir=tmp_path)
    assert out == [100, 105, 8, 3]
    records = ddb.query(TableName=table, ConsistentRead=True, KeyConditionExpression="base_uri = :t",
                        ExpressionAttributeValues={":t": {"S": "wh2/db/t2.lance"}})["Items"]
    assert sorted(int(r["version"]["N"]) for r in records) == [1, 2, 3]

    ds = lance.dataset(uri, storage_options=stand.storage_options)
    ds.validate()
    assert ds.version == 12
    assert [v["version"] for v in ds.versions()] == list(range(1, 13))
    assert sorted(ds.to_table().column("id").to_pylist()) == sorted(
        list(range(10)) + [100 * (w + 1) + j for w in range(3) for j in range(30)] + list(range(1000, 1005)))
    item = ddb.get_item(TableName=table, ConsistentRead=True,
                        Key={"base_uri": {"S": "t.lance"}, "version": {"N": "11"}})["Item"]
    assert item["path"]["S"] == f"t.lance/_versions/{v2_name(11)}"
    keys = [o["Key"] for o in stand.client("s3").list_objects_v2(Bucket=bucket, Prefix="t.lance/_versions/")["Contents"]]
    assert not [k for k in keys if "-" in k.rsplit("/", 1)[1]], keys


def test_pylance_and_spark_commit_through_one_dynamodb_store(stand, tmp_path):
    """pylance's `s3+ddb://` commit store and sparklance's DynamoDB store are one protocol: both record and finish
    versions in the same items, so they take turns and race on one table without losing a version."""
    bucket, table = stand.bucket("shared-ddb"), stand.manifest_table("shared-manifests")
    ddb_uri = f"s3+ddb://{bucket}/lake/t.lance?ddbTableName={table}"
    so = dict(stand.storage_options, dynamodb_endpoint=stand.endpoint)
    lance.write_dataset(events(0, 10), ddb_uri, storage_options=so)
    conf = stand.ddb_spark_conf(table)
    job = stand.start_job(f"""
        for i in range(4):
            spark.range(1000 + 10 * i, 1010 + 10 * i).selectExpr("id", "concat('s', id) AS name",
                "CAST(id AS DOUBLE) AS score", "CAST(array() AS ARRAY<STRING>) AS tags"
            ).write.format("lance").mode("append").save("s3a://{bucket}/lake/t.lance")
        emit(spark.read.format("lance").load("s3a://{bucket}/lake/t.lance").count())
    """, f"s3a://{bucket}/wh", conf, tmp_path)
    for k in range(3):  # while Spark appends
        lance.write_dataset(events(100 + 10 * k, 110 + 10 * k), ddb_uri, storage_options=so, mode="append")
    out = Stand.results(job)
    assert 50 <= out[0] <= 80

    ds = lance.dataset(ddb_uri, storage_options=so)
    ds.validate()
    assert [v["version"] for v in ds.versions()] == list(range(1, 9))
    assert sorted(ds.to_table(columns=["id"]).column("id").to_pylist()) == \
        list(range(10)) + list(range(100, 130)) + list(range(1000, 1040))
    items = stand.client("dynamodb").query(
        TableName=table, ConsistentRead=True, KeyConditionExpression="base_uri = :t",
        ExpressionAttributeValues={":t": {"S": "lake/t.lance"}})["Items"]
    assert sorted(int(i["version"]["N"]) for i in items) == list(range(1, 9))
    assert {i["committer"]["S"] for i in items} == {"lancedb", "sparklance"}
    assert all(i["path"]["S"].startswith("lake/t.lance/_versions/") and i["path"]["S"].endswith(".manifest")
               for i in items)


def test_credentials_never_reach_logs_or_errors(stand, tmp_path):
    bucket = stand.bucket("secrets")
    secret = "do-not-print-this-secret-4711"
    conf = stand.spark_conf(**{"spark.hadoop.fs.s3a.secret.key": secret})
    job = stand.start_job(f"""
        spark.sparkContext.setLogLevel("INFO")
        spark.range(3).write.format("lance").save("s3a://{bucket}/t.lance")
        for path in ("s3a://{bucket}/missing.lance", "s3a://no-such-bucket-here/t.lance"):
            try:
                spark.read.format("lance").load(path).count()
            except Exception as e:
                emit(str(e))
    """, f"s3a://{bucket}/wh", conf, tmp_path)
    out, err = job.communicate(timeout=300)
    assert job.returncode == 0, err[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(errors) == 2 and all("s3a://" in e for e in errors), errors
    assert secret not in out and secret not in err


def test_lance_spark_storage_options_and_s3_uris(stand, tmp_path):
    """lance-spark's catalog example over S3: a dir namespace rooted at s3://, credentials and endpoint as Lance's
    storage options (spark.sql.catalog.<c>.storage.*) and no fs.s3a.* setting at all; pylance, given the same
    options, reads what Spark wrote and Spark reads what pylance wrote, through s3:// paths on both sides."""
    bucket = stand.bucket("storage-options")
    root = f"s3://{bucket}/lance-data"
    conf = {k: v for k, v in stand.spark_conf().items() if not k.startswith("spark.hadoop.fs.s3a.")}
    so = stand.storage_options
    conf.update({
        "spark.sql.catalog.lns": "io.sparklance.spark.LanceCatalog",
        "spark.sql.catalog.lns.impl": "dir",
        "spark.sql.catalog.lns.root": root,
        "spark.sql.catalog.lns.storage.endpoint": so["aws_endpoint"],
        "spark.sql.catalog.lns.storage.aws_allow_http": "true",
        "spark.sql.catalog.lns.storage.access_key_id": so["aws_access_key_id"],
        "spark.sql.catalog.lns.storage.secret_access_key": so["aws_secret_access_key"],
        "spark.sql.catalog.lns.storage.region": so["aws_region"],
    })
    lance.write_dataset(events(0, 300), f"{root}/theirs.lance", storage_options=so, max_rows_per_file=100)
    out = stand.run_job("""
        spark.sql("CREATE NAMESPACE lns.db")
        spark.sql("CREATE TABLE lns.db.ours AS SELECT id, concat('n', id) AS name FROM range(250)")
        spark.sql("DELETE FROM lns.db.ours WHERE id >= 200")
        emit(spark.table("lns.db.ours").count())
        emit(sorted(r.tableName for r in spark.sql("SHOW TABLES IN lns").collect()))
        emit(spark.table("lns.theirs").where("id % 100 = 7").orderBy("id").select("id", "name").collect())
    """, warehouse=str(tmp_path / "wh"), conf=conf, workdir=tmp_path)
    assert out[0] == 200
    assert "theirs" in out[1]
    assert out[2] == [[7, "n7"], [107, "n107"], [207, "n207"]]
    import lance_namespace as ln
    ns = ln.connect("dir", {"root": root, **{f"storage.{k}": v for k, v in so.items()}})
    location = ns.describe_table(ln.DescribeTableRequest(id=["db", "ours"])).location
    ds = lance.dataset(location, storage_options=so)
    ds.validate()
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(200))


def test_unknown_storage_options_are_refused(stand, tmp_path):
    conf = {k: v for k, v in stand.spark_conf().items() if not k.startswith("spark.hadoop.fs.s3a.")}
    conf.update({"spark.sql.catalog.lns": "io.sparklance.spark.LanceCatalog",
                 "spark.sql.catalog.lns.warehouse": str(tmp_path / "lns"),
                 "spark.sql.catalog.lns.storage.google_service_account": "x"})
    out = stand.run_job("""
        try:
            spark.sql("SHOW NAMESPACES IN lns").collect()
            emit("accepted")
        except Exception as e:
            emit(str(e))
    """, warehouse=str(tmp_path / "wh"), conf=conf, workdir=tmp_path)
    assert "Storage option google_service_account" in out[0] and "not supported" in out[0], out[0]
