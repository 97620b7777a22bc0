"""The normalized placement of a model: per operator, where it ran (or is planned to run), in topological order.

One shape for every runtime — an ExecuTorch instruction or XNNPACK node, an ONNX Runtime node, a LiteRT op, a
Core ML MIL op — built by :mod:`edgeprof.analysis.placement` from a profile, a program or a plan. Nothing here knows
a file format; partitions, shares and diffs are analyses of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# how an operator's placement is known
MEASURED = "measured"    # the profile timed it there
STATIC = "static"        # the program or the session's assignment puts it there (nothing ran)
PLANNED = "planned"      # a compute plan prefers that device for it (Core ML)
INFERRED = "inferred"    # by elimination: inside an opaque accelerator partition, or fused into a neighbour
BASES = (MEASURED, STATIC, PLANNED, INFERRED)

UNKNOWN = "?"            # a placement the evidence does not name (an ane-costplan op without a device)


@dataclass(frozen=True)
class PlacedOp:
    """One operator. ``key`` pairs it with the same operator of another build (see
    :func:`edgeprof.analysis.placement.op_key`); ``placement`` is the runtime's own name of where it ran."""

    index: int                 # position in topological (execution) order, from 0
    key: str                   # identity across builds
    name: str                  # as the runtime names it
    op: str                    # its operator type as named (aten op, XNNPACK node, ONNX op type, MIL op …)
    family: str                # the operator family the pairing uses (conv, matmul, sigmoid, …)
    placement: str             # backend / delegate / execution provider / compute unit
    accelerated: bool          # placed on an accelerator (a delegate, a non-CPU provider, ANE/GPU)
    basis: str = MEASURED      # one of BASES
    time_ms: float | None = None   # mean time per run where the evidence times it
    flops: float | None = None     # work, where it is known
    plan_weight: float | None = None  # a compute plan's weight of this op (Core ML: a fraction of the model's work)


@dataclass
class Placement:
    """Where every operator of one model ran, from one input."""

    source: str
    runtime: str               # edgeprof.runtimes name
    evidence: str              # evidence label (conventions.EVIDENCE_NAMES)
    host: str                  # the runtime's own name of its CPU kernels (what a fallback lands on)
    ops: list[PlacedOp] = field(default_factory=list)
    runs: int | None = None    # runs the times are means over (None: nothing ran)
    run_ms: float | None = None  # mean end-to-end time per run, where measured
    focus: str | None = None   # the accelerator the model targets, where one is named (Core ML: ANE or GPU)
    warnings: list[str] = field(default_factory=list)
