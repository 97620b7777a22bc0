"""Fuzz target for history stores handed to edgeprof: a DuckDB file and the Parquet parts of a dataset.

    python fuzz/fuzz_store.py [SECONDS]

The property: any bytes in the store file (or in one Parquet part of a dataset) give a history or one typed
error naming the store — never another exception, a hang or a crash. A failure writes the input to
fuzz/crashes/ and exits 1.
"""

from __future__ import annotations

import gzip
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fuzz"))

from fuzz_etdump import fuzz_loop, mutate

from edgeprof.errors import InputError, UsageError


def seeds() -> tuple[bytes, dict[str, bytes]]:
    """A real DuckDB store of three fixture launches (three commits), and its Parquet export's part files."""
    from edgeprof import api

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for i, name in enumerate(("toycnn_xnn.N20", "tel_xnn.N20", "toycnn_xnnq8.N20")):
            p = d / f"{name}.etdp"
            p.write_bytes(gzip.decompress((ROOT / "tests" / "data" / "etdump" / f"{name}.etdp.gz").read_bytes()))
            api.ingest([p], store=d / "h.duckdb", commit=f"c{i}", model="m", device="d", experiment="e", threads=1,
                       time=f"2026-01-0{i + 1}T00:00:00")
        api.export(d / "h.duckdb", f"{d / 'ds'}/")
        parts = {str(p.relative_to(d / "ds")): p.read_bytes() for p in (d / "ds").rglob("*.parquet")}
        return (d / "h.duckdb").read_bytes(), parts


DB, PARTS = seeds()


def _ok(e: Exception, store: Path) -> None:
    assert isinstance(e, (InputError, UsageError)), f"{type(e).__name__}: {e}"
    assert "\n" not in str(e) and str(store) in str(e), str(e)


def check_db(data: bytes, tmp: Path) -> None:
    from edgeprof import api

    f = tmp / "h.duckdb"
    for leftover in tmp.glob("h.duckdb*"):
        leftover.unlink()
    f.write_bytes(data)
    try:
        api.history(f)
    except Exception as e:  # noqa: BLE001 - checked
        _ok(e, f)


def check_part(data: bytes, tmp: Path, rel: str) -> None:
    from edgeprof import api

    ds = tmp / "ds"
    shutil.rmtree(ds, ignore_errors=True)
    for name, content in PARTS.items():
        (ds / name).parent.mkdir(parents=True, exist_ok=True)
        (ds / name).write_bytes(data if name == rel else content)
    try:
        api.history(f"{ds}/")
    except Exception as e:  # noqa: BLE001 - checked
        _ok(e, ds)


def next_case(rng: random.Random, tmp: Path):
    if rng.random() < 0.5:
        return "store-duckdb", check_db, mutate(rng, DB), (tmp,)
    rel = rng.choice(sorted(PARTS))
    return "store-parquet", check_part, mutate(rng, PARTS[rel]), (tmp, rel)


if __name__ == "__main__":
    sys.exit(fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 4242, next_case))
