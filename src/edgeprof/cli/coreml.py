"""``edgeprof coreml``: Core ML models read statically on any OS; a thin macOS collector."""

from __future__ import annotations

import click

from ._base import CONTEXT, main, run_guarded, say
from .ane import _JSON, _MD, DefaultGroup, _output


class _CoreMLGroup(DefaultGroup):
    default_command = "static"


_CHIP = click.option("--chip", default=None, help="Chip whose public ANE peak and memory bandwidth the roofline uses "
                                                  "(M1, M2, M3, M4; default M2).")
_BOUNDARY = click.option("--boundary-ms", type=float, default=None,
                         help="Cost of one ANE↔CPU switch in the estimated islands (default 0.2, as `edgeprof ane`).")


@main.group(cls=_CoreMLGroup, context_settings=CONTEXT, invoke_without_command=False)
def coreml():
    """Core ML models (.mlpackage, .mlmodelc, .mlmodel, or a folder of them), statically, on any OS.

    \b
    edgeprof coreml MODEL [--json] [--markdown F] [--as-anemll F]   per-op FLOPs/bytes, hazards, ANE estimate
    edgeprof coreml diff A B                                        two versions of a model
    edgeprof coreml profile MODEL / plan MODEL                      macOS only: measured reports
    (`edgeprof coreml static --help` lists the options of the first form)
    """


@coreml.command("static", context_settings=CONTEXT, hidden=True)
@click.argument("model", type=click.Path(path_type=str))
@_CHIP
@_BOUNDARY
@click.option("--as-anemll", "as_anemll", type=click.Path(path_type=str), default=None,
              help="Also write the estimate as an anemll-profile–shaped JSON that `edgeprof ane` reads.")
@_JSON
@_MD
@run_guarded
def static(model, chip, boundary_ms, as_anemll, as_json, markdown_out):
    """Per-op FLOPs, bytes and weights, ANE hazards and a placement estimate of a Core ML model (or of every
    model in a folder: one analysis per submodel). Nothing is run: evidence `mil_static`.

    \b
    edgeprof coreml model.mlpackage
    edgeprof coreml model.mlmodelc --json
    edgeprof coreml models/ --markdown coreml.md
    edgeprof coreml model.mlpackage --as-anemll estimate.json && edgeprof ane estimate.json
    """
    from .. import api
    from ..render import coreml_md, terminal

    if as_anemll:
        result = api.coreml_as_anemll(model, as_anemll, chip=chip, boundary_ms=boundary_ms)
    else:
        result = api.coreml(model, chip=chip, boundary_ms=boundary_ms)
    _output(result, coreml_md.coreml_markdown, terminal.print_markdown(coreml_md.coreml_markdown), as_json, markdown_out)


@coreml.command("diff", context_settings=CONTEXT)
@click.argument("before", type=click.Path(path_type=str))
@click.argument("after", type=click.Path(path_type=str))
@_CHIP
@_BOUNDARY
@_JSON
@_MD
@run_guarded
def diff(before, after, chip, boundary_ms, as_json, markdown_out):
    """Two versions of a Core ML model: ops per type, FLOPs, weight bytes, hazards and estimated islands.

    \b
    edgeprof coreml diff fp16.mlpackage palettized.mlpackage
    """
    from .. import api
    from ..render import coreml_md, terminal

    result = api.coreml_diff(before, after, chip=chip, boundary_ms=boundary_ms)
    _output(result, coreml_md.coreml_diff_markdown, terminal.print_markdown(coreml_md.coreml_diff_markdown), as_json,
            markdown_out)


_UNITS = click.Choice(["all", "cpu_and_ne", "cpu_only", "cpu_and_gpu"])


@coreml.command("profile", context_settings=CONTEXT)
@click.argument("model", type=click.Path(path_type=str))
@click.option("--runs", type=int, default=10, show_default=True, help="Timed predictions after one warm-up.")
@click.option("--compute-units", type=_UNITS, default="all", show_default=True)
@click.option("--out", "out", type=click.Path(path_type=str), required=True,
              help="Where to write the anemll-profile–compatible JSON.")
@run_guarded
def profile(model, runs, compute_units, out):
    """macOS only: timed predictions and the compute plan through coremltools, written as an
    anemll-profile–compatible JSON report (`edgeprof ane OUT` reads it)."""
    from .. import api

    path = api.coreml_profile(model, out, runs=runs, compute_units=compute_units)
    say(f"wrote {path}", err=True)


@coreml.command("plan", context_settings=CONTEXT)
@click.argument("model", type=click.Path(path_type=str))
@click.option("--compute-units", type=_UNITS, default="all", show_default=True)
@click.option("--out", "out", type=click.Path(path_type=str), required=True,
              help="Where to write the ane-costplan–compatible JSON.")
@run_guarded
def plan(model, compute_units, out):
    """macOS only: MLComputePlan per-op device usage and cost weights, written as an ane-costplan–compatible
    JSON report."""
    from .. import api

    path = api.coreml_plan(model, out, compute_units=compute_units)
    say(f"wrote {path}", err=True)
