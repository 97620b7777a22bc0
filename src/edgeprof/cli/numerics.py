"""``edgeprof numerics``: where two programs' results part ways (two debug recordings of the same input)."""

from __future__ import annotations

import click

from ..conventions import NUMERICS_THRESHOLD_DB
from ._base import CONTEXT, echo_json, main, run_guarded


@main.command("numerics", context_settings=CONTEXT)
@click.argument("baseline", type=click.Path(path_type=str))
@click.argument("candidate", type=click.Path(path_type=str))
@click.option("--debug-buffer", "debug_buffers", multiple=True, type=click.Path(path_type=str),
              help="A debug buffer not beside its ETDump (default: <stem>.bin beside each): given to the ETDump whose "
                   "stem it shares, else to BASELINE then CANDIDATE in order. Repeat for both.")
@click.option("--threshold-db", "threshold_db", type=click.FloatRange(0, 300), default=None,
              help=f"dB of SQNR lost from one point to the next that count as 'accuracy lost' "
                   f"[default: {NUMERICS_THRESHOLD_DB:g}].")
@click.option("--run", type=click.IntRange(0, None), default=None, help="The run to compare [default: the first].")
@click.option("--etrecord", type=click.Path(path_type=str), default=None,
              help="One ETRecord for both (default: each ETDump's own, found as analyze finds it).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@run_guarded
def numerics_cmd(baseline, candidate, debug_buffers, threshold_db, run, etrecord, as_json):
    """Where do two programs' results part ways? The same input through two programs (fp32 vs int8, portable vs
    XNNPACK), each recorded with a debug buffer: the model's output and every matched point inside (operators run
    outside a delegate, delegate inputs and outputs), with max/mean |diff|, cosine similarity and SQNR, and the
    first step where SQNR falls by more than the threshold.

    \b
    edgeprof run fp32.pte int8.pte --runs 1 --warmup 0 --launches 1 --debug-buffer 4MB
    edgeprof numerics fp32.debug.etdp int8.debug.etdp
    edgeprof numerics A.etdp B.etdp --debug-buffer elsewhere/A.bin --json
    """
    from .. import api
    from ..render import terminal
    from ..render.numerics_md import numerics_markdown

    res = api.numerics(baseline, candidate, debug_buffers=debug_buffers, threshold_db=threshold_db, run=run,
                       etrecord=etrecord)
    if as_json:
        echo_json(res)
        return
    terminal.print_markdown(numerics_markdown)(res.doc.to_json())
