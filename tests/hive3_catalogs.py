"""A Hive 3 metastore's catalogs, for tests: a Thrift server on loopback that sits in front of a Hive 2.3 metastore
(the one ``test_hive_namespace.py`` starts; pyspark ships no Hive 3) and adds what Hive 3 has and Hive 2 lacks, as
Hive 3's ``hive_metastore.thrift`` and its ``HMSHandler`` define them:

- ``get_catalogs``, ``get_catalog``, ``create_catalog`` and ``drop_catalog`` (``Catalog``: 1 name, 2 description,
  3 locationUri). A new catalog gets a database ``default`` at its location; ``hive`` cannot be dropped; a catalog
  is dropped only when it has no database but ``default``, and that one no table; dropping it drops ``default`` and
  deletes the catalog's location, files and all, as Hive 3 does;
- database names of other catalogs as Hive 3's calls take them, ``@<catalog>#<database>`` (``@<catalog>#`` for all
  of a catalog's databases), ``Database.catalogName`` (field 8) and ``Table.catName`` (field 17).

The databases of a catalog ``c`` other than ``hive`` are kept in the Hive 2 metastore as ``c__<database>`` (so Hive's
own client can look at them there); those of ``hive`` are its own, less the ``c__*`` ones. Every other call is passed
through unchanged. Only the calls sparklance's Hive namespace makes are translated."""

from __future__ import annotations

import io
import shutil
import socket
import socketserver
import struct
import threading
from pathlib import Path
from typing import Dict, Optional, Tuple

BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15
VERSION_1 = 0x80010000
CALL, REPLY = 1, 2
DEFAULT_CATALOG = "hive"
SEPARATOR = "__"


# ------------------------------------------------------------------------------------------------ Thrift binary


def _read_exact(f, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise EOFError
    return data


def read_value(f, ttype: int):
    """A value of Thrift type ``ttype``: structs as {field id: (type, value)}, lists and sets as (element type,
    [values]), maps as (key type, value type, [(key, value)]), strings as bytes."""
    if ttype == BOOL or ttype == BYTE:
        return _read_exact(f, 1)[0]
    if ttype == DOUBLE:
        return struct.unpack(">d", _read_exact(f, 8))[0]
    if ttype == I16:
        return struct.unpack(">h", _read_exact(f, 2))[0]
    if ttype == I32:
        return struct.unpack(">i", _read_exact(f, 4))[0]
    if ttype == I64:
        return struct.unpack(">q", _read_exact(f, 8))[0]
    if ttype == STRING:
        return _read_exact(f, struct.unpack(">i", _read_exact(f, 4))[0])
    if ttype in (LIST, SET):
        element = _read_exact(f, 1)[0]
        n = struct.unpack(">i", _read_exact(f, 4))[0]
        return element, [read_value(f, element) for _ in range(n)]
    if ttype == MAP:
        k, v = _read_exact(f, 1)[0], _read_exact(f, 1)[0]
        n = struct.unpack(">i", _read_exact(f, 4))[0]
        return k, v, [(read_value(f, k), read_value(f, v)) for _ in range(n)]
    if ttype == STRUCT:
        fields = {}
        while True:
            t = _read_exact(f, 1)[0]
            if t == 0:
                return fields
            fid = struct.unpack(">h", _read_exact(f, 2))[0]
            fields[fid] = (t, read_value(f, t))
    raise ValueError(f"unknown Thrift type {ttype}")


def write_value(out: io.BytesIO, ttype: int, value) -> None:
    if ttype == BOOL or ttype == BYTE:
        out.write(bytes([value & 0xFF]))
    elif ttype == DOUBLE:
        out.write(struct.pack(">d", value))
    elif ttype == I16:
        out.write(struct.pack(">h", value))
    elif ttype == I32:
        out.write(struct.pack(">i", value))
    elif ttype == I64:
        out.write(struct.pack(">q", value))
    elif ttype == STRING:
        out.write(struct.pack(">i", len(value)) + value)
    elif ttype in (LIST, SET):
        element, items = value
        out.write(bytes([element]) + struct.pack(">i", len(items)))
        for item in items:
            write_value(out, element, item)
    elif ttype == MAP:
        k, v, entries = value
        out.write(bytes([k, v]) + struct.pack(">i", len(entries)))
        for key, val in entries:
            write_value(out, k, key)
            write_value(out, v, val)
    elif ttype == STRUCT:
        for fid, (t, v) in value.items():
            out.write(bytes([t]) + struct.pack(">h", fid))
            write_value(out, t, v)
        out.write(b"\x00")
    else:
        raise ValueError(f"unknown Thrift type {ttype}")


def read_message(f) -> Tuple[int, str, int, dict]:
    header = struct.unpack(">i", _read_exact(f, 4))[0] & 0xFFFFFFFF
    if header & 0xFFFF0000 != VERSION_1:
        raise ValueError(f"not Thrift's strict binary protocol (header {header:#010x})")
    name = read_value(f, STRING).decode()
    seqid = struct.unpack(">i", _read_exact(f, 4))[0]
    return header & 0xFF, name, seqid, read_value(f, STRUCT)


def message(kind: int, name: str, seqid: int, body: dict) -> bytes:
    out = io.BytesIO()
    out.write(struct.pack(">I", VERSION_1 | kind))
    write_value(out, STRING, name.encode())
    out.write(struct.pack(">i", seqid))
    write_value(out, STRUCT, body)
    return out.getvalue()


def text(fields: dict, fid: int) -> Optional[str]:
    return fields[fid][1].decode() if fid in fields else None


def string(s: str):
    return STRING, s.encode()


def error(fid: int, msg: str) -> dict:
    """A result struct holding declared exception ``fid`` (Hive's exceptions: 1 message)."""
    return {fid: (STRUCT, {1: string(msg)})}


# ------------------------------------------------------------------------------------------------ the stand-in


def parse_db(name: str) -> Tuple[str, Optional[str]]:
    """(catalog, database) of a database name as Hive 3's calls take it; database None for ``@<catalog>#``."""
    if not name.startswith("@"):
        return DEFAULT_CATALOG, name
    catalog, _, db = name[1:].partition("#")
    return catalog.lower(), (None if db == "" else "" if db == "!" else db)


def stored(catalog: str, db: str) -> str:
    """The name database ``db`` of ``catalog`` has in the Hive 2 metastore."""
    return db if catalog == DEFAULT_CATALOG else f"{catalog}{SEPARATOR}{db}"


class Hive3Catalogs:
    """The stand-in's state and its translation of calls; ``uri`` is where it serves."""

    def __init__(self, upstream: Tuple[str, int], default_location: str):
        self.upstream = upstream
        self.catalogs: Dict[str, dict] = {DEFAULT_CATALOG: {1: string(DEFAULT_CATALOG), 3: string(default_location)}}
        self.lock = threading.Lock()
        stand = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                with socket.create_connection(stand.upstream, timeout=60) as up:
                    upstream = (up, up.makefile("rb"))
                    while True:
                        try:
                            kind, name, seqid, args = read_message(self.rfile)
                        except EOFError:
                            return
                        result = stand.answer(upstream, name, seqid, args)
                        self.wfile.write(message(REPLY, name, seqid, result))
                        self.wfile.flush()

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.uri = f"thrift://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def forward(upstream, name: str, seqid: int, args: dict) -> dict:
        sock, rfile = upstream
        sock.sendall(message(CALL, name, seqid, args))
        kind, _, _, result = read_message(rfile)
        if kind != REPLY:
            raise ValueError(f"the metastore answered {name} with message type {kind}")
        return result

    def databases_of(self, upstream, catalog: str) -> list:
        names = [n.decode() for n in self.forward(upstream, "get_all_databases", 0, {})[0][1][1]]
        if catalog == DEFAULT_CATALOG:
            return [n for n in names if SEPARATOR not in n]
        prefix = catalog + SEPARATOR
        return [n[len(prefix):] for n in names if n.startswith(prefix)]

    def answer(self, upstream, name: str, seqid: int, args: dict) -> dict:
        call = lambda n, a: self.forward(upstream, n, seqid, a)  # noqa: E731
        if name == "get_catalogs":
            with self.lock:
                names = sorted(self.catalogs)
            return {0: (STRUCT, {1: (LIST, (STRING, [n.encode() for n in names]))})}
        if name == "get_catalog":
            cat = text(args[1][1], 1).lower()
            with self.lock:
                found = self.catalogs.get(cat)
            return {0: (STRUCT, {1: (STRUCT, found)})} if found else error(1, f"No catalog {cat}")
        if name == "create_catalog":
            catalog = dict(args[1][1][1][1])
            cat = text(catalog, 1).lower()
            if not cat.replace("_", "").isalnum() or SEPARATOR in cat or 3 not in catalog:
                return error(2, f"Catalog name {cat} or its location is not valid")
            with self.lock:
                if cat in self.catalogs:
                    return error(1, f"Catalog {cat} already exists")
                catalog[1] = string(cat)
                self.catalogs[cat] = catalog
            db = {1: string(stored(cat, "default")), 2: string(f"Default database for catalog {cat}"),
                  3: catalog[3], 4: (MAP, (STRING, STRING, []))}
            call("create_database", {1: (STRUCT, db)})
            return {}
        if name == "drop_catalog":
            cat = text(args[1][1], 1).lower()
            if cat == DEFAULT_CATALOG:
                return error(3, f"Can not drop {DEFAULT_CATALOG} catalog")
            with self.lock:
                catalog = self.catalogs.get(cat)
            if catalog is None:
                return error(1, f"No catalog {cat}")
            dbs = self.databases_of(upstream, cat)
            if dbs and dbs != ["default"]:
                return error(2, f"There are non-default databases in the catalog {cat} so it cannot be dropped.")
            if dbs:
                if call("get_all_tables", {1: string(stored(cat, "default"))})[0][1][1]:
                    return error(2, f"There are still objects in the default database for catalog {cat}")
                call("drop_database", {1: string(stored(cat, "default")), 2: (BOOL, 1), 3: (BOOL, 0)})
            location = text(catalog, 3)
            shutil.rmtree(Path(location[len("file:"):] if location.startswith("file:") else location), ignore_errors=True)
            with self.lock:
                del self.catalogs[cat]
            return {}

        if name == "get_all_databases":
            return {0: (LIST, (STRING, [n.encode() for n in self.databases_of(upstream, DEFAULT_CATALOG)]))}
        if name == "get_databases":
            cat, pattern = parse_db(text(args, 1) or "")
            names = self.databases_of(upstream, cat) if cat in self.catalogs else []
            return {0: (LIST, (STRING, [n.encode() for n in names if pattern in (None, "*", n)]))}
        if name in ("get_database", "drop_database", "get_all_tables", "get_table", "drop_table", "alter_table"):
            cat, db = parse_db(text(args, 1))
            if cat not in self.catalogs:  # each call's NoSuchObjectException (alter_table: InvalidOperationException)
                if name == "get_all_tables":
                    return {0: (LIST, (STRING, []))}
                return error(2 if name == "get_table" else 1, f"No catalog {cat}")
            args = dict(args)
            args[1] = string(stored(cat, db))
            if name == "alter_table":
                table = dict(args[3][1])
                new_cat = text(table, 17) or cat
                if new_cat != cat:
                    return error(1, "Cannot change the catalog of a table")
                table[2] = string(stored(cat, text(table, 2)))
                table.pop(17, None)
                args[3] = (STRUCT, table)
            result = call(name, args)
            if name in ("get_database", "get_table") and 0 in result:
                found = dict(result[0][1])
                if name == "get_database":
                    found[1], found[8] = string(db), string(cat)
                else:
                    found[2], found[17] = string(db), string(cat)
                result = {0: (STRUCT, found)}
            return result
        if name in ("create_database", "create_table"):
            obj = dict(args[1][1])
            cat_field, db_field = (8, 1) if name == "create_database" else (17, 2)
            cat = (text(obj, cat_field) or DEFAULT_CATALOG).lower()
            if cat not in self.catalogs:
                return error(2 if name == "create_database" else 4, f"No such catalog {cat}")
            obj[db_field] = string(stored(cat, text(obj, db_field)))
            obj.pop(cat_field, None)
            return call(name, {1: (STRUCT, obj)})
        return call(name, args)
