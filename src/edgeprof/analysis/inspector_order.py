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

from .._ids import dense_rows, first_index
from ..model import Profile


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
    keys = (ev["instruction_id"].to_numpy(), ev["chain_index"].to_numpy(),
            ev["delegate_debug_id_int"].fill_null(-1).to_numpy(), _codes(ev["delegate_debug_id_str"].fill_null("")),
            _codes(ev["name"]))
    block_names = runs["block"].to_list()
    bundled = runs["bundled_input_index"].to_list()
    counts = runs["n_events"].to_numpy()
    rd = _run_data_index(profile)
    fast = _by_templates(keys, counts, block_names, bundled)
    if fast is not None:
        blk, ev_idx, run_in_block, block_size = fast
    else:
        blk_of_run, ev_idx, run_in_block_of_run, block_size = _order(rd, keys, block_names, bundled)
        blk, run_in_block = blk_of_run[rd], run_in_block_of_run[rd]
    block_offset = np.r_[0, np.cumsum(block_size)][:-1].astype(np.int64)
    return pl.DataFrame({
        "block_index": blk.astype(np.int64),
        "block_event_index": ev_idx.astype(np.int64),
        "block_run_index": run_in_block.astype(np.int64),
        "node_id": block_offset[blk] + ev_idx,
    })


def _by_templates(keys, counts, block_names, bundled):
    """Fast path: runs whose event key sequences are identical share Inspector's numbering.

    Runs are grouped by (name, bundled input, length); when every run of a group repeats the group's
    first run exactly (the usual case: the same model executed N times), Inspector's order is computed
    for one run per group and broadcast. Returns None when some run differs (the general path then
    handles everything).
    """
    starts = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
    groups: dict[tuple, list[int]] = {}
    for r, c in enumerate(counts.tolist()):
        if c:
            groups.setdefault((block_names[r], bundled[r], c), []).append(r)
    reps = []
    for (_, _, length), members in groups.items():
        if len(members) > 1:
            rows = starts[np.array(members)][:, None] + np.arange(length)
            for k in keys:
                m = k[rows]
                if not (m == m[0]).all():
                    return None
        reps.append(members[0])
    reps.sort()
    rep_rows = np.concatenate([starts[r] + np.arange(counts[r]) for r in reps])
    rd_small = np.repeat(np.arange(len(reps)), [counts[r] for r in reps])
    blk_small, ev_small, _, block_size = _order(rd_small, tuple(k[rep_rows] for k in keys),
                                                [block_names[r] for r in reps], [bundled[r] for r in reps])
    # broadcast to every run: its representative's block and event numbers; its rank among its block's runs
    index_of_rep = np.full(counts.size, -1, dtype=np.int64)
    index_of_rep[reps] = np.arange(len(reps))
    rep_first = np.r_[0, np.cumsum([counts[r] for r in reps])[:-1]].astype(np.int64)  # rows of each in rep_rows
    block_of_rep = np.asarray(blk_small, dtype=np.int64)  # (per run of the small set: one per representative)
    rep_of = np.empty(counts.size, dtype=np.int64)
    for members in groups.values():
        rep_of[members] = index_of_rep[members[0]]
    present = np.flatnonzero(counts > 0)
    c = counts[present].astype(np.int64)
    rep = rep_of[present]
    b = block_of_rep[rep]
    by_block = np.argsort(b, kind="stable")  # runs of a block in file order: their rank is the run in block
    pos = np.arange(present.size)
    first_of_block = np.r_[True, b[by_block][1:] != b[by_block][:-1]]
    rank = np.empty(present.size, dtype=np.int64)
    rank[by_block] = pos - np.maximum.accumulate(np.where(first_of_block, pos, 0))
    within = np.arange(int(c.sum()), dtype=np.int64) - np.repeat(np.cumsum(c) - c, c)
    blk = np.repeat(b, c)
    ev_idx = ev_small[np.repeat(rep_first[rep], c) + within].astype(np.int64)
    run_in_block = np.repeat(rank, c)
    return blk, ev_idx, run_in_block, block_size


def _order(rd, keys, block_names, bundled):
    """Inspector's numbering, general path: (block per run, event index per row, run index in block per run,
    block sizes)."""
    instr, chain, dint, dstr, name = keys
    n = rd.size
    i32 = np.int32

    # 1. instruction groups in first-appearance order within each run
    ginv = dense_rows(rd, instr, chain, dint, dstr)
    gfirst = first_index(ginv)
    order = np.lexsort((gfirst[ginv], rd)).astype(i32)  # stable: ties keep file order
    del gfirst, ginv

    # 2. event signatures (instruction, name, delegate ids); duplicates within a run collapse to the first
    sinv = dense_rows(instr, name, dint, dstr)
    rsinv = dense_rows(rd, sinv)
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
    n_rd = int(rd.max()) + 1
    blk_of_run = np.full(n_rd, -1, dtype=np.int64)
    run_in_block = np.full(n_rd, -1, dtype=np.int64)
    block_runs: list[int] = []
    block_size: list[int] = []
    sig_to_block: dict[tuple, int] = {}
    for k, r in enumerate(run_of_start.tolist()):
        seg = ord_rep[starts[k]: starts[k] + counts[k]]
        sig = (block_names[r], bundled[r], tuple(sinv[seg].tolist()))
        b = sig_to_block.get(sig)
        if b is None:
            b = sig_to_block[sig] = len(block_size)
            block_size.append(int(counts[k]))
            block_runs.append(0)
        blk_of_run[r] = b
        run_in_block[r] = block_runs[b]
        block_runs[b] += 1
    return blk_of_run, ev_idx, run_in_block, block_size


class StreamOrder:
    """Inspector's ``node_id`` for a profile read in blocks of whole runs, one block after another.

    Inspector's event blocks come in order of first appearance, so a block of runs can be numbered on its own
    and its event blocks placed after the ones seen before. Exact when every run of a (block name, bundled
    input, event count) group repeats the group's first run, as the whole-profile fast path requires; otherwise
    :meth:`node_ids` returns None and the profile must be numbered whole.
    """

    def __init__(self):
        self._known: dict[tuple, tuple[tuple, int]] = {}  # group → (its first run's keys, offset of its block)
        self._next = 0

    def node_ids(self, profile: Profile) -> np.ndarray | None:
        local = inspector_order(profile)
        if local.height == 0:
            return np.empty(0, dtype=np.int64)
        blk = local["block_index"].to_numpy()
        ev_idx = local["block_event_index"].to_numpy()
        ev = profile.events
        keys = (ev["instruction_id"].to_numpy(), ev["chain_index"].to_numpy(),
                ev["delegate_debug_id_int"].fill_null(-1).to_numpy(), _codes(ev["delegate_debug_id_str"].fill_null("")),
                _codes(ev["name"]))
        runs = profile.runs
        names, bundled = runs["block"].to_list(), runs["bundled_input_index"].to_list()
        counts = runs["n_events"].to_numpy()
        starts = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
        rd = _run_data_index(profile)
        offset = np.zeros(int(blk.max()) + 1, dtype=np.int64)
        for b, row in enumerate(first_index(blk).tolist()):
            r = int(rd[row])
            rows = slice(int(starts[r]), int(starts[r] + counts[r]))
            group = (names[r], bundled[r], int(counts[r]))
            template = tuple(k[rows] for k in keys)
            known = self._known.get(group)
            if known is None:
                known = self._known[group] = (template, self._next)
                self._next += int(ev_idx[blk == b].max()) + 1
            elif not all(np.array_equal(x, y) for x, y in zip(known[0], template)):
                return None
            offset[b] = known[1]
        return offset[blk] + ev_idx


def _codes(s: pl.Series) -> np.ndarray:
    return s.cast(pl.Categorical).to_physical().to_numpy()


def _run_data_index(profile: Profile) -> np.ndarray:
    """RunData index of every event (events are stored run by run, in file order)."""
    n_events = profile.runs["n_events"].to_numpy()
    return np.repeat(np.arange(n_events.size, dtype=np.int32), n_events)
