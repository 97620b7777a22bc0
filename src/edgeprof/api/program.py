"""``edgeprof program``: what is inside a .pte, torch-free; two programs side by side."""

from __future__ import annotations

from .results import ProgramDiff, ProgramInfo


def program(path) -> ProgramInfo:
    from ..analysis.pte_program import summarize
    from ..io.pte import read_pte

    return ProgramInfo(summarize(read_pte(path)))


def program_diff(a, b) -> ProgramDiff:
    from ..analysis.pte_program import compare_programs

    return ProgramDiff(compare_programs(program(a).data, program(b).data))
