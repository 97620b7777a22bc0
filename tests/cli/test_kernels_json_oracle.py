"""Every key of `kernels --json` (a real XNNPACK log, a real ETDump) and of `kernel-view --json` (the real SME2-off
and SME2-on logs) against an independent reading: the log's `Using <kind> microkernel '<name>'` lines and
`running operator` lines parsed here with one regular expression each, and ExecuTorch Inspector's own CSV of the
ETDump read with pandas. A key the documents gain without a check here fails the test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import pandas as pd
import pytest
from testdata import DATA

XNN = DATA / "xnnpack"
OFF, ON = XNN / "mac_sme2_off_xnntrace.log", XNN / "mac_sme2_on_xnntrace.log"
ETDUMP = DATA / "etdump" / "tel_xnnq8.N20.etdp.gz"
INSPECTOR = DATA / "ground_truth" / "tel_xnnq8.N20.inspector.csv.gz"
USING = re.compile(r"Using (\w+) microkernel '(\w+)'")
RUNNING = re.compile(r"running operator \d+:\d+ \((.*)\) \(xnn_run_operator")
ELSEWHERE = "checked on known truth elsewhere"


def edgeprof(*args: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def registered(path) -> dict[str, dict]:
    """kernel name → its kind word, first line and how often the log sets it up (read here, not by edgeprof)."""
    out: dict[str, dict] = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = USING.search(line)
        if m:
            kind = "transpose" if m[1] == "transposec" else m[1]  # XNNPACK's transposec config: a transpose
            row = out.setdefault(m[2], {"kind": kind, "first_line": i, "count": 0})
            row["count"] += 1
    return out


def family(name: str) -> str:
    """The ISA family by hand: the part after `__` names the ISA (these logs hold only Arm kernels)."""
    isa = name.split("__", 1)[1]
    return "SME2" if "sme2" in isa else "SME" if "sme" in isa else "NEON"


# -- kernels LOG --json ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def log_doc():
    doc = edgeprof("kernels", str(ON), "--json", "--no-write")
    assert doc["kind"] == "kernels" and doc["executed"] == [] and len(doc["logs"]) == 1
    return doc["logs"][0]


def _kernels(d, truth):
    assert [k["kernel_name"] for k in d["kernels"]] == list(truth)  # the log's order of first use
    for k in d["kernels"]:
        t = truth[k["kernel_name"]]
        assert (k["category"], k["first_line"], k["count"]) == (t["kind"], t["first_line"], t["count"])
        assert k["isa_family"] == family(k["kernel_name"]) and k["evidence"] == "registered"
        assert k["kleidiai"] == (k["isa_family"] == "SME2") == bool(k["kleidiai_kernel"])
        assert k["model_id"] == "mac_sme2_on" and k["xnn_op"] in k["kernel_name"]


def _summary(d, truth):
    s = d["summary"]
    fams = Counter(family(n) for n in truth)
    kinds: dict = {}
    for n, t in truth.items():
        kinds.setdefault(t["kind"], Counter())[family(n)] += 1
    assert s["kernels"] == len(truth) and s["by_family"] == dict(fams)
    assert s["by_kind"] == {k: dict(v) for k, v in kinds.items()}
    assert s["kleidiai_kernels"] == [n for n in truth if family(n) == "SME2"]
    assert s["evidence"] == "registered"


def _log(d, truth):
    lines = ON.read_text().splitlines()
    ran = Counter(m[1] for line in lines if (m := RUNNING.search(line)))
    info = d["log"]
    assert info["operators_run"] == dict(ran) and info["operators_skipped"] == {}
    assert info["lines"] == len(lines) and info["xnnpack_lines"] == sum("(XNNPACK)" in x for x in lines)
    assert info["assumed_datatypes"] == {"PFP32": sum("assumed_datatype=PFP32" in x for x in lines)}
    assert [t["line"] for t in info["gemm_tiles"]] == [i for i, x in enumerate(lines, 1) if "Tile size for GEMM" in x]
    assert info["gemm_tiles"][0]["tiles"] == 84 and info["gemm_tiles"][0]["tile_n"] == 64  # "[32, 64] (84 tiles)"


def _log_executed(d, truth):
    ran = [m[1] for line in ON.read_text().splitlines() if (m := RUNNING.search(line))]
    assert sorted(e["op"] for e in d["executed"]) == sorted(ran)
    assert all(e["marker"] == "PF32" and e["marker"] in e["op"] and e["source"] == "xnntrace" for e in d["executed"])


LOG_KEYS = {
    "executed": _log_executed,
    "input": lambda d, t: d["input"] == str(ON),
    "kernels": _kernels,
    "kind": lambda d, t: d["kind"] == "kernels",
    "log": _log,
    "model_id": lambda d, t: d["model_id"] == "mac_sme2_on",
    "summary": _summary,
    "warnings": lambda d, t: d["warnings"] == [],
    "written": lambda d, t: "written" not in d,  # --no-write: nothing written, the key absent
}


def test_every_key_of_a_log_document_has_a_check(log_doc):
    truth = registered(ON)
    assert len(truth) == 19
    assert set(log_doc) | {"written"} == set(LOG_KEYS), "a key of the kernels document needs its check here"
    for key, check in LOG_KEYS.items():
        assert check(log_doc, truth) is not False, key


# -- kernels ETDUMP --json (executed evidence) -------------------------------------------------------------------

@pytest.fixture(scope="module")
def executed_doc():
    doc = edgeprof("kernels", str(ETDUMP), "--json", "--no-write")
    assert doc["logs"] == [] and len(doc["executed"]) == 1
    return doc["executed"][0]


@pytest.fixture(scope="module")
def inspector():
    df = pd.read_csv(INSPECTOR)
    e2e = df[df.event_name == "Method::execute"].duration_ms
    ops = df[df.event_name.str.contains("GEMM|Convolution") & (df.block_name == "Execute")].copy()
    ops["op"] = ops.event_name.str.replace(r" #\d+$", "", regex=True)
    runs = e2e.size
    g = ops.groupby("op").duration_ms.agg(["sum", "count"])
    return {"runs": runs, "e2e_mean": e2e.mean(), "ms": g["sum"] / runs, "calls": g["count"] / runs,
            "names": set(df.event_name)}


def _other_gemm(d, t):
    rows = {r["op"]: r for r in d["other_gemm_conv_operators"]}
    assert set(rows) == set(t["ms"].index)
    for op, r in rows.items():
        assert r["ms_per_run"] == pytest.approx(t["ms"][op], rel=1e-6)
        assert r["calls_per_run"] == pytest.approx(t["calls"][op])
        assert r["pct_of_e2e"] == pytest.approx(100 * t["ms"][op] / t["e2e_mean"], rel=1e-5)
        assert r["category"] == "GEMM" and all(x in op for x in r["dtypes"])
    assert [r["ms_per_run"] for r in d["other_gemm_conv_operators"]] == sorted(
        (r["ms_per_run"] for r in d["other_gemm_conv_operators"]), reverse=True)


def _no_sme(d, t):
    markers = ("PF32", "PF16", "PQS8", "QP8")
    assert not any(m in n for n in t["names"] for m in markers)  # the recording holds no SME/KleidiAI operator
    assert d["operators"] == [] and d["sme_ms_per_run"] == 0.0 and d["qp8_ms_per_run"] == 0.0


EXECUTED_KEYS = {
    "evidence": lambda d, t: d["evidence"] == "executed",
    "gemm_conv_ms_per_run": lambda d, t: d["gemm_conv_ms_per_run"] == pytest.approx(t["ms"].sum(), rel=1e-6),
    "input": lambda d, t: d["input"] == str(ETDUMP),
    "kind": lambda d, t: d["kind"] == "executed_kernels",
    "kleidiai_executed": lambda d, t: d["kleidiai_executed"] is False,
    "kleidiai_share_of_gemm_conv": lambda d, t: d["kleidiai_share_of_gemm_conv"] == 0.0,
    "operators": _no_sme,
    "other_gemm_conv_operators": _other_gemm,
    "qp8_ms_per_run": _no_sme,
    "runs": lambda d, t: d["runs"] == t["runs"],
    "sme_executed": lambda d, t: d["sme_executed"] is False,
    "sme_ms_per_run": _no_sme,
    "source": lambda d, t: d["source"] == "etdump",
    "statement": lambda d, t: d["statement"].startswith("no PF32/PF16/PQS8/QP8 operator ran"),
}


def test_every_key_of_executed_evidence_has_a_check(executed_doc, inspector):
    assert sorted(executed_doc) == sorted(EXECUTED_KEYS), "a key of executed_kernels needs its check here"
    for key, check in EXECUTED_KEYS.items():
        assert check(executed_doc, inspector) is not False, key


COLLECTION_KEYS = {  # the collection document of `kernels`: its lists are the documents checked above
    "executed": "the executed_kernels documents: test_every_key_of_executed_evidence_has_a_check",
    "kind": "kernels", "logs": "the kernels documents: test_every_key_of_a_log_document_has_a_check",
    "schema_version": 1,
}


def test_the_collection_holds_one_document_per_input():
    doc = edgeprof("kernels", str(ON), str(ETDUMP), "--json", "--no-write")
    assert sorted(doc) == sorted(COLLECTION_KEYS)
    assert [x["input"] for x in doc["logs"]] == [str(ON)] and [x["input"] for x in doc["executed"]] == [str(ETDUMP)]
    assert (doc["kind"], doc["schema_version"]) == ("kernels", 1)


# -- kernel-view --json ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def view():
    return edgeprof("kernel-view", "-b", str(OFF), "-c", str(ON), "--json"), registered(OFF), registered(ON)


def _view_kernels(d, b, c):
    rows = {r["kernel_name"]: r for r in d["kernels"]}
    assert set(rows) == set(b) | set(c)
    for n, r in rows.items():
        assert (r["baseline"], r["candidate"]) == (b[n]["count"] if n in b else 0, c[n]["count"] if n in c else 0)
        assert r["category"] == (b.get(n) or c.get(n))["kind"] and r["isa_family"] == family(n)


def _by_family(d, b, c):
    fb, fc = Counter(family(n) for n in b), Counter(family(n) for n in c)
    assert {r["family"]: (r["baseline"], r["candidate"]) for r in d["by_family"]} == {
        f: (fb[f], fc[f]) for f in fb | fc}


def _by_kind(d, b, c):
    def per_kind(side):
        out: dict = {}
        for n, t in side.items():
            out.setdefault(t["kind"], Counter())[family(n)] += 1
        return out
    kb, kc = per_kind(b), per_kind(c)
    assert {r["kind"]: (r["baseline"], r["candidate"]) for r in d["by_kind"]} == {
        k: (dict(kb.get(k, {})), dict(kc.get(k, {}))) for k in kb.keys() | kc.keys()}


def _gemm_families(side):
    return {family(n) for n, t in side.items() if t["kind"] in ("gemm", "igemm", "qp8gemm")}


VIEW_KEYS = {
    "baseline_name": lambda d, b, c: d["baseline_name"] == "mac_sme2_off",
    "by_family": _by_family,
    "by_kind": _by_kind,
    "candidate_name": lambda d, b, c: d["candidate_name"] == "mac_sme2_on",
    "evidence": lambda d, b, c: d["evidence"] == "registered",
    "filter_op": lambda d, b, c: d["filter_op"] is None,
    "inputs": lambda d, b, c: d["inputs"] == {"baseline": str(OFF), "candidate": str(ON)},
    "kernels": _view_kernels,
    "kind": lambda d, b, c: d["kind"] == "kernel_view",
    "note": lambda d, b, c: "does not prove the kernel ran" in d["note"],
    "only_in_baseline": lambda d, b, c: sorted(d["only_in_baseline"]) == sorted(set(b) - set(c)),
    "only_in_candidate": lambda d, b, c: sorted(d["only_in_candidate"]) == sorted(set(c) - set(b)),
    "schema_version": lambda d, b, c: d["schema_version"] == 1,
    # the rule: SME2 GEMM/IGEMM kernels in the candidate and none in the baseline
    "status": lambda d, b, c: (d["status"] == "sme2_in_candidate") == (
        "SME2" in _gemm_families(c) and "SME2" not in _gemm_families(b)),
    "verdict": lambda d, b, c: d["verdict"].startswith("GEMM/IGEMM: SME2 kernels registered in mac_sme2_on"),
    "warnings": lambda d, b, c: d["warnings"] == [],
    "written": lambda d, b, c: "written" not in d,
}


def test_every_key_of_the_kernel_view_has_a_check(view):
    d, b, c = view
    assert set(d) | {"written"} == set(VIEW_KEYS), "a key of the kernel view needs its check here"
    assert d["status"] == "sme2_in_candidate"
    for key, check in VIEW_KEYS.items():
        assert check(d, b, c) is not False, key


def test_a_filter_keeps_exactly_the_kernels_whose_name_holds_it():
    d = edgeprof("kernel-view", "-b", str(OFF), "-c", str(ON), "--filter-op", "IGEMM", "--json")
    names = set(registered(OFF)) | set(registered(ON))
    assert d["filter_op"] == "IGEMM"
    assert sorted(r["kernel_name"] for r in d["kernels"]) == sorted(n for n in names if "igemm" in n)


@pytest.mark.parametrize("text, lines", [("", 0), ("hello\n", 1), ("a\nb\nc", 3)])
def test_the_line_count_of_logs_without_kernels(tmp_path, text, lines):
    """An empty log has 0 lines, not 1; a cut-off last line counts (warned, not an error)."""
    log = tmp_path / "x_xnntrace.log"
    log.write_text(text)
    (d,) = edgeprof("kernels", str(log), "--json", "--no-write")["logs"]
    assert d["log"]["lines"] == lines == len(text.splitlines()) and d["kernels"] == []
    assert d["warnings"] == ["no 'Using … microkernel' lines: XNNPACK logs kernels only when built with "
                             "XNN_LOG_LEVEL ≥ 4"]
