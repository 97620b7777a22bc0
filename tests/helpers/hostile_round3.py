"""Hostile inputs of the third round, built from the real fixtures at test time (nothing large is committed):

* compressed bombs of every compressed input a reader takes — a gzip'd ETDump, timeline CSV, ONNX Runtime profile,
  LiteRT op profile, XNNPACK log, debug buffer — written as deflate blocks repeated after a full flush (so a
  hundred-megabyte bomb costs milliseconds to make), and :class:`InflateSpy`, which counts every byte any zlib
  decompressor of the process gives;
* ONNX Runtime profiles whose op names escape a lone UTF-16 surrogate;
* LiteRT ``BenchmarkProfilingData`` protobufs (written with LiteRT's own classes) whose nodes are never called, and
  one whose count is a 70-bit varint;
* ETDumps (rewritten with the reference FlatBuffers runtime, :mod:`etdump_builder`/:mod:`etdump_rewrite`) whose runs
  hold only allocation or only debug events, and ETDumps whose FlatBuffer offsets alias: one RunData table listed
  many times, one events vector shared by every run, one Event table or one payload listed twice;
* debug recordings (tests/data/numerics) with a tensor of more dimensions than numpy holds, and with one stride word
  of a size-1 dimension changed (what made ``numerics`` overflow);
* DuckDB history stores whose tables have a generated column, a default or a CHECK constraint.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import replace
from pathlib import Path

import flatbuffers

from etdump_builder import AE, DE, PE, TensorMeta, _alloc_event, _debug_event, _profile_event, _vector_of_tables
from etdump_rewrite import read, write
from testdata import DATA

NUM = DATA / "numerics"
ORT = DATA / "ort"


# --------------------------------------------------------------------------------------------------
# compressed bombs
# --------------------------------------------------------------------------------------------------

def gzip_bomb(unit: bytes, times: int, *, head: bytes = b"") -> bytes:
    """A valid single-member gzip file of ``head`` then ``unit`` × ``times``: the deflate blocks of ``unit`` end
    with a full flush (byte-aligned, no history), so they are repeated as they are; the trailer holds the true CRC
    and size."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = co.compress(head) + co.flush(zlib.Z_FULL_FLUSH) if head else b""
    block = co.compress(unit) + co.flush(zlib.Z_FULL_FLUSH)
    final = co.flush()
    crc = zlib.crc32(head)
    for _ in range(times):
        crc = zlib.crc32(unit, crc)
    size = (len(head) + len(unit) * times) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + first + block * times + final + crc.to_bytes(4, "little") + size.to_bytes(4, "little")


MB = 1 << 20
LITERT_HEAD = (b"Profiling Info for Benchmark Initialization:\n============================== Run Order "
               b"==============================\n\t[node type]")


def bombs(folder: Path, mb: int = 160) -> dict[str, Path]:
    """One bomb per compressed input, each expanding to about ``mb`` MB (ratio about 1,000×), named so that each
    reader takes it: ``{kind: path}``."""
    folder.mkdir(parents=True, exist_ok=True)
    etdump = gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes())
    csv_head = b"name,duration_ms,run_index\n"
    out = {
        # an ETDump's first bytes, then zeros: the reader sees an ETDump (ED00 at byte 8) until it is whole
        "etdump": ("bomb.etdp.gz", gzip_bomb(b"\0" * MB, mb, head=etdump[:64])),
        "timeline_csv": ("bomb_exec_all_runs_timeline.csv.gz", gzip_bomb(b"Method::execute,1.0,0\n" * 47662, mb,
                                                                         head=csv_head)),
        "ort_json": ("bomb.ort.json.gz", gzip_bomb(b" " * MB, mb, head=b'[{"cat": "Session", "name": "model_run", '
                                                                  b'"ph": "X", "ts": 1, "dur": 2}')),
        "litert": ("bomb.litert.log.gz", gzip_bomb(b"\n" * MB, mb, head=LITERT_HEAD)),
        "log": ("bomb.log.gz", gzip_bomb(b"\n" * MB, mb)),
        "debug_buffer": ("bomb.debug.bin.gz", gzip_bomb(b"\0" * MB, mb)),
    }
    paths = {}
    for kind, (name, data) in out.items():
        p = folder / name
        p.write_bytes(data)
        paths[kind] = p
    return paths


class InflateSpy:
    """Counts the bytes every zlib decompressor of this process gives from now on (``zlib.decompressobj`` is the one
    constructor both the gzip module and edgeprof use), and stops the process's decompression with
    :class:`SpyLimit` once ``stop_at`` bytes have come out — so old code that would expand a bomb for gigabytes
    fails fast instead. ``largest``: the most any one decompressor gave."""

    class SpyLimit(Exception):
        pass

    def __init__(self, monkeypatch, stop_at: int = 400 * MB):
        self.total = self.largest = 0
        self.stopped = False
        real = zlib.decompressobj
        spy = self

        class Counting:
            def __init__(self, *a, **k):
                self._d = real(*a, **k)
                self.given = 0

            def decompress(self, data, max_length=0):
                out = self._d.decompress(data, max_length)
                self.given += len(out)
                spy.total += len(out)
                spy.largest = max(spy.largest, self.given)
                if spy.total > stop_at:
                    spy.stopped = True
                    raise InflateSpy.SpyLimit(f"more than {stop_at} bytes decompressed")
                return out

            def flush(self, *a):
                out = self._d.flush(*a)
                self.given += len(out)
                spy.total += len(out)
                return out

            def __getattr__(self, name):
                return getattr(self._d, name)

        monkeypatch.setattr(zlib, "decompressobj", Counting)


# --------------------------------------------------------------------------------------------------
# ONNX Runtime: lone surrogates
# --------------------------------------------------------------------------------------------------

def ort_with_surrogate(path: Path, where: str = "op_name", escape: str = "\\ud800") -> Path:
    """The fixture profile cnn_cpu_t1_l1.ort.json with one node's ``args.op_name`` (or ``name``) ending in a lone
    surrogate escape. Returns ``path``; the byte offset of the escape is ``path.read_bytes().index(escape)``."""
    doc = json.loads((ORT / "cnn_cpu_t1_l1.ort.json").read_text())
    node = next(e for e in doc if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"))
    marker = "SURROGATE_HERE"
    if where == "op_name":
        node["args"]["op_name"] = node["args"]["op_name"] + marker
    else:
        node["name"] = node["name"].replace("_kernel_time", marker + "_kernel_time")
    path.write_text(json.dumps(doc).replace(marker, escape))
    return path


# --------------------------------------------------------------------------------------------------
# LiteRT protobufs
# --------------------------------------------------------------------------------------------------

def litert_proto(pb2, *, times_called: int | None = None, count: int | None = None) -> bytes:
    """A BenchmarkProfilingData of the fixture CSV's nodes (cnn_cpu_ops.csv), written with LiteRT's own classes:
    every node called ``times_called`` times per run (default: as the CSV says) over 100 runs, its stat's ``count``
    (calls in all runs) written as ``count`` when given."""
    lines = (DATA / "litert" / "cnn_cpu_ops.csv").read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("node type")) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        f = [x.strip() for x in line.split(", ", 8)]  # type, start, first, avg ms, %, cdf%, mem KB, times, name
        rows.append((f[0], float(f[3]), int(f[7]), f[8]))
    data = pb2.BenchmarkProfilingData(model_name="cnn.tflite")
    sg = data.runtime_profile.subgraph_profiles.add(subgraph_name="main", subgraph_index=0)
    for k, (typ, avg, times, name) in enumerate(rows):
        t = times if times_called is None else times_called
        op = sg.per_op_profiles.add(node_type=typ, name=name, times_called=t, run_order=k)
        us = round(avg * 1000)
        op.inference_microseconds.sum = us * t * 100
        op.inference_microseconds.count = count if count is not None else t * 100
        op.inference_microseconds.avg = us
    return data.SerializeToString()


def overlong_varint(raw: bytes) -> bytes:
    """``raw`` (written with every count = -1, whose varint is ten bytes ending in 0x01) with the last byte of each
    such varint made 0x7F: a 70-bit number where protobuf allows 64 bits. The lengths around it are unchanged."""
    ten = b"\xff" * 9 + b"\x01"
    assert ten in raw
    return raw.replace(ten, b"\xff" * 9 + b"\x7f")


# --------------------------------------------------------------------------------------------------
# ETDumps
# --------------------------------------------------------------------------------------------------

def fixture_etdump(name: str = "toycnn_xnn.N20") -> bytes:
    return gzip.decompress((DATA / "etdump" / f"{name}.etdp.gz").read_bytes())


def untimed_runs(seed: bytes, kind: str, which=lambda i: True) -> bytes:
    """The fixture with the events of its execute runs ``which(i)`` replaced by allocation events (``kind`` "alloc")
    or debug events ("debug"), and no load/init block: runs that time nothing."""
    runs, v = read(seed)
    out, i = [], 0
    for r in runs:
        if r.name != "Execute":
            continue
        if which(i):
            if kind == "alloc":
                r = replace(r, events=[AE(0, 64), AE(1, 128)], allocators=["a", "b"])
            else:
                r = replace(r, events=[DE(name="x", instruction_id=1, tensor=TensorMeta(6, [1, 2], [2, 1], 0))])
        out.append(r)
        i += 1
    return write(out, v)


def _event(b, e):
    if isinstance(e, PE):
        return _profile_event(b, e), 0
    if isinstance(e, AE):
        return _alloc_event(b, e), 1
    return _debug_event(b, e), 2


def _event_table(b, payload_slot):
    payload, slot = payload_slot
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(slot, payload, 0)
    return b.EndObject()


def _run_table(b, name: str, events_vec):
    s = b.CreateString(name)
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(0, s, 0)
    b.PrependInt32Slot(1, -1, -1)
    b.PrependUOffsetTRelativeSlot(3, events_vec, 0)
    return b.EndObject()


def _finish(b, run_offsets) -> bytes:
    vec = _vector_of_tables(b, run_offsets)
    b.StartObject(2)
    b.PrependUint32Slot(0, 0, 0)
    b.PrependUOffsetTRelativeSlot(1, vec, 0)
    b.FinishSizePrefixed(b.EndObject(), file_identifier=b"ED00")
    return bytes(b.Output())


def aliased(seed: bytes, how: str, times: int = 1000, only_execute: bool = False) -> bytes:
    """An ETDump (the first execute run of ``seed``; only its ``Method::execute`` event when ``only_execute``, so
    that even the events its aliases claim fit the file) whose FlatBuffer offsets alias, built with the reference
    runtime:

    * ``run_table``: the run_data vector lists one RunData table ``times`` times (one run read as ``times``);
    * ``events_vector``: ``times`` RunData tables share one events vector;
    * ``event_table``: the run's events vector lists every Event table twice;
    * ``events_of_runs``: ``times`` RunData tables, each with its own events vector, all listing the same Event tables
      (read in blocks of a run each, the sharing lies between blocks);
    * ``payload``: two Event tables hold the same ProfileEvent."""
    runs, _ = read(seed)
    run = next(r for r in runs if r.name == "Execute")
    if only_execute:
        run = replace(run, events=[e for e in run.events if isinstance(e, PE) and e.name == "Method::execute"])
    b = flatbuffers.Builder(1024)
    if how == "payload":
        payloads = [_event(b, e) for e in run.events]
        events = [_event_table(b, p) for p in payloads] + [_event_table(b, payloads[0])]
        return _finish(b, [_run_table(b, "Execute", _vector_of_tables(b, events))])
    events = [_event_table(b, _event(b, e)) for e in run.events]
    if how == "event_table":
        return _finish(b, [_run_table(b, "Execute", _vector_of_tables(b, events + events))])
    if how == "events_of_runs":
        vectors = [_vector_of_tables(b, events) for _ in range(times)]
        return _finish(b, [_run_table(b, "Execute", v) for v in vectors])
    vec = _vector_of_tables(b, events)
    if how == "events_vector":
        return _finish(b, [_run_table(b, "Execute", vec) for _ in range(times)])
    assert how == "run_table", how
    one = _run_table(b, "Execute", vec)
    return _finish(b, [one] * times)


def with_blocks(seed: bytes, n: int) -> bytes:
    """The fixture's execute runs repeated to ``n`` runs (distinct tables: a well-formed large file)."""
    runs, v = read(seed)
    ex = [r for r in runs if r.name == "Execute"]
    return write([r for r in runs if r.name != "Execute"] + [ex[i % len(ex)] for i in range(n)], v)


# --------------------------------------------------------------------------------------------------
# debug recordings
# --------------------------------------------------------------------------------------------------

def debug_recording(folder: Path, name: str) -> Path:
    """``tests/data/numerics/<name>.debug.etdp`` and its buffer and ETRecord unpacked into ``folder``."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    etd = folder / f"{name}.debug.etdp"
    etd.write_bytes(gzip.decompress((NUM / f"{name}.debug.etdp.gz").read_bytes()))
    (folder / f"{name}.debug.bin").write_bytes(gzip.decompress((NUM / f"{name}.debug.bin.gz").read_bytes()))
    shutil.copy2(DATA / "etrecord" / f"{name}.etrecord", folder / f"{name}.etrecord")
    return etd


def _first_tensor(etdump: Path, out: Path | None, edit) -> Path:
    """The debug recording with the first debug event whose tensor ``edit(tensor)`` changes (a new tensor, or None
    to pass it) rewritten with the reference runtime, to ``out`` (default: in place)."""
    runs, v = read(etdump.read_bytes())
    done = False
    new_runs = []
    for r in runs:
        events = []
        for e in r.events:
            t = e.tensor if isinstance(e, DE) else None
            if not done and t is not None and (changed := edit(t)) is not None:
                e, done = replace(e, tensor=changed), True
            events.append(e)
        new_runs.append(replace(r, events=events))
    assert done, "no tensor of the recording fits the edit"
    out = out or etdump
    out.write_bytes(write(new_runs, v))
    return out


def reshaped_tensor(etdump: Path, rank: int, out: Path | None = None, sizes: list | None = None) -> Path:
    """The debug recording with its first tensor given ``rank`` dimensions (its elements kept: sizes 1, …, 1, n;
    strides to match) — or the shape ``sizes`` (row-major strides, int64-clamped) — rewritten with the reference
    runtime."""
    def edit(t):
        if not t.sizes:
            return None
        if sizes is None:
            n = 1
            for s in t.sizes:
                n *= s
            return replace(t, sizes=[1] * (rank - 1) + [n], strides=[n] * (rank - 1) + [1])
        strides, step = [], 1
        for d in reversed(sizes):
            strides.insert(0, min(step, 2**63 - 1))
            step *= max(d, 1)
        return replace(t, sizes=list(sizes), strides=strides)
    return _first_tensor(etdump, out, edit)


def size_one_stride(etdump: Path, value: int = -(2**63), out: Path | None = None) -> Path:
    """The debug recording with the stride of a size-1 dimension of a permuted (not row-major) tensor set to
    ``value`` — one changed word of the file: what made ``numerics`` raise OverflowError."""
    def edit(t):
        if len(t.sizes) < 3 or 1 not in t.sizes:
            return None
        k = t.sizes.index(1)
        sizes = list(t.sizes)
        # a dense layout in another dim order (the last two dimensions swapped), the size-1 stride bent
        strides = list(t.strides)
        inner = [d for d in range(len(sizes)) if d != k]
        if len(inner) < 2 or sizes[inner[-1]] <= 1 or sizes[inner[-2]] <= 1:
            return None
        a, b_ = inner[-2], inner[-1]
        strides[b_], strides[a] = sizes[a], 1
        rest = sizes[a] * sizes[b_]
        for d in reversed(inner[:-2]):
            strides[d] = rest
            rest *= sizes[d]
        strides[k] = value
        return replace(t, strides=strides)
    return _first_tensor(etdump, out, edit)


def etrecord_edited(dst: Path, edit, src: Path = DATA / "etrecord" / "toycnn_xnn.etrecord") -> Path:
    """The fixture ETRecord with its members ({name: bytes}) changed by ``edit`` in place, zipped again to ``dst``."""
    import io
    import zipfile

    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    edit(members)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in members.items():
            z.writestr(n, d)
    dst.write_bytes(buf.getvalue())
    return dst


# --------------------------------------------------------------------------------------------------
# history stores
# --------------------------------------------------------------------------------------------------

def store_with(src: Path, dst: Path, table: str, column: str, definition: str) -> Path:
    """A copy of the DuckDB store ``src`` in which ``table``'s ``column`` is defined by ``definition`` (e.g.
    ``DOUBLE GENERATED ALWAYS AS (…) VIRTUAL``, ``DOUBLE DEFAULT 1``, ``DOUBLE CHECK (…)``); the columns' names,
    order and types are unchanged, so only a check of the definitions tells it from edgeprof's."""
    import shutil

    import duckdb

    shutil.copy2(src, dst)
    con = duckdb.connect(str(dst))
    try:
        cols = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
                           "ORDER BY column_index", [table]).fetchall()
        keys = {c for (names,) in con.execute("SELECT constraint_column_names FROM duckdb_constraints() WHERE "
                                              "table_name = ? AND constraint_type = 'PRIMARY KEY'", [table]).fetchall()
                for c in names}
        defs = ", ".join(f'"{c}" {definition if c == column else t}' + (" PRIMARY KEY" if c in keys else "")
                         for c, t in cols)
        keep = ", ".join(f'"{c}"' for c, _ in cols if c != column or "GENERATED" not in definition.upper())
        con.execute(f'CREATE TABLE "{table}_new" ({defs})')
        con.execute(f'INSERT INTO "{table}_new" ({keep}) SELECT {keep} FROM "{table}"')
        con.execute(f'DROP TABLE "{table}"')
        con.execute(f'ALTER TABLE "{table}_new" RENAME TO "{table}"')
    finally:
        con.close()
    return dst
