"""Every key of `example --json`, `validate --json` and `skills list --json` against an independent reading: the files
on disk walked here, ExecuTorch Inspector's CSVs of the example's ETDumps (they are the toy CNN fixture recordings,
byte for byte) read with pandas, and the skills' front matter read by hand. A key a document gains without a check
here fails the test."""

from __future__ import annotations

import filecmp
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from testdata import DATA, ROOT

EXAMPLE = ROOT / "src" / "edgeprof" / "examples" / "toycnn"
SKILLS = ROOT / "src" / "edgeprof" / "skills"
INSPECTOR = {"portable": "toycnn_portable", "xnnpack_fp32": "toycnn_xnn", "xnnpack_int8": "toycnn_xnnq8"}


def edgeprof(*args: str, cwd=None, code: int = 0) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", *args], capture_output=True, text=True, cwd=cwd)
    assert r.returncode == code, r.stderr
    return json.loads(r.stdout)


def walk(d: Path) -> list[str]:
    return sorted(str((Path(p) / f).relative_to(d)) for p, _, fs in os.walk(d) for f in fs)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    base = tmp_path_factory.mktemp("ex")
    doc = edgeprof("example", "ex", "--json", cwd=base)
    return doc, base / "ex"


EXAMPLE_KEYS = {
    "dest": lambda d, dest: Path(d["dest"]).name == "ex",
    # every file the package ships, copied byte for byte, and nothing else
    "files": lambda d, dest: d["files"] == walk(dest) == [f for f in walk(EXAMPLE) if not f.endswith(".py")]
    and all(filecmp.cmp(dest / f, EXAMPLE / f, shallow=False) for f in d["files"]),
    "kind": lambda d, dest: d["kind"] == "example",
    "schema_version": lambda d, dest: d["schema_version"] == 1,
}


def test_every_key_of_example_has_a_check(example):
    doc, dest = example
    assert sorted(doc) == sorted(EXAMPLE_KEYS)
    for key, check in EXAMPLE_KEYS.items():
        assert check(doc, dest) is not False, key


def _inspector(config: str) -> tuple[int, int, float]:
    df = pd.read_csv(DATA / "ground_truth" / f"{INSPECTOR[config]}.N20.inspector.csv.gz")
    ex = df[df.event_name == "Method::execute"]
    return ex.run_index.nunique(), len(df), ex.duration_ms.mean()


def _checks(d, folder):
    by = {(c["check"], c["subject"]): c for c in d["checks"]}
    etdumps = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.etdump"))
    assert sorted(s for (k, s) in by if k == "etdump") == etdumps
    for s in etdumps:
        runs, events, mean = _inspector(s.split("/")[2])
        m = re.fullmatch(r"parses: (\d+) run\(s\), (\d+) events, mean latency ([\d.]+) ms", by["etdump", s]["message"])
        assert (int(m[1]), int(m[2])) == (runs, events) and float(m[3]) == pytest.approx(mean, abs=6e-4)
        stem = s[: -len(".etdump")]
        for check, tail in (("timeline_all", "_exec_all_runs_timeline.csv"), ("timeline_run0", "_exec_run0_timeline.csv"),
                            ("ops_stats", "_exec_ops_stats.csv")):
            c = by[check, stem + tail]
            assert (c["status"] == "pass") == (folder / c["subject"]).is_file()
        assert f"{runs} run(s)" in by["timeline_all", stem + "_exec_all_runs_timeline.csv"]["message"]
    assert by["analysis_summary", "analysis_summary.json"]["message"].endswith(f"for {len(etdumps)} ETDump(s)")
    assert len(by) == len(d["checks"]) == 4 * len(etdumps) + 1


VALIDATION_KEYS = {
    "checks": _checks,
    "counts": lambda d, f: d["counts"] == {"fail": 0, "info": 0, "pass": 0, "warn": 0}
    | dict(Counter(c["status"] for c in d["checks"])),
    "kind": lambda d, f: d["kind"] == "validation",
    "ok": lambda d, f: d["ok"] == all(c["status"] != "fail" for c in d["checks"]),
    "run_dir": lambda d, f: Path(d["run_dir"]) == f,
    "schema_version": lambda d, f: d["schema_version"] == 1,
    "trace_logs": lambda d, f: d["trace_logs"] == [],  # the example holds no XNNPACK log
}


def test_every_key_of_validation_has_a_check_on_a_good_and_a_broken_folder(example):
    _, folder = example
    edgeprof("analyze", str(folder), "--json")
    good = edgeprof("validate", str(folder), "--json")
    assert sorted(good) == sorted(VALIDATION_KEYS)
    for key, check in VALIDATION_KEYS.items():
        assert check(good, folder) is not False, key
    assert good["ok"] is True and good["counts"]["pass"] == 13
    victim = next(folder.rglob("*xnnpack_int8_t1_exec_ops_stats.csv"))
    victim.unlink()
    bad = edgeprof("validate", str(folder), "--json", code=1)
    for key, check in VALIDATION_KEYS.items():
        assert check(bad, folder) is not False, key
    failed = [c["subject"] for c in bad["checks"] if c["status"] == "fail"]
    assert failed == [str(victim.relative_to(folder))] and bad["ok"] is False


def _front_matter(path: Path) -> dict:
    head = path.read_text().split("---")[1]
    return dict(line.split(": ", 1) for line in head.strip().splitlines())


SKILL_KEYS = {
    "kind": lambda d: d["kind"] == "skills",
    "schema_version": lambda d: d["schema_version"] == 1,
    "skills": lambda d: d["skills"] == [
        {"name": fm["name"], "description": fm["description"], "path": str(p)}
        for p in sorted(SKILLS.glob("*/SKILL.md")) for fm in [_front_matter(p)]],
}


def test_every_key_of_skills_has_a_check():
    doc = edgeprof("skills", "list", "--json")
    assert sorted(doc) == sorted(SKILL_KEYS) and len(doc["skills"]) == 7
    for key, check in SKILL_KEYS.items():
        assert check(doc) is not False, key
