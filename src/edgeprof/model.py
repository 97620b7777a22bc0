"""The normalized profile: one row per profiled event occurrence, plus per-run and side tables.

Readers build a :class:`Profile`; analyses read it; nothing here knows a file format.

``Profile.events`` columns (Polars; ``Cat`` = Categorical, compare with plain strings as usual):

======================  =========  ==========================================================================
column                  type       meaning
======================  =========  ==========================================================================
run_index               Int32      0-based over execute runs in file order; −1 for the load/init block
block                   Cat        the RunData name (``Execute``, ``Default``)
event_index             Int32      position of the event within its run (profile events, file order)
name                    Cat        ProfileEvent name, or the delegate debug id when the event has one
kind                    Enum       framework · operator_call · kernel · delegate_call · delegate_op · other
instruction_id          Int32      runtime instruction id (−1 when none)
chain_index             Int32      execution chain
delegate_debug_id_int   Int32      integer delegate debug id (null when absent)
delegate_debug_id_str   Cat        string delegate debug id (null when absent)
start_ns, end_ns        Int64      timestamps as recorded (ns on the ExecuTorch default clock)
duration_ns             Int64      end − start (32-bit wrap-around handled; null when impossible)
self_ns                 Int64      duration minus the durations of the events nested directly in it
parent                  Int64      row index of the enclosing event (null at top level)
depth                   Int8       nesting depth (0 = top level)
delegate_backend        Cat        backend of a delegate call or delegate op; ``portable`` for portable
                                   kernels and OPERATOR_CALL; ``framework`` for Method/Program events
backend_source          Cat        ``etrecord`` (named by the ETRecord), ``inferred`` (from op names), ``profile``
                                   (named by the profile itself: ONNX Runtime's provider), or ""
timing_source           Cat        ``measured``, or ``synthesized_start`` for delegate ops whose start
                                   times the backend laid end to end (XNNPACK): only durations are measured
op_types                List[Cat]  ATen/edge op types from the ETRecord (null without one)
module_path             Cat        innermost ``nn.Module`` path of those ops (null without ETRecord)
======================  =========  ==========================================================================

The operations that select runs (leading runs dropped, valid runs, launches put together) remap the
``parent`` row links, so they live beside the table they keep consistent. The Apple Neural Engine reports'
model is :mod:`edgeprof.ane_model`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .conventions import FORMAT_ETDUMP, OP_TYPES_ID, ms

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import polars as pl

KINDS = ("framework", "operator_call", "kernel", "delegate_call", "delegate_op", "other")
TIMING_SOURCES = ("measured", "synthesized_start")


@dataclass
class ETRecordInfo:
    """What an ETRecord contributed (or why it did not)."""

    path: str | None
    status: str  # "attached", "mismatch", "unreadable", "absent"
    message: str = ""
    method: str = "forward"
    backends: dict[int, str] = field(default_factory=dict)  # DELEGATE_CALL instruction → backend name


@dataclass
class Profile:
    """A decoded, normalized ETDump (see module docstring for the ``events`` columns)."""
    source: str
    events: pl.DataFrame
    runs: pl.DataFrame
    allocations: pl.DataFrame
    debug_events: pl.DataFrame
    allocators: list[tuple[int, str]] = field(default_factory=list)  # (run_data_index, allocator name)
    version: int = 0
    file_size: int = 0
    sha256: str = ""  # of the file's bytes as read (the content identity the history store keys launches by)
    etrecord: ETRecordInfo | None = None
    warnings: list[str] = field(default_factory=list)
    format: str = FORMAT_ETDUMP  # which format it was read from (edgeprof.io.formats)
    runtime: str | None = None  # the runtime that recorded it (edgeprof.runtimes; the format's, unless it says)
    op_type_lists: list | None = None  # set: the events hold an id into these lists (op_types_id), not the lists
    aggregate_runs: int | None = None  # set: one average run over this many (LiteRT op profiles; 0 = not said)
    reported_memory: dict | None = None  # what the runtime's own tool reported of its process's memory (bytes)
    debug_data: list | None = None  # read with a debug buffer: each debug_events row's numpy tensors (.path: the buffer)

    # -- sizes ---------------------------------------------------------------------------------------
    @property
    def n_events(self) -> int:
        return self.events.height

    @property
    def n_runs(self) -> int:
        import polars as pl

        return self.runs.filter(pl.col("run_index") >= 0).height

    # -- convenient access ----------------------------------------------------------------------------
    def execute_events(self) -> pl.DataFrame:
        """Events of execute runs only (load/init block excluded); a zero-copy slice when they are contiguous."""
        import numpy as np
        import polars as pl

        rows = np.flatnonzero(self.events["run_index"].to_numpy() >= 0)
        if rows.size and rows[-1] - rows[0] + 1 == rows.size:
            return self.events.slice(int(rows[0]), int(rows.size))
        return self.events.filter(pl.col("run_index") >= 0)

    def run(self, run_index: int) -> pl.DataFrame:
        import polars as pl

        return self.events.filter(pl.col("run_index") == run_index)

    def latency_ns(self) -> np.ndarray:
        """End-to-end latency per execute run: the sum of that run's ``Method::execute`` durations.

        Runs without ``Method::execute`` use the sum of their top-level events instead;
        ``runs["e2e_source"]`` says which runs those are.
        """
        import numpy as np
        import polars as pl

        r = self.runs.filter(pl.col("run_index") >= 0).sort("run_index")
        return r["e2e_ns"].cast(pl.Float64).fill_null(np.nan).to_numpy()

    def latency_ms(self) -> np.ndarray:
        return ms(self.latency_ns())

    @property
    def latency_source(self) -> str:
        """``method_execute``, or ``top_level_events`` when some run has no ``Method::execute``."""
        import polars as pl

        sources = set(self.runs.filter(pl.col("run_index") >= 0)["e2e_source"].drop_nulls().to_list())
        return "method_execute" if sources <= {"method_execute"} else "top_level_events"

    def select_runs(self, keep) -> Profile:
        """The same profile with only the execute runs where ``keep`` (a bool per run, in run order) is true,
        renumbered from 0. The load/init block stays; ``parent`` links are remapped to the kept rows."""
        import dataclasses

        import numpy as np
        import polars as pl

        keep = np.asarray(keep, dtype=bool)
        if keep.all():  # also when there is no execute run
            return self
        new_index = np.cumsum(keep) - 1  # run → its index among the kept runs (read for kept runs only)

        def kept(r: np.ndarray) -> np.ndarray:  # rows of the load/init block (−1) and of kept runs
            return (r < 0) | keep[np.clip(r, 0, keep.size - 1)]

        ev = self.events
        ev_kept = kept(ev["run_index"].to_numpy().astype(np.int64))
        removed_before = np.cumsum(~ev_kept)
        parent = ev["parent"]
        pv = parent.fill_null(0).to_numpy()
        new_parent = pl.Series("parent", pv - removed_before[pv] if pv.size else pv, dtype=pl.Int64).set(
            parent.is_null(), None)

        def renumber(df: pl.DataFrame, mask: np.ndarray | None = None) -> pl.DataFrame:
            """The rows of the kept runs, execute runs renumbered. They are a few contiguous ranges (the load block,
            the runs after a warm-up): slices of the table then, not a filtered copy of every column."""
            if mask is None:
                mask = kept(df["run_index"].to_numpy().astype(np.int64))
            edges = np.flatnonzero(np.diff(np.r_[0, mask.view(np.int8), 0]))
            if edges.size // 2 <= 32:
                df = pl.concat([df.slice(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2])] or [df.clear()],
                               rechunk=False)
            else:
                df = df.filter(pl.Series(mask))
            r = df["run_index"].to_numpy().astype(np.int64)
            return df.with_columns(pl.Series("run_index", np.where(r >= 0, new_index[np.maximum(r, 0)], r),
                                             dtype=pl.Int32))

        events = renumber(ev.with_columns(new_parent), ev_kept) if ev.height else ev
        out = dataclasses.replace(self, events=events, runs=renumber(self.runs),
                                  allocations=renumber(self.allocations), debug_events=renumber(self.debug_events))
        out.runs_dropped, out.runs_invalid = self.runs_dropped, self.runs_invalid
        groups = self.__dict__.get("_op_type_groups")
        if groups is not None and groups[3] is ev and ev.height:  # the kept rows keep their op-type groups
            from ._ids import first_rows

            ids = groups[0][ev_kept]
            out.__dict__["_op_type_groups"] = (ids, first_rows(ids, len(groups[2])), groups[2], out.events)
        return out

    def without_leading_runs(self, k: int) -> Profile:
        """The same profile without its first ``k`` execute runs (warm-up), execute runs renumbered from 0;
        :attr:`runs_dropped` counts them so reports can name runs as recorded."""
        import numpy as np

        k = max(0, min(int(k), self.n_runs))
        if k == 0:
            return self
        out = self.select_runs(np.arange(self.n_runs) >= k)
        out.runs_dropped = self.runs_dropped + k
        return out

    def valid_runs(self) -> Profile:
        """Only the runs with a valid end-to-end time (``runs.e2e_problem`` empty); :attr:`runs_invalid` counts
        the others. Statistics use this; event dumps (timelines, traces) keep every run."""
        import numpy as np

        lat = self.latency_ns()
        keep = np.isfinite(lat) & (lat > 0)
        if keep.all():
            return self
        out = self.select_runs(keep)
        out.runs_invalid = self.runs_invalid + int((~keep).sum())
        return out

    @property
    def runs_dropped(self) -> int:
        """Leading execute runs left out of this profile (see :meth:`without_leading_runs`)."""
        return self.__dict__.get("_runs_dropped", 0)

    @runs_dropped.setter
    def runs_dropped(self, value: int) -> None:
        self.__dict__["_runs_dropped"] = value

    @property
    def runs_invalid(self) -> int:
        """Execute runs left out of this profile because they have no valid end-to-end time."""
        return self.__dict__.get("_runs_invalid", 0)

    @runs_invalid.setter
    def runs_invalid(self, value: int) -> None:
        self.__dict__["_runs_invalid"] = value

    def name_groups(self):
        """(id per event, first row of each id, distinct names): the event names as codes, computed once."""
        import polars as pl

        from ._ids import distinct_ids

        cached = self.__dict__.get("_name_groups")
        if cached is None or cached[3] is not self.events:  # recomputed when the event table is replaced
            ids, first = distinct_ids(self.events["name"])
            cached = (ids, first, self.events["name"].gather(first).cast(pl.String).to_list(), self.events)
            self.__dict__["_name_groups"] = cached
        return cached[:3]

    def op_type_groups(self):
        """(id per event, first row of each id, distinct op-type lists): computed once per event table.

        The ETRecord reader already knows which events share a list and hands the ids over
        (:meth:`remember_op_type_groups`), so a large profile's list column is never hashed.
        """
        from ._ids import distinct_ids, first_rows

        cached = self.__dict__.get("_op_type_groups")
        if self.op_type_lists is not None:  # by reference: the ids are the groups (first row −1: none left)
            import numpy as np

            ids = self.events[OP_TYPES_ID].to_numpy().astype(np.int64)
            return ids, first_rows(ids, len(self.op_type_lists)), self.op_type_lists
        if cached is None or cached[3] is not self.events:
            ids, first = distinct_ids(self.events["op_types"])
            self.remember_op_type_groups(ids, first)
            cached = self.__dict__["_op_type_groups"]
        return cached[:3]

    def remember_op_type_groups(self, ids: np.ndarray, first: np.ndarray) -> None:
        """Record exact op-type group ids (dense, 0..k-1) of the current event table, with each id's first row."""
        s = self.events["op_types"].gather(first)
        self.__dict__["_op_type_groups"] = (ids, first, s.to_list(), self.events)

    def to_pandas(self):
        """The event table as a pandas DataFrame (needs pandas; pyarrow is not required)."""
        return to_pandas(self.events)

    def __repr__(self) -> str:  # short, for interactive use
        return f"Profile({self.source!r}, runs={self.n_runs}, events={self.n_events})"


def concat_runs(profiles: list[Profile]) -> Profile:
    """Several launches of one program as one profile: their execute runs one after the other (renumbered from 0,
    ``parent`` links moved with their rows); the load/init block of the first launch only. The runs each launch
    dropped (warm-up) and lost (invalid) add up."""
    import dataclasses

    import numpy as np
    import polars as pl

    if len(profiles) == 1:
        return profiles[0]

    cat, cat_list = pl.Categorical, pl.List(pl.Categorical)

    def strings(df: pl.DataFrame) -> pl.DataFrame:  # categoricals of different files cannot be stacked as such
        return df.with_columns([pl.col(c).cast(pl.String if t == cat else pl.List(pl.String))
                                for c, t in df.schema.items() if t in (cat, cat_list)])

    parts: dict[str, list] = {"events": [], "runs": [], "allocations": [], "debug_events": []}
    run_offset = row_offset = 0
    for k, p in enumerate(profiles):
        ev = p.events
        keep = (ev["run_index"].to_numpy() >= 0) if k else np.ones(ev.height, dtype=bool)
        removed_before = np.cumsum(~keep)
        pv = ev["parent"].fill_null(0).to_numpy()
        parent = pl.Series("parent", pv - removed_before[pv] + row_offset if pv.size else pv, dtype=pl.Int64).set(
            ev["parent"].is_null(), None)
        ev = ev.with_columns(parent).filter(pl.Series(keep))
        for name, df in (("events", ev), ("runs", p.runs), ("allocations", p.allocations),
                         ("debug_events", p.debug_events)):
            if k and name != "events":
                df = df.filter(pl.col("run_index") >= 0)
            r = pl.col("run_index")
            parts[name].append(strings(df.with_columns(pl.when(r >= 0).then(r + run_offset).otherwise(r)
                                                       .cast(pl.Int32).alias("run_index"))))
        run_offset += p.n_runs
        row_offset += ev.height
    first = profiles[0]
    out = dataclasses.replace(
        first, source=", ".join(p.source for p in profiles),
        **{name: pl.concat(dfs, how="vertical_relaxed").with_columns(
            [pl.col(c).cast(t) for c, t in getattr(first, name).schema.items() if t in (cat, cat_list)])
           for name, dfs in parts.items()},
        warnings=[w for p in profiles for w in p.warnings])
    out.runs_dropped = sum(p.runs_dropped for p in profiles)
    out.runs_invalid = sum(p.runs_invalid for p in profiles)
    return out


class ReadWhole(Exception):
    """A file whose blocks of runs cannot give the whole file's answer (its numbering or order depends on blocks not
    seen yet, or its ETRecord attaches to blocks differently): the caller reads it whole instead."""


class BlockStack:
    """The profile of one file gathered from its blocks of runs (:class:`~edgeprof.io.etdump_read.ETDumpBlocks`,
    already numbered as the file: nothing is renumbered), keeping only the event ``columns`` asked for. The op-type
    lists are kept by reference (:attr:`Profile.op_type_lists`, events column ``op_types_id``): each distinct
    list once, however many events share it."""

    def __init__(self, columns):
        self.columns = list(columns)
        self._group_of: dict = {}
        self._lists: list = []
        self._blocks: list[Profile] = []

    def add(self, block: Profile) -> None:
        import dataclasses

        import numpy as np
        import polars as pl

        local, _, block_lists = block.op_type_groups()
        lut = np.empty(len(block_lists), dtype=np.int32)
        for g, v in enumerate(block_lists):
            key = None if v is None else tuple(v)
            if key not in self._group_of:
                self._group_of[key] = len(self._lists)
                self._lists.append(v)
            lut[g] = self._group_of[key]
        events = block.events.select([c for c in self.columns if c != "op_types"])
        self._blocks.append(dataclasses.replace(block, events=events.with_columns(pl.Series(OP_TYPES_ID, lut[local]))))

    def profile(self, warnings: list[str]) -> Profile:
        """The file's profile (the first block's ETRecord and metadata) with the file's ``warnings``; once (the
        blocks give up their columns to it)."""
        import dataclasses

        import polars as pl

        blocks = self._blocks
        # the event columns one at a time, each block's copy let go once joined: the peak is the kept columns plus
        # one column, not twice the kept columns (the stack is spent afterwards)
        columns = {}
        for name in blocks[0].events.columns:
            columns[name] = pl.concat([b.events[name] for b in blocks], rechunk=True)
            for b in blocks:
                b.events = b.events.drop(name)
        events = pl.DataFrame(columns) if columns else pl.concat([b.events for b in blocks])
        return dataclasses.replace(blocks[0], events=events, **{
            name: pl.concat([getattr(b, name) for b in blocks], rechunk=True)
            for name in ("runs", "allocations", "debug_events")},
            allocators=[a for b in blocks for a in b.allocators], warnings=list(warnings),
            op_type_lists=list(self._lists))


def to_pandas(df: pl.DataFrame):
    """Polars → pandas without requiring pyarrow: list columns become Python lists."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    import polars as pl

    data = {}
    for name, s in zip(df.columns, df.get_columns()):
        if s.dtype == pl.List(pl.String) or isinstance(s.dtype, pl.List):
            data[name] = pd.Series(s.to_list(), dtype=object)
        elif s.dtype in (pl.String, pl.Categorical) or isinstance(s.dtype, pl.Enum):
            data[name] = pd.Series(s.cast(pl.String).to_list(), dtype=object)
        elif s.null_count() and s.dtype.is_integer():
            data[name] = pd.array(s.to_list(), dtype=str(s.dtype))  # pandas' nullable Int64, UInt8… of the same name
        else:
            data[name] = s.to_numpy()
    return pd.DataFrame(data)


# --------------------------------------------------------------------------------------------------
# XNNPACK kernel-selection logs
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelRegistration:
    """One ``Using <kind> microkernel '<name>'`` line: XNNPACK set this kernel up (it may never run)."""

    kind: str            # as logged, lower case ("gemm", "dqigemm", "transposec", …)
    name: str            # the kernel identifier
    function: str        # config function that registered it ("init_pf32_gemm_config"), "" if cut off
    source: str          # "<file>:<line>" in XNNPACK, "" if cut off
    line: int            # 1-based line number in the log


@dataclass
class KernelLog:
    """What one XNNPACK log (stderr/stdout, or logcat) says: registered kernels, executed operators,
    packed-LHS decisions, GEMM tiles, hardware lines, and XNNPACK's warnings and errors.

    Evidence tiers: ``registrations`` are *registered* kernels (a config was initialised);
    ``operators_run`` come from ``running operator`` Debug lines and are *executed* operators.
    """

    source: str
    lines: int = 0                       # lines read
    xnnpack_lines: int = 0               # lines that are XNNPACK's (any level, any prefix)
    registrations: list[KernelRegistration] = field(default_factory=list)
    operators_run: dict[str, int] = field(default_factory=dict)        # operator string → times run
    operators_skipped: dict[str, int] = field(default_factory=dict)
    assumed_datatypes: list[dict] = field(default_factory=list)        # {node, datatype, op, line}
    tiles: list[dict] = field(default_factory=list)                    # {m, n, mr, nr, tile_m, tile_n, tiles, line}
    inlined_lhs_packing: list[str] = field(default_factory=list)       # operators whose LHS is packed inline
    hardware: dict = field(default_factory=dict)                       # cache sizes, uarch ids, threads
    messages: list[dict] = field(default_factory=list)                 # XNNPACK warnings/errors {level, text, line}
    truncated_last_line: bool = False
    formats: dict[str, int] = field(default_factory=dict)              # line style → count (stdio, logcat, bare)

    @property
    def kernel_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.registrations:
            seen.setdefault(r.name, None)
        return list(seen)

    def __repr__(self) -> str:
        return (f"KernelLog({self.source!r}, registrations={len(self.registrations)}, "
                f"kernels={len(self.kernel_names)}, operators_run={sum(self.operators_run.values())})")
