"""``edgeprof mcp``: edgeprof's commands as tools of a Model Context Protocol server (stdio), for coding agents.

Needs the ``mcp`` extra (the official MCP Python SDK). Each tool takes paths and options and returns the
command's JSON document (``schema_version`` included) with a one-line summary. Paths are confined to the roots
the server was started with (``--root``, default the current folder): a path is resolved (symlinks followed)
and must lie inside a root, so ``..`` escapes and symlinks pointing out are refused. The server is read-only
unless started with ``--allow-write``: only then are the tools that write files (``analyze``, ``report``)
offered, and their descriptions say what they write. An edgeprof error is a tool error carrying edgeprof's
one-line message.

This module is the thin adapter; every tool is a call of :mod:`edgeprof.api`.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from ..conventions import SCHEMA_VERSION
from ..errors import EdgeprofError, MissingExtraError, UsageError


class Roots:
    def __init__(self, roots: list[str]):
        self.roots = [Path(os.path.realpath(r)) for r in (roots or [os.getcwd()])]

    def check(self, p: str | None, what: str = "path") -> str | None:
        if p is None:
            return None
        if "\x00" in p:
            raise UsageError(f"{what}: a path with a NUL byte")
        base = self.roots[0]
        full = Path(os.path.realpath(p if os.path.isabs(p) else base / p))
        if not any(full == r or r in full.parents for r in self.roots):
            raise UsageError(f"{what} {p!r} lies outside the allowed roots ({', '.join(map(str, self.roots))})")
        return str(full)


def _summary(kind: str, doc: dict) -> str:
    if kind == "comparison":
        sp = doc.get("speedup") or {}
        return f"verdict {doc.get('verdict')}: speedup {sp.get('estimate')} [{sp.get('ci_low')}, {sp.get('ci_high')}]"
    if kind == "ane_analysis":
        return str(doc.get("headline", ""))
    if kind == "program":
        return f"{doc.get('file_size'):,} bytes, {len(doc.get('instructions', []))} instructions"
    if kind == "coreml_static":
        return "; ".join(f"{m['model']}: {len(m['hazards'])} hazard(s)" for m in doc.get("models", []))
    return kind


def build(roots: list[str], allow_write: bool = False):
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise MissingExtraError("mcp", "edgeprof mcp") from None
    from .. import __version__, api
    from ..render import jsonfmt

    R = Roots(roots)
    server = MCPServer("edgeprof", version=__version__,
                       instructions="edgeprof: ExecuTorch, XNNPACK and Apple Neural Engine profiles as findings with "
                                    "evidence. Every tool returns the command's JSON. Paths must lie inside the roots.")

    def tool(description: str):
        """Register a tool whose edgeprof errors (bad paths included) become tool errors with the one-line message."""
        def wrap(fn):
            @functools.wraps(fn)
            def guarded(*a, **k):
                try:
                    return fn(*a, **k)
                except EdgeprofError as e:
                    raise ToolError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
            return server.tool(description=description)(guarded)
        return wrap

    def run(fn, *args, **kw) -> dict:
        try:
            res = fn(*args, **kw)
        except EdgeprofError as e:
            raise ToolError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
        except OSError as e:
            raise ToolError(f"{e.filename or ''}: {e.strerror or e}") from None
        if isinstance(res, list):  # one result per input (latency)
            doc = {"schema_version": SCHEMA_VERSION, "kind": "collection", "items": [r.to_dict() for r in res]}
        else:
            doc = res.to_dict() if hasattr(res, "to_dict") else res
        doc = json.loads(jsonfmt.dumps(doc))  # the CLI's JSON exactly (its stable float formatting, sorted keys)
        return {"summary": _summary(doc.get("kind", ""), doc), "result": doc}

    @tool("Robust latency statistics of a profile (ETDump or timeline CSV): warm-up, outliers, "
                             "interval. Read-only.")
    def latency(path: str) -> dict:
        return run(api.latency, [R.check(path)])

    @tool("Compare two profiles (baseline, candidate): speedup = baseline / candidate with its "
                             "95 % interval and verdict; run_dir and experiment names work too. Read-only.")
    def compare(baseline: str, candidate: str, run_dir: str | None = None) -> dict:
        rd = R.check(run_dir, "run_dir")
        b, c = (baseline, candidate) if rd else (R.check(baseline), R.check(candidate))
        return run(api.compare, b, c, run_dir=rd)

    @tool("Where the time goes in one profile: categories, operators, portable vs delegated, "
                             "graph breaks; with program (a .pte) the work per instruction. Read-only.")
    def breakdown(path: str, program: str | None = None) -> dict:
        return run(api.breakdown, R.check(path), program=R.check(program, "program"))

    @tool("XNNPACK kernels registered in an xnntrace log (registration evidence, not timing). "
                             "Read-only.")
    def kernels(path: str) -> dict:
        return run(api.kernels, R.check(path))

    @tool("Validate a run folder (outputs present, fresh and consistent with the ETDumps). "
                             "Read-only.")
    def validate(run_dir: str) -> dict:
        return run(api.validate, R.check(run_dir, "run_dir"))

    @tool("Findings of an anemll-profile report (with costplan: the cross-check), a cost plan, "
                             "or a model folder of reports. Read-only.")
    def ane(path: str, costplan: str | None = None) -> dict:
        return run(api.ane, R.check(path), costplan=R.check(costplan, "costplan"))

    @tool("What is inside an ExecuTorch .pte: sizes, memory plan, instructions, XNNPACK nodes, "
                             "FLOPs. Read-only.")
    def program(path: str) -> dict:
        return run(api.program, R.check(path))

    @tool("Static analysis of a Core ML model (.mlpackage/.mlmodelc or folder): per-op cost, "
                             "hazards, ANE placement estimate. Read-only.")
    def coreml(path: str) -> dict:
        return run(api.coreml, R.check(path))

    @tool("An LLM-shaped profile per phase (prefill, decode): tokens/s, time to first token, latency slope with "
          "position separated from drift. phases: run ranges like 0:1=prefill,1:=decode (optional). Read-only.")
    def phases(path: str, phases: str | None = None) -> dict:
        return run(api.phases, R.check(path), spec=phases)

    @tool("History of a store (DuckDB file or Parquet folder): points per commit, change points "
                             "and their attribution. Read-only.")
    def history(store: str, model: str | None = None) -> dict:
        return run(api.history, R.check(store, "store"), model=model)

    if allow_write:
        @tool("Analyze a run folder or ETDumps: WRITES the Arm kit's timeline and ops-stats CSVs "
                                 "and analysis_summary.json beside the inputs.")
        def analyze(path: str) -> dict:
            return run(api.analyze, [R.check(path)], progress=False)

        @tool("Report on a run folder: WRITES report.md (and report.html when html is true) in "
                                 "the run folder.")
        def report(run_dir: str, baseline: str | None = None, candidate: str | None = None, html: bool = False) -> dict:
            rd = R.check(run_dir, "run_dir")
            return run(api.report, [rd], baseline=[baseline] if baseline else (),
                       candidate=[candidate] if candidate else (), write=True,
                       html=str(Path(rd) / "report.html") if html else None)

    return server


def serve(roots: list[str], allow_write: bool = False) -> None:
    build(roots, allow_write).run("stdio")
