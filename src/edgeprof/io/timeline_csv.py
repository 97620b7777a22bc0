"""Timeline CSVs (the Arm kit's ``*_all_runs_timeline.csv`` or edgeprof's) → :class:`~edgeprof.model.Profile`.

A timeline CSV has one row per event and run: ``name``, ``duration_ms``, ``run_index`` and, in the kit's
file, ``start_us``, ``node_id`` and ``delegate_backend``; edgeprof's adds ``kind``, ``event_index``,
``instruction_id`` and ``op_types`` — or ``op_types_id``, an id into the lists of ``<name>_op_types.csv`` beside
it (:data:`edgeprof.conventions.OP_TYPES_REF`). Events are put back in execution order (``event_index``, else the
kit's Inspector order ``node_id``, else start time) and handed to the same normalization as ETDumps, so
nesting, self times and kinds follow the same rules. Without instruction ids a kernel belongs to the
next ``OPERATOR_CALL`` of its run and a delegate op to the next ``DELEGATE_CALL`` (Inspector's order
guarantees that).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np

from ..conventions import (CSV_GUARDED, FORMAT_TIMELINE_CSV, LITERT_LAUNCH_TAIL, METHOD_EXECUTE, NS_PER_MS,
                           OP_TYPES_ID, OP_TYPES_TAIL, WRAPPER_EVENTS, fit_name, ms)
from ..errors import InputError

_NOT_DELEGATED = ("portable", "framework", "", None)
MAX_CSV_BYTES = 64 << 30  # the read is bounded by the file's size; this only refuses the absurd


def read_timeline_csv(path):
    import polars as pl

    from .etdump import build_profile, events_only
    from .litert_profile import looks_like_litert
    from ..files import read_regular

    path = Path(path)
    # read once: parsed from memory, hashed for the store; gzip decompressed under the one rule, any other compression
    # refused before Polars (which would decompress zlib, zstd or lz4 on its own, unbounded) sees it
    data = _checked(read_regular(path, MAX_CSV_BYTES, "timeline CSV"), path, "timeline CSV")
    if looks_like_litert(data[:4096]):  # LiteRT's op profile written as CSV (--op_profiling_output_mode=csv)
        from .litert_profile import profile_of_bytes

        return profile_of_bytes(data, path)
    try:
        head = pl.read_csv(io.BytesIO(data), n_rows=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as e:
        raise InputError(path, f"not a readable CSV ({str(e).splitlines()[0]})") from None
    missing = {"name", "duration_ms"} - set(head.columns)
    if missing:
        raise InputError(path, f"not a timeline CSV: missing column(s) {', '.join(sorted(missing))}")
    want = {"name": pl.String, "duration_ms": pl.Float64, "run_index": pl.Int64, "start_us": pl.Float64,
            "node_id": pl.Int64, "event_index": pl.Int64, "instruction_id": pl.Int64, "kind": pl.String,
            "delegate_backend": pl.String, "op_types": pl.String, OP_TYPES_ID: pl.Int64, "block": pl.String}
    cols = [c for c in want if c in head.columns]
    try:
        df = pl.read_csv(io.BytesIO(data), columns=cols, schema_overrides={c: want[c] for c in cols})
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(path, f"malformed timeline CSV ({str(e).splitlines()[0]})") from None
    # text cells edgeprof wrote with a leading apostrophe (conventions.csv_cell: a name a spreadsheet would evaluate)
    df = df.with_columns(pl.col(c).str.replace(CSV_GUARDED, "${1}") for c in ("name", "kind", "delegate_backend", "block")
                         if c in df.columns and df[c].str.starts_with("'").any())
    if "run_index" not in df.columns:
        df = df.with_columns(pl.lit(0, dtype=pl.Int64).alias("run_index"))
    df = df.filter(pl.col("name").is_not_null() & pl.col("duration_ms").is_not_null() & pl.col("run_index").is_not_null())
    if df.height == 0:
        raise InputError(path, "timeline CSV holds no rows with durations")
    order = [c for c in ("event_index", "node_id", "start_us") if c in df.columns]
    df = df.with_row_index("_row").sort(["run_index", *order, "_row"])
    n = df.height
    names = df["name"].to_list()
    if "kind" in df.columns:
        delegated = (df["kind"] == "delegate_op").fill_null(False).to_numpy()
    elif "delegate_backend" in df.columns:
        delegated = (~df["delegate_backend"].is_in([x for x in _NOT_DELEGATED if x]).fill_null(True)
                     & ~df["name"].is_in(list(WRAPPER_EVENTS)) & df["delegate_backend"].is_not_null()).to_numpy()
    else:
        delegated = np.zeros(n, dtype=bool)
    uniq = list(dict.fromkeys(names))
    code = {s: i for i, s in enumerate(uniq)}
    codes = np.array([code[s] for s in names], dtype=np.int32)
    name_codes = np.where(delegated, -1, codes).astype(np.int32)
    dd_codes = np.where(delegated, codes, -1).astype(np.int32)
    run_idx = df["run_index"].to_numpy()
    runs_sorted = np.unique(run_idx)
    run_data = np.searchsorted(runs_sorted, run_idx).astype(np.int64)
    warnings = []
    # durations: NaN, infinite, negative or absurd values are invalid events (left out, counted), never zeros
    dur_ms = df["duration_ms"].to_numpy().astype(np.float64)
    bad = ~np.isfinite(dur_ms) | (dur_ms < 0) | (dur_ms >= MAX_MS)
    dur = np.where(bad, 0, np.round(np.where(bad, 0, dur_ms) * NS_PER_MS)).astype(np.int64)
    starts_ok = "start_us" in df.columns
    if starts_ok:
        st = df["start_us"].fill_null(0).to_numpy().astype(np.float64)
        if not (np.isfinite(st).all() and (np.abs(st) < MAX_MS * 1000).all()):
            warnings.append("start_us holds non-finite or out-of-range values: events laid end to end instead")
            starts_ok = False
    # with no usable times the events are laid end to end within each run (durations are exact)
    start = np.round(st * 1000).astype(np.int64) if starts_ok else np.cumsum(dur) - dur
    start = np.maximum(start, 0)
    if "instruction_id" in df.columns:
        ins = df["instruction_id"].fill_null(-1).to_numpy()
        instr = np.where((ins >= -1) & (ins < 2**31), ins, -1).astype(np.int32)
    else:
        instr = np.full(n, -1, dtype=np.int32)
    blocks = df["block"].to_list() if "block" in df.columns else None
    run_names = []
    for r in runs_sorted.tolist():
        run_names.append(blocks[int(np.argmax(run_idx == r))] if blocks else "Execute")
    dec = events_only([b or "Execute" for b in run_names], run_data, name_codes, dd_codes, uniq, instr,
                      start.astype(np.uint64), (start + dur).astype(np.uint64), pe_invalid=bad)
    prof = build_profile(dec, path, file_size=len(data))
    prof.format = FORMAT_TIMELINE_CSV
    if os.path.basename(os.fspath(path)).lower().endswith(LITERT_LAUNCH_TAIL):  # a LiteRT launch's per-run times
        prof.runtime = "litert"
    prof.sha256 = hashlib.sha256(data).hexdigest()
    prof.warnings[:0] = warnings
    # keep the CSV's run numbers (they need not start at 0)
    if not np.array_equal(runs_sorted, np.arange(runs_sorted.size)):
        prof.warnings.append(f"run indices renumbered 0..{runs_sorted.size - 1} (the CSV has {runs_sorted.tolist()[:5]}…)")
    if "op_types" in df.columns:
        parsed, bad_cells = {}, 0
        for cell in df["op_types"].unique().to_list():
            parsed[cell] = _op_types(cell)
            bad_cells += parsed[cell] is _BAD
        if bad_cells:
            prof.warnings.append(f"{bad_cells} distinct op_types cell(s) are not JSON lists of strings: left empty")
        ops = [None if parsed[c] is _BAD else parsed[c] for c in df["op_types"].to_list()]
        prof.events = prof.events.with_columns(pl.Series("op_types", ops, dtype=pl.List(pl.Categorical)))
    elif OP_TYPES_ID in df.columns and df[OP_TYPES_ID].is_not_null().any():
        lists, problems = _referenced_lists(path)
        ids = df[OP_TYPES_ID].to_list()
        unknown = len({i for i in ids if i is not None and i not in lists})
        if unknown and lists:
            problems.append(f"{unknown} op_types_id value(s) are not in {op_types_file(path).name}: left empty")
        prof.warnings.extend(problems)
        prof.events = prof.events.with_columns(pl.Series("op_types", [lists.get(i) for i in ids],
                                                         dtype=pl.List(pl.Categorical)))
    from .etdump_read import check_has_runs

    check_has_runs(prof, path)
    return prof


MAX_MS = ms(2.0**53)  # durations at or beyond 2^53 ns are not measurements
_BAD = object()
_MAX_CELL = 1 << 20


def _op_types(cell):
    """An ``op_types`` cell: a JSON list of strings (``None`` when empty), or ``_BAD``. Deep nesting and huge
    cells are refused before parsing."""
    from .jsontext import lone_surrogate

    if not cell:
        return None
    if len(cell) > _MAX_CELL or cell.count("[") > 1 or lone_surrogate(cell) is not None:  # no text can hold that
        return _BAD
    try:
        v = json.loads(cell)
    except (ValueError, RecursionError):
        return _BAD
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        return _BAD
    return v


def op_types_file(table: Path) -> Path:
    """The op-type lists a timeline CSV refers to (``op_types_id``): ``<name>_op_types.csv`` beside ``<name>.csv``."""
    return table.with_name(fit_name(table.name.removesuffix(".gz").removesuffix(".csv"), OP_TYPES_TAIL))


def _referenced_lists(path: Path) -> tuple[dict, list[str]]:
    """The op-type lists a timeline's ``op_types_id`` refers to ({id: list}), read from ``<name>_op_types.csv``
    beside it, and the warnings: a missing file leaves the op types empty; a file that is not an op-types table
    is an error naming it."""
    import polars as pl

    from ..files import exists, read_regular

    side = op_types_file(path)
    if not exists(side):
        return {}, [f"op_types_id refers to {side.name}, which is not beside it: op types left empty"]
    data = _checked(read_regular(side, MAX_CSV_BYTES, "op-types CSV"), side, "op-types CSV")
    try:
        t = pl.read_csv(io.BytesIO(data), schema_overrides={OP_TYPES_ID: pl.Int64, "op_types": pl.String})
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as e:
        raise InputError(side, f"not a readable CSV ({str(e).splitlines()[0]})") from None
    if t.columns != [OP_TYPES_ID, "op_types"]:
        raise InputError(side, f"not an op-types table: columns {', '.join(t.columns[:4])}, expected "
                               f"{OP_TYPES_ID}, op_types")
    lists, bad = {}, 0
    for row, (i, cell) in enumerate(t.iter_rows(), start=1):
        if i is None or i in lists:
            raise InputError(side, f"row {row}: {OP_TYPES_ID} {'missing' if i is None else f'{i} repeated'}")
        v = _op_types(cell)
        bad += v is _BAD
        lists[i] = None if v is _BAD else v
    return lists, [f"{bad} op-type list(s) in {side.name} are not JSON lists of strings: left empty"] if bad else []


def _checked(data: bytes, path, what: str) -> bytes:
    """A CSV's bytes as Polars may parse them (:func:`edgeprof.io.sniff.plain`)."""
    from .sniff import plain

    return plain(data, path, MAX_CSV_BYTES, what)


def execute_latency_ms(path) -> np.ndarray:
    """Per-run ``Method::execute`` time (ms, run order) of a timeline table (CSV or Parquet) without building a
    profile; empty when it has no ``Method::execute`` rows. A CSV is read once and checked like every timeline CSV
    (:func:`_checked`: Polars never sees compressed bytes), then only the columns needed are parsed; a Parquet
    table is read by Polars from the open file (``/proc/self/fd/N``)."""
    import polars as pl

    from ..files import fd_path, open_regular, read_regular

    path = Path(path)
    try:
        if path.suffix == ".parquet":
            with open_regular(path) as f:  # opened once (confined: walked from the root)
                lf = pl.scan_parquet(fd_path(f))
                cols = lf.collect_schema().names()
                per = _execute_per_run(pl, lf, cols, path).collect()
        else:
            data = _checked(read_regular(path, MAX_CSV_BYTES, "timeline CSV"), path, "timeline CSV")
            cols = pl.read_csv(io.BytesIO(data), n_rows=0).columns
            want = {"name": pl.String, "duration_ms": pl.Float64, "run_index": pl.Int64}
            use = [c for c in want if c in cols]
            lf = pl.read_csv(io.BytesIO(data), columns=use, schema_overrides={c: want[c] for c in use}).lazy()
            per = _execute_per_run(pl, lf, cols, path).collect()
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as e:
        raise InputError(path, f"unreadable timeline table ({str(e).splitlines()[0]})") from None
    return per["duration_ms"].to_numpy()


def _execute_per_run(pl, lf, cols: list[str], path):
    if not {"name", "duration_ms"} <= set(cols):
        raise InputError(path, "not a timeline table: needs name and duration_ms columns")
    run = pl.col("run_index") if "run_index" in cols else pl.lit(0)
    return (lf.filter(pl.col("name") == METHOD_EXECUTE).group_by(run.alias("run")).agg(pl.col("duration_ms").sum())
            .filter(pl.col("duration_ms").is_finite() & (pl.col("duration_ms") > 0)).sort("run"))
