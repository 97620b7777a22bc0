"""``edgeprof memory``: planned versus measured memory per configuration of a collection; a program's memory plan; the
per-node sizes an ONNX Runtime profile records."""

from __future__ import annotations

from pathlib import Path

from ..conventions import fmt_bytes as _mib
from ..files import command
from ..io.workspace import Workspace
from ._common import as_list, workspace
from .results_memory import MemoryReport


def _plan_for(ws: Workspace, model: str | None, run_dir: Path, first_etdump: Path | None) -> tuple[dict | None, str]:
    """(the planned memory of a configuration's model, where it came from)."""
    from ..analysis.memory import plan_of_onnx, plan_of_program
    from ..analysis.pte_program import summarize
    from ..errors import InputError, MissingExtraError
    from ..files import is_file

    if model and model.endswith(".pte"):
        prog = ws.program_for(first_etdump) if first_etdump is not None else None
        if prog is None and is_file(Path(model)):
            from ..io.pte import read_pte

            prog = read_pte(Path(model))
        return (plan_of_program(summarize(prog)), str(prog.source)) if prog is not None else (None, "program not found")
    if model and model.endswith(".onnx") and is_file(Path(model)):
        try:
            from ..io.onnx_model import read_onnx

            return plan_of_onnx(read_onnx(Path(model)), Path(model).stat().st_size), model
        except (MissingExtraError, InputError) as e:
            return None, str(e)
    return None, "no plan edgeprof reads for this model" if model else "no model recorded"


def _collection(ws: Workspace, folder: Path) -> list[dict]:
    from ..analysis.memory import gap, phase_table

    manifest, mpath, _problem = ws.manifest(folder)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("results"), list):
        return []
    root = mpath.parent if mpath is not None else folder
    models = got if isinstance(got := manifest.get("models"), dict) else {}
    runtimes = {e.get("name"): e.get("runtime") for e in (manifest.get("config") or {}).get("experiments") or []
                if isinstance(e, dict)}
    out = []
    by_exp: dict[str, list[dict]] = {}
    for r in manifest["results"]:
        if isinstance(r, dict) and r.get("status") == "ok" and not r.get("overhead"):
            by_exp.setdefault(str(r.get("experiment")), []).append(r)
    for name, rows in by_exp.items():
        mems: list = [(r.get("metrics") or {}).get("memory") for r in rows]
        mems = [m for m in mems if isinstance(m, dict)]
        if not mems:
            continue
        etd = next(((root / m["etdump_rel"]) for m in (r.get("metrics") or {} for r in rows)
                    if isinstance(m.get("etdump_rel"), str)), None)
        model = named if isinstance(named := models.get(name), str) else None
        plan, plan_source = _plan_for(ws, model, root, etd)
        table = phase_table(mems)
        g = gap(table, plan)
        scope = {m.get("peak_scope") for m in mems}
        cfg = {"name": name, "runtime": runtimes.get(name), "model": model, "launches": len(mems),
               "phases": table, "plan": plan, "plan_source": plan_source, "gap": g,
               "peak_scope": "phase" if scope == {"phase"} else "process",
               "options": mems[0].get("options") or {}, "cost_ms": max(float(m.get("cost_ms") or 0) for m in mems)}
        cfg["statement"] = (f"{name}: peak {_mib(g['peak_rss_bytes'])} during the timed runs, {_mib(g['footprint_bytes'])}"
                            f" above the {_mib(g['baseline_rss_bytes'])} the runtime held before loading "
                            f"({_mib(g['model_bytes'])} without the harness's inputs); planned "
                            f"{_mib(g['planned_bytes'])}; unexplained {_mib(g['parts'][-1]['bytes'])}"
                            if g else f"{name}: the launches did not measure both ends of the model's footprint")
        out.append(cfg)
    return out


def _ort_rows(profile) -> list[dict]:
    """One run's nodes of an ONNX Runtime profile with the sizes it recorded (first execute run)."""
    import json

    import polars as pl

    from ..conventions import RUNTIME_ARGS

    ev = profile.events.filter((pl.col("run_index") == 0) & pl.col("kind").is_in(["operator_call", "delegate_call"]))
    rows = []
    for name, args, backend in zip(ev["module_path"].cast(pl.String).to_list(),
                                   ev[RUNTIME_ARGS].to_list() if RUNTIME_ARGS in ev.columns else [None] * ev.height,
                                   ev["delegate_backend"].cast(pl.String).to_list()):
        a = json.loads(args) if isinstance(args, str) else {}

        def size(k, a=a):
            v = a.get(k)
            return int(v) if isinstance(v, (int, str)) and str(v).isdigit() else None

        rows.append({"name": name, "op": a.get("op_name"), "provider": a.get("provider") or backend,
                     "activation_size": size("activation_size"), "output_size": size("output_size"),
                     "parameter_size": size("parameter_size")})
    return rows


@command
def memory(inputs, *, model=None, ws: Workspace | None = None) -> MemoryReport:
    """Memory of each input: a collection's configurations (measured per phase against what their programs plan),
    a program's memory plan (``.pte``), or an ONNX Runtime profile's per-node sizes (``model``: the ONNX model it ran,
    to tell prepacked weights)."""
    from ..analysis.memory import allocations, litert_reported, onnx_weights_by_node, ort_node_sizes, plan_of_program
    from ..conventions import FORMAT_ETDUMP
    from ..analysis.pte_program import summarize
    from ..errors import UsageError
    from ..files import is_dir
    from ..io.pte import read_pte
    from ..runtimes import LITERT, ONNXRUNTIME

    ws = workspace(ws)
    configs, programs, profiles, etdumps, warnings = [], [], [], [], []
    coreml_models, litert = [], []
    for p in map(Path, as_list(inputs)):
        if p.suffix.lower() in (".mlpackage", ".mlmodelc", ".mlmodel"):
            coreml_models += _coreml(p)
        elif is_dir(p):
            got = _collection(ws, p)
            if not got:
                warnings.append(f"{p}: no launch in it recorded memory (collected with `edgeprof run`?)")
            configs += got
        elif p.name.lower().endswith(".pte"):
            programs.append({"program": str(p), **plan_of_program(summarize(read_pte(p)))})
        else:
            prof = ws.profile(p)
            if prof.format == FORMAT_ETDUMP:
                etdumps.append({"etdump": str(p), **allocations(prof)})
                continue
            if prof.runtime == LITERT.name:
                if prof.reported_memory is None:
                    warnings.append(f"{p}: benchmark_model reported no memory in it")
                else:
                    litert.append({"profile": str(p), **prof.reported_memory,
                                   "statement": litert_reported(prof.reported_memory)})
                continue
            if prof.runtime != ONNXRUNTIME.name:
                raise UsageError(f"{p}: memory reads a run folder, a .pte, an ETDump, an ONNX Runtime profile, a "
                                 "LiteRT benchmark_model log or a Core ML model")
            weights = None
            if model is not None:
                from ..io.onnx_model import read_onnx

                weights = onnx_weights_by_node(read_onnx(Path(model)))
            profiles.append({"profile": str(p), **ort_node_sizes(_ort_rows(prof), weights)})
    if not (configs or programs or profiles or etdumps or coreml_models or litert):
        from ..errors import InputError

        raise InputError(as_list(inputs)[0], "no launch in it recorded memory (collect it with edgeprof run)")
    return MemoryReport({"inputs": [str(x) for x in as_list(inputs)], "configurations": configs, "programs": programs,
                         "ort_profiles": profiles, "etdumps": etdumps, "coreml_models": coreml_models,
                         "litert_reports": litert,
                         "statements": [c["statement"] for c in configs] + [r["statement"] for r in litert],
                         "warnings": warnings})


def _coreml(path: Path) -> list[dict]:
    """The weights of a Core ML model (each program of a bundle)."""
    from ..analysis.memory import plan_of_coreml
    from ..analysis.mil_cost import op_costs, totals
    from .coreml import load_programs

    return [{"model": prog.source,
             **plan_of_coreml(totals(prog, op_costs(prog)))} for prog in load_programs(path)]


def launch_memory(ws: Workspace, path) -> dict | None:
    """What ``edgeprof run`` recorded of one launch's memory: the manifest entry (beside the recording, or up to two
    folders above) whose recording is this file; None when none recorded it."""
    import os

    path = Path(path)
    manifest, mpath, _ = ws.manifest(path.parent)
    if not isinstance(manifest, dict) or mpath is None or not isinstance(manifest.get("results"), list):
        return None
    real = os.path.realpath(path)
    for r in manifest["results"]:
        m = (r or {}).get("metrics") if isinstance(r, dict) else None
        if isinstance(m, dict) and isinstance(m.get("etdump_rel"), str) and isinstance(m.get("memory"), dict) \
                and os.path.realpath(mpath.parent / m["etdump_rel"]) == real:
            return m["memory"]
    return None
