"""A profile as a Chrome trace-event JSON file, which Perfetto UI, ``trace_processor`` and chrome://tracing load.

One process (the ETDump), one thread track per run (and one for load/init), ``X`` (complete) slices that
nest strictly: kernels inside their OPERATOR_CALL, XNNPACK per-op events inside their DELEGATE_CALL, all
inside Method::execute. Times are µs with three decimals (the ETDump's nanoseconds, exactly), relative to
the first exported event. Where a recorded or synthesized time would break nesting (XNNPACK op starts are
laid end to end from the delegate call's start and their whole-µs durations can overrun it), the slice is
clamped into its parent and after its previous sibling, and its args say so (``adjusted`` with the
original times). Every slice's args carry kind, category, instruction id, op types and backend.

Written without a Python object per event: the nesting repair runs level by level on numpy arrays, the JSON of
everything that depends on an event's identity is built once per distinct identity, and the compiled core (or,
where it is not built, Polars) formats the numbers and writes the lines a batch at a time.
``tests/helpers/trace_reference.py`` keeps the per-event implementation this replaced; the tests require the same
document from both.
"""

from __future__ import annotations

from ..conventions import OP_TYPES_ID, OP_TYPES_INLINE, RUNTIME_ARGS
from ..model import Profile, ReadWhole
from ..taxonomy import DEFAULT, Taxonomy

PID = 1
INIT_TID = 0


def _tid(run_index: int) -> int:
    return INIT_TID if run_index < 0 else run_index + 1


def select_runs(profile: Profile, spec: str | None) -> list[int]:
    """Execute runs named by ``spec``: ``None`` (all), ``N``, ``A:B`` (B exclusive, either may be empty), or a
    comma list of those. Raises ValueError for a malformed spec."""
    n = profile.n_runs
    if spec is None or spec.strip() in ("", ":", "all"):
        return list(range(n))
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if ":" in part:
            a, _, b = part.partition(":")
            lo = int(a) if a.strip() else 0
            hi = int(b) if b.strip() else n
            if lo < 0:
                lo += n
            if hi < 0:
                hi += n
            out += range(max(lo, 0), min(hi, n))
        else:
            i = int(part)
            i = i + n if i < 0 else i
            if not 0 <= i < n:
                raise ValueError(f"run {part} is not in 0..{n - 1}")
            out.append(i)
    return sorted(set(out))


def adjust(start, end, parent, depth, run_idx, rows):
    """Adjusted [start, end) of the exported ``rows`` so slices nest strictly: each clamped into its parent, then
    after its previous sibling (siblings in start order). Vectorized level by level (parents first): within a
    (run, parent) group of siblings the adjusted end is the running maximum of max(start, end), and a start is
    pushed to the previous sibling's adjusted end."""
    import numpy as np

    n = start.size
    adj_s = start.astype(np.int64)
    adj_e = end.astype(np.int64)
    exported = np.zeros(n, dtype=bool)
    exported[rows] = True
    for d in np.unique(depth[rows]).tolist():
        lv = rows[depth[rows] == d]
        p = parent[lv]
        has_p = (p >= 0) & exported[np.maximum(p, 0)]
        s, e = adj_s[lv].copy(), adj_e[lv].copy()
        ps, pe = adj_s[np.maximum(p, 0)], adj_e[np.maximum(p, 0)]
        s = np.where(has_p, np.minimum(np.maximum(s, ps), pe), s)
        e = np.where(has_p, np.minimum(e, pe), e)
        group = np.where(has_p, p, -1 - run_idx[lv].astype(np.int64))  # siblings: same parent (or same run, top level)
        order = np.lexsort((start[lv], group))
        s, e, g = s[order], e[order], group[order]
        first = np.ones(g.size, dtype=bool)
        first[1:] = g[1:] != g[:-1]
        hi = np.maximum(s, e)
        # running maximum within each group: values relative to their group's minimum, each group lifted above
        # the one before by the largest in-group range, so one global accumulate never crosses groups (the range
        # of a group is a parent's duration, so the offsets stay far from overflowing)
        seg = np.cumsum(first) - 1
        gmin = np.minimum.reduceat(hi, np.flatnonzero(first))[seg] if hi.size else hi
        rel = hi - gmin
        span = int(rel.max()) + 1 if rel.size else 1
        run_max = np.maximum.accumulate(rel + seg * span) - seg * span + gmin
        prev_end = np.empty_like(run_max)
        prev_end[1:] = run_max[:-1]
        s2 = np.where(first, s, np.maximum(s, prev_end))
        s2 = np.where(has_p[order], np.minimum(s2, pe[order]), s2)
        e2 = np.maximum(e, s2)
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        adj_s[lv], adj_e[lv] = s2[back], e2[back]
    return adj_s, adj_e


class TraceParts:
    """The pieces of a trace gathered one block of runs at a time (:meth:`slices` per block, in file order), each
    block numbered as the whole profile would number it: after the last block, :meth:`meta`, :meth:`header` and
    :meth:`stats` are the whole profile's. ``runs``: the execute runs to export (None: all of them)."""

    def __init__(self, *, runs: list[int] | None = None, include_init: bool = True, taxonomy: Taxonomy = DEFAULT,
                 op_types: str = OP_TYPES_INLINE):
        self.keep = None if runs is None else set(runs)
        self.include_init, self.taxonomy, self.op_types = include_init, taxonomy, op_types
        self.base: int | None = None
        self.last_run: int | None = None
        self.tids: set[int] = set()
        self.n_runs = 0
        self.counts = {"slices": 0, "adjusted": 0, "skipped_no_duration": 0}
        self.op_ids: dict = {}  # ``ref``: each distinct non-empty op-type list's id, in order of first appearance
        self.source = ""

    def slices(self, profile: Profile, first_row: int = 0):
        """(frame, prefixes) of one block (rows ``first_row``… of the file; ``parent`` counts from the file's first
        row): one row per slice in track and time order — a few integer columns and ``combo``, a code into the
        per-event-identity JSON prefixes — which :func:`lines` turns into JSON text a batch at a time."""
        import json

        import numpy as np
        import polars as pl

        from .._ids import dense_rows, first_index

        self.source = profile.source
        self.n_runs += profile.n_runs
        ev = profile.events
        run_idx = ev["run_index"].to_numpy().astype(np.int64)
        keep = (run_idx >= 0) if self.keep is None else np.isin(run_idx, list(self.keep))
        mask = keep | ((run_idx < 0) & self.include_init)
        start = ev["start_ns"].to_numpy().astype(np.int64)
        end = ev["end_ns"].to_numpy().astype(np.int64)
        rows = np.flatnonzero(mask & ev["duration_ns"].is_not_null().to_numpy())
        if rows.size:
            lo = int(start[rows].min())
            if (self.base is not None and lo < self.base) or (
                    self.last_run is not None and int(run_idx[rows].min()) <= self.last_run):
                raise ReadWhole  # its slices would sort before those written, or start before the time origin
            self.base = lo if self.base is None else self.base
            self.last_run = int(run_idx[rows].max())
        base = self.base or 0
        parent = ev["parent"].fill_null(first_row - 1).to_numpy().astype(np.int64) - first_row
        depth = ev["depth"].to_numpy()
        adj_s, adj_e = adjust(start, end, parent, depth, run_idx, rows)
        adjusted = (adj_s[rows] != start[rows]) | (adj_e[rows] != end[rows])
        self.tids.update(_tid(int(x)) for x in np.unique(run_idx[rows]).tolist())
        c = self.counts
        c["slices"] += int(rows.size)
        c["adjusted"] += int(adjusted.sum())
        c["skipped_no_duration"] += int(mask.sum() - rows.size)

        # everything that depends only on (name, kind, timing, backend, op types, instruction) is one JSON prefix per
        # distinct combination, built once; per row only the numbers are formatted
        name_ids, _, names = profile.name_groups()
        kind_c, kinds = _codes(ev["kind"])
        time_c, timings = _codes(ev["timing_source"])
        back_c, backs = _codes(ev["delegate_backend"], lambda v: "" if v == "None" else v)
        ops_c, ops_v, _ = codes_ops(profile, self.op_types, self.op_ids)
        instr = ev["instruction_id"].fill_null(-1).to_numpy().astype(np.int64)
        # every field the runtime recorded for an event (ONNX Runtime's shapes, sizes, memory, thread statistics)
        raw_c, raws = _codes(ev[RUNTIME_ARGS]) if RUNTIME_ARGS in ev.columns else (
            np.zeros(ev.height, np.int64), [""])
        combo = (dense_rows(name_ids, kind_c, time_c, back_c, ops_c, instr, raw_c) if ev.height
                 else np.zeros(0, np.int32))
        prefix = []
        from ..runtimes import event_name, host_name

        rt = profile.runtime
        for f in first_index(combo).tolist():
            t, b, k = timings[time_c[f]], host_name(backs[back_c[f]], rt), json.dumps(kinds[kind_c[f]])
            shown = event_name(names[name_ids[f]], rt)  # in the runtime's own words
            prefix.append(f'{{"name":{json.dumps(shown, ensure_ascii=False)},"cat":{k},"ph":"X",'
                          f'"pid":{PID},"args":{{"kind":{k},'
                          f'"category":{json.dumps(self.taxonomy.classify(names[name_ids[f]]).category)},'
                          f'"timing_source":{json.dumps(t)}'
                          + (f',"instruction_id":{int(instr[f])}' if instr[f] >= 0 else "")
                          + (f',"delegate_backend":{json.dumps(b)}' if b else "") + ops_v[ops_c[f]]
                          + (',"synthesized_start":true' if t == "synthesized_start" else "")
                          + (f',"runtime_args":{raws[raw_c[f]]}' if raws[raw_c[f]] else ""))
        order = rows[np.lexsort((depth[rows], adj_s[rows], run_idx[rows]))]
        ev_index = ev["event_index"].to_numpy().astype(np.int64)
        exported = np.zeros(ev.height, dtype=bool)
        exported[rows] = True
        p = parent[order]
        has_p = (p >= 0) & exported[np.maximum(p, 0)]
        s, e = adj_s[order], adj_e[order]
        frame = pl.DataFrame({
            "combo": combo[order].astype(np.uint32),
            "tid": np.where(run_idx[order] < 0, INIT_TID, run_idx[order] + 1), "ts": s - base, "dur": e - s,
            "ev": ev_index[order], "run": run_idx[order], "parent": np.where(has_p, ev_index[np.maximum(p, 0)], -1),
            "adj": (s != start[order]) | (e != end[order]), "rts": start[order] - base, "rdur": end[order] - start[order],
        })
        return frame, pl.Series("prefix", prefix, dtype=pl.String)

    def meta(self, name: str | None = None) -> str:
        """The metadata events (process and track names) as JSON lines."""
        import json

        out = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
                "args": {"name": f"edgeprof: {name or self.source.rsplit('/', 1)[-1]}"}}]
        for t in sorted(self.tids):
            label = "load & init" if t == INIT_TID else f"run {t - 1}"
            out.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": t, "args": {"name": label}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": t, "args": {"sort_index": t}})
        return "\n".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in out)

    def header(self) -> dict:
        """The document's ``otherData``."""
        out = {"tool": "edgeprof", "source": self.source, "time_origin_ns": self.base or 0,
               "note": "ts/dur in µs (three decimals = ETDump nanoseconds), relative to time_origin_ns"}
        if self.op_ids:
            out["op_types"] = [list(v) for v in self.op_ids]
        return out

    def stats(self) -> dict:
        runs = range(self.n_runs) if self.keep is None else self.keep
        return {**self.counts, "runs": sorted(runs), "tracks": len(self.tids)}


def trace_events(profile: Profile, *, runs: list[int] | None = None, include_init: bool = True,
                 taxonomy: Taxonomy = DEFAULT, name: str | None = None, op_types: str = OP_TYPES_INLINE):
    """(meta, slices, header, stats) of a whole profile (:class:`TraceParts` with one block): ``meta`` is the
    metadata events as JSON lines, ``slices`` the (frame, prefixes) :func:`lines` formats, ``header`` the
    document's other data. ``op_types``: a slice's op-type list in its args (``inline``), or an ``op_types_id``
    there and the lists once, as ``otherData.op_types`` (``ref``)."""
    parts = TraceParts(runs=list(range(profile.n_runs)) if runs is None else runs, include_init=include_init,
                       taxonomy=taxonomy, op_types=op_types)
    slices = parts.slices(profile)
    return parts.meta(name), slices, parts.header(), parts.stats()


def codes_ops(profile: Profile, op_types: str = OP_TYPES_INLINE, numbering: dict | None = None):
    """Per event: a code into the JSON fragments of the distinct op-type lists (``""`` when empty or unknown) —
    the list itself (``inline``) or its ``op_types_id`` (``ref``) — and, for ``ref``, the lists by id. Ids are
    given in order of first appearance among the events, continuing ``numbering`` (list → id) when given."""
    import json

    import numpy as np

    ids, first, lists = profile.op_type_groups()
    if op_types == OP_TYPES_INLINE:
        return ids, [f',"op_types":{json.dumps(list(v), ensure_ascii=False)}' if v else "" for v in lists], None
    numbering = {} if numbering is None else numbering
    frags = [""] * len(lists)
    for g in np.argsort(np.where(first >= 0, first, np.iinfo(np.int64).max), kind="stable").tolist():
        v = lists[g]
        if v and first[g] >= 0:
            frags[g] = f',"{OP_TYPES_ID}":{numbering.setdefault(tuple(v), len(numbering))}'
    return ids, frags, [list(v) for v in numbering]


def _codes(s, fix=lambda v: v):
    """(dense code per row, the distinct values in code order) of a text Series (a categorical one by its codes, no
    column of strings made); each distinct value as text, "" for a null, then through ``fix``."""
    import polars as pl

    from .._ids import distinct_ids

    ids, first = distinct_ids(s)
    return ids, [fix(v) for v in s.gather(first).cast(pl.String).fill_null("").to_list()]


def _micros(col: str):
    """An integer ns column as a JSON number of µs with three decimals (exact)."""
    import polars as pl

    x = pl.col(col)
    sign = pl.when(x < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    a = x.abs()
    return pl.concat_str([sign, (a // 1000).cast(pl.String), pl.lit("."),
                          (a % 1000).cast(pl.String).str.pad_start(3, "0")])


def _line(lead: str = ""):
    """One X slice as JSON text after ``lead``: its prefix (name, category, args that depend on the event's
    identity) and the numbers of this occurrence."""
    import polars as pl

    opt = pl.when
    return pl.concat_str([
        pl.lit(lead), pl.col("prefix"), pl.lit(',"event_index":'), pl.col("ev").cast(pl.String), pl.lit(',"run_index":'),
        pl.col("run").cast(pl.String),
        opt(pl.col("parent") >= 0).then(pl.concat_str([pl.lit(',"parent_event_index":'), pl.col("parent").cast(pl.String)]))
        .otherwise(pl.lit("")),
        opt(pl.col("adj")).then(pl.concat_str([pl.lit(',"adjusted":{"recorded_ts_us":'), _micros("rts"),
                                               pl.lit(',"recorded_dur_us":'), _micros("rdur"), pl.lit("}")]))
        .otherwise(pl.lit("")),
        pl.lit('},"tid":'), pl.col("tid").cast(pl.String), pl.lit(',"ts":'), _micros("ts"), pl.lit(',"dur":'),
        _micros("dur"), pl.lit("}"),
    ])


def lines(slices, batch: int = 100_000, lead: str = ""):
    """The slices' JSON texts, each after ``lead``, ``batch`` rows at a time (frames with one column ``line``)."""
    frame, prefix = slices
    for a in range(0, frame.height, batch):
        b = frame.slice(a, batch)
        yield b.with_columns(prefix.gather(b["combo"])).select(_line(lead).alias("line"))


def line_bytes(slices, batch: int = 16384, lead: str = ","):
    """The slices' JSON lines as UTF-8 text, ``batch`` at a time: formatted by the compiled core where it is built
    (``edgeprof._core.trace_lines``, straight from the columns), else through Polars (:func:`lines`) — the same
    bytes (tests/render/test_csv_text.py compares both). Batches of a few MB: the C library reuses their memory, where
    larger ones would be mapped afresh (and every page faulted in) each time."""
    import io

    import numpy as np

    from ..compiled import module

    core = module()
    frame, prefix = slices
    if core is None:
        for b in lines(slices, batch, lead):
            out = io.BytesIO()
            b.write_csv(out, include_header=False, quote_style="never", line_terminator="\n")
            yield out.getvalue()
        return
    cells = [p.encode("utf-8") for p in prefix.to_list()]
    cols = [np.ascontiguousarray(frame[c].to_numpy(), dtype=t) for c, t in (
        ("combo", np.uint32), ("tid", np.int64), ("ts", np.int64), ("dur", np.int64), ("ev", np.int64),
        ("run", np.int64), ("parent", np.int64), ("adj", np.uint8), ("rts", np.int64), ("rdur", np.int64))]
    for a in range(0, frame.height, batch):
        yield core.trace_lines(lead.encode("utf-8"), cells, *(c[a:a + batch] for c in cols))


def build_trace(profile: Profile, **kw) -> dict:
    """The whole trace document in memory (``trace``) and what was exported (``stats``)."""
    import json

    meta, slices, header, stats = trace_events(profile, **kw)
    events = [json.loads(line) for line in meta.split("\n")]
    events += [json.loads(line) for b in lines(slices) for line in b["line"].to_list()]
    return {"trace": {"traceEvents": events, "otherData": header}, "stats": stats}


def write_trace(path, profile: Profile, *, runs: list[int] | None = None, name: str | None = None, **kw) -> dict:
    """Stream the trace of a whole profile to ``path`` (atomically), a batch of slices at a time; returns the stats.
    ``kw``: as :class:`TraceParts`."""
    parts = TraceParts(runs=list(range(profile.n_runs)) if runs is None else runs, **kw)
    return write_trace_blocks(path, [(profile, 0)], parts, name=name)


def write_trace_blocks(path, blocks, parts: TraceParts, *, name: str | None = None) -> dict:
    """Write the trace of ``blocks`` ((profile, its first row in the file) in file order) to ``path`` atomically;
    returns the stats. Each batch of slices is written as lines of text (:func:`line_bytes`; every slice line
    starting with the comma that separates it from the one before). The metadata events come first in
    the document but are known only once every block is seen: with several blocks the slices go to a scratch file
    beside the target first (an anonymous file, gone when closed: :func:`~edgeprof.writer.scratch_beside`),
    copied after the metadata at the end. Raises :class:`~edgeprof.model.ReadWhole` (nothing written)
    for a block that cannot follow the ones before."""
    from ..writer import atomic_path, scratch_beside

    def write_lines(f, slices) -> None:
        for text in line_bytes(slices):
            f.write(text)

    def head() -> bytes:
        return ('{"traceEvents":[\n' + parts.meta(name).replace("\n", ",\n") + "\n").encode("utf-8", "replace")

    one = list(blocks) if isinstance(blocks, list) and len(blocks) == 1 else None
    with atomic_path(path) as tmp:
        if one is not None:  # one block: its slices first, so the metadata is known before any line is written
            slices = parts.slices(*one[0])
            with open(tmp, "wb") as f:
                f.write(head())
                write_lines(f, slices)
                f.write(_tail(parts))
        else:
            with scratch_beside(path) as body:
                for block, first_row in blocks:
                    write_lines(body, parts.slices(block, first_row))
                with open(tmp, "wb") as f:
                    f.write(head())
                    _append(body, f)
                    f.write(_tail(parts))
    return parts.stats()


def _tail(parts: TraceParts) -> bytes:
    import json

    return ('],"otherData":' + json.dumps(parts.header(), ensure_ascii=False) + "}\n").encode("utf-8", "replace")


def _append(src, dst) -> None:
    """Append the whole of file ``src`` to ``dst`` (in the kernel where it can, else through a buffer)."""
    import os
    import shutil

    src.flush()
    dst.flush()
    n, done = os.fstat(src.fileno()).st_size, 0
    try:
        while done < n:
            k = os.copy_file_range(src.fileno(), dst.fileno(), n - done, done)
            if k <= 0:
                break
            done += k
    except (OSError, AttributeError):  # another file system, an old kernel, a pipe
        pass
    if dst.seekable():  # the buffered writer's position after the kernel's copy
        dst.seek(0, os.SEEK_END)
    if done < n:
        src.seek(done)
        shutil.copyfileobj(src, dst, 1 << 20)
