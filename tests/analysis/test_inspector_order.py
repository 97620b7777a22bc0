"""Inspector's event numbering (blocks, event order, run index, node_id) against a plain re-statement of
ExecuTorch Inspector's grouping rules, on fixtures and on constructed files that exercise every rule."""

from __future__ import annotations

import pytest

from etdump_builder import PE, Run, build, portable_run
from edgeprof.analysis.inspector_order import inspector_order
from edgeprof.io.etdump_read import read_etdump


def reference(prof):
    """Inspector's algorithm, row by row: instruction groups by first appearance, (instruction, profile
    event) signatures deduplicated per run (last wins, first position kept), runs grouped by signature."""
    ev = prof.events.with_row_index("row")
    blocks: dict[tuple, int] = {}
    block_sizes: list[int] = []
    block_runs: list[int] = []
    out = {}
    starts = 0
    for name, bundled, count in zip(prof.runs["block"].to_list(), prof.runs["bundled_input_index"].to_list(),
                                    prof.runs["n_events"].to_list()):
        rows = ev.slice(starts, count).to_dicts()
        starts += count
        if not rows:
            continue
        groups: dict[tuple, list] = {}
        for e in rows:
            gk = (e["instruction_id"], e["chain_index"], e["delegate_debug_id_int"] or -1, e["delegate_debug_id_str"] or "")
            groups.setdefault(gk, []).append(e)
        sigs: dict[tuple, dict] = {}
        for members in groups.values():
            for e in members:
                sk = (e["instruction_id"], e["name"], e["delegate_debug_id_int"] or -1, e["delegate_debug_id_str"] or "")
                sigs[sk] = e
        order = list(sigs)
        key = (name, bundled, tuple(order))
        if key not in blocks:
            blocks[key] = len(block_sizes)
            block_sizes.append(len(order))
            block_runs.append(0)
        b = blocks[key]
        offset = sum(block_sizes[:b])
        pos = {sk: i for i, sk in enumerate(order)}
        for e in rows:
            sk = (e["instruction_id"], e["name"], e["delegate_debug_id_int"] or -1, e["delegate_debug_id_str"] or "")
            out[e["row"]] = (b, pos[sk], block_runs[b], offset + pos[sk])
        block_runs[b] += 1
    return [out[i] for i in range(ev.height)]


def ours(prof):
    return list(inspector_order(prof).iter_rows())


@pytest.mark.parametrize("name", ["toycnn_xnn.N20", "tel_xnnq8.N20", "toycnn_portable.N3.debug", "mobilenet_v3_small_xnn.N20"])
def test_fixtures(name, etdump):
    prof = read_etdump(etdump(name))
    assert ours(prof) == reference(prof)


def test_runs_that_differ_form_separate_blocks(tmp_path):
    extra = portable_run(5000, ops=(("convolution.out", 1000, 5000), ("relu.out", 200, 300), ("add.out", 10, 20)))
    runs = [Run("Default", [PE("Method::init", 0, 5, 0, -1), PE("Program::load_method", 0, 9, 0, -1)]),
            portable_run(100), extra, portable_run(20000), extra, portable_run(40000)]
    p = tmp_path / "mixed.etdp"
    p.write_bytes(build(runs))
    prof = read_etdump(p)
    got = ours(prof)
    assert got == reference(prof)
    assert sorted({b for b, *_ in got}) == [0, 1, 2]


def test_out_of_order_instructions_and_duplicate_signatures(tmp_path):
    # instruction 1's kernel appears before instruction 0's operator call; instruction 0 runs twice (a loop)
    ev = [PE("native_call_a.out", 10, 20, 0), PE("native_call_b.out", 30, 40, 1), PE("OPERATOR_CALL", 5, 25, 0),
          PE("OPERATOR_CALL", 28, 45, 1), PE("native_call_a.out", 50, 60, 0), PE("OPERATOR_CALL", 48, 62, 0),
          PE("Method::execute", 0, 70, -1, -1)]
    p = tmp_path / "loop.etdp"
    p.write_bytes(build([Run("Execute", ev), Run("Execute", ev)]))
    prof = read_etdump(p)
    assert ours(prof) == reference(prof)
    # Inspector order groups by instruction: a, OPERATOR_CALL(0), b, OPERATOR_CALL(1), execute
    first_run = [r[1] for r in ours(prof)[:7]]
    assert first_run == [0, 2, 1, 3, 0, 1, 4]
