"""Every key of `report --json` on the bundled example (real ExecuTorch ETDumps of the toy CNN, byte for byte the
fixtures ExecuTorch Inspector read) and the Markdown report's latency, speedup and category cells against
independent figures: numpy on Inspector's `Method::execute` durations, the standalone `compare`, `latency` and
`validate` documents (each with its own oracle), the package's version and the taxonomy label list. (The HTML
report's tables equal the Markdown's cell by cell: tests/render/test_report_tables_agree.py.) A key the report
gains without a check here fails the test."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.metadata import version

import numpy as np
import pandas as pd
import pytest
from testdata import DATA, ROOT

INSPECTOR = {"xnnpack_fp32": "toycnn_xnn", "xnnpack_int8": "toycnn_xnnq8"}
B, C = "xnnpack_fp32", "xnnpack_int8"


def edgeprof(*args, cwd) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", *map(str, args), "--json"], capture_output=True, text=True,
                       cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def inspector_runs(config: str) -> np.ndarray:
    df = pd.read_csv(DATA / "ground_truth" / f"{INSPECTOR[config]}.N20.inspector.csv.gz")
    return df[df.event_name == "Method::execute"].sort_values("run_index").duration_ms.to_numpy()


def md_tables(text: str) -> list[list[list[str]]]:
    """Every pipe table of a Markdown text: a list of rows of cells (header first, the rule line dropped)."""
    tables, cur = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                cur.append(cells)
        elif cur:
            tables.append(cur)
            cur = []
    return tables


def table(tables, header0: str, header1: str):
    return next(t for t in tables if t[0][0] == header0 and t[0][1] == header1)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    shutil.copytree(ROOT / "src" / "edgeprof" / "examples" / "toycnn", d / "ex")
    files = {k: str(next((d / "ex").rglob(f"toycnn_{k}_t1.etdump")).relative_to(d)) for k in (B, C)}
    doc = edgeprof("report", "ex", "-b", B, "-c", C, "--out", "r.md", cwd=d)
    return doc, d, files


def _comparison(doc, root, files):
    alone = edgeprof("compare", "-b", files[B], "-c", files[C], "--no-write", cwd=root)
    mine = doc["comparison"]
    assert set(alone) - set(mine) == {"kind", "roles", "schema_version"} and not set(mine) - set(alone)
    for k in mine:
        if k != "by_category":
            assert mine[k] == alone[k], k
    ops, ops_alone = mine["by_category"].pop("operators"), alone["by_category"].pop("operators")
    assert mine["by_category"] == alone["by_category"]
    for part in ("added", "matched", "removed"):  # the report lists the top 15 by time, `compare` the top 20
        assert ops[part] == ops_alone[part][:15] and ops[f"{part}_total"] == ops_alone[f"{part}_total"]
    assert ops["renamed"] == ops_alone["renamed"] and "the top 15 by time" in ops["method"]


def _configs(doc, root, files):
    assert [c["name"] for c in doc["configs"]] == [B, C]
    assert [c["role"] for c in doc["configs"]] == ["baseline", "candidate"]
    for c in doc["configs"]:
        x = inspector_runs(c["name"])
        s = c["latency"]["steady"]
        steady = x[s["first_run"]:]
        assert s["count"] == steady.size and c["runs_used"]["count"] == steady.size
        assert s["median_ms"] == pytest.approx(np.median(steady), abs=1e-6)
        assert s["mean_ms"] == pytest.approx(steady.mean(), abs=1e-6)
        assert s["percentiles"]["p90"] == pytest.approx(np.percentile(steady, 90), abs=1e-6)
        alone = edgeprof("latency", files[c["name"]], "--no-write", cwd=root)["reports"][0]
        skip = ("input", "written", "name", "kind", "warnings")  # the report names the configuration
        assert {k: v for k, v in c["latency"].items() if k not in skip} == {
            k: v for k, v in alone.items() if k not in skip}
        e2e = c["breakdown"]["e2e_ms"]
        lines = sum(r["avg_ms"] for r in c["breakdown"]["categories"])
        assert lines == pytest.approx(e2e["mean"] if isinstance(e2e, dict) else e2e, abs=1e-4)


def _validation(doc, root, files):
    alone = edgeprof("validate", "ex", cwd=root)
    assert doc["validation"] == {k: v for k, v in alone.items() if k not in ("kind", "schema_version")}


def _taxonomy_version(doc, *_):
    head = (DATA / "taxonomy_labels.tsv").read_text().splitlines()[1]
    assert f"(taxonomy {doc['taxonomy_version']})" in head


def _findings(doc, *_):
    names = doc["evidence_names"]
    assert all(f["evidence_name"] == names[f["evidence"]] for f in doc["findings"])
    verdict = next(f for f in doc["findings"] if f["rule"] == "e2e_verdict")
    assert f"speedup {doc['comparison']['speedup']['estimate']:.3f}" in verdict["text"]
    assert verdict["text"].endswith(f"verdict: {doc['comparison']['verdict']} "
                                    "(single-launch: allowance of 25 % launch-to-launch SD per arm)")


KEYS = {
    "comparison": _comparison,
    "configs": _configs,
    "evidence_names": lambda doc, *_: {"etdump", "ort_json", "xnntrace", "mil_static"} <= set(doc["evidence_names"]),
    "findings": _findings,
    "kernels": lambda doc, *_: doc["kernels"] == {"logs": [], "registered_vs_executed": [], "view": None},
    "kind": lambda doc, *_: doc["kind"] == "report",
    "latency_evidence": lambda doc, *_: doc["latency_evidence"] == "etdump",
    "metadata": lambda doc, *_: (doc["metadata"]["model"], doc["metadata"]["device"], doc["metadata"]["run_dir"]) == (
        "toycnn", None, "ex"),
    "missing": lambda doc, *_: any(m.startswith("device: not recorded") for m in doc["missing"]),
    "phase_comparison": lambda doc, *_: doc["phase_comparison"] is None,  # no prefill/decode labels in a CNN
    "schema_version": lambda doc, *_: doc["schema_version"] == 1,
    "sme2_pair": lambda doc, *_: doc["sme2_pair"] is False,
    "taxonomy_version": _taxonomy_version,
    "title": lambda doc, *_: doc["title"] == f"{C} vs {B}",
    "tool": lambda doc, *_: doc["tool"] == "edgeprof",
    "validation": _validation,
    "version": lambda doc, *_: doc["version"] == version("edgeprof"),
    "written": lambda doc, root, files: doc["written"] == ["r.md"] and (root / "r.md").is_file(),
    # present only when both arms were recorded with a debug buffer: checked in
    # test_a_pair_of_debug_recordings_adds_the_numerics_of_the_pair
    "numerics": lambda doc, *_: True,
}
OPTIONAL = {"numerics"}


def test_every_key_of_the_report_has_a_check(case):
    doc, root, files = case
    assert set(doc) <= set(KEYS) and set(KEYS) - set(doc) <= OPTIONAL, "a key of the report needs its check here"
    assert "numerics" not in doc  # the example's recordings have no debug buffer
    for key, check in KEYS.items():
        assert check(doc, root, files) is not False, key


def g4(x: float) -> str:
    return f"{x:.4g}"


def test_markdown_latency_speedup_and_category_cells_against_independent_figures(case):
    doc, root, _ = case
    tables = md_tables((root / "r.md").read_text())
    lat = table(tables, "configuration", "runs")
    assert lat[0] == ["configuration", "runs", "median ms [95% CI]", "mean ms", "CV %", "p90 ms",
                      "warm-up runs left out", "outliers", "drift"]
    for row, cfg in zip(lat[1:], doc["configs"], strict=True):
        x = inspector_runs(row[0])
        first = cfg["latency"]["steady"]["first_run"]
        s = x[first:]
        ci = cfg["latency"]["steady"]["ci_median"]
        assert row[1:7] == [str(s.size), f"{g4(np.median(s))} [{g4(ci['low_ms'])}–{g4(ci['high_ms'])}]",
                            g4(s.mean()), f"{100 * s.std(ddof=1) / s.mean():.1f}", g4(np.percentile(s, 90)), str(first)]
    sp = table(tables, "metric", f"{B} ms")
    assert sp[0] == ["metric", f"{B} ms", f"{C} ms", "speedup", "95 % CI", "verdict"]
    metrics = doc["comparison"]["metrics"]
    bx, cx = (inspector_runs(k)[doc["configs"][i]["latency"]["steady"]["first_run"]:] for i, k in enumerate((B, C)))
    # one launch per arm: each arm's value of a metric is that launch's, computed here from Inspector's runs
    truth = {"median": (np.median(bx), np.median(cx)), "mean": (bx.mean(), cx.mean())}
    for row, name in zip(sp[1:], ("median", "mean", "p90", "p99"), strict=True):
        m = metrics[name]
        assert row[3:] == [g4(m["speedup"]), f"{g4(m['ci_low'])}–{g4(m['ci_high'])}", m["verdict"]]
        assert m["speedup"] == pytest.approx(m["baseline_typical_ms"] / m["candidate_typical_ms"], rel=1e-12)
        if name in truth:
            assert row[1:3] == [g4(truth[name][0]), g4(truth[name][1])]
    assert metrics["median"]["speedup"] == pytest.approx(np.median(bx) / np.median(cx), rel=1e-3)
    cat = table(tables, "category", f"{B} mean ms/run")
    assert cat[0][1:] == [f"{B} mean ms/run", f"{C} mean ms/run", "typical ms/run base → cand", "speedup [95% CI]",
                          "share % of the mean run", "status"]
    rows = {r["line"]: r for r in doc["comparison"]["by_category"]["categories"]}
    for row in cat[1:]:
        r = rows[row[0]]  # the cell: 4 significant digits of the JSON's value
        for cell, v in zip(row[1:3], (r["baseline_ms"], r["candidate_ms"])):
            assert float(cell) == pytest.approx(v, rel=5e-4, abs=5e-7) and len(cell.replace("0.", "").lstrip("0")) <= 4
        if r.get("baseline_typical_ms") is not None:  # the speedup is the ratio of the typical cells
            b, c = (float(x) for x in row[3].rstrip("ᵐ").split(" → "))
            assert b / c == pytest.approx(r["speedup"], rel=2e-3) and row[4].startswith(f"{r['speedup']:.3g} [")
        else:
            assert row[3] == "—"
        assert row[5] == f"{r['baseline_share']:.1f} → {r['candidate_share']:.1f}"


def test_a_configuration_of_several_launches_pools_their_steady_runs(tmp_path):
    """Three real ONNX Runtime launches per arm: each configuration's latency and categories are those of every
    launch's steady runs one after the other (each launch's warm-up left out), computed here from the JSON by hand;
    two arms of one experiment carry the comparison's names in every table."""
    from collections import defaultdict

    from ort_truth import CATEGORY, events, run_of
    from ort_truth import runs as model_runs

    arms = {"baseline": [f"cnn_cpu_t1_l{k}.ort.json" + ("" if k == 1 else ".gz") for k in (1, 2, 3)],
            "candidate": [f"cnn_cpu_t2_l{k}.ort.json.gz" for k in (1, 2, 3)]}
    args = [x for role, fs in arms.items() for f in fs for x in (f"--{role}", str(DATA / "ort" / f))]
    doc = edgeprof("report", *args, "--out", "r.md", cwd=tmp_path)
    assert [c["name"] for c in doc["configs"]] == ["cnn_cpu (baseline)", "cnn_cpu (candidate)"]
    assert doc["comparison"]["baseline"]["name"] == "cnn_cpu (baseline)"
    for c, (_role, names) in zip(doc["configs"], arms.items(), strict=True):
        lat, by_cat, n = [], defaultdict(float), 0
        for name, used in zip(names, c["runs_used"]["launches"], strict=True):
            ev = events(name)
            spans = model_runs(ev)
            keep = range(used["first"], len(spans))
            lat += [spans[i][1] / 1000 for i in keep]
            n += len(keep)
            for e in ev:
                if e["cat"] == "Node" and run_of(e, spans) in keep:
                    by_cat[CATEGORY[e["args"]["op_name"]]] += e["dur"] / 1000
        assert c["latency"]["latencies_ms"] == pytest.approx(lat, abs=1e-9) and c["breakdown"]["runs"] == n == 27
        got = {r["line"]: r["avg_ms"] for r in c["breakdown"]["categories"] if r["kind"] == "category"}
        assert got == pytest.approx({k: v / n for k, v in by_cat.items()}, abs=2e-6)
    md = (tmp_path / "r.md").read_text()
    assert "| cnn_cpu (baseline) | 27 |" in md and "| cnn_cpu (candidate) | 27 |" in md


def test_a_pair_of_debug_recordings_adds_the_numerics_of_the_pair(tmp_path):
    """`report A B` of two debug recordings (tests/data/numerics) holds `numerics`: the standalone `numerics` document
    of the pair (its own oracle: tests/cli/test_numerics_json_oracle.py), and the Markdown a section of it."""
    import gzip

    for n in ("tel_xnn", "tel_xnnq8"):
        for ext in ("etdp", "bin"):
            (tmp_path / f"{n}.debug.{ext}").write_bytes(gzip.decompress((DATA / "numerics" / f"{n}.debug.{ext}.gz")
                                                                        .read_bytes()))
        shutil.copy2(DATA / "etrecord" / f"{n}.etrecord", tmp_path / f"{n}.etrecord")
    doc = edgeprof("report", "tel_xnn.debug.etdp", "tel_xnnq8.debug.etdp", "--out", "r.md", cwd=tmp_path)
    alone = edgeprof("numerics", "tel_xnn.debug.etdp", "tel_xnnq8.debug.etdp", cwd=tmp_path)
    assert doc["numerics"] == {k: v for k, v in alone.items() if k not in ("kind", "schema_version")}
    x = np.load(DATA / "numerics" / "tel_xnn.forward.npy").astype(np.float64)
    y = np.load(DATA / "numerics" / "tel_xnnq8.forward.npy").astype(np.float64)
    direct = 10 * np.log10(np.sum(x * x) / np.sum((x - y) ** 2))
    assert abs(doc["numerics"]["outputs"][0]["metrics"]["sqnr_db"] - direct) < 1e-4
    md = (tmp_path / "r.md").read_text()
    assert "## Numerics (debug recordings)" in md and doc["numerics"]["accuracy_lost"]["statement"] in md
