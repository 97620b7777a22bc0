"""The allocation and debug-event tables of a decoded ETDump (:mod:`edgeprof.io.etdump`)."""

from __future__ import annotations

import numpy as np

from .etdump_decode import VALUE_TYPES


def allocation_table(dec, run_index_of, run_names):
    """One row per allocation event. ``allocator`` names the allocator its ``allocator_id`` stands for: ExecuTorch's
    ETDumpGen numbers a run block's allocators from 1 (``track_allocator`` returns the list's length after adding
    one), so id k is ``allocators[k - 1]`` — as recorded by the C++ runtime (tests/data/memory/alloc); an id outside
    the block's list names none."""
    import polars as pl

    runs = dec["ae_run"]
    names_by_run: dict[int, list[str]] = {}
    for r, nm in zip(dec["allocator_run"].tolist(), dec["allocator_names"]):
        names_by_run.setdefault(r, []).append(nm)
    alloc_id = dec["ae_allocator"].tolist()
    alloc_name = [names_by_run[r][a - 1] if 1 <= a <= len(names_by_run.get(r, ())) else None
                  for r, a in zip(runs.tolist(), alloc_id)]
    return pl.DataFrame({
        "run_index": run_index_of[runs] if runs.size else np.empty(0, np.int32),
        "block": pl.Series([run_names[r] for r in runs.tolist()], dtype=pl.String),
        "sequence": dec["ae_seq"].astype(np.int64),
        "allocator_id": dec["ae_allocator"].astype(np.int32),
        "allocator": pl.Series(alloc_name, dtype=pl.String),
        "size_bytes": dec["ae_size"].astype(np.int64),
    })


def debug_table(dec, run_index_of, run_names):
    import polars as pl

    runs = dec["de_run"]
    v = dec["de_value"]
    vt = v["value_type"]
    tensor_type = pl.List(pl.Struct({"scalar_type": pl.String, "sizes": pl.List(pl.Int64),
                                     "strides": pl.List(pl.Int64), "offset": pl.Int64}))
    return pl.DataFrame({
        "run_index": run_index_of[runs] if runs.size else np.empty(0, np.int32),
        "block": pl.Series([run_names[r] for r in runs.tolist()], dtype=pl.String),
        "sequence": dec["de_seq"].astype(np.int64),
        "name": pl.Series(dec["de_name"], dtype=pl.String),
        "instruction_id": dec["de_instruction"].astype(np.int32),
        "chain_index": dec["de_chain"].astype(np.int64),
        # (numpy's stubs do not take None as where's x: it makes an object array)
        "delegate_debug_id_int": pl.Series(np.where(dec["de_dd_int"] == -1, None, dec["de_dd_int"]).tolist(),  # type: ignore[attr-defined]
                                           dtype=pl.Int32),
        "delegate_debug_id_str": pl.Series(dec["de_dd_str"], dtype=pl.String),
        "value_type": pl.Series([VALUE_TYPES[t] if 0 <= t < len(VALUE_TYPES) else ("absent" if t == -1 else f"unknown({t})")
                                 for t in vt.tolist()], dtype=pl.String),
        "is_output": v["is_output"],
        "int_value": pl.Series(v["int_value"]).fill_nan(None),
        "float_value": pl.Series(v["float_value"]).fill_nan(None),
        "bool_value": pl.Series(np.where(v["bool_value"] < 0, None, v["bool_value"] > 0).tolist(),  # type: ignore[attr-defined]
                                dtype=pl.Boolean),
        "tensors": pl.Series(v["tensors"] if v["tensors"] is not None else [None] * runs.size, dtype=tensor_type),
    })
