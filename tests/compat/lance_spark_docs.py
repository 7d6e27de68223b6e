"""The example statements of lance-spark's documentation, as data: issue #18's compatibility suite.

Source: the repository ``lance-format/lance-spark``, folder ``docs/src``; every page below is named with the commit
of the version read (``PAGES``). ``tests/test_lance_spark_docs.py`` runs the scenarios in order against sparklance
and checks each outcome, the data with pylance.

What is here, and what is not:

- Every SQL statement and every PySpark example of the pages, verbatim. Scala and Java tabs are left out: each one
  repeats the page's PySpark or SQL example (same statement, same table, same options). Shell tabs (``spark-shell
  --packages ...``, ``spark-submit``, ``export LANCE_...``), Maven/Gradle/sbt snippets and the Java SDK call
  ``dataset.optimizeIndices(...)`` are not statements of Spark and are left out too (``NOT_RUN`` lists them by page).
  Syntax templates (``ALTER TABLE <table> CREATE BRANCH ...``) are run through the page's examples; where a page's
  syntax block shows a form its examples do not (``SHOW BRANCH IN``), that form is run on the page's table.
- Steps marked ``ours=True`` are set-up the pages leave out (the ``users`` table with the columns an example uses,
  a ``staging`` table, ``USE lance.db`` so that the pages' one-part names resolve). ``adapted=...`` says where a
  statement had to be completed to run at all (``array(0.1, 0.2, 0.3, ...)`` written out; a path placeholder).
- Where a page creates an index under a name an earlier step used, an ours ``DROP INDEX`` comes first: sparklance
  refuses to replace an index unless the statement says ``WITH (replace = true)`` (docs/indexes.md), where
  lance-spark replaces it.
- Session settings (``config.md``, the KNN page) are ``conf`` steps: the settings the example makes, applied to a
  new session of the test's Spark (whose extensions are already sparklance's); the class names lance-spark's pages
  use are mapped to sparklance's (``CLASS_NAMES``).
- Paths: ``/path/to/dataset.lance`` is the scenario's ``users`` table; every ``/path/to/output.lance`` is a new
  directory per step (the pages write each example to a fresh table); ``/path/to/source`` and ``/path/to/checkpoint``
  are temporary directories.

Expected outcomes (``expect``):

- ``"ok"``: the step succeeds; where it changes or returns data, a check follows (``rows``: the rows it returns, in
  any order; ``descriptors``: the rows it returns are each row's id and the named fields of the blob descriptors
  pylance shows for the column; ``table``: the table as pylance reads it afterwards, which must also pass
  ``validate()``; ``schema``, ``tags``, ``branches``, ``indexes``, ``config``: what pylance reports for them;
  ``columns``: the result's first columns, names and Spark types, as the page's Output section lists them;
  ``first_values``: the rows' first values).
- ``unsupported(cls, text)``: sparklance refuses the step with error class ``cls`` and a message containing
  ``text``: a feature it does not have (full-text search, namespaces other than directories, ...).
- ``fails(cls, text, why)``: the step fails, for the reason ``why``: as it must in either connector (Spark's
  analyser refuses the statement before a connector is asked; a version older than the table), or because sparklance
  lacks what the statement needs (``cls`` is then Spark's error class where sparklance never sees the statement).
"""

from __future__ import annotations

from textwrap import dedent

REPO = "lance-format/lance-spark"

# Page (under docs/src) -> commit of the version read (read_file of the library tools, 2026-11-26).
PAGES = {
    "config.md": "013d01b299d620b52f953157cc076adee1fc5dc0",
    "options.md": "52ce4404e97fb3682b5961717fc4c7fffac45057",
    "performance.md": "0192ff26efa350fd955a045fa71f86f59e010777",
    "streaming.md": "20e678e413f4012163f0cb3fa21cc56208f536a5",
    "operations/ddl/alter-table.md": "02e641a82aec6bd40347045d7953ea9adf37fa7c",
    "operations/ddl/create-branch.md": "a34a60f34e51b942001e9c0d75ae34a66c39853b",
    "operations/ddl/create-index.md": "02de2c3d2e0c55e1198c2b8dfe23d68ac738a29b",
    "operations/ddl/create-scalar-index.md": "240d16089804cc6959eeb54f0036d4192ada3e3c",
    "operations/ddl/create-table.md": "0d61b692d818c0612edc20ea9517d96e0d79de68",
    "operations/ddl/create-tag.md": "67d32a19ccc918570146805bbe02f96380b90fb0",
    "operations/ddl/create-vector-index.md": "760d0219298c5d8768311852ad0f4bda3b3cf9d8",
    "operations/ddl/dataframe-create-table.md": "689ae13ff528b7e409516fbbe8125e5e68fcdadf",
    "operations/ddl/drop-branch.md": "a34a60f34e51b942001e9c0d75ae34a66c39853b",
    "operations/ddl/drop-index.md": "b208ea6708696041b4e723c0e84376e8c3d9d221",
    "operations/ddl/drop-table.md": "e4d3a742ce473d563f7bded7a31c6dad4b67046c",
    "operations/ddl/drop-tag.md": "f46f08e46e0c1fa05e5e74d83e7f872af3d122c6",
    "operations/ddl/optimize-index.md": "2264c8ff5008b7197ff340a58f087320ea45c05d",
    "operations/ddl/optimize.md": "0eafd036a3ba15034e6cb507890bba1c1e070b8a",
    "operations/ddl/refresh-index.md": "345e97a32f2957ed16d8c6106f20a9b38ebb11ae",
    "operations/ddl/set-unenforced-primary-key.md": "450085fc8436e74e52733ee593b8e21ff36c2857",
    "operations/ddl/show-branches.md": "e64b78ab561b3d20643ef44ab0a15adaf0ae50b6",
    "operations/ddl/show-indexes.md": "1158399535c38f8a73d825d32ed8d3a9dc478907",
    "operations/ddl/show-tags.md": "c535ab29ca3024eebbf74c6b2f43bb87676f4020",
    "operations/ddl/vacuum.md": "fe3f02dc1f58d3600966ac2262ea7d83f9941c63",
    "operations/dml/add-columns.md": "0cc75bc12eadac352b7076d5e6bd4304c741a474",
    "operations/dml/dataframe-write.md": "203edd16d0b7026d1d85e404b6abaa261e762f48",
    "operations/dml/delete.md": "fe3f02dc1f58d3600966ac2262ea7d83f9941c63",
    "operations/dml/insert-into.md": "0192ff26efa350fd955a045fa71f86f59e010777",
    "operations/dml/insert-overwrite.md": "6e43373368e6daf1d511a09959607a1a399dac72",
    "operations/dml/replace.md": "8aeca3f8cfa91ca5cddd181985fb4f243459aad1",
    "operations/dml/update-columns.md": "a9a8a681e470bb371fc2f7d33a20e3c787083c87",
    "operations/dml/update.md": "fe3f02dc1f58d3600966ac2262ea7d83f9941c63",
    "operations/dql/dataframe-read.md": "689ae13ff528b7e409516fbbe8125e5e68fcdadf",
    "operations/dql/fts.md": "0cc75bc12eadac352b7076d5e6bd4304c741a474",
    "operations/dql/hybrid-search.md": "03a48f81a8d86aea34592b88a733afcd2b0b9aed",
    "operations/dql/nearest-neighbor-join.md": "8c14203f6dcf7057e35830a5987e3715632c5ad0",
    "operations/dql/search.md": "0ab800fa594db45afce00a5e6832cd27a81dc892",
    "operations/dql/select.md": "0192ff26efa350fd955a045fa71f86f59e010777",
    "operations/dql/vector-search.md": "2460135e0f415a284abb2ff9f0a8ea117da87a4b",
}

# Pages with nothing to run, and the examples left out of the pages above, with the reason.
NOT_RUN = {
    "index.md (f63f5b1826cef512f750d98ed8f8e12a6655c718)": "no statements (a docker quick start)",
    "install.md (0cc75bc12eadac352b7076d5e6bd4304c741a474)": "Maven/Gradle/sbt coordinates of lance-spark's jars",
    "vendors/databricks.md (0392cfb2f91d09959cacf1dda3660335290c2d1d)": "cluster set-up in Databricks' UI; its one "
        "setting (spark.sql.extensions) is config.md's first example",
    "config.md": "spark-shell / spark-submit tabs (the same settings as the PySpark tabs, run here) and the "
        "environment variables of lance-spark's native library (LANCE_ALLOCATOR_SIZE, LANCE_*_CACHE_SIZE)",
    "performance.md": "environment variables of lance-spark's native library (LANCE_UPLOAD_CONCURRENCY, ...)",
    "operations/ddl/create-index.md": "the LANCE_FTS_FORMAT_VERSION spark-submit example (an environment variable)",
    "operations/dql/nearest-neighbor-join.md": "the session settings of lance-spark's KNN module (its extension class "
        "org.lance.spark.knn.extensions.LanceKnnSparkSessionExtensions and spark.lance.knn.*): sparklance has no such "
        "extension, and the joins of the page run through Spark's own APPROX NEAREST rewrite (checked below)",
    "operations/ddl/create-scalar-index.md": "the Java SDK call dataset.optimizeIndices(...) and the "
        "LANCE_FTS_FORMAT_VERSION spark-submit example",
}

# lance-spark's class names in its pages -> sparklance's.
CLASS_NAMES = {
    "org.lance.spark.LanceNamespaceSparkCatalog": "io.sparklance.spark.LanceCatalog",
    "org.lance.spark.extensions.LanceSparkSessionExtensions": "io.sparklance.spark.LanceSqlExtensions",
}

OK = "ok"
UNSUPPORTED = "LANCE_UNSUPPORTED_FEATURE"
INVALID = "LANCE_INVALID_ARGUMENT"
# Spark's store assignment (ANSI, the default) refuses a string where a timestamp goes, in any connector.
STRING_TO_TIMESTAMP = "INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST"


def unsupported(cls: str, text: str) -> dict:
    return {"kind": "unsupported", "class": cls, "text": text}


def fails(cls: str, text: str, why: str) -> dict:
    return {"kind": "fails", "class": cls, "text": text, "why": why}


def sql(page, text, **kw) -> dict:
    return dict(kind="sql", page=page, text=dedent(text).strip(), expect=kw.pop("expect", OK), **kw)


def py(page, code, **kw) -> dict:
    return dict(kind="python", page=page, text=dedent(code).strip(), expect=kw.pop("expect", OK), **kw)


def conf(page, code, settings, **kw) -> dict:
    """A session example: ``code`` as the page has it, ``settings`` the ones it makes (applied to a new session)."""
    return dict(kind="conf", page=page, text=dedent(code).strip(), settings=settings, expect=kw.pop("expect", OK), **kw)


def ours(text, **kw) -> dict:
    return sql(None, text, ours=True, **kw)


def ours_py(code, **kw) -> dict:
    return py(None, code, ours=True, **kw)


def table(path, columns, rows, namespace=False) -> dict:
    """The rows of ``columns`` (comma-separated) of the table ``<warehouse>/<path>.lance`` as pylance reads them; with
    ``namespace``, of the table ``path`` (``ns/name``) of the directory namespace at the warehouse, wherever it put it."""
    return {"path": path, "columns": [c.strip() for c in columns.split(",")], "rows": rows, "namespace": namespace}


USE_DB = ours("USE lance.db")

# The unenforced primary key of a table of the warehouse as pylance reads it: (name, position) in key order.
PYLANCE_KEY = ("import lance\n"
               "def key(path):\n"
               "    ds = lance.dataset(spark.conf.get('spark.sql.catalog.lance.warehouse') + '/' + path + '.lance')\n"
               "    return [(f.name(), f.unenforced_primary_key_position()) for f in ds.lance_schema.unenforced_primary_key()]\n")

CT = "operations/ddl/create-table.md"
ALTER = "operations/ddl/alter-table.md"
DFCT = "operations/ddl/dataframe-create-table.md"
INS = "operations/dml/insert-into.md"
INSO = "operations/dml/insert-overwrite.md"
DFW = "operations/dml/dataframe-write.md"
UPD = "operations/dml/update.md"
DEL = "operations/dml/delete.md"
SEL = "operations/dql/select.md"
DFR = "operations/dql/dataframe-read.md"
OPTS = "options.md"

ALICE = (1, "Alice", "alice@example.com")
BOB = (2, "Bob", "bob@example.com")
CHARLIE = (3, "Charlie", "charlie@example.com")
HENRY = (8, "Henry", "henry@example.com")
IVY = (9, "Ivy", "ivy@example.com")

SCENARIOS = [
    # ------------------------------------------------------------------------------------------------ users, SQL
    dict(name="users_sql", namespaces=["db", "staging"], steps=[
        USE_DB,
        sql(CT, """
            CREATE TABLE users (
                id BIGINT NOT NULL,
                name STRING,
                email STRING,
                created_at TIMESTAMP
            );""", table=table("db/users", "id", [])),
        sql(INS, """
            INSERT INTO users VALUES
                (4, 'David', 'david@example.com', '2024-01-15 10:30:00'),
                (5, 'Eva', 'eva@example.com', '2024-01-15 11:45:00');""",
            expect=fails(STRING_TO_TIMESTAMP, "created_at", "Spark's analyser refuses a string for the TIMESTAMP "
                         "column created_at (store assignment ANSI) before the connector is asked")),
        ours("""INSERT INTO users VALUES
                (4, 'David', 'david@example.com', TIMESTAMP'2024-01-15 10:30:00'),
                (5, 'Eva', 'eva@example.com', TIMESTAMP'2024-01-15 11:45:00')""",
             table=table("db/users", "id, name, email", [(4, "David", "david@example.com"),
                                                         (5, "Eva", "eva@example.com")])),
        py(INS, """
            # Create new data
            new_data = [
                (8, "Henry", "henry@example.com"),
                (9, "Ivy", "ivy@example.com")
            ]
            new_df = spark.createDataFrame(new_data, ["id", "name", "email"])

            # Append to existing table
            new_df.writeTo("users").append()

            # Alternative: use traditional write API with mode
            new_df.write.mode("append").saveAsTable("users")""",
           table=table("db/users", "id", [(4,), (5,), (8,), (8,), (9,), (9,)])),
        sql(INS, """
            INSERT INTO users (id, name, email) VALUES
                (6, 'Frank', 'frank@example.com'),
                (7, 'Grace', 'grace@example.com');""",
            table=table("db/users", "id", [(4,), (5,), (6,), (7,), (8,), (8,), (9,), (9,)])),
        ours("CREATE TABLE lance.staging.user_signups (user_id BIGINT, username STRING, email_address STRING, "
             "signup_date TIMESTAMP)"),
        ours("INSERT INTO lance.staging.user_signups VALUES (20, 'old', 'old@example.com', TIMESTAMP'2023-12-31 "
             "23:00:00'), (21, 'new', 'new@example.com', TIMESTAMP'2024-02-01 08:00:00')"),
        sql(INS, """
            INSERT INTO users
            SELECT user_id as id, username as name, email_address as email, signup_date as created_at
            FROM staging.user_signups
            WHERE signup_date >= '2024-01-01';""",
            table=table("db/users", "id", [(4,), (5,), (6,), (7,), (8,), (8,), (9,), (9,), (21,)])),
        sql(UPD, """
            UPDATE users 
            SET name = 'Updated Name' 
            WHERE id = 4;""", table=table("db/users", "id, name", [(4, "Updated Name")]), where="id = 4"),
        sql(SEL, "SELECT id, name, email FROM users;",
            rows=[(4, "Updated Name", "david@example.com"), (5, "Eva", "eva@example.com"),
                  (6, "Frank", "frank@example.com"), (7, "Grace", "grace@example.com"), HENRY, HENRY, IVY, IVY,
                  (21, "new", "new@example.com")]),
        sql(DEL, "DELETE FROM users WHERE id = 4;",
            table=table("db/users", "id", [(5,), (6,), (7,), (8,), (8,), (9,), (9,), (21,)])),
        sql(DEL, "DELETE FROM users;", table=table("db/users", "id", [])),
    ]),

    # ------------------------------------------------------------------------------------------ users, DataFrames
    dict(name="users_dataframes", namespaces=["db"], steps=[
        USE_DB,
        py(CT, """
            # Create DataFrame
            data = [
            (1, "Alice", "alice@example.com"),
            (2, "Bob", "bob@example.com"),
            (3, "Charlie", "charlie@example.com")
            ]
            df = spark.createDataFrame(data, ["id", "name", "email"])

            # Write as new table using catalog
            df.writeTo("users").create()""", table=table("db/users", "id, name, email", [ALICE, BOB, CHARLIE])),
        ours("DROP TABLE users"),
        py(DFCT, """
            # Create DataFrame
            data = [
            (1, "Alice", "alice@example.com"),
            (2, "Bob", "bob@example.com"),
            (3, "Charlie", "charlie@example.com")
            ]
            df = spark.createDataFrame(data, ["id", "name", "email"])
            
            # Write as new table using catalog
            df.writeTo("users").create()""", table=table("db/users", "id, name, email", [ALICE, BOB, CHARLIE])),
        py(DFW, """
            # Create new data
            new_data = [
                (8, "Henry", "henry@example.com"),
                (9, "Ivy", "ivy@example.com")
            ]
            new_df = spark.createDataFrame(new_data, ["id", "name", "email"])
            
            # Append to existing table
            new_df.writeTo("users").append()
            
            # Alternative: use traditional write API with mode
            new_df.write.mode("append").saveAsTable("users")""",
           table=table("db/users", "id, name, email", [ALICE, BOB, CHARLIE, HENRY, HENRY, IVY, IVY])),
        sql(INSO, """
            INSERT OVERWRITE users VALUES
                (1, 'Alice', 'alice@newdomain.com'),
                (2, 'Bob', 'bob@newdomain.com');""",
            table=table("db/users", "id, name, email", [(1, "Alice", "alice@newdomain.com"),
                                                        (2, "Bob", "bob@newdomain.com")])),
        py(INSO, """
            # Replace all data using overwrite mode
            new_df.writeTo("users").overwritePartitions()

            # Alternative: use traditional write API with overwrite mode
            new_df.write.mode("overwrite").saveAsTable("users")""",
           table=table("db/users", "id, name, email", [HENRY, IVY])),
        ours("CREATE TABLE staging_users (id BIGINT, name STRING, email STRING, active BOOLEAN)"),
        ours("INSERT INTO staging_users VALUES (1, 'Alice', 'Alice@Example.com', true), "
             "(2, 'Bob', 'Bob@Example.com', false), (3, 'Carol', 'Carol@Example.com', true)"),
        sql(INSO, """
            INSERT OVERWRITE users
            SELECT id, name, email FROM staging_users;""",
            table=table("db/users", "id, name, email", [(1, "Alice", "Alice@Example.com"),
                                                        (2, "Bob", "Bob@Example.com"),
                                                        (3, "Carol", "Carol@Example.com")])),
        py(INSO, """
            # Query source data and overwrite target
            staging_df = spark.table("staging_users")
            staging_df.writeTo("users").overwritePartitions()""",
           expect=fails("INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS", "too many data columns",
                        "staging_users holds the column active, which the page's next example filters on; Spark's "
                        "analyser refuses writing its four columns to the three of users, in either connector")),
        ours("INSERT OVERWRITE users VALUES (9, 'x', 'x')"),
        sql(INSO, """
            INSERT OVERWRITE users
            SELECT id, UPPER(name) as name, LOWER(email) as email
            FROM staging_users
            WHERE active = true;""",
            table=table("db/users", "id, name, email", [(1, "ALICE", "alice@example.com"),
                                                        (3, "CAROL", "carol@example.com")])),
        ours("INSERT OVERWRITE users VALUES (9, 'x', 'x')"),
        py(INSO, """
            from pyspark.sql.functions import upper, lower

            staging_df = spark.table("staging_users") \\
                .filter("active = true") \\
                .select("id", upper("name").alias("name"), lower("email").alias("email"))

            staging_df.writeTo("users").overwritePartitions()""",
           table=table("db/users", "id, name, email", [(1, "ALICE", "alice@example.com"),
                                                       (3, "CAROL", "carol@example.com")])),
    ]),

    # ------------------------------------------------------------------------------------------------ ALTER TABLE
    dict(name="alter_table", namespaces=["db", "ns1", "ns2"], steps=[
        USE_DB,
        sql(ALTER, """
            -- Correct: set at creation time
            CREATE TABLE users (id BIGINT, name STRING)
                TBLPROPERTIES ('enable_stable_row_ids' = 'true');"""),
        ours("INSERT INTO users VALUES (1, 'Alice')"),
        ours("INSERT INTO users VALUES (2, 'Bob')"),
        ours_py("import lance\n"
                "ds = lance.dataset(spark.conf.get('spark.sql.catalog.lance.warehouse') + '/db/users.lance')\n"
                "assert ds.has_stable_row_ids\n"
                "assert sorted(ds.to_table(with_row_id=True).column('_rowid').to_pylist()) == [0, 1]"),
        ours("DROP TABLE users"),
        ours("CREATE TABLE users (id BIGINT, name STRING)"),
        ours("INSERT INTO users VALUES (1, 'Alice'), (2, 'Bob')"),
        sql(ALTER, "ALTER TABLE users SET TBLPROPERTIES ('team' = 'data-eng', 'env' = 'production');",
            config=("db/users", {"team": "data-eng", "env": "production"})),
        sql(ALTER, "ALTER TABLE users SET TBLPROPERTIES ('env' = 'staging');",
            config=("db/users", {"team": "data-eng", "env": "staging"})),
        sql(ALTER, "ALTER TABLE users UNSET TBLPROPERTIES ('env');",
            config=("db/users", {"team": "data-eng", "env": None})),
        sql(ALTER, "ALTER TABLE users UNSET TBLPROPERTIES ('team', 'env');",
            config=("db/users", {"team": None, "env": None})),
        sql(ALTER, """
            -- Has no behavioral effect after creation
            ALTER TABLE users SET TBLPROPERTIES ('enable_stable_row_ids' = 'true');""",
            expect=unsupported(UNSUPPORTED, "enable_stable_row_ids")),
        sql(ALTER, "ALTER TABLE users ADD COLUMN age INT;",
            table=table("db/users", "id, name, age", [(1, "Alice", None), (2, "Bob", None)])),
        ours("ALTER TABLE users DROP COLUMN age"),
        sql(ALTER, "ALTER TABLE users ADD COLUMNS (age INT, email STRING);",
            table=table("db/users", "id, name, age, email", [(1, "Alice", None, None), (2, "Bob", None, None)])),
        sql(ALTER, "ALTER TABLE users DROP COLUMN age;", schema=("db/users", {"age": None})),
        sql(ALTER, "ALTER TABLE users DROP COLUMN IF EXISTS age;", schema=("db/users", {"age": None})),
        sql(ALTER, "ALTER TABLE users RENAME COLUMN name TO full_name;",
            table=table("db/users", "id, full_name", [(1, "Alice"), (2, "Bob")])),
        sql(ALTER, "ALTER TABLE users ALTER COLUMN id DROP NOT NULL;",
            table=table("db/users", "id, full_name", [(1, "Alice"), (2, "Bob")])),
        sql(ALTER, "ALTER TABLE users RENAME TO new_users;", gone="db/users",
            table=table("db/new_users", "id, full_name", [(1, "Alice"), (2, "Bob")])),
        ours("CREATE TABLE lance.ns1.users (id BIGINT)"),
        ours("INSERT INTO lance.ns1.users VALUES (7)"),
        ours("USE lance"),
        sql(ALTER, "ALTER TABLE ns1.users RENAME TO ns2.new_users;", gone="ns1/users",
            table=table("ns2/new_users", "id", [(7,)])),
    ]),

    # ------------------------------------------------------------------------------------- complex types: events
    dict(name="events_complex_types", namespaces=["db"], steps=[
        USE_DB,
        sql(CT, """
            CREATE TABLE events (
                event_id BIGINT NOT NULL,
                user_id BIGINT,
                event_type STRING,
                tags ARRAY<STRING>,
                metadata STRUCT<
                    source: STRING,
                    version: INT,
                    processed_at: TIMESTAMP
                >,
                occurred_at TIMESTAMP
            );""", table=table("db/events", "event_id", [])),
        sql(INS, """
            INSERT INTO events VALUES (
                1001,
                123,
                'page_view',
                array('web', 'desktop'),
                struct('web_app', 1, '2024-01-15 12:00:00'),
                '2024-01-15 12:00:00'
            );""", expect=fails(STRING_TO_TIMESTAMP, "processed_at", "Spark's analyser refuses a string for the "
                                "TIMESTAMP field metadata.processed_at (store assignment ANSI) before the connector "
                                "is asked")),
        ours("""INSERT INTO events VALUES (1001, 123, 'page_view', array('web', 'desktop'),
                struct('web_app', 1, TIMESTAMP'2024-01-15 12:00:00'), TIMESTAMP'2024-01-15 12:00:00')""",
             table=table("db/events", "event_id, user_id, event_type, tags, metadata.source, metadata.version",
                         [(1001, 123, "page_view", ["web", "desktop"], "web_app", 1)])),
        sql(UPD, """
            UPDATE events 
            SET metadata = named_struct('source', 'ios', 'version', 1, 'processed_at', timestamp'2024-01-15 13:00:00') 
            WHERE event_id = 1001;""",
            table=table("db/events", "event_id, metadata.source, metadata.version", [(1001, "ios", 1)])),
        sql(UPD, """
            UPDATE events 
            SET metadata = named_struct('source', metadata.source, 'version', 2, 'processed_at', timestamp'2024-01-15 13:00:00') 
            WHERE event_id = 1001;""",
            table=table("db/events", "event_id, metadata.source, metadata.version", [(1001, "ios", 2)])),
        sql(UPD, """
            UPDATE events
            SET tags = ARRAY('ios', 'mobile')
            WHERE event_id = 1001;""",
            table=table("db/events", "event_id, tags, user_id", [(1001, ["ios", "mobile"], 123)])),
    ]),

    # ------------------------------------------------------------------------------------------- vector columns
    dict(name="vector_columns", namespaces=["db"], steps=[
        USE_DB,
        sql(CT, """
            CREATE TABLE embeddings_table (
                id INT NOT NULL,
                text STRING,
                embeddings ARRAY<FLOAT> NOT NULL
            ) USING lance
            TBLPROPERTIES (
                'embeddings.arrow.fixed-size-list.size' = '128'
            );""", schema=("db/embeddings_table", {"embeddings": "fixed_size_list<item: float>[128]"})),
        sql(INS, """
            -- Insert vector data (example with small vectors for clarity)
            INSERT INTO embeddings_table VALUES
                (10, 'new text', array(0.1, 0.2, 0.3, ...)); -- 128 float values""",
            adapted="the page elides 125 of the 128 values: they are written out as 0.1 * (i + 1)",
            table=table("db/embeddings_table", "id, text", [(10, "new text")]),
            schema=("db/embeddings_table", {"embeddings": "fixed_size_list<item: float>[128]"})),
        py(CT, """
            import numpy as np

            # Create DataFrame with vector data
            data = [(i, np.random.rand(128).astype(np.float32).tolist()) for i in range(100)]
            df = spark.createDataFrame(data, ["id", "embeddings"])

            # Write to Lance table with tableProperty
            df.writeTo("embeddings_table") \\
                .tableProperty("embeddings.arrow.fixed-size-list.size", "128") \\
                .createOrReplace()""", vectors=("db/embeddings_table", "embeddings", "data", 1),
           note="tolist() makes Python floats, which Spark types DOUBLE: the vectors are float64 (as in lance-spark)",
           schema=("db/embeddings_table", {"embeddings": "fixed_size_list<item: double>[128]"})),
        py(INS, """
            # Table was created with: 'embeddings.arrow.fixed-size-list.size' = '128'
            # Subsequent writes automatically use FixedSizeList encoding

            # Plain schema WITHOUT metadata - it just works!
            data = [(i, [float(j) for j in range(128)]) for i in range(10, 20)]
            df = spark.createDataFrame(data, ["id", "embeddings"])

            df.writeTo("embeddings_table").append()""", count=("db/embeddings_table", 110),
           schema=("db/embeddings_table", {"embeddings": "fixed_size_list<item: double>[128]"})),
        sql(CT, """
            CREATE TABLE embeddings_f16 (
                id INT NOT NULL,
                text STRING,
                embeddings ARRAY<FLOAT> NOT NULL
            ) USING lance
            TBLPROPERTIES (
                'embeddings.arrow.fixed-size-list.size' = '128',
                'embeddings.arrow.float16' = 'true'
            );""", table=table("db/embeddings_f16", "id", []),
            schema=("db/embeddings_f16", {"embeddings": "fixed_size_list<item: halffloat>[128]"})),
        py(CT, """
            import numpy as np

            # Create DataFrame with vector data (float32 values will be narrowed to float16)
            data = [(i, np.random.rand(128).astype(np.float32).tolist()) for i in range(100)]
            df = spark.createDataFrame(data, ["id", "embeddings"])

            # Write to Lance table with float16 encoding
            df.writeTo("embeddings_f16") \\
                .tableProperty("embeddings.arrow.fixed-size-list.size", "128") \\
                .tableProperty("embeddings.arrow.float16", "true") \\
                .createOrReplace()""", count=("db/embeddings_f16", 100),
           schema=("db/embeddings_f16", {"embeddings": "fixed_size_list<item: halffloat>[128]"}),
           note="tolist() makes Python floats, which Spark types DOUBLE: they are narrowed through float32 to float16, "
                "as Arrow Java narrows them for lance-spark"),
        ours_py("import lance\n"
                "ds = lance.dataset(spark.conf.get('spark.sql.catalog.lance.warehouse') + '/db/embeddings_f16.lance')\n"
                "got = {r['id']: r['embeddings'] for r in ds.to_table().to_pylist()}\n"
                "want = {i: np.array(v).astype(np.float32).astype(np.float16).tolist() for i, v in data}\n"
                "assert got == want"),
        py(DFCT, """
            import numpy as np

            # Create DataFrame with vector data (no special metadata needed)
            data = [(i, np.random.rand(128).astype(np.float32).tolist()) for i in range(100)]
            df = spark.createDataFrame(data, ["id", "embeddings"])

            # Write to Lance format with tableProperty
            df.writeTo("vectors_table") \\
                .using("lance") \\
                .tableProperty("embeddings.arrow.fixed-size-list.size", "128") \\
                .createOrReplace()""", vectors=("db/vectors_table", "embeddings", "data", 1),
           schema=("db/vectors_table", {"embeddings": "fixed_size_list<item: double>[128]"})),
        py(DFCT, """
            import numpy as np

            # Create DataFrame with multiple vector columns
            data = [
                (i,
                 np.random.rand(384).astype(np.float32).tolist(),
                 np.random.rand(512).tolist())
                for i in range(100)
            ]
            df = spark.createDataFrame(data, ["id", "text_embeddings", "image_embeddings"])

            # Write to Lance format with multiple tableProperty calls
            df.writeTo("multi_vectors_table") \\
                .using("lance") \\
                .tableProperty("text_embeddings.arrow.fixed-size-list.size", "384") \\
                .tableProperty("image_embeddings.arrow.fixed-size-list.size", "512") \\
                .createOrReplace()""", vectors=("db/multi_vectors_table", "image_embeddings", "data", 2),
           schema=("db/multi_vectors_table", {"text_embeddings": "fixed_size_list<item: double>[384]",
                                              "image_embeddings": "fixed_size_list<item: double>[512]"})),
    ]),

    # ---------------------------------------------------------------------------------------------- blob columns
    dict(name="blob_columns", namespaces=["db"], steps=[
        USE_DB,
        sql(CT, """
            CREATE TABLE documents (
                id INT NOT NULL,
                title STRING,
                content BINARY
            ) USING lance
            TBLPROPERTIES (
                'content.lance.encoding' = 'blob'
            );""", table=table("db/documents", "id", []),
            schema=("db/documents", {"content": "extension<lance.blob.v2<BlobType>>"})),
        py(CT, """
            # Create DataFrame with binary data
            data = [
                (1, "Document 1", bytearray(b"Large binary content..." * 10000)),
                (2, "Document 2", bytearray(b"Another large file..." * 10000))
            ]
            df = spark.createDataFrame(data, ["id", "title", "content"])

            # Write to Lance table with blob encoding
            df.writeTo("documents") \\
                .tableProperty("content.lance.encoding", "blob") \\
                .createOrReplace()""", blob_lengths=("db/documents", "content", {1: 230000, 2: 210000}),
            schema=("db/documents", {"content": "extension<lance.blob.v2<BlobType>>"})),
        py(DFW, """
            from pyspark.sql.types import StructType, StructField, IntegerType, StringType, BinaryType

            # Create schema with blob metadata
            schema = StructType([
                StructField("id", IntegerType(), False),
                StructField("title", StringType(), True),
                StructField("content", BinaryType(), True,
                           metadata={"lance-encoding:blob": "true"})
            ])

            # Create data with large binary content
            data = [
                (1, "Document 1", bytearray(b"Large binary content..." * 10000)),
                (2, "Document 2", bytearray(b"Another large file..." * 10000))
            ]

            df = spark.createDataFrame(data, schema)

            # Write to blob table
            df.writeTo("documents").append()""", count=("db/documents", 4),
            blob_lengths=("db/documents", "content", {1: 230000, 2: 210000})),
        sql(INS, """
            -- Insert blob data (example with binary literals)
            INSERT INTO documents VALUES
                (3, 'Document 3', X'48656C6C6F576F726C64');""", count=("db/documents", 5),
            blob_lengths=("db/documents", "content", {1: 230000, 2: 210000, 3: 10})),
        py(INS, """
            # Table was created with: 'content.lance.encoding' = 'blob'
            # Subsequent writes automatically use blob encoding

            # Plain schema WITHOUT metadata - it just works!
            data = [(i, f"Document {i}", bytearray(b"Large content..." * 10000)) for i in range(10, 20)]
            df = spark.createDataFrame(data, ["id", "title", "content"])

            df.writeTo("documents").append()""", count=("db/documents", 15),
            blob_lengths=("db/documents", "content", {1: 230000, 2: 210000, 3: 10, **{i: 160000 for i in range(10, 20)}})),
        sql(SEL, """
            SELECT id, title, content__blob_pos, content__blob_size
            FROM documents
            WHERE id = 1;""", rows_first=[(1,), (1,)]),
        ours("SELECT id, content__blob_size FROM documents WHERE id IN (1, 3)", rows=[(1, 230000), (1, 230000), (3, 10)]),
        ours("SELECT count(*) FROM documents WHERE content__blob_size > 200000", rows=[(4,)]),
        py(SEL, """
            # Read table with blob column
            documents_df = spark.table("documents")

            # Access blob metadata using virtual columns
            blob_metadata = documents_df.select(
                "id",
                "title",
                "content__blob_pos",
                "content__blob_size"
            )
            blob_metadata.show()

            # Filter by blob size
            large_blobs = documents_df.filter("content__blob_size > 1000000")
            large_blobs.select("id", "title", "content__blob_size").show()"""),
        py(DFR, """
            # Read table with blob column
            documents_df = spark.table("documents")

            # Access blob metadata using virtual columns
            blob_metadata = documents_df.select(
                "id",
                "title",
                "content__blob_pos",
                "content__blob_size"
            )
            blob_metadata.show()

            # Filter by blob size
            large_blobs = documents_df.filter("content__blob_size > 1000000")
            large_blobs.select("id", "title", "content__blob_size").show()"""),
    ]),

    # ---------------------------------------------------------------------------------------- large strings
    dict(name="large_strings", namespaces=["db"], steps=[
        USE_DB,
        sql(CT, """
            CREATE TABLE articles (
                id INT NOT NULL,
                title STRING,
                content STRING
            ) USING lance
            TBLPROPERTIES (
                'content.arrow.large_var_char' = 'true'
            );""", table=table("db/articles", "id", []), schema=("db/articles", {"content": "large_string"})),
        sql(INS, """
            -- Insert large string data
            INSERT INTO articles VALUES
                (3, 'Article 3', 'Very long article content...');""",
            table=table("db/articles", "id, title, content", [(3, "Article 3", "Very long article content...")]),
            schema=("db/articles", {"content": "large_string"})),
        py(DFW, """
            # Table was created with: 'content.arrow.large_var_char' = 'true'
            # Subsequent writes automatically use large string encoding
            df.writeTo("articles").append()""",
           setup="df = spark.createDataFrame([(4, 'Article 4', 'x' * 5)], ['id', 'title', 'content'])",
           adapted="the page does not define df: a one-row DataFrame of the table's columns is",
           table=table("db/articles", "id, content", [(3, "Very long article content..."), (4, "xxxxx")]),
           schema=("db/articles", {"content": "large_string"})),
        py(INS, """
            # Table was created with: 'content.arrow.large_var_char' = 'true'
            # Subsequent writes automatically use large string encoding

            data = [(i, f"Article {i}", "Long content..." * 100000) for i in range(10, 20)]
            df = spark.createDataFrame(data, ["id", "title", "content"])

            df.writeTo("articles").append()""", count=("db/articles", 12),
           lengths=("db/articles", "content", {3: 28, 4: 5, **{i: 1500000 for i in range(10, 20)}}),
           schema=("db/articles", {"content": "large_string"})),
        py(CT, """
            # Create DataFrame with large string content
            data = [
                (1, "Article 1", "Very long content..." * 100000),
                (2, "Article 2", "Another long article..." * 100000)
            ]
            df = spark.createDataFrame(data, ["id", "title", "content"])

            # Write to Lance table with large string support
            df.writeTo("articles") \\
                .tableProperty("content.arrow.large_var_char", "true") \\
                .createOrReplace()""", lengths=("db/articles", "content", {1: 2000000, 2: 2300000}),
            schema=("db/articles", {"content": "large_string"})),
        py(DFW, """
            from pyspark.sql.types import StructType, StructField, IntegerType, StringType

            # Create schema with large string metadata
            schema = StructType([
                StructField("id", IntegerType(), False),
                StructField("title", StringType(), True),
                StructField("content", StringType(), True,
                           metadata={"arrow:large-var-char": "true"})
            ])

            # Create data with large string content
            data = [
                (1, "Article 1", "Very long content..." * 100000),
                (2, "Article 2", "Another long article..." * 100000)
            ]

            df = spark.createDataFrame(data, schema)

            # Create new table with large string support
            df.writeTo("articles").createOrReplace()""", lengths=("db/articles", "content", {1: 2000000, 2: 2300000}),
            schema=("db/articles", {"content": "large_string"})),
    ]),

    # -------------------------------------------------------------------------------------- column compression
    dict(name="column_compression", namespaces=["db"], steps=[
        USE_DB,
        sql(CT, """
            CREATE TABLE events (
                id BIGINT,
                payload STRING,
                ts BIGINT
            ) USING lance
            TBLPROPERTIES (
                'payload.lance.compression'       = 'zstd',
                'payload.lance.compression-level' = '3',
                'ts.lance.compression'            = 'none'
            );""", table=table("db/events", "id", []),
            field_metadata=("db/events", {"payload": {"lance-encoding:compression": "zstd",
                                                      "lance-encoding:compression-level": "3"},
                                          "ts": {"lance-encoding:compression": "none"}})),
        py(CT, """
            from pyspark.sql.types import StructType, StructField, LongType, StringType

            schema = StructType([
                StructField("id",      LongType(),   False),
                StructField("payload", StringType(), True),
                StructField("ts",      LongType(),   True),
            ])
            data = [(1, "hello", 1000), (2, "world", 2000)]
            df = spark.createDataFrame(data, schema)

            df.writeTo("events") \\
                .tableProperty("payload.lance.compression", "zstd") \\
                .tableProperty("payload.lance.compression-level", "3") \\
                .tableProperty("ts.lance.compression", "none") \\
                .createOrReplace()""", table=table("db/events", "id, payload, ts", [(1, "hello", 1000), (2, "world", 2000)]),
            field_metadata=("db/events", {"payload": {"lance-encoding:compression": "zstd",
                                                      "lance-encoding:compression-level": "3"},
                                          "ts": {"lance-encoding:compression": "none"}})),
    ]),

    # ------------------------------------------------------------------------------------------ SELECT, time travel
    dict(name="select_and_time_travel", namespaces=["db"], steps=[
        USE_DB,
        ours("CREATE TABLE users (id BIGINT, name STRING, email STRING, age INT, department STRING)"),   # v1
        ours("INSERT INTO users VALUES (1, 'Alice', 'a@x.com', 30, 'eng'), (2, 'Bob', 'b@x.com', 22, 'ops')"),  # v2
        ours("INSERT INTO users VALUES (3, 'Carol', 'c@x.com', 41, 'eng')"),                          # v3
        ours("INSERT INTO users VALUES (4, 'Dan', 'd@x.com', 25, 'ops')"),
        ours("INSERT INTO users VALUES (5, 'Erin', 'e@x.com', 35, 'sales')"),                         # v5
        ours("INSERT INTO users VALUES (6, 'Fay', 'f@x.com', 19, 'eng')"),
        ours("INSERT INTO users VALUES (7, 'Gus', 'g@x.com', 52, 'ops')"),
        ours("INSERT INTO users VALUES (8, 'Hal', 'h@x.com', 28, 'eng')"),
        ours("INSERT INTO users VALUES (9, 'Ida', 'i@x.com', 33, 'sales')"),
        ours("INSERT INTO users VALUES (10, 'Jo', 'j@x.com', 45, 'eng')"),                            # v10
        ours("CREATE TABLE projects (user_id BIGINT, title STRING)"),
        ours("INSERT INTO projects VALUES (1, 'lance'), (3, 'spark'), (3, 'arrow'), (11, 'nobody')"),
        sql(SEL, "SELECT * FROM users;", count_rows=10),
        py(SEL, """
            # Load table as DataFrame
            users_df = spark.table("users")

            # Use DataFrame operations
            filtered_users = users_df.filter("age > 25").select("name", "email")
            filtered_users.show()""", result=("filtered_users", "AGE_OVER_25")),
        py(DFR, """
            # Load table as DataFrame
            users_df = spark.table("users")
            
            # Use DataFrame operations
            filtered_users = users_df.filter("age > 25").select("name", "email")
            filtered_users.show()""", result=("filtered_users", "AGE_OVER_25")),
        sql(SEL, "SELECT id, name, email FROM users;", count_rows=10),
        sql(SEL, "SELECT * FROM users WHERE age > 25;", rows_of=("name, email", "AGE_OVER_25")),
        sql(SEL, """
            SELECT department, COUNT(*) as employee_count
            FROM users
            GROUP BY department;""", rows=[("eng", 5), ("ops", 3), ("sales", 2)]),
        sql(SEL, """
            SELECT u.name, p.title
            FROM users u
            JOIN projects p ON u.id = p.user_id;""", rows=[("Alice", "lance"), ("Carol", "spark"), ("Carol", "arrow")]),
        sql(SEL, """
            -- Query version 5 of the table
            SELECT * FROM users VERSION AS OF 5;

            -- Query specific columns from a version
            SELECT id, name FROM users VERSION AS OF 3;""", statements=2,
            first_columns=[[1, 2, 3, 4, 5], [1, 2, 3]]),
        py(SEL, """
            # Query a specific version using DataFrame API
            df = spark.read \\
                .format("lance") \\
                .option("version", "5") \\
                .load("/path/to/dataset.lance")
            df.show()""", result=("df", "IDS_AT_5")),
        sql(SEL, """
            -- Query the table as it was at a specific timestamp
            SELECT * FROM users TIMESTAMP AS OF '2024-01-15 10:30:00';""",
            expect=fails("LANCE_VERSION_NOT_FOUND", "2024-01-15", "the table was created after that instant")),
        sql(SEL, """
            -- Query with timestamp in epoch microseconds
            SELECT * FROM users TIMESTAMP AS OF 1705314600000000;""",
            expect=fails(INVALID, "timestamp_micros", "Spark reads a number after TIMESTAMP AS OF as seconds; "
                         "sparklance says so and names timestamp_micros(n), where the number overflows")),
        py(SEL, """
            # Query by timestamp using SQL
            spark.sql("SELECT * FROM users TIMESTAMP AS OF '2024-01-15 10:30:00'").show()""",
           expect=fails("LANCE_VERSION_NOT_FOUND", "2024-01-15", "the table was created after that instant")),
        sql(SEL, """
            -- Read a specific version using table options
            SELECT * FROM lance.`/path/to/dataset.lance` VERSION AS OF 10;""", count_rows=10),
        py(SEL, """
            # Reading with options
            df = spark.read \\
                .format("lance") \\
                .option("batch_size", "16384") \\
                .option("version", "5") \\
                .load("/path/to/dataset.lance")""", result=("df", "IDS_AT_5")),
        py(SEL, """
            # Larger batch size for better throughput on especially large scans
            df = spark.read \\
                .format("lance") \\
                .option("batch_size", "32768") \\
                .load("/path/to/dataset.lance")""", result=("df", "ALL_IDS")),
        py(OPTS, """
            # Reading with options
            df = spark.read \\
                .format("lance") \\
                .option("batch_size", "1024") \\
                .option("version", "5") \\
                .load("/path/to/dataset.lance")""", result=("df", "IDS_AT_5")),
        py(OPTS, """
            df = spark.read \\
                .format("lance") \\
                .option("version", "10") \\
                .load("/path/to/dataset.lance")""", result=("df", "IDS_AT_10")),
        py(OPTS, """
            # Larger batch size for better throughput on large scans
            df = spark.read \\
                .format("lance") \\
                .option("batch_size", "4096") \\
                .load("/path/to/dataset.lance")""", result=("df", "ALL_IDS")),
    ]),

    # ---------------------------------------------------------------------------------------- writes by path
    dict(name="write_options", namespaces=["db"], steps=[
        USE_DB,
        ours_py("df = spark.createDataFrame([(i, f'row {i}', [float(i), 0.5]) for i in range(1000)], "
                "'id BIGINT, name STRING, embedding ARRAY<DOUBLE>')"),
        py(INS, """
            df.write \\
                .format("lance") \\
                .option("max_row_per_file", "100000") \\
                .option("max_rows_per_group", "10000") \\
                .save("/path/to/output.lance")""", output_rows=1000),
        py(INS, """
            df.write \\
                .format("lance") \\
                .option("data_storage_version", "STABLE") \\
                .save("/path/to/output.lance")""", output_rows=1000),
        py(INS, """
            # Enable pipelined writes for improved throughput
            df.write \\
                .format("lance") \\
                .option("use_queued_write_buffer", "true") \\
                .option("queue_depth", "4") \\
                .save("/path/to/output.lance")""", output_rows=1000),
        py(OPTS, """
            # Writing with options
            df.write \\
                .format("lance") \\
                .option("max_rows_per_group", "10000") \\
                .option("data_storage_version", "STABLE") \\
                .save("/path/to/output.lance")""", output_rows=1000),
        py(OPTS, """
            df.write \\
                .format("lance") \\
                .option("max_row_per_file", "100000") \\
                .option("max_rows_per_group", "10000") \\
                .save("/path/to/output.lance")""", output_rows=1000),
        py(OPTS, """
            df.write \\
                .format("lance") \\
                .option("data_storage_version", "STABLE") \\
                .save("/path/to/output.lance")""", output_rows=1000),
        py("performance.md", """
            df.write \\
                .format("lance") \\
                .option("use_queued_write_buffer", "true") \\
                .mode("append") \\
                .saveAsTable("my_table")""", count=("db/my_table", 1000)),
        py("performance.md", """
            df.write \\
                .format("lance") \\
                .option("max_row_per_file", "500000") \\
                .mode("append") \\
                .saveAsTable("my_table")""", count=("db/my_table", 2000)),
        py("performance.md", """
            df = spark.read \\
                .option("batch_size", "16384") \\
                .table("my_table") \\
                .select("embedding") \\
                .collect()""", result_len=("df", 2000)),
    ]),

    # ----------------------------------------------------------------------- tags, branches, maintenance, indexes
    dict(name="maintenance", namespaces=["db"], steps=[
        ours("CREATE TABLE lance.db.users (id BIGINT NOT NULL, name STRING)"),                        # v1
        ours("INSERT INTO lance.db.users VALUES (1, 'a'), (2, 'b')"),                                 # v2
        ours("INSERT INTO lance.db.users VALUES (3, 'c')"),
        ours("INSERT INTO lance.db.users VALUES (4, 'd')"),
        ours("INSERT INTO lance.db.users VALUES (5, 'e')"),                                           # v5
        ours("INSERT INTO lance.db.users VALUES (6, 'f')"),
        ours("ALTER TABLE lance.db.users CREATE BRANCH experiment_a AS OF VERSION 2"),
        ours("INSERT INTO lance.db.users.branch_experiment_a VALUES (7, 'g')"),                       # a: v3
        ours("INSERT INTO lance.db.users.branch_experiment_a VALUES (8, 'h')"),                       # a: v4
        sql("operations/ddl/create-tag.md", "ALTER TABLE lance.db.users CREATE TAG release_candidate;",
            tags=("db/users", {"release_candidate": (6, None)}), columns=[("name", "string")],
            rows=[("release_candidate",)]),
        sql("operations/ddl/create-tag.md", """
            ALTER TABLE lance.db.users CREATE TAG IF NOT EXISTS release_candidate_v5
            AS OF VERSION 5;""", tags=("db/users", {"release_candidate_v5": (5, None)})),
        sql("operations/ddl/create-tag.md", """
            ALTER TABLE lance.db.users CREATE TAG experiment_snapshot
            AS OF BRANCH experiment_a;""", tags=("db/users", {"experiment_snapshot": (4, "experiment_a")})),
        sql("operations/ddl/create-tag.md", """
            ALTER TABLE lance.db.users CREATE TAG experiment_snapshot_v3
            AS OF BRANCH experiment_a VERSION 3;""", tags=("db/users", {"experiment_snapshot_v3": (3, "experiment_a")})),
        sql("operations/ddl/create-tag.md", """
            ALTER TABLE lance.db.users CREATE TAG release_copy
            AS OF TAG release_candidate;""", tags=("db/users", {"release_copy": (6, None)})),
        sql("operations/ddl/show-tags.md", "SHOW TAGS FROM lance.db.users;", first_values=[
            ("experiment_snapshot", "experiment_a", 4), ("experiment_snapshot_v3", "experiment_a", 3),
            ("release_candidate", None, 6), ("release_candidate_v5", None, 5), ("release_copy", None, 6)],
            columns=[("name", "string"), ("branch", "string"), ("version", "bigint"), ("created_at", "bigint"),
                ("updated_at", "bigint"), ("manifest_size", "int")]),
        sql("operations/ddl/show-tags.md", "SHOW TAGS IN lance.db.users;", count_rows=5, adapted="syntax block"),
        sql("operations/ddl/show-tags.md", "SHOW TAG FROM lance.db.users;", count_rows=5, adapted="syntax block"),
        sql("operations/ddl/show-tags.md", "SHOW TAG IN lance.db.users;", count_rows=5),
        sql("operations/ddl/create-branch.md", "ALTER TABLE lance.db.users CREATE BRANCH feature_x;",
            branches=("db/users", {"feature_x": (None, 6)}), columns=[("name", "string")], rows=[("feature_x",)]),
        sql("operations/ddl/create-branch.md", """
            ALTER TABLE lance.db.users CREATE BRANCH IF NOT EXISTS snapshot_v5
            AS OF VERSION 5;""", branches=("db/users", {"snapshot_v5": (None, 5)})),
        sql("operations/ddl/create-branch.md", """
            ALTER TABLE lance.db.users CREATE BRANCH experiment_b
            AS OF BRANCH experiment_a;""", branches=("db/users", {"experiment_b": ("experiment_a", 4)})),
        sql("operations/ddl/create-branch.md", """
            ALTER TABLE lance.db.users CREATE BRANCH experiment_b_v3
            AS OF BRANCH experiment_a VERSION 3;""", branches=("db/users", {"experiment_b_v3": ("experiment_a", 3)})),
        sql("operations/ddl/create-branch.md", """
            ALTER TABLE lance.db.users CREATE BRANCH release_fix
            AS OF TAG release_candidate;""", branches=("db/users", {"release_fix": (None, 6)})),
        sql("operations/ddl/show-branches.md", "SHOW BRANCHES FROM lance.db.users;", first_values=[
            ("experiment_a", None, 2), ("experiment_b", "experiment_a", 4), ("experiment_b_v3", "experiment_a", 3),
            ("feature_x", None, 6), ("release_fix", None, 6), ("snapshot_v5", None, 5)],
            columns=[("name", "string"), ("parent_branch", "string"), ("parent_version", "bigint"),
                ("created_at", "bigint"), ("manifest_size", "int")]),
        sql("operations/ddl/show-branches.md", "SHOW BRANCHES IN lance.db.users;", count_rows=6, adapted="syntax block"),
        sql("operations/ddl/show-branches.md", "SHOW BRANCH FROM lance.db.users;", count_rows=6, adapted="syntax block"),
        sql("operations/ddl/show-branches.md", "SHOW BRANCH IN lance.db.users;", count_rows=6),
        sql("operations/ddl/drop-branch.md", "ALTER TABLE lance.db.users DROP BRANCH IF EXISTS feature_x;",
            branches=("db/users", {"feature_x": None})),
        sql("operations/ddl/drop-tag.md", "ALTER TABLE lance.db.users DROP TAG IF EXISTS release_candidate;",
            tags=("db/users", {"release_candidate": None})),
        # indexes
        sql("operations/ddl/create-index.md", "ALTER TABLE lance.db.users CREATE INDEX user_id_idx USING btree (id);",
            indexes=("db/users", {"user_id_idx": "BTree"})),
        ours("ALTER TABLE lance.db.users DROP INDEX user_id_idx"),
        sql("operations/ddl/create-scalar-index.md",
            "ALTER TABLE lance.db.users CREATE INDEX user_id_idx USING btree (id);",
            indexes=("db/users", {"user_id_idx": "BTree"})),
        sql("operations/ddl/create-index.md", "ALTER TABLE lance.db.users CREATE INDEX idx_id USING btree (id);",
            indexes=("db/users", {"idx_id": "BTree"})),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id"),
        sql("operations/ddl/create-scalar-index.md", "ALTER TABLE lance.db.users CREATE INDEX idx_id USING btree (id);",
            indexes=("db/users", {"idx_id": "BTree"})),
        sql("operations/ddl/create-index.md",
            "ALTER TABLE lance.db.users CREATE INDEX idx_id_zoned USING btree (id) WITH (zone_size = 2048);",
            indexes=("db/users", {"idx_id_zoned": "BTree"})),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id_zoned"),
        sql("operations/ddl/create-scalar-index.md",
            "ALTER TABLE lance.db.users CREATE INDEX idx_id_zoned USING btree (id) WITH (zone_size = 2048);",
            indexes=("db/users", {"idx_id_zoned": "BTree"})),
        sql("operations/ddl/create-scalar-index.md",
            "ALTER TABLE lance.db.users CREATE INDEX idx_id_zonemap USING zonemap (id);",
            indexes=("db/users", {"idx_id_zonemap": "ZoneMap"})),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id_zonemap"),
        sql("operations/ddl/create-scalar-index.md",
            "ALTER TABLE lance.db.users CREATE INDEX idx_id_zonemap USING zonemap (id) WITH (rows_per_zone = 2048);",
            indexes=("db/users", {"idx_id_zonemap": "ZoneMap"})),
        sql("operations/ddl/show-indexes.md", "SHOW INDEXES FROM lance.db.users;", first_values=[
            ("idx_id", ["id"], "btree", 6, 6, 0, 0), ("idx_id_zoned", ["id"], "btree", 6, 6, 0, 0),
            ("idx_id_zonemap", ["id"], "zonemap", 6, 6, 0, 0), ("user_id_idx", ["id"], "btree", 6, 6, 0, 0)],
            columns=[("name", "string"), ("fields", "array<string>"), ("index_type", "string"),
                ("num_indexed_fragments", "bigint"), ("num_indexed_rows", "bigint"),
                ("num_unindexed_fragments", "bigint"), ("num_unindexed_rows", "bigint")]),
        sql("operations/ddl/show-indexes.md", "SHOW INDEX IN lance.db.users;", count_rows=4),
        sql("operations/ddl/show-indexes.md", "SHOW INDEXES IN lance.db.users;", count_rows=4, adapted="syntax block"),
        sql("operations/ddl/show-indexes.md", "SHOW INDEX FROM lance.db.users;", count_rows=4, adapted="syntax block"),
        sql("operations/ddl/refresh-index.md", """
            INSERT INTO lance.db.users VALUES (100, 'new row');

            ALTER TABLE lance.db.users REFRESH INDEX user_id_idx;""", statements=2,
            index_covers=("db/users", "user_id_idx"), first_values=[(1, 1, "user_id_idx")],
            columns=[("fragments_indexed", "bigint"), ("segments_added", "bigint"), ("index_name", "string")]),
        ours("ALTER TABLE lance.db.users CREATE INDEX zone_idx USING zonemap (id)"),
        sql("operations/ddl/refresh-index.md", """
            OPTIMIZE lance.db.users;

            ALTER TABLE lance.db.users REFRESH INDEX zone_idx;""", statements=2,
            index_covers=("db/users", "zone_idx"),
            table=table("db/users", "id", [(1,), (2,), (3,), (4,), (5,), (6,), (100,)])),
        ours("INSERT INTO lance.db.users VALUES (101, 'another row')"),
        sql("operations/ddl/refresh-index.md",
            "ALTER TABLE lance.db.users REFRESH INDEX user_id_idx WITH (num_segments = 8);",
            index_covers=("db/users", "user_id_idx"), first_values=[(1, 1, "user_id_idx")]),
        sql("operations/ddl/refresh-index.md", "SHOW INDEXES FROM lance.db.users;", count_rows=5),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id"),
        sql("operations/ddl/create-scalar-index.md",
            "ALTER TABLE lance.db.users CREATE INDEX idx_id USING zonemap (id) WITH (train = false);",
            indexes=("db/users", {"idx_id": "ZoneMap"}), index_covers_none=("db/users", "idx_id")),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id"),
        sql("operations/ddl/create-scalar-index.md", "ALTER TABLE lance.db.users CREATE INDEX idx_id USING zonemap (id);",
            indexes=("db/users", {"idx_id": "ZoneMap"})),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id"),
        sql("operations/ddl/refresh-index.md", """
            ALTER TABLE lance.db.users CREATE INDEX idx_id USING zonemap (id) WITH (train = false);

            ALTER TABLE lance.db.users REFRESH INDEX idx_id;""", statements=2,
            index_covers=("db/users", "idx_id")),
        ours("ALTER TABLE lance.db.users DROP INDEX idx_id"),
        sql("operations/ddl/refresh-index.md", """
            ALTER TABLE lance.db.users CREATE INDEX idx_id USING zonemap (id) WITH (rows_per_zone = 2048);

            ALTER TABLE lance.db.users REFRESH INDEX idx_id WITH (rows_per_zone = 2048);""", statements=2,
            index_covers=("db/users", "idx_id")),
        ours("ALTER TABLE lance.db.users CREATE INDEX idx_user_id USING btree (id)"),
        ours("INSERT INTO lance.db.users VALUES (102, 'yet another row')"),
        sql("operations/ddl/optimize-index.md", "ALTER TABLE lance.db.users OPTIMIZE INDEX idx_user_id;",
            index_covers=("db/users", "idx_user_id"), first_values=[("idx_user_id", 1, 1, 1)],
            columns=[("index_name", "string"), ("fragments_indexed", "bigint"), ("segments_before", "bigint"),
                ("segments_after", "bigint")]),
        ours("INSERT INTO lance.db.users VALUES (103, 'row')"),
        sql("operations/ddl/optimize-index.md", """
            ALTER TABLE lance.db.users OPTIMIZE INDEX idx_user_id WITH (
                num_indices_to_merge = 0,
                retrain = false
            );""", index_covers=("db/users", "idx_user_id"), first_values=[("idx_user_id", 1, 1, 2)]),
        sql("operations/ddl/drop-index.md", "ALTER TABLE lance.db.users DROP INDEX idx_id;",
            indexes=("db/users", {"idx_id": None})),
        # compaction and clean-up
        # Fragments an index covers are not compacted with fragments it does not (Lance's planner, so lance-spark's
        # too): pylance's compact_files of a copy taken before the statement leaves as many fragments.
        sql("operations/ddl/optimize.md", "OPTIMIZE lance.db.users;", fragments_as_pylance=("db/users", {}),
            columns=[("fragments_removed", "bigint"), ("fragments_added", "bigint"), ("files_removed", "bigint"),
                ("files_added", "bigint")]),
        ours("INSERT INTO lance.db.users VALUES (104, 'row')"),
        sql("operations/ddl/optimize.md", "OPTIMIZE lance.db.users WITH (target_rows_per_fragment = 1000000);",
            fragments_as_pylance=("db/users", {"target_rows_per_fragment": 1000000})),
        ours("INSERT INTO lance.db.users VALUES (105, 'row')"),
        sql("operations/ddl/optimize.md", """
            OPTIMIZE lance.db.users WITH (
                target_rows_per_fragment = 1000000,
                max_rows_per_group = 10000,
                materialize_deletions = TRUE,
                num_threads = 4
            );""", fragments_as_pylance=("db/users", {"target_rows_per_fragment": 1000000, "max_rows_per_group": 10000,
                                                       "materialize_deletions": True, "num_threads": 4}),
            table=table("db/users", "id", [(1,), (2,), (3,), (4,), (5,), (6,), (100,), (101,), (102,), (103,),
                                          (104,), (105,)])),
        sql("operations/ddl/vacuum.md", "VACUUM lance.db.users;", count=("db/users", 12),
            columns=[("bytes_removed", "bigint"), ("old_versions", "bigint")]),
        sql("operations/ddl/vacuum.md", "VACUUM lance.db.users WITH (before_version = 10);", count=("db/users", 12),
            versions_from=("db/users", 10)),
        sql("operations/ddl/vacuum.md", "VACUUM lance.db.users WITH (before_timestamp_millis = 1704067200000);",
            count=("db/users", 12)),
        sql("operations/ddl/vacuum.md", """
            VACUUM lance.db.users WITH (
                before_version = 10,
                delete_unverified = TRUE
            );""", count=("db/users", 12), versions_from=("db/users", 10)),
    ]),

    # ------------------------------------------------------------------------ primary keys (set once per table)
    dict(name="primary_key", namespaces=["db"], steps=[
        # The page asks for NOT NULL key columns; each example runs on a fresh table, since a key is set once.
        ours("CREATE TABLE lance.db.users (id BIGINT NOT NULL, name STRING NOT NULL, email STRING)"),
        ours("INSERT INTO lance.db.users VALUES (1, 'a', null), (1, 'a', 'dup@example.com')"),
        sql("operations/ddl/set-unenforced-primary-key.md", "ALTER TABLE lance.db.users SET UNENFORCED PRIMARY KEY (id);",
            rows=[("OK", "id")]),
        ours_py(PYLANCE_KEY + "assert key('db/users') == [('id', 1)], key('db/users')"),
        ours("DROP TABLE lance.db.users"),
        ours("CREATE TABLE lance.db.users (id BIGINT NOT NULL, name STRING NOT NULL, email STRING)"),
        sql("operations/ddl/set-unenforced-primary-key.md",
            "ALTER TABLE lance.db.users SET UNENFORCED PRIMARY KEY (id, name);", rows=[("OK", "id,name")]),
        ours_py(PYLANCE_KEY + "assert key('db/users') == [('id', 1), ('name', 2)], key('db/users')"),
    ]),

    # --------------------------------------------------------------------------- indexes on other tables' columns
    dict(name="scalar_index_kinds", namespaces=["db"], steps=[
        ours("CREATE TABLE lance.db.logs (timestamp TIMESTAMP, level STRING)"),
        ours("INSERT INTO lance.db.logs VALUES (TIMESTAMP'2024-01-01 00:00:00', 'INFO')"),
        sql("operations/ddl/create-index.md",
            "ALTER TABLE lance.db.logs CREATE INDEX idx_ts_level USING btree (timestamp, level);",
            expect=unsupported(UNSUPPORTED, "one column")),
        ours("CREATE TABLE lance.db.events (id BIGINT, event_ts TIMESTAMP, status STRING, labels ARRAY<STRING>)"),
        ours_py("spark.createDataFrame([(i, __import__('datetime').datetime(2024, 1, 1, i % 24), ['ok', 'bad'][i % 2], "
                "[['a'], ['b', 'c']][i % 2]) for i in range(300)], 'id BIGINT, event_ts TIMESTAMP, status STRING, "
                "labels ARRAY<STRING>').writeTo('lance.db.events').append()"),
        sql("operations/ddl/create-index.md",
            "ALTER TABLE lance.db.events CREATE INDEX idx_ts_zm USING zonemap (event_ts);",
            indexes=("db/events", {"idx_ts_zm": "ZoneMap"})),
        ours("ALTER TABLE lance.db.events DROP INDEX idx_ts_zm"),
        sql("operations/ddl/create-index.md",
            "ALTER TABLE lance.db.events CREATE INDEX idx_ts_zm USING zonemap (event_ts) WITH (rows_per_zone = 2048);",
            indexes=("db/events", {"idx_ts_zm": "ZoneMap"})),
        sql("operations/ddl/create-scalar-index.md", """
            ALTER TABLE lance.db.events CREATE INDEX idx_status_bitmap
                USING bitmap (status) WITH (num_segments = 8);""", indexes=("db/events", {"idx_status_bitmap": "Bitmap"}),
            filter_check=("lance.db.events", "status = 'bad'", 150)),
        sql("operations/ddl/create-scalar-index.md", """
            ALTER TABLE lance.db.events CREATE INDEX idx_labels
                USING label_list (labels) WITH (num_segments = 8);""", indexes=("db/events", {"idx_labels": "LabelList"}),
            filter_check=("lance.db.events", "array_contains(labels, 'c')", 150)),
        sql("operations/ddl/create-scalar-index.md", """
            ALTER TABLE lance.db.events CREATE INDEX idx_id_bloom
                USING bloomfilter (id) WITH (
                    number_of_items = 16384,
                    probability = 0.001,
                    num_segments = 8
                );""", indexes=("db/events", {"idx_id_bloom": "BloomFilter"}),
            filter_check=("lance.db.events", "id = 17", 1)),
        ours("CREATE TABLE lance.db.documents (id BIGINT, content STRING, title STRING, body STRING)"),
        ours("INSERT INTO lance.db.documents VALUES (1, 'lance is a columnar format', 'machine learning', "
             "'machine learning with spark')"),
        sql("operations/ddl/create-scalar-index.md", """
            ALTER TABLE lance.db.documents CREATE INDEX idx_content_ngram
                USING ngram (content) WITH (num_segments = 8);""", indexes=("db/documents", {"idx_content_ngram": "NGram"}),
            filter_check=("lance.db.documents", "content LIKE '%columnar%'", 1)),
        sql("operations/ddl/create-index.md", """
            ALTER TABLE lance.db.documents CREATE INDEX doc_fts USING fts (content) WITH (
                base_tokenizer = 'simple',
                language = 'English',
                max_token_length = 40,
                lower_case = true,
                stem = false,
                remove_stop_words = false,
                ascii_folding = false,
                with_position = true
            );""", indexes=("db/documents", {"doc_fts": "Inverted"})),
        ours("ALTER TABLE lance.db.documents DROP INDEX doc_fts"),
        sql("operations/ddl/create-scalar-index.md", """
            ALTER TABLE lance.db.documents CREATE INDEX doc_fts USING fts (content) WITH (
                base_tokenizer = 'simple',
                language = 'English',
                max_token_length = 40,
                lower_case = true,
                stem = false,
                remove_stop_words = false,
                ascii_folding = false,
                with_position = true,
                num_segments = 8
            );""", indexes=("db/documents", {"doc_fts": "Inverted"}),
            filter_check=("lance.db.documents", "lance_match(content, 'columnar')", 1)),
        # The page's geometry is a GeoArrow point struct, which Spark cannot mark as one (the field metadata
        # ARROW:extension:name = geoarrow.point); WKB in a BINARY column is the geometry pylance and sparklance both take.
        ours("CREATE TABLE lance.db.places (id BIGINT, geometry BINARY)"),
        ours("INSERT INTO lance.db.places VALUES (1, X'0101000000000000000000F03F0000000000000040'), (2, X'01010000000000000000000CC00000000000204440'), (3, NULL)"),
        sql("operations/ddl/create-scalar-index.md", """
            ALTER TABLE lance.db.places CREATE INDEX idx_geometry
                USING rtree (geometry) WITH (page_size = 2048, num_segments = 8);""",
            indexes=("db/places", {"idx_geometry": "RTree"})),
    ]),

    # --------------------------------------------------------------------------------------- vector index builds
    dict(name="vector_indexes", namespaces=["db"], steps=[
        ours_py("import numpy as np\n"
                "rng = np.random.default_rng(18)\n"
                "items = [(i, f'item {i}', rng.random(16, dtype=np.float32).tolist()) for i in range(400)]\n"
                "spark.createDataFrame(items, 'id INT, title STRING, embedding ARRAY<FLOAT>')"
                ".writeTo('lance.db.items').tableProperty('embedding.arrow.fixed-size-list.size', '16').create()"),
        sql("operations/ddl/create-vector-index.md",
            "ALTER TABLE lance.db.items CREATE INDEX vec_idx USING ivf_flat (embedding);",
            indexes=("db/items", {"vec_idx": "IVF_FLAT"})),
        sql("operations/ddl/create-vector-index.md", """
            ALTER TABLE lance.db.items CREATE INDEX vec_pq_idx USING ivf_pq (embedding) WITH (
                num_partitions = 64,
                num_sub_vectors = 8,
                num_bits = 8,
                distance_type = 'cosine'
            );""", indexes=("db/items", {"vec_pq_idx": "IVF_PQ"})),
        sql("operations/ddl/create-vector-index.md", """
            ALTER TABLE lance.db.items CREATE INDEX vec_sq_idx USING ivf_sq (embedding) WITH (
                num_partitions = 64,
                num_bits = 8
            );""", indexes=("db/items", {"vec_sq_idx": "IVF_SQ"})),
        sql("operations/ddl/create-vector-index.md", """
            ALTER TABLE lance.db.items CREATE INDEX vec_hnsw_pq USING ivf_hnsw_pq (embedding) WITH (
                num_partitions = 128,
                num_sub_vectors = 8,
                m = 20,
                ef_construction = 150,
                max_level = 7
            );""", indexes=("db/items", {"vec_hnsw_pq": "IVF_HNSW_PQ"})),
        sql("operations/ddl/create-vector-index.md", """
            ALTER TABLE lance.db.items CREATE INDEX vec_hnsw_sq USING ivf_hnsw_sq (embedding) WITH (
                num_partitions = 128,
                num_bits = 8,
                m = 20,
                ef_construction = 150
            );""", indexes=("db/items", {"vec_hnsw_sq": "IVF_HNSW_SQ"})),
        ours("ALTER TABLE lance.db.items DROP INDEX vec_idx"),
        sql("operations/ddl/create-vector-index.md", """
            ALTER TABLE lance.db.items CREATE INDEX vec_idx USING ivf_flat (embedding) WITH (
                num_partitions = 64,
                num_segments = 8
            );""", indexes=("db/items", {"vec_idx": "IVF_FLAT"})),
    ]),

    # ------------------------------------------------------------------------------------------- vector search
    dict(name="vector_search", namespaces=["default"], steps=[
        ours_py("import numpy as np\n"
                "rng = np.random.default_rng(7)\n"
                "items = [(i, f'title {i}', rng.random(4, dtype=np.float32).tolist(), "
                "rng.random(3, dtype=np.float32).tolist()) for i in range(200)]\n"
                "spark.createDataFrame(items, 'id INT, title STRING, embedding ARRAY<FLOAT>, vector ARRAY<FLOAT>')"
                ".writeTo('lance.default.items').tableProperty('embedding.arrow.fixed-size-list.size', '4')"
                ".tableProperty('vector.arrow.fixed-size-list.size', '3').create()"),
        sql("operations/dql/vector-search.md", """
            SELECT id, title, _distance
            FROM VECTOR_SEARCH(
                table => 'lance.default.items',
                query_vector => array(0.12, 0.34, 0.56, 0.78),
                vector_column => 'embedding',
                num_results => 10,
                distance_type => 'l2',
                columns => array('id', 'title')
            )
            ORDER BY _distance;""", nearest=("default/items", "embedding", [0.12, 0.34, 0.56, 0.78], 10)),
        sql("operations/dql/search.md", """
            SELECT id, title, _distance
            FROM VECTOR_SEARCH(
                table => 'lance.default.items',
                query_vector => array(0.12, 0.34, 0.56, 0.78),
                vector_column => 'embedding',
                num_results => 10,
                distance_type => 'l2',
                columns => array('id', 'title')
            )
            ORDER BY _distance;""", nearest=("default/items", "embedding", [0.12, 0.34, 0.56, 0.78], 10)),
        sql("operations/dql/vector-search.md", """
            SELECT *
            FROM VECTOR_SEARCH('lance.default.items', array(0.12, 0.34, 0.56), 5);""",
            nearest=("default/items", "vector", [0.12, 0.34, 0.56], 5)),
        sql("operations/dql/search.md", """
            SELECT *
            FROM VECTOR_SEARCH('lance.default.items', array(0.12, 0.34, 0.56), 5);""",
            nearest=("default/items", "vector", [0.12, 0.34, 0.56], 5)),
        sql("operations/dql/vector-search.md", """
            SELECT query_index, id, _distance
            FROM VECTOR_SEARCH(
                table => 'lance.default.items',
                query_vector => array(
                    array(0.12, 0.34, 0.56, 0.78),
                    array(0.90, 0.10, 0.20, 0.30)
                ),
                vector_column => 'embedding',
                num_results => 10
            )
            ORDER BY query_index, _distance;""",
            nearest_batch=("default/items", "embedding", [[0.12, 0.34, 0.56, 0.78], [0.90, 0.10, 0.20, 0.30]], 10)),
        ours("CREATE TABLE lance.default.documents (id BIGINT, body STRING, title STRING, embedding ARRAY<FLOAT>, "
             "vector ARRAY<FLOAT>)"),
        # Rows for the searches below (the pages leave them out); `vector` is the column a call without
        # vector_column searches (Lance's default), which the positional HYBRID_SEARCH example needs.
        ours("INSERT INTO lance.default.documents VALUES "
             "(1, 'lance is a vector database', 'intro', array(0.1, 0.3, 0.5, 0.7), array(0.1, 0.3, 0.5)), "
             "(2, 'spark reads lance tables', 'spark', array(0.9, 0.1, 0.2, 0.3), array(0.9, 0.1, 0.2)), "
             "(3, 'a database of vectors and a vector index', 'index', array(0.2, 0.3, 0.6, 0.8), array(0.2, 0.3, 0.6)), "
             "(4, 'full text search in lance', 'fts', array(0.5, 0.5, 0.5, 0.5), array(0.5, 0.5, 0.5)), "
             "(5, 'nothing to see here', 'other', array(0.0, 0.0, 1.0, 0.0), array(0.0, 0.0, 1.0)), "
             "(6, 'vector search and full text search', 'hybrid', array(0.1, 0.4, 0.5, 0.8), array(0.1, 0.4, 0.5))"),
        sql("operations/dql/search.md", """
            ALTER TABLE lance.default.documents
            CREATE INDEX body_fts USING fts (body) WITH (
                base_tokenizer = 'simple',
                language = 'English',
                max_token_length = 40,
                lower_case = true,
                stem = false,
                remove_stop_words = false,
                ascii_folding = false,
                with_position = true
            );""", indexes=("default/documents", {"body_fts": "Inverted"})),
        sql("operations/dql/search.md", """
            SELECT id, body, _score
            FROM SEARCH(
                table => 'lance.default.documents',
                query => 'vector database',
                search_columns => array('body'),
                columns => array('id', 'body'),
                limit => 10
            )
            ORDER BY _score DESC;""", ranked=("default/documents", "vector database", ["body"], 10)),
        sql("operations/dql/search.md", """
            SELECT *
            FROM SEARCH('lance.default.documents', 'lance', 5);""", ranked=("default/documents", "lance", None, 5)),
        sql("operations/dql/hybrid-search.md", """
            SELECT id, body, _distance, _score, _relevance_score
            FROM HYBRID_SEARCH(
                table => 'lance.default.documents',
                query_vector => array(0.12, 0.34, 0.56, 0.78),
                query => 'vector database',
                vector_column => 'embedding',
                search_columns => array('body'),
                columns => array('id', 'body'),
                num_results => 10,
                candidates => 50,
                rrf_k => 60.0
            )
            ORDER BY _relevance_score DESC;""", fused=("default/documents", 6)),
        sql("operations/dql/hybrid-search.md", """
            SELECT *
            FROM HYBRID_SEARCH('lance.default.documents', array(0.12, 0.34, 0.56), 'lance', 5);""",
            fused=("default/documents", 5)),
    ]),

    # ------------------------------------------------------------------------------------------ full-text search
    dict(name="full_text_search", namespaces=["db"], steps=[
        ours("CREATE TABLE lance.db.documents (id BIGINT, title STRING, body STRING)"),
        ours("INSERT INTO lance.db.documents VALUES (1, 'machine learning', 'deep networks for machine learning'), "
             "(2, 'spark guide', 'spark and lance'), (3, 'networks', 'deep learning networks')"),
        # The pages build no index for these queries: sparklance builds them as create-index.md's statement does
        # (no stemming; positions for the phrase queries).
        ours("ALTER TABLE lance.db.documents CREATE INDEX title_fts USING fts (title) WITH (with_position = true, "
             "stem = false)"),
        ours("ALTER TABLE lance.db.documents CREATE INDEX body_fts USING fts (body) WITH (with_position = true, "
             "stem = false)"),
        sql("operations/dql/fts.md", """
            -- Basic keyword search
            SELECT * FROM lance.db.documents WHERE lance_match(body, 'machine learning');""",
            rows=[(1, "machine learning", "deep networks for machine learning"), (3, "networks", "deep learning networks")]),
        sql("operations/dql/fts.md", """
            -- Fuzzy search with AND operator
            SELECT * FROM lance.db.documents
            WHERE lance_match(body, 'machin lerning', 'fuzziness=1,operator=AND');""",
            rows=[(1, "machine learning", "deep networks for machine learning")]),
        sql("operations/dql/fts.md", """
            -- Boosted search with prefix length
            SELECT * FROM lance.db.documents
            WHERE lance_match(body, 'spark', 'boost=2.0,prefix_length=2');""",
            rows=[(2, "spark guide", "spark and lance")]),
        sql("operations/dql/fts.md", """
            -- Exact phrase match
            SELECT * FROM lance.db.documents WHERE lance_match_phrase(body, 'machine learning');""",
            rows=[(1, "machine learning", "deep networks for machine learning")]),
        sql("operations/dql/fts.md", """
            -- Phrase match allowing 2 words between terms
            SELECT * FROM lance.db.documents WHERE lance_match_phrase(body, 'deep networks', 2);""",
            rows=[(1, "machine learning", "deep networks for machine learning"), (3, "networks", "deep learning networks")]),
        sql("operations/dql/fts.md", """
            -- Search across title and body (OR — row matches if either column matches)
            SELECT * FROM lance.db.documents
            WHERE lance_multi_match('machine learning', title, body);""",
            rows=[(1, "machine learning", "deep networks for machine learning"), (3, "networks", "deep learning networks")]),
        sql("operations/dql/fts.md", """
            -- AND operator — row must match in all columns
            SELECT * FROM lance.db.documents
            WHERE lance_multi_match('machine learning', 'operator=AND', title, body);""",
            rows=[(1, "machine learning", "deep networks for machine learning")]),
    ]),

    # --------------------------------------------------------------------------------- APPROX NEAREST join (4.2+)
    dict(name="nearest_join", namespaces=["db"], min_spark=(4, 2), steps=[
        ours_py("import numpy as np\n"
                "rng = np.random.default_rng(42)\n"
                "docs = [(i, f'doc {i}', rng.random(8, dtype=np.float32).tolist(), ['news', 'blog'][i % 2], i % 10) "
                "for i in range(300)]\n"
                "spark.createDataFrame(docs, 'id INT, title STRING, embedding ARRAY<FLOAT>, category STRING, score INT')"
                ".writeTo('lance.db.documents').tableProperty('embedding.arrow.fixed-size-list.size', '8').create()\n"
                "queries = [(i, rng.random(8, dtype=np.float32).tolist()) for i in range(5)]\n"
                "spark.createDataFrame(queries, 'id INT, embedding ARRAY<FLOAT>').createOrReplaceTempView('queries')\n"
                "spark.table('lance.db.documents').createOrReplaceTempView('documents')"),
        sql("operations/dql/nearest-neighbor-join.md", """
            SELECT q.id, d.id, d.title
            FROM queries q INNER JOIN documents d
            APPROX NEAREST 10 BY DISTANCE vector_l2_distance(q.embedding, d.embedding);""", knn_join=(10, None)),
        sql("operations/dql/nearest-neighbor-join.md", """
            SELECT q.id, d.id
            FROM queries q
            INNER JOIN (SELECT * FROM documents WHERE category = 'news' AND score > 5) d
            APPROX NEAREST 10 BY DISTANCE vector_l2_distance(q.embedding, d.embedding);""",
            knn_join=(10, "category = 'news' AND score > 5")),
    ]),

    # ---------------------------------------------------------------------------------- ADD / UPDATE COLUMNS FROM
    dict(name="columns_from", namespaces=["db"], steps=[
        USE_DB,
        ours("CREATE TABLE users (id INT, name STRING, value INT)"),
        ours("INSERT INTO users VALUES (1, 'Alice', 10), (2, 'Bob', 20)"),
        ours("INSERT INTO users VALUES (3, 'Carol', 30)"),
        sql("operations/dml/add-columns.md", """
            CREATE TEMPORARY VIEW tmp_view
            AS
            SELECT _rowaddr, _fragid, hash(name) as name_hash
            FROM users;

            ALTER TABLE users ADD COLUMNS name_hash FROM tmp_view;""", statements=2,
            hash_column=("db/users", "name", "name_hash")),
        sql("operations/dml/update-columns.md", """
            CREATE TEMPORARY VIEW update_source AS
            SELECT _rowaddr, _fragid, 'new_value' as name
            FROM users
            WHERE id = 2;

            ALTER TABLE users UPDATE COLUMNS name FROM update_source;""", statements=2,
            table=table("db/users", "id, name, value", [(1, "Alice", 10), (2, "new_value", 20), (3, "Carol", 30)])),
        ours("DROP VIEW update_source"),
        sql("operations/dml/update-columns.md", """
            CREATE TEMPORARY VIEW update_source AS
            SELECT _rowaddr, _fragid, 200 as value, 'updated' as name
            FROM users
            WHERE id = 2;

            ALTER TABLE users UPDATE COLUMNS value, name FROM update_source;""", statements=2,
            table=table("db/users", "id, name, value", [(1, "Alice", 10), (2, "updated", 200), (3, "Carol", 30)])),
    ]),

    dict(name="blob_v2_add_columns", namespaces=["db"], steps=[
        USE_DB,
        sql("operations/dml/add-columns.md", """
            CREATE TABLE users (
                id INT,
                name STRING
            ) USING lance
            TBLPROPERTIES (
                'file_format_version' = '2.2'
            );""", table=table("db/users", "id", [])),
        sql("operations/dml/add-columns.md", """
            ALTER TABLE users
            SET TBLPROPERTIES ('content.lance.encoding' = 'blob');""",
            config=("db/users", {"content.lance.encoding": "blob"})),
        sql("operations/dml/add-columns.md", """
            INSERT INTO users VALUES
                (1, 'alpha'),
                (2, 'bravo');""", table=table("db/users", "id, name", [(1, "alpha"), (2, "bravo")])),
        sql("operations/dml/add-columns.md", """
            CREATE TEMPORARY VIEW content_backfill AS
            SELECT _rowaddr, _fragid, CAST(name AS BINARY) AS content
            FROM users;""", rows=[]),
        sql("operations/dml/add-columns.md", "ALTER TABLE users ADD COLUMNS content FROM content_backfill;",
            schema=("db/users", {"content": "extension<lance.blob.v2<BlobType>>"}),
            blob_lengths=("db/users", "content", {1: 5, 2: 5})),
        ours("SELECT id, content, content__blob_size FROM users ORDER BY id",
             rows=[(1, b"alpha", 5), (2, b"bravo", 5)]),
        # lance-spark shows blob v2 columns as descriptors; sparklance does with this catalog setting (by default
        # it shows their bytes, as the step above reads them): docs/types.md#blob-columns.
        conf(None, "spark.sql.catalog.lance.blob_handling = blobs_descriptions",
             {"spark.sql.catalog.lance.blob_handling": "blobs_descriptions"}, ours=True),
        USE_DB,
        sql("operations/dml/add-columns.md", "SELECT id, content.size, content.kind FROM users;",
            rows=[(1, 5, 0), (2, 5, 0)], descriptors=("db/users", "content", ("size", "kind"))),
    ]),

    # -------------------------------------------------------------------------------------------- REPLACE WHERE
    dict(name="replace_where", namespaces=["db"], steps=[
        ours("CREATE TABLE lance.db.events (id BIGINT, dt STRING, value DOUBLE)"),
        ours("INSERT INTO lance.db.events VALUES (1, '2026-08-01', 1.0), (2, '2026-08-02', 2.0)"),
        ours("CREATE TEMPORARY VIEW staging_events AS SELECT * FROM VALUES (10, '2026-08-01', 10.0), "
             "(11, '2026-08-03', 11.0) AS t(id, dt, value)"),
        sql("operations/dml/replace.md", """
            -- Replace one day's data with freshly computed rows
            REPLACE lance.db.events
              WHERE dt = '2026-08-01'
              AS SELECT id, dt, value FROM staging_events WHERE dt = '2026-08-01';""",
            table=table("db/events", "id, dt, value", [(2, "2026-08-02", 2.0), (10, "2026-08-01", 10.0)]),
            versions=("db/events", 3)),
        sql("operations/dml/replace.md", """
            -- Predicates may span a range or combine conditions
            REPLACE lance.db.events
              WHERE dt >= '2026-08-01' AND dt < '2026-08-08'
              AS SELECT id, dt, value FROM staging_events;""",
            table=table("db/events", "id, dt, value", [(10, "2026-08-01", 10.0), (11, "2026-08-03", 11.0)]),
            versions=("db/events", 4)),
        py("operations/dml/replace.md", """
            spark.sql(
                "REPLACE lance.db.events "
                "WHERE dt = '2026-08-01' "
                "AS SELECT id, dt, value FROM staging_events WHERE dt = '2026-08-01'"
            )""", table=table("db/events", "id, dt, value", [(10, "2026-08-01", 10.0), (11, "2026-08-03", 11.0)]),
            versions=("db/events", 5)),
    ]),

    # ------------------------------------------------------------------------------------------------ DROP TABLE
    dict(name="drop_table", namespaces=["db"], steps=[
        USE_DB,
        ours("CREATE TABLE users (id BIGINT)"),
        sql("operations/ddl/drop-table.md", "DROP TABLE users;", gone="db/users",
            note="a warehouse catalog's table is its directory: DROP TABLE deletes it (the same page over a "
                 "namespace catalog, as lance-spark's catalogs are, is the next scenario)"),
        sql("operations/ddl/drop-table.md", "DROP TABLE IF EXISTS users;", gone="db/users"),
        ours("CREATE TABLE users (id BIGINT)"),
        sql("operations/ddl/drop-table.md", "DROP TABLE users PURGE;", gone="db/users"),
        sql("operations/ddl/drop-table.md", "DROP TABLE IF EXISTS users PURGE;", gone="db/users"),
    ]),

    # The same page over a directory namespace (lance-spark's kind of catalog): DROP TABLE deregisters the table and
    # keeps its files, PURGE deletes them.
    dict(name="drop_table_namespace", namespaces=[], dir_catalogs=["lance_dir"], steps=[
        ours("CREATE NAMESPACE lance_dir.db"),
        ours("USE lance_dir.db"),
        ours("CREATE TABLE users (id BIGINT)"),
        ours("INSERT INTO users VALUES (1), (2)"),
        sql("operations/ddl/drop-table.md", "DROP TABLE users;", ns_tables=(["db"], []), table_dirs=1),
        sql("operations/ddl/drop-table.md", "DROP TABLE IF EXISTS users;", ns_tables=(["db"], []), table_dirs=1),
        ours("CREATE TABLE users (id BIGINT)", ns_tables=(["db"], ["users"]), table_dirs=2),
        sql("operations/ddl/drop-table.md", "DROP TABLE users PURGE;", ns_tables=(["db"], []), table_dirs=1),
        sql("operations/ddl/drop-table.md", "DROP TABLE IF EXISTS users PURGE;", ns_tables=(["db"], []), table_dirs=1),
    ]),

    # -------------------------------------------------------------------------------------------------- streaming
    dict(name="streaming", namespaces=["default"], catalogs=["lance_ns"], steps=[
        sql("streaming.md", "CREATE TABLE lance_ns.default.events (id BIGINT, name STRING);",
            table=table("default/events", "id", [])),
        ours_py("from pyspark.sql.types import StructType, StructField, LongType, StringType\n"
                "schema = StructType([StructField('id', LongType()), StructField('name', StringType())])\n"
                "spark.createDataFrame([(i, f'n{i}') for i in range(50)], schema).write.parquet('/path/to/source')"),
        py("streaming.md", """
            (spark.readStream
                .schema(schema)
                .parquet("/path/to/source")
                .writeStream
                .format("lance")
                .option("streamingQueryId", "my-query-v1")    # required, see below
                .option("checkpointLocation", "/path/to/checkpoint")
                .trigger(availableNow=True)
                .toTable("lance_ns.default.events"))""", await_streams=True,
           table=table("default/events", "id", [(i,) for i in range(50)])),
    ]),

    # ------------------------------------------------------------------------------------------ session settings
    dict(name="session_settings", namespaces=["db", "default"], steps=[
        conf("config.md", """
            spark = SparkSession.builder \\
                .appName("lance-example") \\
                .config("spark.sql.extensions", "org.lance.spark.extensions.LanceSparkSessionExtensions") \\
                .getOrCreate()""", {"spark.sql.extensions": "org.lance.spark.extensions.LanceSparkSessionExtensions"}),
        conf("config.md", """
            from pyspark.sql import SparkSession

            spark = SparkSession.builder \\
                .appName("lance-dir-local-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "dir") \\
                .config("spark.sql.catalog.lance.root", "/path/to/lance/database") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "dir",
                                    "spark.sql.catalog.lance.root": "/path/to/lance/database"}),
        conf("config.md", """
            from pyspark.sql import SparkSession

            spark = SparkSession.builder \\
                .appName("lance-dir-minio-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "dir") \\
                .config("spark.sql.catalog.lance.root", "s3://bucket-name/lance-data") \\
                .config("spark.sql.catalog.lance.storage.access_key_id", "abc") \\
                .config("spark.sql.catalog.lance.storage.secret_access_key", "def")
                .config("spark.sql.catalog.lance.storage.session_token", "ghi") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "dir",
                                    "spark.sql.catalog.lance.root": "s3://bucket-name/lance-data",
                                    "spark.sql.catalog.lance.storage.access_key_id": "abc",
                                    "spark.sql.catalog.lance.storage.secret_access_key": "def",
                                    "spark.sql.catalog.lance.storage.session_token": "ghi"},
             expect=fails("LANCE_STORAGE_ERROR", "bucket-name", "the storage.* settings are taken (as S3A settings), and the catalog reaches for the page's bucket, which the test machine cannot reach (S3A is not on this session's class path either); test_s3.py runs the same settings against an S3 stand-in")),
        conf("config.md", """
            from pyspark.sql import SparkSession

            spark = SparkSession.builder \\
                .appName("lance-dir-minio-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "dir") \\
                .config("spark.sql.catalog.lance.root", "s3://bucket-name/lance-data") \\
                .config("spark.sql.catalog.lance.storage.endpoint", "http://minio:9000") \\
                .config("spark.sql.catalog.lance.storage.aws_allow_http", "true") \\
                .config("spark.sql.catalog.lance.storage.access_key_id", "admin") \\
                .config("spark.sql.catalog.lance.storage.secret_access_key", "password") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "dir",
                                    "spark.sql.catalog.lance.root": "s3://bucket-name/lance-data",
                                    "spark.sql.catalog.lance.storage.endpoint": "http://minio:9000",
                                    "spark.sql.catalog.lance.storage.aws_allow_http": "true",
                                    "spark.sql.catalog.lance.storage.access_key_id": "admin",
                                    "spark.sql.catalog.lance.storage.secret_access_key": "password"},
             expect=fails("LANCE_STORAGE_ERROR", "bucket-name", "the storage.* settings are taken (as S3A settings), and the catalog reaches for the page's bucket, which the test machine cannot reach (S3A is not on this session's class path either); test_s3.py runs the same settings against an S3 stand-in")),
        conf("config.md", """
            spark = SparkSession.builder \\
                .appName("lance-rest-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "rest") \\
                .config("spark.sql.catalog.lance.headers.x-api-key", "your-api-key") \\
                .config("spark.sql.catalog.lance.headers.x-lancedb-database", "your-database") \\
                .config("spark.sql.catalog.lance.uri", "https://your-database.us-east-1.api.lancedb.com") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "rest",
                                    "spark.sql.catalog.lance.headers.x-api-key": "your-api-key",
                                    "spark.sql.catalog.lance.headers.x-lancedb-database": "your-database",
                                    "spark.sql.catalog.lance.uri": "https://your-database.us-east-1.api.lancedb.com"},
             expect=fails("LANCE_STORAGE_ERROR", "your-database.us-east-1.api.lancedb.com/v1/namespace",
                          "the settings are taken (headers.* as header.*), and the catalog calls the page's LanceDB "
                          "Cloud server, which the test machine cannot reach; test_namespaces.py runs a REST server")),
        conf("config.md", """
            spark = SparkSession.builder \\
                .appName("lance-glue-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "glue") \\
                .config("spark.sql.catalog.lance.region", "us-east-1") \\
                .config("spark.sql.catalog.lance.catalog_id", "123456789012") \\
                .config("spark.sql.catalog.lance.access_key_id", "your-access-key") \\
                .config("spark.sql.catalog.lance.secret_access_key", "your-secret-key") \\
                .config("spark.sql.catalog.lance.root", "s3://your-bucket/lance") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "glue",
                                    "spark.sql.catalog.lance.region": "us-east-1",
                                    "spark.sql.catalog.lance.catalog_id": "123456789012",
                                    "spark.sql.catalog.lance.access_key_id": "your-access-key",
                                    "spark.sql.catalog.lance.secret_access_key": "your-secret-key",
                                    "spark.sql.catalog.lance.root": "s3://your-bucket/lance"},
             expect=fails("LANCE_STORAGE_ERROR", "glue.us-east-1.amazonaws.com",
                          "the settings are taken, and the catalog calls AWS Glue in us-east-1, which the test machine "
                          "cannot reach; test_glue_namespace.py runs the same settings against moto's Glue")),
        conf("config.md", """
            spark = SparkSession.builder \\
                .appName("lance-hive3-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "hive3") \\
                .config("spark.sql.catalog.lance.parent", "hive") \\
                .config("spark.sql.catalog.lance.hadoop.hive.metastore.uris", "thrift://metastore:9083") \\
                .config("spark.sql.catalog.lance.client.pool-size", "5") \\
                .config("spark.sql.catalog.lance.root", "hdfs://namenode:8020/lance") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "hive3",
                                    "spark.sql.catalog.lance.parent": "hive",
                                    "spark.sql.catalog.lance.hadoop.hive.metastore.uris": "thrift://metastore:9083",
                                    "spark.sql.catalog.lance.client.pool-size": "5",
                                    "spark.sql.catalog.lance.root": "hdfs://namenode:8020/lance"},
             expect=fails("LANCE_STORAGE_ERROR", "thrift://metastore:9083",
                          "the settings are taken (parent hive: Spark's namespaces are the databases of Hive 3's "
                          "default catalog), and the catalog calls the page's metastore, which the test machine cannot "
                          "reach; test_hive_namespace.py runs them against a Hive Metastore")),
        conf("config.md", """
            spark = SparkSession.builder \\
                .appName("lance-hive2-example") \\
                .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog") \\
                .config("spark.sql.catalog.lance.impl", "hive2") \\
                .config("spark.sql.catalog.lance.hadoop.hive.metastore.uris", "thrift://metastore:9083") \\
                .config("spark.sql.catalog.lance.client.pool-size", "3") \\
                .config("spark.sql.catalog.lance.root", "hdfs://namenode:8020/lance") \\
                .getOrCreate()""", {"spark.sql.catalog.lance": "org.lance.spark.LanceNamespaceSparkCatalog",
                                    "spark.sql.catalog.lance.impl": "hive2",
                                    "spark.sql.catalog.lance.hadoop.hive.metastore.uris": "thrift://metastore:9083",
                                    "spark.sql.catalog.lance.client.pool-size": "3",
                                    "spark.sql.catalog.lance.root": "hdfs://namenode:8020/lance"},
             expect=fails("LANCE_STORAGE_ERROR", "thrift://metastore:9083",
                          "the settings are taken, and the catalog calls the page's metastore, which the test machine "
                          "cannot reach; test_hive_namespace.py runs them against a Hive Metastore")),
        conf("config.md", """
            # Default: multi-level namespace mode with manifest-based storage
            spark = SparkSession.builder \\
                .config("spark.sql.catalog.lance.impl", "dir") \\
                .config("spark.sql.catalog.lance.root", "s3://bucket/lance") \\
                .getOrCreate()""", {"spark.sql.catalog.lance.impl": "dir", "spark.sql.catalog.lance.root": "{warehouse}"},
             adapted="root is the scenario's warehouse instead of s3://bucket/lance, so that the statements after it run"),
        py("config.md", """
            # Create namespaces explicitly, then create tables
            spark.sql("CREATE NAMESPACE lance.mydb")
            spark.sql("CREATE TABLE lance.mydb.users (id INT, name STRING)")""",
           table=table("mydb/users", "id", [], namespace=True)),
        conf("config.md", """
            # Enable single-level mode for backward compatibility
            spark = SparkSession.builder \\
                .config("spark.sql.catalog.lance.impl", "dir") \\
                .config("spark.sql.catalog.lance.single_level_ns", "true") \\
                .getOrCreate()""", {"spark.sql.catalog.lance.impl": "dir",
                                    "spark.sql.catalog.lance.single_level_ns": "true"},
        ),
        py("config.md", """
            # Use the virtual "default" namespace (no CREATE NAMESPACE needed)
            spark.sql("CREATE TABLE lance.default.users (id INT, name STRING)")""",
           table=table("users", "id", [])),
    ]),
]
