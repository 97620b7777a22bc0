"""``edgeprof memory``: planned versus measured memory."""

from __future__ import annotations

import click

from ._base import CONTEXT, main, run_guarded
from .ane import _JSON, _MD, _output


@main.command("memory", context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--model", type=click.Path(path_type=str), default=None,
              help="The ONNX model an ONNX Runtime profile ran: tells weights ONNX Runtime holds prepacked.")
@_JSON
@_MD
@run_guarded
def memory(inputs, model, as_json, markdown_out):
    """What a model plans and what it really took: per configuration of a collection (`edgeprof run` records each
    launch's peak resident set per phase — start, load, init, warm-up, timed runs — and its proportional set),
    against what its program plans (weights, memory-plan arenas), with the gap split as far as the evidence goes;
    a .pte's memory plan; an ONNX Runtime profile's activation, output and parameter bytes per node and provider.

    \b
    edgeprof memory RUN_DIR
    edgeprof memory model.pte
    edgeprof memory profile.ort.json [--model model.onnx]
    """
    from .. import api
    from ..render import memory_md, terminal

    result = api.memory(list(inputs), model=model)
    md = memory_md.memory_markdown
    _output(result, md, terminal.print_markdown(md), as_json, markdown_out)
