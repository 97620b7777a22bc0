"""Regenerate tests/data/numerics: debug recordings of the fixture programs made with `edgeprof run --debug-buffer`.

    python tools/make_numerics_data.py            (needs the run extra: pip install -e '.[run]')

One launch, one timed run, no warm-up, per program (toy CNN and transformer layer: portable, XNNPACK fp32, XNNPACK
int8), all on the inputs `edgeprof run` generates once per signature (seed 0). Kept per program:
`<program>.debug.etdp.gz` (the ETDump), `<program>.debug.bin.gz` (its debug buffer, as far as the recording used it),
`<program>.forward.npy` (the program's forward() output on the same input, from the ExecuTorch runtime: the oracle
the output comparison is checked against), and `<model>.inputs.npz` (the input). The transformer layer's portable
recording (1.4 MB of tensors) is left out to keep the test data small: the tests with the run extra record it.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
OUT = DATA / "numerics"
PROGRAMS = ("toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_xnn", "tel_xnnq8")
DEBUG_BUFFER = "2MB"  # the largest recording kept (tel_xnn) uses 0.86 MB


def record(programs, work: Path) -> Path:
    """Run ``edgeprof run --debug-buffer`` on ``programs`` (their ETRecords beside them) into ``work/run``."""
    for p in programs:
        shutil.copy2(DATA / "pte" / f"{p}.pte", work / f"{p}.pte")
        shutil.copy2(DATA / "etrecord" / f"{p}.etrecord", work / f"{p}.etrecord")
    run_dir = work / "run"
    subprocess.run([sys.executable, "-m", "edgeprof", "run", *[str(work / f"{p}.pte") for p in programs],
                    "--runs", "1", "--warmup", "0", "--launches", "1", "--debug-buffer", DEBUG_BUFFER,
                    "--out", str(run_dir), "--no-progress"], check=True)
    return run_dir


def forward(pte: Path, inputs: Path):
    """The program's output on ``inputs`` through the ExecuTorch runtime (no ETDump)."""
    import numpy as np
    import torch
    from executorch.extension.pybindings import _C as rt

    arrays = [np.load(inputs)[k] for k in np.load(inputs).files]
    method = rt._load_program(str(pte), enable_etdump=False, debug_buffer_size=0).load_method("forward")
    return method.call([torch.from_numpy(a.copy()) for a in arrays])[0].numpy()


def main() -> int:
    import numpy as np

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run_dir = record(PROGRAMS, work)
        for p in PROGRAMS:
            stem = f"{p}_t1_l1"
            for src, dest in ((run_dir / p / f"{stem}.etdump", OUT / f"{p}.debug.etdp.gz"),
                              (run_dir / p / f"{stem}.bin", OUT / f"{p}.debug.bin.gz")):
                dest.write_bytes(gzip.compress(src.read_bytes(), 9, mtime=0))
        for inp in sorted((run_dir / "inputs").glob("*.npz")):
            shape = np.load(inp)[np.load(inp).files[0]].shape
            model = "toycnn" if len(shape) == 4 else "tel"
            shutil.copy2(inp, OUT / f"{model}.inputs.npz")
        for p in PROGRAMS:
            np.save(OUT / f"{p}.forward.npy", forward(work / f"{p}.pte", OUT / f"{p.split('_')[0]}.inputs.npz"))
    for f in sorted(OUT.iterdir()):
        print(f"{f.stat().st_size:>10,}  {f.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
