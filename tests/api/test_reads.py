"""Each input read once: ``report``, ``validate`` and ``compare`` on a run folder with several experiments,
launches and trace logs. Counted twice, independently: by an audit hook on every ``open`` of the process
(in a fresh interpreter running the CLI), and by the workspace's own counters through the API."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from etdump_rewrite import label, read, rename, stretch, write
from testdata import DATA

from edgeprof import api
from edgeprof.io.workspace import Workspace

DRIVER = r"""
import collections, contextlib, io, json, os, sys
opens = collections.Counter()
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        opens[os.path.realpath(os.fsdecode(args[0]))] += 1
sys.addaudithook(hook)
import edgeprof.cli as cli
code = 0
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli.main(sys.argv[2:], standalone_mode=False)
    except SystemExit as e:
        code = e.code or 0
with open(sys.argv[1], "w") as f:
    json.dump({"exit": code, "opens": opens}, f)
"""


def _fp32_to_pf32(s: str) -> str:
    return s.replace("(NC, F32)", "(NC, PF32)") if s.startswith("Fully Connected") else s


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> tuple[Path, list[Path], Path]:
    """out_tel/runs/mac with three experiments (SME2 off and on of the XNNPACK build, a portable build), a
    manifest, the ETRecords in out_tel/artifacts and two trace logs in the sibling mac_trace folder."""
    root = tmp_path_factory.mktemp("reads")
    run_dir = root / "out_tel" / "runs" / "mac"
    runs, version = read(gzip.decompress((DATA / "etdump" / "tel_xnn.N20.etdp.gz").read_bytes()))
    gemm = lambda e: label(e).startswith("Fully Connected")  # noqa: E731
    arms = {"mac_sme2_off": stretch(runs, gemm, 8.0), "mac_sme2_on": rename(runs, _fp32_to_pf32)}
    inputs = []
    for exp, r in arms.items():
        (run_dir / exp).mkdir(parents=True)
        f = run_dir / exp / f"tel_xnn_{exp}_t1.etdump"
        f.write_bytes(write(r, version))
        inputs.append(f)
    (run_dir / "mac_portable").mkdir()
    f = run_dir / "mac_portable" / "tel_portable_mac_portable_t1.etdump"
    f.write_bytes(gzip.decompress((DATA / "etdump" / "tel_portable.N20.etdp.gz").read_bytes()))
    inputs.append(f)
    art = root / "out_tel" / "artifacts"
    art.mkdir()
    records = []
    for m in ("tel_xnn", "tel_portable"):
        shutil.copyfile(DATA / "etrecord" / f"{m}.etrecord", art / f"{m}.etrecord")
        records.append(art / f"{m}.etrecord")
    (run_dir / "manifest.json").write_text(json.dumps({"model": "tel_xnn.pte", "device": "Mac mini (M4)",
                                                       "results": []}))
    inputs.append(run_dir / "manifest.json")
    trace = run_dir.parent / "mac_trace"
    trace.mkdir()
    for role in ("on", "off"):
        t = trace / f"tel_xnn_mac_sme2_{role}_t1_xnntrace.log"
        shutil.copyfile(DATA / "xnnpack" / f"mac_sme2_{role}_xnntrace.log", t)
        inputs.append(t)
    return run_dir, inputs + records, root


def _opens(root: Path, *args: str, exit_code: int = 0) -> Counter:
    out = root / "opens.json"
    r = subprocess.run([sys.executable, "-c", DRIVER, str(out), *args], capture_output=True, text=True, cwd=root,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["exit"] == exit_code, r.stderr
    return Counter(doc["opens"])


def _of(opens: Counter, files: list[Path]) -> dict[str, int]:
    return {f.name: opens.get(os.path.realpath(f), 0) for f in files}


def test_report_opens_every_input_once(run_folder):
    run_dir, files, root = run_folder
    counts = _of(_opens(root, "report", str(run_dir), "--out", str(root / "r.md"), "--html", str(root / "r.html")),
                 files)
    # the report covers the pair (with its ETRecord), its kernel evidence (both logs) and the folder's
    # validation (every ETDump, the portable one too, which needs no ETRecord there)
    assert counts == {f.name: 0 if f.name == "tel_portable.etrecord" else 1 for f in files}, counts


def test_validate_opens_every_input_once(run_folder):
    run_dir, files, root = run_folder
    # exit 1: the folder was never analysed (no analysis_summary.json, no CSVs), which validation reports
    counts = _of(_opens(root, "validate", str(run_dir), "--require", "trace", exit_code=1), files)
    # validation reads ETDumps for their runs and latency, and never needs an ETRecord
    assert counts == {f.name: 0 if f.suffix == ".etrecord" else 1 for f in files}, counts


def test_compare_opens_each_launch_once_and_its_etrecord_once(run_folder):
    run_dir, files, root = run_folder
    counts = _of(_opens(root, "compare", "--run-dir", str(run_dir), "-b", "mac_sme2_off", "-c", "mac_sme2_on",
                        "--no-write"), files)
    used = {f.name for f in files if "sme2" in f.name and f.suffix == ".etdump"} | {"tel_xnn.etrecord"}
    # the manifest is read once to find the ETRecord; the trace logs and the other experiment are not read
    assert counts == {f.name: 1 if f.name in used or f.name == "manifest.json" else 0 for f in files}, counts


def test_the_workspace_counts_agree_and_one_workspace_serves_several_commands(run_folder):
    run_dir, _, _root = run_folder
    ws = Workspace(run_dir)
    rep = api.report([str(run_dir)], ws=ws)
    after_report = Counter(ws.reads)
    api.validate(run_dir, ws=ws)
    api.compare(["mac_sme2_off"], ["mac_sme2_on"], run_dir=run_dir, ws=ws)
    assert rep.comparison is not None and rep.comparison.verdict == "faster"
    # three ETDumps, the pair's ETRecord, two logs, one manifest: each read once, and the commands after the
    # report read nothing again
    assert ws.reads["profile_read"] == 3 and ws.reads["etrecord"] == 1 and ws.reads["kernel_log"] == 2
    assert ws.reads["json"] == 1  # manifest.json
    assert ws.reads == after_report


def test_analyze_with_one_etrecord_for_every_etdump_parses_it_once(run_folder, tmp_path):
    run_dir, files, root = run_folder
    rec = next(f for f in files if f.name == "tel_xnn.etrecord")
    sme2 = [f for f in files if "sme2" in f.name and f.suffix == ".etdump"]
    counts = _of(_opens(root, "analyze", *map(str, sme2), "--etrecord", str(rec), "--output-dir", str(tmp_path),
                        "--no-progress", "--jobs", "2"), files)
    # the manifest is read once too (its model and problems go into analysis_summary.json)
    assert counts == {f.name: 1 if f in sme2 or f == rec or f.name == "manifest.json" else 0 for f in files}, counts
    ws = Workspace(run_dir, etrecord=rec)
    api.analyze(sme2, etrecord=rec, output_dir=tmp_path / "api", ws=ws)
    assert ws.reads["etrecord"] == 1 and ws.reads["profile_read"] == 2


def test_a_read_option_the_shared_workspace_lacks_is_refused(etdump, etrecord):
    """The workspace reads each input once with its own options: a call asking for another one (an ETRecord, a
    strict ETRecord) is told so instead of having it silently dropped."""
    from edgeprof.errors import UsageError

    e, r = etdump("tel_xnn.N20"), etrecord("tel_xnn")
    with pytest.raises(UsageError, match=r"etrecord=.*tel_xnn\.etrecord differs from the shared Workspace's \(none\)"):
        api.load_profile(e, etrecord=r, ws=Workspace(discover_etrecord=False))
    with pytest.raises(UsageError, match="strict_etrecord=True differs"):
        api.breakdown(e, strict_etrecord=True, ws=Workspace())
    ws = Workspace(etrecord=r)
    assert api.load_profile(e, etrecord=r, ws=ws).etrecord.path == str(r)  # the same option: served
    assert api.load_profile(e, ws=ws).etrecord.path == str(r) and ws.reads["etrecord"] == 1


def test_the_workspace_owns_one_set_of_read_options(etdump, etrecord, tmp_path):
    """ReadOptions, made once and owned by the Workspace, is what every command reads with: given as an object or
    as keywords (not both), the same for analyze — which used to take the shared workspace and drop its own
    ETRecord — and for ingest's workers."""
    from edgeprof.errors import UsageError
    from edgeprof.io.workspace import ReadOptions

    e, r = etdump("tel_xnn.N20"), etrecord("tel_xnn")
    opts = ReadOptions(etrecord=str(r), strict_etrecord=True)
    assert opts.etrecord == r and Workspace(options=opts).options is opts
    assert Workspace(etrecord=r, strict_etrecord=True).options == opts
    with pytest.raises(TypeError, match="not both"):
        Workspace(None, opts, method="forward")
    assert opts.conflicts(etrecord=r, strict_etrecord=True, method=None) == []
    assert opts.conflicts(strict_etrecord=False) == []  # a default is "not asked"
    assert opts.conflicts(method="forward") == [("method", "forward", None)]
    with pytest.raises(TypeError, match="unknown read option"):
        opts.conflicts(etrecrod=r)
    with pytest.raises(UsageError, match=r"etrecord=.*tel_xnn\.etrecord differs from the shared Workspace's \(none\)"):
        api.analyze([e], etrecord=r, output_dir=tmp_path, ws=Workspace())
    ws = Workspace(options=opts)
    api.analyze([e], etrecord=r, output_dir=tmp_path, ws=ws)
    assert ws.reads["etrecord"] == 1
