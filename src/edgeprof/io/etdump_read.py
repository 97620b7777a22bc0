"""Reading an ETDump file: whole (:func:`read_etdump`) or in blocks of whole runs, so a consumer can hold one
block of events at a time (:class:`ETDumpBlocks`; the whole file is one block).

The file is mapped, not copied; each block (consecutive RunData tables, at most ``max_events`` events unless one
RunData alone holds more) is decoded and normalized exactly as :func:`read_etdump` would
normalize the whole file: execute runs numbered across blocks, ``parent`` rows counted from the file's first
event, RunData indices the file's. The pages of the mapping a block touched are given back after it. The
warnings, the content digest and the file size are the whole file's once the blocks are exhausted.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager

import numpy as np

from .._memory import release_free_memory
from ..errors import CorruptETDumpError, NotAnETDumpError
from .etdump import add_counts, build_profile, read_warnings
from .etdump_decode import RunDataIndex, read_bytes

BLOCK_EVENTS = 1 << 18  # events per block by default: ~25 MB of decoded columns and table at a time
_HASH_STEP = 1 << 24


@contextmanager
def decoding(path, what: str):
    """Turns a numpy/struct failure on corrupt bytes into a one-line :class:`CorruptETDumpError` (``what``:
    undecodable / inconsistent), never a raw traceback."""
    try:
        yield
    except (CorruptETDumpError, NotAnETDumpError):
        raise
    except (ValueError, IndexError, OverflowError, MemoryError) as e:
        raise CorruptETDumpError(path, f"{what} ETDump ({type(e).__name__}: {e})") from None


def plan_blocks(counts: np.ndarray, max_events: int | None) -> list[tuple[int, int]]:
    """Consecutive RunData ranges ``[a, b)`` of at most ``max_events`` events each (one RunData at least); one
    range of every RunData when ``max_events`` is None, and one empty range for a file without RunData."""
    n = counts.size
    if max_events is None or n == 0:
        return [(0, n)]
    out, a = [], 0
    while a < n:
        b, total = a, 0
        while b < n and (b == a or total + int(counts[b]) <= max_events):
            total += int(counts[b])
            b += 1
        out.append((a, b))
        a = b
    return out


class ETDumpBlocks:
    """Iterate to get the blocks (:class:`~edgeprof.model.Profile` each; at least one, empty for a file without
    RunData); afterwards ``warnings``, ``sha256``, ``file_size``, ``n_runs`` and ``n_events`` describe the whole
    file. ``max_events=None``: the whole file as one block (:func:`read_etdump`)."""

    def __init__(self, path, max_events: int | None = BLOCK_EVENTS):
        self.path, self.max_events = path, None if max_events is None else max(1, int(max_events))
        self.warnings: list[str] = []
        self.block_warnings: list[str] = []  # the reader's warnings of the block last given
        self.sha256, self.file_size, self.n_runs, self.n_events, self.n_blocks = "", 0, 0, 0, 0

    def __iter__(self):
        path = self.path
        data = read_bytes(path, mapped=True)
        self.file_size = len(data)
        self.sha256 = _digest(data)
        with decoding(path, "undecodable"):
            index = RunDataIndex(data, path)
            index.give_back = lambda: _give_back(data)
            per_rundata = index.event_counts()
            ranges = plan_blocks(per_rundata, self.max_events)
            if len(ranges) > 1:  # each block's tables are checked as it is decoded; between blocks, here
                index.check_unshared(ranges)
            first_event = np.r_[0, np.cumsum(per_rundata)]
        total: dict | None = None
        utf8_before = 0
        for a, b in ranges:
            if _size(data) < self.file_size:
                raise CorruptETDumpError(path, "the file shrank while it was read")
            with decoding(path, "undecodable"):
                dec = index.decode(a, b)
            _give_back(data)  # the decoded columns are copies
            counts: dict = {}
            with decoding(path, "inconsistent"):
                block = build_profile(dec, path, file_size=self.file_size, counts_out=counts)
            del dec
            counts["invalid_utf8"] -= utf8_before  # the string tables are shared: their count is cumulative
            utf8_before += counts["invalid_utf8"]
            block.warnings = read_warnings(counts)
            self.block_warnings = list(block.warnings)
            total = counts if total is None else add_counts(total, counts)
            if a:
                block = _shifted(block, a, self.n_runs, self.n_events, int(first_event[a]))
            block.sha256 = self.sha256
            self.n_runs += block.n_runs
            self.n_events += block.n_events
            self.n_blocks += 1
            release_free_memory()
            yield block
        self.warnings = read_warnings(total) if total is not None else []


def _digest(data) -> str:
    """SHA-256 of the file's bytes, read in steps whose pages are given back as they go."""
    h = hashlib.sha256()
    view = memoryview(data)
    for i in range(0, len(view), _HASH_STEP):
        h.update(view[i: i + _HASH_STEP])
        _give_back(data)
    view.release()
    return h.hexdigest()


def _size(data) -> int:
    """The file's size now (a mapped file that shrinks under its mapping would fault on the pages it lost)."""
    import mmap

    return data.size() if isinstance(data, mmap.mmap) else len(data)


def _give_back(data) -> None:
    """Drop the resident pages of a mapped file (read again from the page cache when touched)."""
    import mmap

    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        data.madvise(mmap.MADV_DONTNEED)


def _shifted(block, rundata_base: int, run_base: int, row_base: int, seq_base: int):
    """A block's tables with the file's numbering: RunData indices, execute run indices, parent rows and the
    sequence numbers of allocation and debug events (their Event's index in the file)."""
    import dataclasses

    import polars as pl

    r = pl.col("run_index")
    run_expr = pl.when(r >= 0).then(r + run_base).otherwise(r).cast(pl.Int32).alias("run_index")
    events = block.events.with_columns(run_expr, (pl.col("parent") + row_base).alias("parent"))
    runs = block.runs.with_columns(run_expr, (pl.col("run_data_index") + rundata_base).cast(pl.Int32))
    return dataclasses.replace(
        block, events=events, runs=runs, allocations=block.allocations.with_columns(run_expr, pl.col("sequence") + seq_base),
        debug_events=block.debug_events.with_columns(run_expr, pl.col("sequence") + seq_base),
        allocators=[(r_ + rundata_base, nm) for r_, nm in block.allocators], warnings=list(block.warnings))


def read_etdump(path, *, allow_empty: bool = False):
    """Read and normalize one ETDump file (``.etdump``/``.etdp``). Raises typed :mod:`edgeprof.errors`."""
    (prof,) = ETDumpBlocks(path, max_events=None)  # the whole file as one block
    if not allow_empty:
        check_has_runs(prof, path)
    return prof


def check_has_runs(prof, path) -> None:
    """An input error saying precisely why, when a profile has no run to analyse or none with a valid time."""
    import polars as pl

    from ..errors import NoRunsError

    runs = prof.runs
    if prof.n_runs == 0:
        n = runs.height
        if n == 0:
            why = "holds no RunData block"
        elif runs["n_events"].sum() == 0 and not prof.allocations.height and not prof.debug_events.height:
            why = f"its {n} RunData block(s) hold no events"
        else:
            why = "holds only a load/init block (Default, no Method::execute) and no execute run"
        raise NoRunsError(path, f"{why}: nothing to analyse")
    ex = runs.filter(pl.col("run_index") >= 0)
    problems = ex["e2e_problem"].drop_nulls()
    if problems.len() == ex.height:
        counts = problems.value_counts(sort=True)
        detail = ", ".join(f"{c} {p}" for p, c in counts.iter_rows())
        raise NoRunsError(path, f"none of its {ex.height} execute run(s) has a valid end-to-end time ({detail}): "
                                "nothing to measure")
