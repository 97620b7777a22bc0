"""ExecuTorch Inspector's view of a profile: event blocks, event order and run numbering.

Inspector groups a run's events by instruction (``instruction_id``, ``chain_index``, delegate ids) in
order of first appearance, names each (instruction, profile event) pair an *event*, and groups runs
whose ordered event signatures are identical into one *event block*; ``run_index`` then counts within
the block. The Arm kit's ``node_id`` is the row of an event in Inspector's dataframe (blocks
concatenated). This module reproduces that numbering column-wise so our tables can carry ``node_id``
and so tests can compare against Inspector row by row.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..model import Profile
from .._ids import dense_rows, first_index


def inspector_order(profile: Profile) -> pl.DataFrame:
    """One row per event row of ``profile.events`` (same order) with Inspector's numbering.

    Columns: ``block_index`` (Inspector EventBlock), ``block_event_index`` (event row within the block),
    ``block_run_index`` (run within the block), ``node_id`` (row in Inspector's dataframe).
    Events whose signature repeats within one run share the first one's position (Inspector keeps one).
    """
    ev = profile.events
    n = ev.height
    if n == 0:
        return pl.DataFrame({c: pl.Series([], dtype=pl.Int64) for c in
                             ("block_index", "block_event_index", "block_run_index", "node_id")})
    runs = profile.runs
    # run_data index per event: (run_index, block) identify it; rebuild from the runs table order
    rd = _run_data_index(profile)
    instr = ev["instruction_id"].to_numpy()
    dint = ev["delegate_debug_id_int"].fill_null(-1).to_numpy()
    dstr = _codes(ev["delegate_debug_id_str"].fill_null(""))
    i32 = np.int32

    # 1. instruction groups in first-appearance order within each run
    ginv = dense_rows(rd, instr, ev["chain_index"].to_numpy(), dint, dstr)
    gfirst = first_index(ginv)
    order = np.lexsort((gfirst[ginv], rd)).astype(i32)  # stable: ties keep file order
    del gfirst, ginv

    # 2. event signatures (instruction, name, delegate ids); duplicates within a run collapse to the first
    sinv = dense_rows(instr, _codes(ev["name"]), dint, dstr)
    rsinv = dense_rows(rd, sinv)
    del instr, dint, dstr
    pos_in_order = np.empty(n, dtype=i32)
    pos_in_order[order] = np.arange(n, dtype=i32)
    # the representative of a (run, signature) is the occurrence that comes first in Inspector order
    rep_pos = np.full(int(rsinv.max()) + 1, n, dtype=i32)
    np.minimum.at(rep_pos, rsinv, pos_in_order)
    is_rep = pos_in_order == rep_pos[rsinv]
    del pos_in_order, rep_pos

    # event index within the run among representatives (Inspector order)
    ord_rep = order[is_rep[order]]
    del order, is_rep
    rd_sorted = rd[ord_rep]
    starts = np.r_[0, np.flatnonzero(rd_sorted[1:] != rd_sorted[:-1]) + 1]
    run_of_start = rd_sorted[starts]
    counts = np.diff(np.r_[starts, ord_rep.size])
    ev_idx_rep = np.empty(n, dtype=i32)
    ev_idx_rep[ord_rep] = np.arange(ord_rep.size, dtype=i32) - np.repeat(starts, counts).astype(i32)
    first_in_run = np.full(int(rsinv.max()) + 1, -1, dtype=i32)
    first_in_run[rsinv[ord_rep]] = ord_rep
    ev_idx = ev_idx_rep[first_in_run[rsinv]]
    del ev_idx_rep, first_in_run, rsinv

    # 3. run signatures → blocks (in order of first appearance)
    block_names = runs["block"].to_list()
    bundled = runs["bundled_input_index"].to_list()
    run_block: dict[int, int] = {}
    block_runs: dict[int, int] = {}
    block_size: list[int] = []
    sig_to_block: dict[tuple, int] = {}
    run_in_block = {}
    for k, r in enumerate(run_of_start.tolist()):
        seg = ord_rep[starts[k]: starts[k] + counts[k]]
        sig = (block_names[r], bundled[r], tuple(sinv[seg].tolist()))
        b = sig_to_block.get(sig)
        if b is None:
            b = sig_to_block[sig] = len(block_size)
            block_size.append(int(counts[k]))
            block_runs[b] = 0
        run_block[r] = b
        run_in_block[r] = block_runs[b]
        block_runs[b] += 1
    block_offset = np.r_[0, np.cumsum(block_size)][:-1] if block_size else np.zeros(0, np.int64)
    lut_block = np.full(rd.max() + 1, -1, dtype=np.int64)
    lut_run = np.full(rd.max() + 1, -1, dtype=np.int64)
    for r, b in run_block.items():
        lut_block[r] = b
        lut_run[r] = run_in_block[r]
    blk = lut_block[rd]
    return pl.DataFrame({
        "block_index": blk,
        "block_event_index": ev_idx,
        "block_run_index": lut_run[rd],
        "node_id": block_offset[blk] + ev_idx,
    })


def _codes(s: pl.Series) -> np.ndarray:
    return s.cast(pl.Categorical).to_physical().to_numpy()


def _run_data_index(profile: Profile) -> np.ndarray:
    """RunData index of every event (events are stored run by run, in file order)."""
    n_events = profile.runs["n_events"].to_numpy()
    return np.repeat(np.arange(n_events.size, dtype=np.int32), n_events)
