"""Record, once, what ExecuTorch's own tools say about the fixture programs (needs executorch, which ships
``flatc``): the extended header, and the program and each XNNPACK delegate's flatbuffer decoded by ``flatc``
with ExecuTorch's schemas. Large byte arrays are replaced by their lengths. The tests read these files
without torch or executorch.

    python tools/make_pte_ground_truth.py ../shared/fixtures/executorch tests/data/pte
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import struct
import sys
import tempfile
from pathlib import Path


def _shrink(x):
    if isinstance(x, dict):
        return {k: (len(v) if k in ("data", "storage") and isinstance(v, list) else _shrink(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [_shrink(v) for v in x]
    return x


def _decompile(schema: Path, data: bytes, extra=()) -> dict:
    from executorch.exir._serialize._flatbuffer import _flatc_decompile

    with tempfile.TemporaryDirectory() as d:
        b = Path(d) / "x.bin"
        b.write_bytes(data)
        _flatc_decompile(d, str(schema), str(b), ["--raw-binary", *extra])
        text = (Path(d) / "x.json").read_text()
        # flatc writes non-finite floats bare (inf, -inf, nan): spell them as Python's json reads them
        text = re.sub(r"(?<=[:\[,\s])(-?)inf\b", lambda m: m.group(1) + "Infinity", text)
        text = re.sub(r"(?<=[:\[,\s])-?nan\b", "NaN", text)
        return json.loads(text)


def main(src: str, out: str) -> None:
    import executorch
    from executorch.exir._serialize._program import _get_extended_header

    et = Path(list(executorch.__path__)[0])
    prog_schema = et / "exir" / "_serialize" / "program.fbs"
    xnn_schema = et / "backends" / "xnnpack" / "serialization" / "runtime_schema.fbs"
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for pte in sorted(Path(src).glob("*.pte")):
        data = pte.read_bytes()
        h = _get_extended_header(data)
        with tempfile.TemporaryDirectory() as d:  # flatc needs the included schema beside the program's
            shutil.copy(prog_schema, d)
            shutil.copy(prog_schema.with_name("scalar_type.fbs"), d)
            doc = _decompile(Path(d) / "program.fbs", data[: h.program_size])
        base = h.segment_base_offset
        xnn = []
        for plan in doc["execution_plan"]:
            for i, dl in enumerate(plan.get("delegates", [])):
                ref = dl["processed"]
                if ref.get("location") == "SEGMENT":
                    seg = doc["segments"][ref["index"]]
                    blob = data[base + seg["offset"]: base + seg["offset"] + seg["size"]]
                else:
                    blob = bytes(doc["backend_delegate_data"][ref.get("index", 0)]["data"])
                if dl["id"] != "XnnpackBackend":
                    continue
                hl = struct.unpack_from("<H", blob, 8)[0]
                fo, fs = struct.unpack_from("<II", blob, 10)
                assert blob[4:8] == b"XH00" and hl == 30
                with tempfile.TemporaryDirectory() as d:
                    shutil.copy(xnn_schema, d)
                    g = _decompile(Path(d) / xnn_schema.name, blob[fo: fo + fs])
                xnn.append({"plan": plan["name"], "delegate_index": i, "blob_size": len(blob), "graph": _shrink(g)})
        doc = _shrink(doc)
        rec = {"file": pte.name, "file_size": len(data), "header": {"program_size": h.program_size,
               "segment_base_offset": h.segment_base_offset, "segment_data_size": h.segment_data_size},
               "program": doc, "xnnpack": xnn}
        with gzip.open(out / f"{pte.stem}.ground_truth.json.gz", "wt") as f:
            json.dump(rec, f, sort_keys=True)
        shutil.copy(pte, out / pte.name)
        print(pte.name, len(data), len(xnn), "XNNPACK delegates")


if __name__ == "__main__":
    main(*sys.argv[1:3])
