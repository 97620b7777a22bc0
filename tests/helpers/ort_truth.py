"""The truth of an ONNX Runtime profile, read from its JSON with the standard library (no edgeprof code): its events,
its runs (`model_run` spans in time order), each node's run, and the op types of the recordings in tests/data/ort
mapped to their categories by hand."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

ORT = Path(__file__).resolve().parents[1] / "data" / "ort"

# the op types of these recordings, by hand (the taxonomy's table is tested on its own, row by row)
CATEGORY = {"Conv": "CONV", "FusedConv": "CONV", "QLinearConv": "CONV", "MaxPool": "POOL", "NhwcMaxPool": "POOL",
            "GlobalAveragePool": "POOL", "QLinearGlobalAveragePool": "POOL", "Gemm": "GEMM", "QGemm": "GEMM",
            "MatMul": "GEMM", "FusedMatMul": "GEMM", "Softmax": "ACTIVATION", "QLinearSoftmax": "ACTIVATION",
            "Hardmax": "ACTIVATION", "QuickGelu": "ACTIVATION", "Sigmoid": "ACTIVATION", "QLinearSigmoid": "ACTIVATION",
            "Resize": "RESIZE", "Flatten": "RESHAPE", "Reshape": "RESHAPE", "ReorderOutput": "DATA_MOVEMENT",
            "ReorderInput": "DATA_MOVEMENT", "Transpose": "DATA_MOVEMENT", "QLinearMul": "ELEMENTWISE",
            "Mul": "ELEMENTWISE", "QuantizeLinear": "QUANT", "DequantizeLinear": "QUANT",
            "OpenVINO-EP-subgraph_1": "OTHER", "OpenVINO-EP-subgraph_2": "OTHER"}


def events(name: str) -> list[dict]:
    raw = (ORT / name).read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def runs(ev: list[dict]) -> list[tuple[int, int]]:
    """(ts, dur) of each model_run, in time order (µs)."""
    return sorted((e["ts"], e["dur"]) for e in ev if e["cat"] == "Session" and e["name"] == "model_run")


def run_of(e: dict, spans: list[tuple[int, int]]) -> int:
    return next(i for i, (t, d) in enumerate(spans) if t <= e["ts"] and e["ts"] + e["dur"] <= t + d)
