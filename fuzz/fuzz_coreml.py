"""Fuzz target for the Core ML readers: the model.mil text parser, the MILBlob weight-record reader, and the
static analyses and renderers on whatever parses.

    python fuzz/fuzz_coreml.py [SECONDS]

Inputs: byte mutations of the two model.mil samples and of the fixtures' weight files, token-level edits of the
text (a token dropped, duplicated, swapped for a bracket or a huge/negative number, deep nesting), and
``.mlmodelc`` folders pairing a mutated text with a mutated weight file, and ``.mlpackage`` folders whose model
specification (protobuf) is mutated. The property: a program (analysed and
rendered) or a typed edgeprof InputError — never another exception.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))

from fuzz_etdump import fuzz_loop, mutate  # noqa: E402

from edgeprof.analysis.mil_diff import diff  # noqa: E402
from edgeprof.analysis.mil_static import analyze_program  # noqa: E402
from edgeprof.errors import InputError  # noqa: E402
from edgeprof.io.coreml import read_bundle  # noqa: E402
from edgeprof.render import jsonfmt  # noqa: E402
from edgeprof.render.anemll_doc import estimate_document  # noqa: E402
from edgeprof.render.coreml_md import coreml_diff_markdown, coreml_markdown  # noqa: E402

DATA = ROOT / "tests" / "data" / "coreml"
TEXTS = {"conv_palettized4_ios16": (DATA / "sample_conv_palettized4_ios16.model.mil.txt").read_text(),
         "int32_kvcache_state_ios18": (DATA / "sample_int32_kvcache_state_ios18.model.mil.txt").read_text()}
WEIGHTS = {k: (DATA / f"{k}.mlpackage" / "Data" / "com.apple.CoreML" / "weights" / "weight.bin").read_bytes() for k in TEXTS}
ODD = ["(", ")", "[", "]", "{", "}", "<", ">", ",", "=", ";", "->", "?", "0", "-1", "18446744073709551616", "9" * 400,
       "0x1p+99999", "nan", "-inf", '""', '"\\', "tensor<fp16, []>", "state<", "BLOBFILE", "func", "x"]
_TOK = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_@][A-Za-z0-9_.@]*|-?\d[\w.+-]*|->|\S')


def edit(rng: random.Random, text: str) -> str:
    toks = _TOK.findall(text)
    for _ in range(rng.randint(1, 6)):
        if not toks:
            break
        i = rng.randrange(len(toks))
        r = rng.random()
        if r < 0.3:
            del toks[i]
        elif r < 0.5:
            toks.insert(i, toks[rng.randrange(len(toks))])
        elif r < 0.9:
            toks[i] = rng.choice(ODD)
        else:
            toks.insert(i, "[" * rng.randint(100, 5000))
    return " ".join(toks)


def check(data: bytes, tmp: Path, name: str, weights: bytes) -> None:
    d = tmp / "m.mlmodelc"
    (d / "weights").mkdir(parents=True, exist_ok=True)
    (d / "model.mil").write_bytes(data)
    (d / "weights" / "weight.bin").write_bytes(weights)
    _exercise(d)


def _exercise(bundle: Path) -> None:
    """Read the bundle; when it reads, analyse it and render every output."""
    try:
        prog = read_bundle(bundle)
    except InputError:
        return
    doc = analyze_program(prog, boundary_ms=0.2)
    jsonfmt.dumps(doc)
    estimate_document(doc)
    coreml_markdown({"models": [doc], "errors": []})
    coreml_diff_markdown(diff(doc, doc))


PACKAGES = sorted(DATA.glob("*.mlpackage"))


def check_package(data: bytes, tmp: Path, src: Path) -> None:
    """A package whose model specification (protobuf) is the mutated bytes."""
    import shutil

    d = tmp / "p.mlpackage"
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(src, d)
    (d / "Data" / "com.apple.CoreML" / "model.mlmodel").write_bytes(data)
    _exercise(d)


def next_case(rng: random.Random, tmp: Path):
    if rng.random() < 0.25:
        src = rng.choice(PACKAGES)
        spec = (src / "Data" / "com.apple.CoreML" / "model.mlmodel").read_bytes()
        return "mlpackage", check_package, mutate(rng, spec), (tmp, src)
    name = rng.choice(list(TEXTS))
    text, weights = TEXTS[name], WEIGHTS[name]
    r = rng.random()
    if r < 0.45:
        data = edit(rng, text).encode()
    elif r < 0.7:
        data = mutate(rng, text.encode())
    else:
        data = text.encode()
    if rng.random() < 0.35:
        weights = mutate(rng, weights)
    return "coreml", check, data, (tmp, name, weights)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 4242, next_case))
