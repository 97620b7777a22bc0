"""ExecuTorch Inspector's reading of the ETDumps here, the tests' independent oracle of per-event durations
(Not run by the tests; made once with executorch 1.5.1 in the project venv)::

    . .venv/bin/activate && python tests/data/placement/inspector_truth.py

Writes ``<name>.N10.inspector.csv.gz`` per ETDump: one row per event and run as ``Inspector(etdump_path=…)`` lists
them (``event_blocks`` → ``events`` → ``perf_data.raw``, in ms), the columns of ``tests/data/ground_truth``.
"""
import csv
import gzip
import io
import sys
import tempfile
from pathlib import Path

from executorch.devtools import Inspector

HERE = Path(__file__).resolve().parent
for gz in sorted(HERE.glob("*.N10.etdp.gz")):
    with tempfile.NamedTemporaryFile(suffix=".etdp") as tmp:
        tmp.write(gzip.decompress(gz.read_bytes()))
        tmp.flush()
        ins = Inspector(etdump_path=tmp.name)
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["block_index", "block_name", "event_index", "event_name", "delegate_debug_identifier",
                    "is_delegated_op", "instruction_id", "run_index", "duration_ms"])
        for b, block in enumerate(ins.event_blocks):
            for e, ev in enumerate(block.events):
                raw = ev.perf_data.raw if ev.perf_data is not None else []
                for r, d in enumerate(raw):
                    w.writerow([b, block.name, e, ev.name, ev.delegate_debug_identifier if ev.delegate_debug_identifier
                                is not None else "", ev.is_delegated_op, ev._instruction_id, r, repr(float(d))])
    target = HERE / gz.name.replace(".etdp.gz", ".inspector.csv.gz")
    target.write_bytes(gzip.compress(out.getvalue().encode(), mtime=0))
    print(target.name, file=sys.stderr)
