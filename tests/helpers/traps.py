"""A root full of traps for the agent server, with secrets beside it.

``build(base)`` lays out::

    base/outside/                 secrets: an ETDump, its ETRecord and .pte, a text note, a report target
    base/root/                    the server's root
        tel_xnn.etdp, tel_xnnq8.etdp, tel_xnnq8.pte, profile.json, kv.mlpackage/, xnn.log   (honest inputs)
        linked_t1.etdump          → ../outside/secret_t1.etdump        (a symlink found in a folder)
        mf_abs/, mf_rel/          an ETDump whose manifest.json names the outside model (absolute / ../../)
        leak.mlmodelc/model.mil   → ../outside/notes.txt
        zero.mlmodelc/model.mil   → /dev/zero
        fifo.etdp                 a FIFO
        fifo_store                a FIFO given as a history store
        view.duckdb               a store whose ``launches`` is a view reading ../outside/notes.txt
        huge.duckdb               a store whose ``runs`` is a view over range(1e11)
        r6/report.md              → ../outside/report_target.md (a write through a link)
        r7/report.md              a FIFO where the report goes
        r8/report.md              → /proc/self/fd/1 (the server's own stdout, its JSON-RPC stream)
        deep/out_toycnn/runs/linux                a deeper root's run folder (a second server root):
        deep/out_toycnn/runs/linux_trace/*.log    trace logs beside it
        deep/out_toycnn/manifest.json             a device string above it
        deep/out_toycnn/artifacts/*.etrecord      ETRecords above it

Every secret holds ``SECRET`` (text) or is a real profile whose operators identify it.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

from testdata import DATA

SECRET = "TOPSECRET-8c1f"


def _etdump(name: str) -> bytes:
    return gzip.decompress((DATA / "etdump" / f"{name}.N20.etdp.gz").read_bytes())


def _store_with_view(path: Path, view_sql: dict[str, str]) -> None:
    """A real edgeprof store (built by the CLI's code) whose tables named in ``view_sql`` are views instead."""
    import duckdb

    from edgeprof.store.duck import create_tables

    con = duckdb.connect(str(path))
    create_tables(con)
    for table, sql in view_sql.items():
        con.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_orig"')
        con.execute(f'CREATE VIEW "{table}" AS {sql}')
    con.close()


def build(base: Path) -> dict[str, Path]:
    out, root = base / "outside", base / "root"
    out.mkdir(parents=True)
    root.mkdir()
    (out / "notes.txt").write_text(f"{SECRET} the launch codes\n")
    (out / "secret_t1.etdump").write_bytes(_etdump("tel_portable"))
    shutil.copy(DATA / "etrecord" / "tel_portable.etrecord", out / "secret.etrecord")
    shutil.copy(DATA / "pte" / "tel_portable.pte", out / "secret.pte")
    (out / "report_target.md").write_text(SECRET)

    for n in ("tel_xnn", "tel_xnnq8"):
        (root / f"{n}.etdp").write_bytes(_etdump(n))
    shutil.copy(DATA / "pte" / "tel_xnnq8.pte", root)
    shutil.copy(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json", root / "profile.json")
    shutil.copytree(DATA / "coreml" / "int32_kvcache_state_ios18.mlpackage", root / "kv.mlpackage")
    shutil.copy(DATA / "xnnpack" / "x86_avx2_stderr.log", root / "xnn.log")

    (root / "linked_t1.etdump").symlink_to(out / "secret_t1.etdump")
    for name, model in (("mf_abs", str(out / "secret.pte")), ("mf_rel", "../../outside/secret.pte")):
        d = root / name
        d.mkdir()
        (d / "secret_t1.etdump").write_bytes(_etdump("tel_xnn"))
        (d / "manifest.json").write_text(json.dumps({"model": model, "device": "trap-device"}))
    for name, target in (("leak", out / "notes.txt"), ("zero", Path("/dev/zero"))):
        (root / f"{name}.mlmodelc").mkdir()
        (root / f"{name}.mlmodelc" / "model.mil").symlink_to(target)
    os.mkfifo(root / "fifo.etdp")
    os.mkfifo(root / "fifo_store")
    _store_with_view(root / "view.duckdb", {"launches": f"SELECT * REPLACE ((SELECT content FROM read_text("
                                                        f"'{out / 'notes.txt'}')) AS device) FROM launches_orig"})
    _store_with_view(root / "huge.duckdb", {"runs": "SELECT 'x' AS launch_id, range::INTEGER AS run_index, "
                                                    "1.0 AS latency_ms FROM range(100000000000)"})
    (root / "r6").mkdir()
    (root / "r6" / "report.md").symlink_to(out / "report_target.md")
    (root / "r7").mkdir()
    os.mkfifo(root / "r7" / "report.md")
    (root / "r8").mkdir()
    (root / "r8" / "report.md").symlink_to("/proc/self/fd/1")  # the server's own JSON-RPC stream
    for r in ("r6", "r7", "r8"):
        (root / r / "toycnn_xnn_t1.etdump").write_bytes(_etdump("toycnn_xnn"))

    deep = root / "deep" / "out_toycnn"
    run = deep / "runs" / "linux"
    for exp, name in (("portable", "toycnn_portable"), ("xnnpack_fp32", "toycnn_xnn")):
        (run / exp).mkdir(parents=True)
        (run / exp / f"toycnn_{exp}_t1.etdump").write_bytes(_etdump(name))
    (deep / "runs" / "linux_trace").mkdir()
    shutil.copy(DATA / "xnnpack" / "x86_avx2_stderr.log", deep / "runs" / "linux_trace" / "toycnn_xnnpack_fp32_t1_xnntrace.log")
    (deep / "manifest.json").write_text(json.dumps({"model": "toycnn_xnnpack_fp32.pte", "device": f"{SECRET}-device"}))
    (deep / "artifacts").mkdir()
    shutil.copy(DATA / "etrecord" / "toycnn_xnn.etrecord", deep / "artifacts" / "toycnn_xnnpack_fp32.etrecord")
    shutil.copy(DATA / "etrecord" / "toycnn_portable.etrecord", deep / "artifacts" / "toycnn_portable.etrecord")
    return {"base": base, "root": root, "outside": out, "deep_run": run, "deep": deep}


def outside_paths(t: dict[str, Path]) -> list[str]:
    """Real paths nothing may open: the outside folder, the deeper root's surroundings, /dev/zero."""
    return [os.path.realpath(t["outside"]), "/dev/zero"]
