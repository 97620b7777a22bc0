"""The agent server's tools: each is a call of :mod:`edgeprof.api`, run inside a confined worker process
(:mod:`edgeprof.server.worker`), returning the command's JSON document and a one-line summary.

A tool's signature and docstring are what the agent sees (the MCP adapter registers them as they are). Paths
are relative to the first root (the worker's current folder) or absolute, and every one must lie inside a
root — the arguments here, and, through :mod:`edgeprof.access`, everything the call finds on its own.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, overload

from ..errors import UsageError
from .. import access
from ..options import DEVICE, HISTORY_STORE, METRIC, MODEL, SERIES_METRIC, SINCE, THRESHOLD_OPTION

if TYPE_CHECKING:
    from typing import Any

WRITE_TOOLS = ("analyze", "report")  # offered only with --allow-write


@overload
def _path(p: str, what: str = ...) -> str: ...
@overload
def _path(p: str | None, what: str = ...) -> str | None: ...
def _path(p: str | None, what: str = "path") -> str | None:
    """An argument path, resolved against the first root, refused when it leads outside the roots."""
    if p is None:
        return None
    if not isinstance(p, str) or not p:
        raise UsageError(f"{what}: expected a path (a non-empty string)")
    if "\x00" in p:
        raise UsageError(f"{what}: a path with a NUL byte")
    if not access.inside(p):
        raise UsageError(f"{what} '{p}' " + access.outside_message())
    return os.path.realpath(p)


def _spec(s: str | None, what: str, run_dir: str | None) -> str | None:
    """A profile named by path, or (with a run folder) by experiment name: a path-like value is checked as a
    path; a bare name is an experiment of ``run_dir`` (a file of that name in the root is found only when
    it lies inside)."""
    if s is None:
        return None
    if not isinstance(s, str) or not s:
        raise UsageError(f"{what}: expected a path or an experiment name")
    if run_dir is None or os.sep in s or s.startswith(".") or os.path.isabs(s) or (os.altsep and os.altsep in s):
        return _path(s, what)
    if "\x00" in s:
        raise UsageError(f"{what}: a NUL byte")
    return s


def _doc(res) -> dict:
    from ..render import jsonfmt

    if isinstance(res, list):  # one result per input (latency): the CLI's collection
        from ..api.result_base import collection

        doc = collection("latency", "reports", res)
    else:
        doc = res.to_json() if hasattr(res, "to_json") else res
    doc = json.loads(jsonfmt.dumps(doc))  # the CLI's JSON exactly (its stable float formatting, sorted keys)
    from ..conventions import shown
    from ..render.headline import headline

    # the one line people read (agent front ends print it): escaped as the CLI prints it; the result keeps raw names
    return {"summary": shown(headline(doc)), "result": doc}


def latency(path: str) -> dict:
    """Robust latency statistics of a profile (ETDump or timeline CSV): warm-up, outliers, interval. Read-only."""
    from .. import api

    return _doc(api.latency([_path(path)]))


def compare(baseline: str | list[str], candidate: str | list[str], run_dir: str | None = None,
            threshold: str | None = None, metric: str | None = None) -> dict:
    """Compare a baseline with a candidate (one profile each, or several launches each): speedup = baseline /
    candidate with its 95 % interval and verdict; with run_dir, experiment names work too. Read-only."""
    from .. import api
    from ..conventions import parse_fraction

    rd = _path(run_dir, "run_dir")
    b = [_spec(x, "baseline", rd) for x in _listed(baseline, "baseline")]
    c = [_spec(x, "candidate", rd) for x in _listed(candidate, "candidate")]
    opts: dict[str, Any] = {}
    if threshold is not None:
        opts["threshold"] = parse_fraction(_text(threshold, "threshold"), "threshold")
    if metric is not None:
        opts["metric"] = _text(metric, "metric")
    return _doc(api.compare(b, c, run_dir=rd, **opts))


def _listed(v, what: str) -> list:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v) and len(v) <= 256:
        return v
    raise UsageError(f"{what}: expected a path or experiment name, or a list of them (several launches)")


def _text(v, what: str) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    if not isinstance(v, str) or not v or len(v) > 200 or "\x00" in v:
        raise UsageError(f"{what}: expected a short text")
    return v


def breakdown(path: str, program: str | None = None) -> dict:
    """Where the time goes in one profile: categories, operators, portable vs delegated, graph breaks; with
    program (a .pte, or the .onnx of an ONNX Runtime profile) the work per instruction. Read-only."""
    from .. import api

    return _doc(api.breakdown(_path(path), program=_path(program, "program")))


def kernels(path: str) -> dict:
    """XNNPACK kernels registered in an xnntrace log (registration evidence, not timing). Read-only."""
    from .. import api

    return _doc(api.kernels(_path(path)))


def validate(run_dir: str) -> dict:
    """Validate a run folder (outputs present, fresh and consistent with the ETDumps). Read-only."""
    from .. import api

    return _doc(api.validate(_path(run_dir, "run_dir")))


def ane(path: str, costplan: str | None = None) -> dict:
    """Findings of an anemll-profile report (with costplan: the cross-check), a cost plan, or a model folder of
    reports. Read-only."""
    from .. import api

    from ..files import is_dir

    p = _path(path)
    if is_dir(p) and not api.is_model_bundle(p):  # a model folder of submodel reports
        if costplan is not None:
            raise UsageError("costplan: give it with one profile, not with a folder")
        return _doc(api.ane_folder([p]))
    return _doc(api.ane(p, costplan=_path(costplan, "costplan")))


def program(path: str) -> dict:
    """What is inside an ExecuTorch .pte: sizes, memory plan, instructions, XNNPACK nodes, FLOPs. Read-only."""
    from .. import api

    return _doc(api.program(_path(path)))


def placement(path: str, compare_with: str | None = None, onnx_model: str | None = None) -> dict:
    """Where each operator ran (delegate, execution provider, compute unit): partitions and shares of time and
    work, from a profile, a .pte, or an anemll-profile / ane-costplan report; with candidate, the operators that
    moved between the two builds (fallbacks named), partitions split or merged, and a verdict. Read-only."""
    from .. import api

    model = _path(onnx_model, "onnx_model")
    if compare_with is not None:
        return _doc(api.placement_diff(_path(path), _path(compare_with, "compare_with"), model=model))
    return _doc(api.placement(_path(path), model=model))


def memory(path: str, onnx_model: str | None = None) -> dict:
    """Planned versus measured memory: a run folder's configurations (peak resident set per phase against the
    program's weights and memory plan), a .pte's memory plan, or an ONNX Runtime profile's per-node sizes.
    Read-only."""
    from .. import api

    return _doc(api.memory([_path(path)], model=_path(onnx_model, "onnx_model")))


def coreml(path: str) -> dict:
    """Static analysis of a Core ML model (.mlpackage/.mlmodelc or folder): per-op cost, hazards, ANE placement
    estimate. Read-only."""
    from .. import api

    return _doc(api.coreml(_path(path)))


def phases(path: str, phases: str | None = None) -> dict:
    """An LLM-shaped profile per phase (prefill, decode): tokens/s, time to first token, latency slope with
    position separated from drift. phases: run ranges like 0:1=prefill,1:=decode (optional). Read-only."""
    from .. import api

    if phases is not None and not isinstance(phases, str):
        raise UsageError("phases: expected run ranges such as 0:1=prefill,1:=decode")
    return _doc(api.phases(_path(path), spec=phases))


def history(store: str, model: str | None = None, device: str | None = None, metric: str | None = None,
            threshold: str | None = None, since: str | None = None) -> dict:
    """History of a store (DuckDB file or Parquet folder): points per commit, change points (confirmed, pending,
    possible) with their kind and attribution, and the regressions since a commit. Read-only."""
    from .. import api
    from ..conventions import parse_fraction

    opts: dict[str, Any] = {k: _text(v, k) for k, v in (("model", model), ("device", device), ("metric", metric),
                                                          ("since", since)) if v is not None}
    if threshold is not None:
        opts["threshold"] = parse_fraction(_text(threshold, "threshold"), "threshold", upper=10.0)
    return _doc(api.history(_path(store, "store"), **opts))


def analyze(path: str) -> dict:
    """Analyze a run folder or ETDumps: WRITES the Arm kit's timeline and ops-stats CSVs and
    analysis_summary.json beside the inputs."""
    from .. import api

    return _doc(api.analyze([_path(path)], progress=False))


def report(run_dir: str, baseline: str | None = None, candidate: str | None = None, html: bool = False) -> dict:
    """Report on a run folder: WRITES report.md (and report.html when html is true) in the run folder."""
    from .. import api

    rd = _path(run_dir, "run_dir")
    b, c = _spec(baseline, "baseline", rd), _spec(candidate, "candidate", rd)
    return _doc(api.report([rd], baseline=[b] if b else (), candidate=[c] if c else (), write=True,
                           html=os.path.join(rd, "report.html") if html is True else None))


# what each argument is, for the agent (the MCP adapter puts it in the tool's input schema)
ARGS = {
    "path": "a file or folder inside the server's roots (relative to the first root, or absolute)",
    "baseline": "the baseline: a profile (ETDump or timeline CSV), an experiment name with run_dir, or a list of "
                "them for several launches",
    "candidate": "the candidate, as baseline",
    "run_dir": "a run folder inside the roots whose experiments baseline/candidate name",
    "threshold": f"{THRESHOLD_OPTION.help} Default {THRESHOLD_OPTION.cli_default}.",
    "metric": f"history: {SERIES_METRIC.help} compare: {METRIC.help}",
    "program": "the .pte (or .onnx) the profile was recorded from (adds work per instruction)",
    "costplan": "an ane-costplan JSON report of the same model (adds the plan-vs-profile cross-check)",
    "phases": "run ranges naming the phases, such as 0:1=prefill,1:=decode",
    "store": f"{HISTORY_STORE.help} Inside the roots.",
    "model": MODEL.help,
    "device": DEVICE.help,
    "since": SINCE.help,
    "html": "also write report.html",
    "compare_with": "placement: a second build's input (the same kinds as path); path is the baseline",
    "onnx_model": "the ONNX model an ONNX Runtime profile ran (places every node, also inside fused subgraphs)",
}

TOOLS = {f.__name__: f for f in (latency, compare, breakdown, kernels, validate, ane, program, placement, memory,
                                 coreml, phases, history, analyze, report)}
# the document kinds each tool's ``result`` can be (its published output schema: edgeprof.render.json_schema)
OUTPUT_KINDS = {"latency": ("latency",), "compare": ("comparison",), "breakdown": ("breakdown",),
                "kernels": ("kernels",), "validate": ("validation",), "ane": ("ane_analysis", "ane_plan", "ane_folder"),
                "program": ("program",), "placement": ("placement", "placement_diff"), "memory": ("memory",),
                "coreml": ("coreml_static",), "phases": ("phases", "phase_comparison"),
                "history": ("history",), "analyze": ("analysis_summary",), "report": ("report",)}


def call(name: str, args: dict) -> dict:
    """Run one tool (inside the worker)."""
    fn = TOOLS.get(name)
    if fn is None:
        raise UsageError(f"no tool '{name}'")
    return fn(**args)
