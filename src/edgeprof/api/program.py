"""``edgeprof program``: what is inside a .pte, torch-free; two programs side by side."""

from __future__ import annotations

from ..files import command
from .results import ProgramDiff, ProgramInfo


@command
def program(path, *, etrecord=None, discover: bool = True) -> ProgramInfo:
    """What is inside a .pte; with ``etrecord`` — given, or found beside the .pte (``model.etrecord`` for
    ``model.pte``, as for an ETDump: :func:`edgeprof.io.discovery.find_etrecord`) — each instruction (and each
    XNNPACK node) gets the op types and module path the ETRecord maps it to. An ETRecord found (not given) that
    does not match the program is left out, and ``etrecord_found`` says why."""
    from pathlib import Path

    from ..analysis.pte_program import summarize
    from ..errors import ETRecordError
    from ..io.discovery import find_etrecord
    from ..io.pte import read_pte

    doc = summarize(read_pte(path))
    if etrecord is not None:
        _attach(doc, etrecord)
    elif discover:
        found, how = find_etrecord(Path(path))
        if found is not None:
            try:
                _attach(doc, found)
                doc["etrecord_found"] = f"beside the program ({how})"
            except ETRecordError as e:
                doc["etrecord_found"] = f"{found.name} found beside the program was not used: {str(e)[:300]}"
    return ProgramInfo(doc)


NO_SOURCE = (0, 0xFFFF, 0xFFFFFFFF)  # XNNPACK debug handles of nodes with no graph node behind them


def _attach(doc: dict, path) -> None:
    from ..errors import ETRecordError
    from ..io.etrecord import read_etrecord, sources_of

    rec = read_etrecord(path)
    rows = [i for i in doc["instructions"] if i["plan"] == rec.method]
    if not rows:
        raise ETRecordError(path, f"its method '{rec.method}' is not in the program (methods: {', '.join(doc['methods'])})")
    bad = []
    for row in rows:
        row["op_types"], row["module_path"] = sources_of(rec, row["index"])
        handles = set(rec.debug_handle_map.get(row["index"], []))
        if row["kind"] == "kernel":
            op = row["name"].split("::")[-1].split(".")[0].lstrip("_")
            if row["op_types"] and not any(op in t for t in row["op_types"]):
                bad.append(f"instruction {row['index']} runs {row['name']}, the ETRecord says {row['op_types'][:2]}")
        nodes = (row.get("delegate") or {}).get("nodes") or {}
        for nd in nodes.get("nodes", []):
            if nd["debug_handle"] in NO_SOURCE:  # a node the delegate inserted (a layout transpose, …)
                nd["op_types"], nd["module_path"] = [], None
                continue
            if nd["debug_handle"] not in handles:
                bad.append(f"XNNPACK node {nd['index']} of instruction {row['index']} has debug handle "
                           f"{nd['debug_handle']}, which the ETRecord does not map to that instruction")
            nd["op_types"], nd["module_path"] = sources_of(rec, None, [nd["debug_handle"]])
    if bad:
        raise ETRecordError(path, f"does not match the program ({len(bad)} disagreements; first: {bad[0]})")
    doc["etrecord"] = str(path)


def join_with_onnx(profile, model: dict) -> dict:
    """A profile (ONNX Runtime's) joined with the ONNX model (:func:`~edgeprof.io.onnx_model.read_onnx`) it ran, node
    by node name; the time of nodes the runtime fused or renamed is reported apart (``unmatched``)."""
    from ..analysis.breakdown import summary_split
    from ..analysis.onnx_cost import by_node_name, category_rates, program_view
    from ..analysis.pte_join import join_program

    summary, costs = program_view(model)
    matched, unmatched = by_node_name(profile, model)
    out = join_program(matched, summary, costs, method="main")
    out.update(evidence="ort_json+onnx", unmatched=unmatched, profile_instructions=out["matched"] + unmatched["nodes"],
               category_rates=category_rates(model, summary_split(profile)["categories_ms"], timed=_timed(profile)))
    return out


def _timed(profile) -> set:
    """The node names and op types an ONNX Runtime profile times (its operator and provider calls' ``module_path``
    and op types)."""
    import polars as pl

    calls = profile.execute_events().filter(pl.col("kind").is_in(["operator_call", "delegate_call"]))
    names = {x for x in calls["module_path"].cast(pl.String).unique().to_list() if x is not None}
    ops = {o for lst in calls["op_types"].to_list() if lst for o in lst}
    return names | ops


def join_with_program(profile, pte) -> dict:
    """A profile joined with the program (a read :class:`~edgeprof.pte_model.PteProgram`) it ran."""
    from ..analysis.pte_cost import instruction_costs
    from ..analysis.pte_join import join_program
    from ..analysis.pte_program import summarize

    return join_program(profile, summarize(pte), instruction_costs(pte))


@command
def program_diff(a, b) -> ProgramDiff:
    from ..analysis.pte_program import compare_programs

    return ProgramDiff(compare_programs(program(a).data, program(b).data))
