"""The macOS side of ``edgeprof coreml profile`` / ``plan``: the only code that needs Core ML itself.

Kept thin on purpose: it asks coremltools (on macOS, with the Core ML framework) for the compute plan of each
operation and times predictions, and returns plain records. Turning records into reports happens above it,
in code tested on every OS from recorded structures.
"""

from __future__ import annotations

import sys
import time

from ..errors import MissingExtraError, UsageError

UNITS = {"all": "ALL", "cpu_and_ne": "CPU_AND_NE", "cpu_only": "CPU_ONLY", "cpu_and_gpu": "CPU_AND_GPU"}


def require_macos(what: str) -> None:
    if sys.platform != "darwin":
        raise UsageError(f"{what} needs macOS with the Core ML framework (compute plans and predictions do not exist "
                         f"on {sys.platform}); on any OS use `edgeprof coreml MODEL` for the static analysis")


def _coremltools():
    try:
        import coremltools as ct
    except ImportError:
        raise MissingExtraError("coreml", "edgeprof coreml profile/plan") from None
    return ct


def _device_name(dev) -> str:
    name = type(dev).__name__
    return "ANE" if "NeuralEngine" in name else "GPU" if "GPU" in name else "CPU" if "CPU" in name else "?"


def plan_records(model_path: str, compute_units: str) -> list[dict]:
    """One record per operation of every function: function, index, name, type, device, supported, cost."""
    require_macos("edgeprof coreml plan")
    ct = _coremltools()
    from coremltools.models.compute_plan import MLComputePlan

    m = ct.models.MLModel(model_path, compute_units=getattr(ct.ComputeUnit, UNITS[compute_units]))
    compiled = model_path if model_path.endswith(".mlmodelc") else m.get_compiled_model_path()
    plan = MLComputePlan.load_from_path(compiled, compute_units=getattr(ct.ComputeUnit, UNITS[compute_units]))
    program = plan.model_structure.program
    if program is None:
        raise UsageError(f"{model_path}: not an ML Program (the compute plan lists ML Program operations)")
    out = []
    for fname in sorted(program.functions):
        for i, op in enumerate(program.functions[fname].block.operations):
            usage = plan.get_compute_device_usage_for_mlprogram_operation(op)
            cost = plan.get_estimated_cost_for_mlprogram_operation(op)
            out.append({"function": fname, "index": i, "name": op.outputs[0].name if op.outputs else op.operator_name,
                        "type": op.operator_name,
                        "device": _device_name(usage.preferred_compute_device) if usage else "?",
                        "supported": [_device_name(d) for d in usage.supported_compute_devices] if usage else [],
                        "cost": cost.weight if cost is not None else None})
    return out


def time_predictions(model_path: str, compute_units: str, runs: int) -> dict:
    """Load, one warm-up prediction on zero inputs shaped from the spec, then ``runs`` timed ones (ms)."""
    require_macos("edgeprof coreml profile")
    ct = _coremltools()
    import numpy as np

    t0 = time.perf_counter()
    m = ct.models.MLModel(model_path, compute_units=getattr(ct.ComputeUnit, UNITS[compute_units]))
    load_ms = 1e3 * (time.perf_counter() - t0)
    inputs = {}
    for inp in m.get_spec().description.input:
        if inp.type.WhichOneof("Type") != "multiArrayType":
            return {"status": "unsupported_inputs", "load_ms": load_ms,
                    "error": "Cannot auto-create dummy inputs (non-array inputs)"}
        arr = inp.type.multiArrayType
        dt = {65568: np.float32, 65552: np.float16, 131104: np.int32}.get(arr.dataType, np.float32)
        inputs[inp.name] = np.zeros(tuple(arr.shape), dtype=dt)
    try:
        t = time.perf_counter()
        m.predict(inputs)
        steady = 1e3 * (time.perf_counter() - t)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            m.predict(inputs)
            times.append(1e3 * (time.perf_counter() - t))
    except Exception as e:  # the framework's own message, one line
        return {"status": "prediction_failed", "load_ms": load_ms,
                "error": str(e).splitlines()[0] if str(e) else type(e).__name__}
    return {"status": "ok", "load_ms": load_ms, "steady_ms": steady, "times_ms": times}
