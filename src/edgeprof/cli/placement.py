"""``edgeprof placement``: where each operator ran; two builds diffed and gated."""

from __future__ import annotations

import click

from ._base import CONTEXT, main, run_guarded
from .ane import _JSON, _MD, _output


@main.command("placement", context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--diff", "as_diff", is_flag=True,
              help="Two inputs, baseline then candidate: the operators that moved, partitions, a verdict.")
@click.option("--fail-on", "fail_on", type=click.Choice(["fallback", "new-partition"]), multiple=True,
              help="With --diff: exit 1 when an operator leaves its accelerator (fallback) or the candidate has "
                   "more partitions or splits one (new-partition). Repeatable.")
@click.option("--model", type=click.Path(path_type=str), default=None,
              help="The ONNX model an ONNX Runtime profile ran: every model node placed, also inside a provider's "
                   "fused subgraph.")
@click.option("--candidate-model", type=click.Path(path_type=str), default=None,
              help="With --diff: the candidate's ONNX model when it differs from --model.")
@click.option("--providers", default=None,
              help="For an ONNX model: execution providers in order (comma-separated); CPUExecutionProvider is "
                   "added last. The session's assignment of every node, nothing run.")
@click.option("--method", default=None, help="For a .pte: the method to place (default: the first).")
@_JSON
@_MD
@run_guarded
def placement(inputs, as_diff, fail_on, model, candidate_model, providers, method, as_json, markdown_out):
    """Where each operator ran: per operator its backend, delegate, execution provider or compute unit; the
    partitions it forms (maximal runs of one placement in execution order); the share of time and of work each
    placement carries. From a profile (ETDump, ONNX Runtime, LiteRT), an ExecuTorch program (.pte), an ONNX model
    (with --providers), or an anemll-profile / ane-costplan report.

    \b
    edgeprof placement model.etdp | model.pte | profile.ort.json [--model model.onnx] | report.json
    edgeprof placement model.onnx --providers OpenVINOExecutionProvider
    edgeprof placement --diff BASELINE CANDIDATE [--fail-on fallback] [--fail-on new-partition]
    """
    from .. import api
    from ..errors import CheckFailed, UsageError
    from ..render import placement_md, terminal

    provs = [p.strip() for p in providers.split(",") if p.strip()] if providers else None
    if as_diff:
        if len(inputs) != 2:
            raise UsageError("placement --diff takes two inputs: the baseline, then the candidate")
        result = api.placement_diff(inputs[0], inputs[1], model=model, candidate_model=candidate_model,
                                    providers=provs, method=method)
        md = placement_md.placement_diff_markdown
    else:
        if len(inputs) != 1:
            raise UsageError("placement takes one input (two with --diff)")
        if fail_on or candidate_model:
            raise UsageError("--fail-on and --candidate-model go with --diff")
        result = api.placement(inputs[0], model=model, providers=provs, method=method)
        md = placement_md.placement_markdown
    _output(result, md, terminal.print_markdown(md), as_json, markdown_out)
    reasons = [r for r in (api.placement_gate(result.data, f) for f in fail_on) if r]
    if reasons:
        raise CheckFailed("placement gate: " + "; ".join(reasons))
