"""``LanceTable``: a Python handle on a Lance table for reads by version, history, tags, row-level changes,
maintenance and scalar indexes. Thin over the JVM (``io.sparklance.spark.LanceTableOps`` and sparklance's SQL);
errors are raised as the classes of :mod:`sparklance.errors`."""

from __future__ import annotations

import json
import math
import re
import sys
from array import array
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Union

from sparklance.errors import InvalidArgumentError, translated

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

CATALOG_CLASS = "io.sparklance.spark.LanceCatalog"


def _quote(path: str) -> str:
    return "`" + path.replace("`", "``") + "`"


def _index_word(what: str, value: str) -> str:
    """``value`` as an identifier of sparklance's index statements, which take names in backticks without escapes."""
    if not isinstance(value, str) or not value or "`" in value:
        raise InvalidArgumentError(f"{value!r} is not a valid {what}: give a non-empty name without backticks.")
    return "`" + value + "`"


def _index_rows(df: "DataFrame") -> List[Dict[str, Any]]:
    """The rows of an index statement's result as dicts."""
    return [r.asDict() for r in df.collect()]


class Tags:
    """The tags of a table (``_refs/tags/``, shared with pylance)."""

    def __init__(self, table: "LanceTable"):
        self._t = table

    def create(self, name: str, version: Optional[int] = None) -> None:
        """Tag ``version`` (the latest by default) as ``name``."""
        with translated():
            v = self._t.version() if version is None else version
            self._t._ops.createTag(self._t._jspark, self._t.path, name, int(v))

    def delete(self, name: str) -> None:
        with translated():
            self._t._ops.deleteTag(self._t._jspark, self._t.path, name)

    def list(self) -> Dict[str, int]:
        """Tag name -> version."""
        with translated():
            return {r.name: r.version for r in self._t._df(self._t._ops.tags(self._t._jspark, self._t.path)).collect()}


class Branches:
    """The branches of a table (pylance 14's ``_refs/branches/``; each is a table of its own under ``tree/<name>/``
    of the main table, read and written through :meth:`LanceTable.branch`)."""

    def __init__(self, table: "LanceTable"):
        self._t = table

    def create(self, name: str, version: Optional[int] = None, tag: Optional[str] = None) -> "LanceTable":
        """Branch ``name`` from ``version`` of this table (main, or the branch this table is), from the version
        ``tag`` points to, or from the latest version; returns the new branch."""
        t = self._t
        with translated():
            if version is not None and tag is not None:
                raise InvalidArgumentError("Give a version or a tag to branch from, not both.")
            if tag is not None:
                t._ops.createBranchFromTag(t._jspark, t.path, name, tag)
            elif version is not None:
                t._ops.createBranchAt(t._jspark, t.path, name, int(version))
            else:
                t._ops.createBranch(t._jspark, t.path, name)
        return t.branch(name)

    def delete(self, name: str) -> None:
        """Deletes branch ``name`` and its files; refused while another branch was made from it."""
        with translated():
            self._t._ops.deleteBranch(self._t._jspark, self._t.path, name)

    def list(self) -> Dict[str, Dict[str, Any]]:
        """Branch name -> ``parent_branch`` (None for main), ``parent_version``, ``created_at``."""
        with translated():
            rows = self._t._df(self._t._ops.branches(self._t._jspark, self._t.path)).collect()
        return {r.name: {"parent_branch": r.parent_branch, "parent_version": r.parent_version,
                         "created_at": r.created_at} for r in rows}


class MergeBuilder:
    """``table.merge(source, "t.id = s.id").when_matched_update({...}).when_not_matched_insert_all().execute()``.

    The target is aliased ``t`` and the source ``s`` in conditions and expressions."""

    def __init__(self, table: "LanceTable", source: "DataFrame", on: str):
        self._t, self._source, self._on = table, source, on
        self._clauses: List[str] = []

    def when_matched_update(self, set: Mapping[str, str], condition: Optional[str] = None) -> "MergeBuilder":
        assignments = ", ".join(f"t.{_quote(c)} = {e}" for c, e in set.items())
        self._clauses.append(f"WHEN MATCHED{' AND ' + condition if condition else ''} THEN UPDATE SET {assignments}")
        return self

    def when_matched_update_all(self, condition: Optional[str] = None) -> "MergeBuilder":
        self._clauses.append(f"WHEN MATCHED{' AND ' + condition if condition else ''} THEN UPDATE SET *")
        return self

    def when_matched_delete(self, condition: Optional[str] = None) -> "MergeBuilder":
        self._clauses.append(f"WHEN MATCHED{' AND ' + condition if condition else ''} THEN DELETE")
        return self

    def when_not_matched_insert_all(self, condition: Optional[str] = None) -> "MergeBuilder":
        self._clauses.append(f"WHEN NOT MATCHED{' AND ' + condition if condition else ''} THEN INSERT *")
        return self

    def execute(self) -> None:
        if not self._clauses:
            raise InvalidArgumentError("A merge needs at least one WHEN clause.")
        view = f"__sparklance_merge_{id(self)}"
        self._source.createOrReplaceTempView(view)
        try:
            with translated():
                self._t._spark.sql(f"MERGE INTO {self._t._sql_name} t USING {view} s ON {self._on} " + " ".join(self._clauses))
        finally:
            self._t._spark.catalog.dropTempView(view)


class LanceTable:
    """A Lance table, by path (:meth:`for_path`) or by catalog name (:meth:`for_name`)."""

    def __init__(self, spark: "SparkSession", path: str):
        self._spark = spark
        self.path = path
        self._jspark = spark._jsparkSession
        self._ops = spark._jvm.io.sparklance.spark.LanceTableOps
        catalogs = [k[len("spark.sql.catalog."):] for k, v in spark.sparkContext.getConf().getAll()
                    if k.startswith("spark.sql.catalog.") and k.count(".") == 3 and v == CATALOG_CLASS]
        self._catalog = "lance" if "lance" in catalogs or not catalogs else catalogs[0]

    @classmethod
    def for_path(cls, spark: "SparkSession", path: str) -> "LanceTable":
        """The table at ``path`` (a directory or URI; a relative path is resolved against the driver's directory)."""
        with translated():
            qualified = spark._jvm.io.sparklance.spark.TableAccess.qualify(spark._jsc.hadoopConfiguration(), str(path))
        return cls(spark, qualified)

    @classmethod
    def for_name(cls, spark: "SparkSession", name: str) -> "LanceTable":
        """The table ``<catalog>.<namespace>.<table>`` of a Lance catalog."""
        with translated():
            return cls(spark, spark._jvm.io.sparklance.spark.LanceTableOps.locate(spark._jsparkSession, name))

    @property
    def _vector_search(self):
        """The JVM's ``VectorSearch``, looked up once: py4j resolves each part of a dotted name by reflection."""
        if self.__dict__.get("_vector_search_class") is None:
            self._vector_search_class = self._spark._jvm.io.sparklance.spark.VectorSearch
        return self._vector_search_class

    @property
    def _sql_name(self) -> str:
        return f"{self._catalog}.{_quote(self.path)}"

    def _df(self, jdf) -> "DataFrame":
        from pyspark.sql import DataFrame

        return DataFrame(jdf, self._spark)

    def to_df(self, version: Optional[int] = None, timestamp: Union[str, datetime, None] = None,
              tag: Optional[str] = None) -> "DataFrame":
        """The table (at a version, the version current at a timestamp, or a tag) as a DataFrame.

        ``timestamp`` is an ISO-8601 string (UTC when it has no offset) or a timezone-aware ``datetime``; the
        latest version committed at or before it is read."""
        if isinstance(timestamp, datetime):
            if timestamp.tzinfo is None or timestamp.utcoffset() is None:
                raise InvalidArgumentError(f"timestamp {timestamp} has no time zone: give an aware datetime, e.g. "
                                           "datetime.now(timezone.utc), or an ISO-8601 string.")
            timestamp = timestamp.isoformat()
        reader = self._spark.read.format("lance")
        for key, value in (("version", version), ("timestamp", timestamp), ("tag", tag)):
            if value is not None:
                reader = reader.option(key, str(value))
        with translated():
            return reader.load(self.path)

    @property
    def schema(self):
        """The Spark schema of the latest version."""
        return self.to_df().schema

    def history(self) -> "DataFrame":
        """Every version, ascending: version, timestamp, operation, rows, fragments, rows_added, rows_deleted,
        written_by."""
        with translated():
            return self._df(self._ops.history(self._jspark, self.path))

    def versions(self) -> List[int]:
        return [r.version for r in self.history().select("version").collect()]

    def version(self) -> int:
        """The latest version."""
        return max(self.versions())

    @property
    def tags(self) -> Tags:
        return Tags(self)

    @property
    def branches(self) -> Branches:
        return Branches(self)

    def branch(self, name: str) -> "LanceTable":
        """Branch ``name`` of this table as a table: its reads, writes (``to_df``, ``delete``, ``update``,
        ``merge``, ``optimize``, ...), history and time travel are the branch's; ``main`` is the main table."""
        with translated():
            return LanceTable(self._spark, self._ops.branchPath(self._jspark, self.path, name))

    def restore(self, version: Union[int, str]) -> int:
        """Commits the table as it was at ``version`` (a number, or a tag name) as a new version; returns it."""
        with translated():
            if isinstance(version, str):
                return int(self._ops.restoreTag(self._jspark, self.path, version))
            return int(self._ops.restore(self._jspark, self.path, int(version)))

    def delete(self, condition: str) -> None:
        """Deletes the rows matching a SQL condition."""
        with translated():
            self._spark.sql(f"DELETE FROM {self._sql_name} WHERE {condition}")

    def update(self, condition: Optional[str], set: Mapping[str, str]) -> None:
        """Sets columns (name -> SQL expression) on the rows matching ``condition`` (all rows when None)."""
        if not set:
            raise InvalidArgumentError("An update needs at least one column to set.")
        assignments = ", ".join(f"{_quote(c)} = {e}" for c, e in set.items())
        with translated():
            self._spark.sql(f"UPDATE {self._sql_name} SET {assignments}" + (f" WHERE {condition}" if condition else ""))

    def merge(self, source: "DataFrame", on: str) -> MergeBuilder:
        """A MERGE of ``source`` (alias ``s``) into this table (alias ``t``) on a condition."""
        return MergeBuilder(self, source, on)

    def optimize(self, target_rows_per_fragment: int = 1024 * 1024, **options) -> "DataFrame":
        """Compaction; returns version, fragments_removed, fragments_added. ``options`` are those of ``OPTIMIZE ...
        WITH (...)`` (pylance's ``compact_files`` names): ``materialize_deletions``, ``materialize_deletions_threshold``,
        ``max_source_fragments``, ``batch_size``. On a table without stable row ids the B-tree, bitmap, label list,
        NGRAM, full-text and vector indexes covering the rewritten fragments are remapped in the same commit, as
        pylance's ``compact_files`` does (docs/indexes.md)."""
        values = {"target_rows_per_fragment": str(int(target_rows_per_fragment))}
        values.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()})
        with translated():
            return self._df(self._ops.optimizeWith(self._jspark, self.path, values))

    def vacuum(self, retain_hours: float = 168.0, dry_run: bool = False) -> "DataFrame":
        """Removes versions older than ``retain_hours`` (never the latest or tagged) and files only they used."""
        with translated():
            return self._df(self._ops.vacuum(self._jspark, self.path, float(retain_hours), bool(dry_run)))

    def add_columns(self, columns: Mapping[str, str]) -> int:
        """Adds columns computed by SQL expressions over the existing ones, writing only the new columns."""
        with translated():
            return int(self._ops.addColumns(self._jspark, self.path, list(columns.keys()), list(columns.values())))

    def commit_files(self, names: List[str], mode: str = "append") -> int:
        """Commits Lance data files already written under the table's ``data/`` directory (e.g. by parallel tasks)
        as one new version: ``mode="append"``, or ``"overwrite"`` (the first file's schema; also creates a table).
        Returns the new version."""
        if mode not in ("append", "overwrite"):
            raise InvalidArgumentError(f"mode must be 'append' or 'overwrite', not {mode!r}.")
        with translated():
            return int(self._ops.commitFiles(self._jspark, self.path, list(names), mode == "overwrite"))

    def create_index(self, column: str, index_type: str = "btree", name: Optional[str] = None, replace: bool = False,
                     **options: Any) -> Dict[str, Any]:
        """Builds an index on ``column`` and commits it as one new version (``ALTER TABLE ... CREATE INDEX``).

        ``index_type`` is the kind: a scalar one (``"btree"``, ``"bitmap"``, ...) or a vector one (``"ivf_flat"``,
        ``"ivf_pq"``, ``"ivf_sq"``, ``"ivf_hnsw_*"`` on a float32, float16 or float64 vector column; ``"ivf_flat"``,
        ``"ivf_hnsw_flat"`` with ``distance_type="hamming"`` on a uint8 one) or ``"fts"`` (a full-text INVERTED index on a string
        column, e.g. ``with_position=True, stem=False``); ``name`` defaults to ``"<column>_idx"``, as pylance
        names them. ``options`` are the kind's parameters, e.g. ``zone_size=4096`` (rows per B-tree page), or
        ``num_partitions=256, num_sub_vectors=16, distance_type="cosine"`` for IVF_PQ; an unknown one is an
        error. With ``replace=True`` an index of the same name is replaced, otherwise that name raises
        ``InvalidArgumentError``. A kind sparklance cannot build, or a column of a type the kind cannot index, raises
        ``UnsupportedFeatureError``. Returns the new index as :meth:`list_indices` describes it."""
        if not isinstance(index_type, str) or not re.fullmatch(r"\w+", index_type):
            raise InvalidArgumentError(f"{index_type!r} is not an index type: give a kind such as 'btree'.")
        settings = []
        for key, value in options.items():
            if isinstance(value, bool):
                value = str(value).lower()
            if "'" in str(value):
                raise InvalidArgumentError(f"Index option {key} = {value!r}: values cannot contain a quote.")
            settings.append(f"{_index_word('index option', key)} = '{value}'")
        if replace:
            settings.append("replace = true")
        name = f"{column}_idx" if name is None else name
        statement = (f"ALTER TABLE {self._sql_name} CREATE INDEX {_index_word('index name', name)} USING {index_type} "
                     f"({_index_word('column name', column)})" + (f" WITH ({', '.join(settings)})" if settings else ""))
        with translated():
            return _index_rows(self._spark.sql(statement))[0]

    def list_indices(self) -> List[Dict[str, Any]]:
        """The indexes of the latest version, built by sparklance or pylance, as dicts: ``name``, ``type``
        (``"BTREE"``, ``"BITMAP"``, ...), ``columns``, ``uuid``, ``fragments`` (how many of the version's fragments
        it covers: fragments appended or compacted since it was built are not covered) and ``created_at``. An
        index pylance extended with delta segments has one entry per segment."""
        with translated():
            return _index_rows(self._df(self._spark._jvm.io.sparklance.spark.LanceIndexes.segments(self._jspark, self.path)))

    def drop_index(self, name: str) -> int:
        """Drops the index ``name`` (every segment of it) and returns the new version. Its files stay while older
        versions list it (``vacuum`` removes them with those versions). An unknown name raises
        ``InvalidArgumentError``."""
        with translated():
            statement = f"DROP INDEX {_index_word('index name', name)} ON {self._sql_name}"
            return int(self._spark.sql(statement).collect()[0][0])

    def optimize_index(self, name: str, num_indices_to_merge: Optional[int] = None) -> Dict[str, Any]:
        """Brings the index ``name`` up to date with the latest version, as pylance's ``optimize_indices`` does:
        the fragments it does not cover (appended or compacted since it was built) are read and merged with it,
        with the options it was built with, into a new index committed in its place; returns it as
        :meth:`list_indices` describes it. A vector index (IVF_FLAT, IVF_PQ, IVF_SQ, their IVF_HNSW_* forms) keeps its
        model: the new rows are placed and encoded with its centroids and quantizer, and written with its old rows into
        one segment (an HNSW index's graphs rebuilt over old and new rows), over float32, float16 (Spark 4), float64
        or uint8 (hamming) vectors alike, in the column's type. An index
        that already covers every fragment, in one segment, is returned as it is, and nothing is committed.
        ``num_indices_to_merge=n`` merges only the newest ``n`` segments with the new fragments (0: the new fragments
        become a delta segment of their own), as pylance's ``optimize_indices`` does; the index's newest segment is
        returned."""
        merge = num_indices_to_merge
        if merge is not None and (not isinstance(merge, int) or isinstance(merge, bool) or merge < 0):
            raise InvalidArgumentError(f"num_indices_to_merge must be a whole number of at least 0, not {merge!r}.")
        with translated():
            statement = f"ALTER TABLE {self._sql_name} OPTIMIZE INDEX {_index_word('index name', name)}"
            if merge is not None:
                statement += f" WITH (num_indices_to_merge = {merge})"
            row = _index_rows(self._spark.sql(statement))[0]
            return {"name": row["index_name"], **{k: row[k] for k in ("type", "columns", "uuid", "fragments",
                                                                          "created_at")}}

    def search(self, vector: Any, k: int = 10, column: Optional[str] = None, metric: str = "l2",
               filter: Optional[str] = None, prefilter: bool = False, columns: Optional[List[str]] = None,
               with_row_id: bool = False, offset: int = 0, version: Union[int, str, None] = None,
               distance_range: Optional[tuple] = None, nprobes: Optional[int] = None,
               refine_factor: Optional[int] = None, bypass_vector_index: bool = False,
               ef: Optional[int] = None) -> "DataFrame":
        """The ``k`` rows nearest to ``vector`` in the vector column ``column``, as a DataFrame (the SQL table
        function ``vector_search``): the table's columns (or ``columns``), then ``_distance`` (Lance's ``l2``
        (squared), ``cosine`` or ``dot`` distance, ``metric``, or ``hamming`` for uint8 vectors),
        then ``_rowid`` with ``with_row_id``; nearest first.

        ``vector`` is a sequence of numbers, or a sequence of such vectors (a batch: each is searched, and a leading
        ``query_index`` column numbers them). ``column`` may be left out when the table has one vector column.
        ``filter`` (SQL) applies to the nearest rows found, as in Lance, or before the search with ``prefilter=True``;
        ``distance_range=(lower, upper)`` keeps distances ``lower <= d < upper`` (either may be None); ``offset``
        drops the first rows of the ``k``; ``version`` is a version number or tag. A vector index pylance built on
        ``column`` for ``metric`` (IVF_FLAT, IVF_PQ, IVF_SQ with l2, and their IVF_HNSW_* forms; IVF_FLAT and
        IVF_HNSW_FLAT for hamming) serves the search as
        in pylance, probing ``nprobes`` partitions (20 if not given), searching an HNSW index's graphs with beam width
        ``ef`` (``k * refine_factor * 1.5`` if not given) and, with ``refine_factor``, measuring ``k * refine_factor``
        rows it finds exactly; ``bypass_vector_index=True`` searches exactly instead. Needs sparklance's SQL extensions
        (:func:`sparklance.session` configures them)."""
        batch, values, dim, arguments = self._search_arguments(
            vector, k=k, column=column, metric=metric, filter=filter, prefilter=prefilter, columns=columns,
            with_row_id=with_row_id, offset=offset, version=version, distance_range=distance_range, nprobes=nprobes,
            refine_factor=refine_factor, bypass_vector_index=bypass_vector_index, ef=ef)
        search = self._vector_search
        with translated():
            if batch:
                return self._df(search.searchBatch(self._jspark, values, dim, arguments))
            return self._df(search.search(self._jspark, values, arguments))

    def to_table(self, nearest: dict, columns: Optional[List[str]] = None, filter: Optional[str] = None,
                 prefilter: bool = False, with_row_id: bool = False, offset: int = 0,
                 version: Union[int, str, None] = None) -> "pyarrow.Table":
        """The nearest-neighbour search of :meth:`search` as a ``pyarrow.Table``, as pylance's
        ``LanceDataset.to_table(nearest=...)`` takes it, without a Spark DataFrame: a search a vector index serves
        whose rows are few (``driver_lookup_rows``) is computed on the driver and its rows come back as Arrow, with no
        Spark planning or job; any other search runs as :meth:`search` would. The rows are those of
        ``search(...).collect()``; each column keeps its Lance type (a vector column stays a fixed-size list).

        ``nearest`` holds pylance's keys: ``column``, ``q`` (a vector, or a list of vectors for a batch, which adds a
        leading ``query_index`` column), ``k`` (10), ``metric`` (or ``distance_type``; ``l2``), ``nprobes``,
        ``refine_factor``, ``ef``, ``use_index`` (True; False searches exactly) and ``distance_range``."""
        import pyarrow as pa

        if not isinstance(nearest, dict):
            raise InvalidArgumentError(f"nearest must be a dict of the search's settings, not {type(nearest).__name__}.")
        known = {"column", "q", "k", "metric", "distance_type", "nprobes", "refine_factor", "ef", "use_index",
                 "distance_range"}
        unknown = sorted(set(nearest) - known)
        if unknown:
            raise InvalidArgumentError(f"nearest has unknown keys {', '.join(unknown)}; it takes {', '.join(sorted(known))}.")
        if "q" not in nearest:
            raise InvalidArgumentError("nearest needs the query vector 'q'.")
        if "metric" in nearest and "distance_type" in nearest:
            raise InvalidArgumentError("nearest gives both 'metric' and 'distance_type'; give one.")
        q = nearest["q"]
        if hasattr(q, "tolist"):
            q = q.tolist()
        batch, values, dim, arguments = self._search_arguments(
            q, k=nearest.get("k", 10), column=nearest.get("column"),
            metric=nearest.get("metric", nearest.get("distance_type", "l2")), filter=filter, prefilter=prefilter,
            columns=columns, with_row_id=with_row_id, offset=offset, version=version,
            distance_range=nearest.get("distance_range"), nprobes=nearest.get("nprobes"),
            refine_factor=nearest.get("refine_factor"), bypass_vector_index=not nearest.get("use_index", True),
            ef=nearest.get("ef"))
        search = self._vector_search
        with translated():
            if batch:
                data = search.searchBatchArrow(self._jspark, values, dim, arguments)
            else:
                data = search.searchArrow(self._jspark, values, arguments)
        return pa.ipc.open_stream(pa.py_buffer(data)).read_all()

    def _search_arguments(self, vector: Any, k: int, column: Optional[str], metric: str, filter: Optional[str],
                          prefilter: bool, columns: Optional[List[str]], with_row_id: bool, offset: int,
                          version: Union[int, str, None], distance_range: Optional[tuple], nprobes: Optional[int],
                          refine_factor: Optional[int], bypass_vector_index: bool, ef: Optional[int]):
        """The query vectors (whether a batch, their float64 bytes, their length) and the other arguments of a
        search as JSON, checked as far as Python can."""
        items = list(vector)
        if not items:
            raise InvalidArgumentError("The query vector is empty.")
        batch = not isinstance(items[0], (int, float)) and hasattr(items[0], "__iter__")
        rows = [list(v) for v in items] if batch else [items]
        dims = sorted({len(v) for v in rows})
        if len(dims) > 1:
            raise InvalidArgumentError(f"The query vectors have different lengths: {', '.join(map(str, dims))}.")
        values = array("d", (float(x) for v in rows for x in v))
        if not all(math.isfinite(x) for x in values):
            bad = next(x for x in values if not math.isfinite(x))
            raise InvalidArgumentError(f"The query vector holds {bad}; give finite numbers.")
        if sys.byteorder != "little":
            values.byteswap()
        if column is None:
            vectors = [f.name for f in self.schema.fields
                       if str(f.metadata.get("lance.logical_type", "")).startswith("fixed_size_list:")]
            if len(vectors) != 1:
                raise InvalidArgumentError(
                    f"Name the vector column to search: the table has {len(vectors)} vector columns "
                    f"({', '.join(vectors) or 'none'}).")
            column = vectors[0]
        lower, upper = distance_range if distance_range is not None else (None, None)
        # vector_search's arguments by name; the plan is built on the JVM without SQL text (VectorSearch.search).
        arguments = {"table": self._sql_name, "vector_column": column, "num_results": int(k), "distance_type": metric,
                     "columns": None if columns is None else [str(c) for c in columns], "filter": filter,
                     "nprobes": None if nprobes is None else int(nprobes),
                     "refine_factor": None if refine_factor is None else int(refine_factor), "offset": int(offset),
                     "ef": None if ef is None else int(ef),
                     "version": None if version is None else version if isinstance(version, (int, str)) else str(version),
                     "lower_bound": None if lower is None else float(lower),
                     "upper_bound": None if upper is None else float(upper),
                     "bypass_vector_index": bool(bypass_vector_index), "prefilter": bool(prefilter),
                     "with_row_id": bool(with_row_id)}
        # One py4j call: the arguments as one JSON string (a dict would cost a call per entry), the vectors as bytes.
        arguments = json.dumps({key: value for key, value in arguments.items() if value is not None})
        return batch, values.tobytes(), dims[0], arguments

    def __repr__(self) -> str:
        return f"LanceTable({self.path!r})"
