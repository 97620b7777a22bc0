"""Rebuild tests/data and the bundled example from a folder of real ExecuTorch fixtures.

    python tools/make_test_data.py FIXTURES_DIR

FIXTURES_DIR holds the recorded ``*.etdp`` ETDumps, ``*.etrecord`` ETRecords and
``ground_truth/*.csv.gz`` (ExecuTorch Inspector's numbers). ETDumps are stored gzip-compressed in
tests/data (tests decompress them); ETRecords are trimmed to the JSON members edgeprof reads (the
pickled weights are dropped), except one kept whole to test reading a complete real ETRecord.
"""

import gzip
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEEP = ("ETRECORD_V0", "debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map", "export_graph_id",
        "edge_dialect_exported_program/forward")
FULL_ETRECORD = "toycnn_xnnq8.etrecord"
EXAMPLE = {"portable": "toycnn_portable", "xnnpack_fp32": "toycnn_xnn", "xnnpack_int8": "toycnn_xnnq8"}


def trim(src: Path, dst: Path) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename in KEEP:
                zout.writestr(info.filename, zin.read(info))


def main(fixtures: Path) -> None:
    data = ROOT / "tests" / "data"
    for sub in ("etdump", "etrecord", "ground_truth"):
        (data / sub).mkdir(parents=True, exist_ok=True)
    for f in sorted(fixtures.glob("*.etdp")):
        with open(f, "rb") as fin, gzip.GzipFile(data / "etdump" / (f.name + ".gz"), "wb", mtime=0) as fout:
            shutil.copyfileobj(fin, fout)
    for f in sorted(fixtures.glob("*.etrecord")):
        trim(f, data / "etrecord" / f.name)
    shutil.copyfile(fixtures / FULL_ETRECORD, data / "etrecord" / FULL_ETRECORD.replace(".etrecord", ".full.etrecord"))
    for f in sorted((fixtures / "ground_truth").glob("*.csv.gz")):
        shutil.copyfile(f, data / "ground_truth" / f.name)
    ex = ROOT / "src" / "edgeprof" / "examples" / "toycnn"
    for exp, stem in EXAMPLE.items():
        run = ex / "runs" / "linux" / exp
        run.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fixtures / f"{stem}.N20.etdp", run / f"toycnn_{exp}_t1.etdump")
        (ex / "artifacts").mkdir(parents=True, exist_ok=True)
        trim(fixtures / f"{stem}.etrecord", ex / "artifacts" / f"toycnn_{exp}.etrecord")
        shutil.copyfile(fixtures / f"{stem}.pte", ex / "artifacts" / f"toycnn_{exp}.pte")  # for `edgeprof run`


if __name__ == "__main__":
    main(Path(sys.argv[1]))
