"""Fuzz target for the other profile readers: ONNX Runtime profiles (JSON), LiteRT op profiles (text tables and the
BenchmarkProfilingData protobuf) and timeline CSVs, plain and gzip'd, through the one entry every command uses
(:func:`edgeprof.io.readers.read_profile`).

    python fuzz/fuzz_profiles.py [SECONDS]

Cases: JSON-level edits of the fixture ONNX Runtime profiles (values of another type, non-finite and huge numbers)
and string edits that escape lone UTF-16 surrogates (or a surrogate pair, which is text); protobufs (written with
LiteRT's own classes when ai-edge-litert is installed, else the fixture tables only) whose varints run past 64 bits,
whose counts and calls are absurd, negative or zero, byte-mutated; timeline CSV cells escaping lone surrogates; any of
them gzip'd — whole, cut short, with trailing bytes, or (rarely: each costs ~0.2 s) as a bomb
(tests/helpers/hostile_round3.py).

The property: a Profile whose events and strings every writer can take (each name encodes as UTF-8), or a typed
edgeprof InputError naming the file in one line — never another exception, a hang (20 s) or 500 MB. A crash writes
the input to fuzz/crashes/ and exits 1.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from fuzz_etdump import fuzz_loop, mutate  # noqa: E402

import hostile_round3 as h3  # noqa: E402
from edgeprof.errors import InputError  # noqa: E402
from edgeprof.io.readers import read_profile  # noqa: E402

DATA = ROOT / "tests" / "data"
ORT_DOCS = [json.loads(gzip.decompress(p.read_bytes()))
            for p in sorted((DATA / "ort").glob("cnn_cpu_t1_l*.ort.json.gz"))]
LITERT_TEXT = [p.read_bytes() for p in sorted((DATA / "litert").glob("*.log"))] + [(DATA / "litert" / "cnn_cpu_ops.csv")
                                                                                   .read_bytes()]
try:
    from ai_edge_litert import profiling_info_pb2 as PB2
except ImportError:  # the protobuf cases need LiteRT's classes to write a well-formed message first
    PB2 = None
ODD = [None, True, 0, -1, 1.5, 2**63, 10**30, 1e308, float("inf"), float("nan"), "x", "", [], {}, "9" * 5000]
ESCAPES = ["\\ud800", "\\udfff", "\\ud83d", "\\ud83d\\ude00", "\\\\ud800", "\\u0000", "\\udc00\\ud800"]


def check(data: bytes, tmp: Path, name: str) -> None:
    p = tmp / name
    p.write_bytes(data)
    try:
        prof = read_profile(p)
    except InputError as e:
        assert "\n" not in str(e) and str(e).startswith(str(p)), str(e)
        return
    for col in ("name", "module_path"):
        if col in prof.events.columns:
            for s in prof.events[col].cast(str).unique().drop_nulls().to_list():
                s.encode("utf-8")  # a lone surrogate would raise here, as in every writer


def _edit(rng: random.Random, doc):
    doc = json.loads(json.dumps(doc))
    for _ in range(rng.randint(1, 6)):
        e = rng.choice(doc)
        if not isinstance(e, dict):
            continue
        key = rng.choice(sorted(e) + ["args"])
        if key == "args" and isinstance(e.get("args"), dict) and e["args"]:
            e["args"][rng.choice(sorted(e["args"]))] = rng.choice(ODD)
        else:
            e[key] = rng.choice(ODD)
    return doc


def ort_case(rng: random.Random) -> bytes:
    doc = rng.choice(ORT_DOCS)
    if rng.random() < 0.4:
        doc = _edit(rng, doc)
    text = json.dumps(doc, allow_nan=True)
    if rng.random() < 0.5:  # escapes spliced into strings (after an opening quote)
        for _ in range(rng.randint(1, 3)):
            at = text.find('"', rng.randrange(len(text)))
            if at >= 0:
                text = text[: at + 1] + rng.choice(ESCAPES) + text[at + 1:]
    data = text.encode()
    return mutate(rng, data) if rng.random() < 0.2 else data


def overlong(rng: random.Random, raw: bytes) -> bytes:
    """Every ten-byte varint (the -1 counts) given a last byte beyond the 64th bit, or an eleventh byte."""
    ten = b"\xff" * 9 + b"\x01"
    tail = rng.choice([b"\x7f", b"\x02", b"\x81\x01", b"\xff\x7f"])
    return raw.replace(ten, b"\xff" * 9 + tail)


def litert_case(rng: random.Random) -> tuple[bytes, str]:
    if PB2 is None or rng.random() < 0.4:
        data = rng.choice(LITERT_TEXT)
        return (mutate(rng, data) if rng.random() < 0.7 else data), "fuzz.litert.log"
    raw = h3.litert_proto(PB2, times_called=rng.choice([None, None, 0, 1, 10_001, 2**40]),
                          count=rng.choice([None, None, 0, -1, 2**62, 7]))
    r = rng.random()
    if r < 0.3:
        raw = overlong(rng, raw)
    elif r < 0.6:
        raw = mutate(rng, raw)
    return raw, "fuzz.pb"


_CSV = None


def csv_case(rng: random.Random, tmp: Path) -> bytes:
    global _CSV
    if _CSV is None:
        from click.testing import CliRunner

        from edgeprof.cli import main

        src = tmp / "seed.etdp"
        src.write_bytes(h3.fixture_etdump())
        CliRunner().invoke(main, ["analyze", str(src), "--output-dir", str(tmp / "seed"), "--op-types", "inline",
                                  "--no-progress"])
        _CSV = (tmp / "seed" / "seed_exec_all_runs_timeline.csv").read_text()
    lines = _CSV.splitlines()
    for _ in range(rng.randint(1, 6)):
        i = rng.randrange(1, len(lines))
        lines[i] = lines[i].rstrip(",") + "," + '"[""x' + rng.choice(ESCAPES).replace('"', '""') + '""]"'
    return ("\n".join(lines) + "\n").encode()


def gz(rng: random.Random, data: bytes) -> bytes:
    r = rng.random()
    if r < 0.04:
        return h3.gzip_bomb(rng.choice([b" ", b"\n", b"\0"]) * (1 << 16), 1300, head=data[:200])
    out = gzip.compress(data, 1)
    if r < 0.3:
        return out[: rng.randrange(len(out))]
    if r < 0.4:
        return out + rng.choice([b"\0", out])
    return out


def next_case(rng: random.Random, tmp: Path):
    r = rng.random()
    if r < 0.45:
        data, name = ort_case(rng), "fuzz.ort.json"
    elif r < 0.8:
        data, name = litert_case(rng)
    else:
        data, name = csv_case(rng, tmp), "fuzz_exec_all_runs_timeline.csv"
    if rng.random() < 0.2:
        data, name = gz(rng, data), name + ".gz"
    return name, check, data, (tmp, name)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 2468, next_case))
