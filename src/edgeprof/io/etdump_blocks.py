"""An ETDump read in blocks of whole runs, so a consumer can hold one block of events at a time.

The file is mapped, not copied; each block (consecutive RunData tables, at most ``max_events`` events unless one
RunData alone holds more) is decoded and normalized exactly as :func:`~edgeprof.io.etdump.read_etdump` would
normalize the whole file: execute runs numbered across blocks, ``parent`` rows counted from the file's first
event, RunData indices the file's. The pages of the mapping a block touched are given back after it. The
warnings, the content digest and the file size are the whole file's once the blocks are exhausted.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .._memory import release_free_memory
from .etdump import add_counts, build_profile, decoding, read_warnings
from .etdump_decode import RunDataIndex, read_bytes

BLOCK_EVENTS = 1 << 18  # events per block by default: ~25 MB of decoded columns and table at a time
_HASH_STEP = 1 << 24


def plan_blocks(counts: np.ndarray, max_events: int) -> list[tuple[int, int]]:
    """Consecutive RunData ranges ``[a, b)`` of at most ``max_events`` events each (one RunData at least)."""
    out, a, n = [], 0, counts.size
    while a < n:
        b, total = a, 0
        while b < n and (b == a or total + int(counts[b]) <= max_events):
            total += int(counts[b])
            b += 1
        out.append((a, b))
        a = b
    return out


class ETDumpBlocks:
    """Iterate to get the blocks (:class:`~edgeprof.model.Profile` each); afterwards ``warnings``, ``sha256``,
    ``file_size``, ``n_runs`` and ``n_events`` describe the whole file."""

    def __init__(self, path, max_events: int = BLOCK_EVENTS):
        self.path, self.max_events = path, max(1, int(max_events))
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
            per_rundata = index.event_counts()
            ranges = plan_blocks(per_rundata, self.max_events)
            first_event = np.r_[0, np.cumsum(per_rundata)]
        total: dict | None = None
        utf8_before = 0
        for a, b in ranges:
            with decoding(path, "undecodable"):
                dec = index.decode(a, b)
            counts: dict = {}
            with decoding(path, "inconsistent"):
                block = build_profile(dec, path, file_size=self.file_size, counts_out=counts)
            del dec
            counts["invalid_utf8"] -= utf8_before  # the string tables are shared: their count is cumulative
            utf8_before += counts["invalid_utf8"]
            block.warnings = read_warnings(counts)
            self.block_warnings = list(block.warnings)
            total = counts if total is None else add_counts(total, counts)
            block = _shifted(block, a, self.n_runs, self.n_events, int(first_event[a]))
            block.sha256 = self.sha256
            self.n_runs += block.n_runs
            self.n_events += block.n_events
            self.n_blocks += 1
            _give_back(data)
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
