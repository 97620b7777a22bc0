"""Reports: Markdown structure and numbers on the fixture pairs, the interpretation rules, graceful
degradation, and the HTML rendered in headless Chromium."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from testdata import DATA

from edgeprof import api
from edgeprof.cli import main
from edgeprof.render import report as rep

X = DATA / "xnnpack"


def _sections(md: str) -> list[str]:
    return re.findall(r"^## (.+)$", md, re.MULTILINE)


@pytest.fixture(scope="module")
def toycnn_pair(etdump_dir):
    return api.report([str(etdump_dir / "toycnn_portable.N20.etdp"), str(etdump_dir / "toycnn_xnn.N20.etdp")])


@pytest.fixture(scope="module")
def tel_pair(etdump_dir):
    return api.report([str(etdump_dir / "tel_xnn.N20.etdp"), str(etdump_dir / "tel_xnnq8.N20.etdp")])


def test_markdown_structure_and_numbers_equal_the_analysis(toycnn_pair):
    d = toycnn_pair
    md = rep.markdown(d, generated="2026-11-30 00:00 UTC")
    assert md.startswith("# edgeprof report: toycnn_xnn.N20 vs toycnn_portable.N20\n")
    assert _sections(md) == list(rep.SECTIONS)
    cmp = d["comparison"]
    assert f"**{cmp['speedup']['estimate']:.4g}×** [{cmp['speedup']['ci_low']:.4g}–{cmp['speedup']['ci_high']:.4g}]" in md
    assert f"**Verdict:** {cmp['summary_line']}" in md
    # every category row of the comparison, with the analysis' numbers
    for c in cmp["by_category"]["categories"]:
        assert re.search(rf"^\| {c['line']} \| {c['baseline_ms']:.4g} \| {c['candidate_ms']:.4g} \|", md, re.MULTILINE), c["line"]
    assert f"**Bottleneck:** {cmp['by_category']['bottleneck']['statement']}" in md
    for cfg in d["configs"]:
        st = cfg["latency"]["steady"]
        assert re.search(rf"^\| {re.escape(cfg['name'])} \| {st['count']} \| {st['median_ms']:.4g} \[", md, re.MULTILINE)
        for o in cfg["breakdown"]["operators"][:10]:
            assert f"| `{o['operator']}` | {o['backend']} |" in md and f"| {o['avg_ms']:.4g} |" in md
    # every finding names its evidence
    findings = re.findall(r"^\d+\. \*\*\[([^\]]+)\]\*\* ", md.split("## Findings")[1], re.MULTILINE)
    assert len(findings) == len(d["findings"]) >= 2
    assert set(findings) <= {"ETDump timeline", "timeline CSV", "ops-stats CSV", "metrics JSON", "xnntrace log",
                             "run-folder validation", "xnntrace log + ETDump timeline"}
    rules = [f["rule"] for f in d["findings"]]
    # CONV shrank, but no other category grew to a material share: no bottleneck shift is claimed
    assert rules[0] == "e2e_verdict" and "bottleneck_shift" not in rules
    assert "no bottleneck shift" in cmp["by_category"]["bottleneck"]["statement"]
    # the pair's own names, not SME2 wording
    assert "SME2-on" not in md and "toycnn_xnn.N20 is" not in md.split("## Findings")[0].split("## Run")[0]


def test_inconclusive_pair_says_what_would_be_needed(tel_pair):
    d = tel_pair
    assert d["comparison"]["verdict"] == "inconclusive"
    f = next(f for f in d["findings"] if f["rule"] == "inconclusive")
    assert "tel_xnnq8.N20" in f["text"] and "to resolve a" in f["text"] and "launches ×" in f["text"]
    assert f["evidence"] == "etdump" and d["comparison"]["plan"]["recommended"]["launches_per_arm"] >= 2
    md = rep.markdown(d)
    assert "Fully Connected (NC, QS8, QC8W) GEMM" in md


def test_candidate_slower_gives_the_checklist(etdump_dir, tmp_path):
    run = tmp_path / "out_toy" / "runs" / "linux"
    for exp, src in (("mac_sme2_off", "toycnn_xnn.N20"), ("mac_sme2_on", "toycnn_portable.N20")):
        (run / exp).mkdir(parents=True)
        shutil.copy(etdump_dir / f"{src}.etdp", run / exp / f"toy_{exp}_t4.etdump")
    runner = "cmake-out/android-arm64-v9a/executor_runner"
    (run / "manifest.json").write_text(json.dumps({"model": "toy.pte", "device": "Pixel 9 Pro (Tensor G4)",
                                                   "config": {"runner_path_sme2_on": runner}, "results": []}))
    trace = run.parent / "linux_trace"
    trace.mkdir()
    shutil.copy(X / "android_sme2_on_xnntrace.log", trace / "toy_mac_sme2_on_t4_xnntrace.log")
    d = api.report([str(run)])
    assert d["sme2_pair"] and d["comparison"]["baseline"]["name"] == "mac_sme2_off"
    assert d["comparison"]["verdict"] == "slower"
    check = next(f for f in d["findings"] if f["rule"] == "candidate_slower")
    text = " | ".join(check["items"])
    for needle in ("runner paths: runner_path_sme2_on: cmake-out/android-arm64-v9a/executor_runner",
                   "FEAT_SME2", "threads: mac_sme2_off 4 vs mac_sme2_on 4", "warm-up runs left out",
                   "thermal drift", "SME2 kernels in the candidate's trace", "delegated ops on an SME/KleidiAI path"):
        assert needle in text, needle
    no = next(f for f in d["findings"] if f["rule"] == "no_sme2_kernels")
    assert no["evidence"] == "xnntrace" and "verify device support (FEAT_SME2), the runner variant" in no["text"]
    assert any("neonfma" in k for k in no["items"])
    md = rep.markdown(d)
    assert "| Device | Pixel 9 Pro (Tensor G4) (as recorded in manifest.json (device)) |" in md
    assert "**[xnntrace log]**" in md and "../linux_trace/toy_mac_sme2_on_t4_xnntrace.log" in md
    assert "## Validation" in md and "**FAILED**" in md  # not analysed yet: said, not hidden


def test_other_dominates_names_its_ops(tmp_path):
    from etdump_builder import PE, Run, build

    runs, t = [], 0
    for _ in range(10):
        ev = [PE("native_call_my_custom_op.out", t + 10, t + 800_010, 0), PE("OPERATOR_CALL", t + 5, t + 800_015, 0),
              PE("native_call_convolution.out", t + 800_030, t + 1_000_030, 1),
              PE("OPERATOR_CALL", t + 800_020, t + 1_000_040, 1), PE("Method::execute", t, t + 1_000_050, -1)]
        runs.append(Run("Execute", ev))
        t += 10_000_000
    p = tmp_path / "custom.etdp"
    p.write_bytes(build(runs))
    d = api.report([str(p)])
    f = next(f for f in d["findings"] if f["rule"] == "other_dominates")
    assert "OTHER takes 80 %" in f["text"] and f["items"][0].startswith("native_call_my_custom_op.out")
    assert d["comparison"] is None and any("no run folder" in m for m in d["missing"])


def test_device_is_never_the_analysis_host(toycnn_pair):
    md = rep.markdown(toycnn_pair)
    assert "not recorded in the run (the analysis host is not the device)" in md
    for host in {platform.node(), platform.processor()} - {""}:
        assert host not in md


def test_single_profile_and_timeline_csv_reports(etdump_dir, tmp_path):
    d = api.report([str(etdump_dir / "mobilenet_v3_small_xnnq8.N20.etdp")])
    md = rep.markdown(d)
    assert _sections(md) == [s for s in rep.SECTIONS if s != "What ran where"] and d["comparison"] is None  # one profile
    assert "## Where the time goes" in md and "### mobilenet_v3_small_xnnq8.N20" in md
    assert "Invalid Unary Op" in md.split("## Top OTHER operators")[1]
    # a timeline CSV written by analyze reads back into the same report sections, evidence named as such
    src = tmp_path / "toy.etdp"
    shutil.copy(etdump_dir / "toycnn_xnn.N20.etdp", src)
    api.analyze([src], jobs=1)
    d = api.report([str(tmp_path / "toy_exec_all_runs_timeline.csv")])
    assert d["configs"][0]["evidence"] == "timeline_csv" and d["latency_evidence"] == "timeline_csv"
    assert all(f["evidence"] == "timeline_csv" for f in d["findings"])


def test_cli_writes_markdown_and_html(etdump_dir, tmp_path):
    a, b = tmp_path / "base.etdp", tmp_path / "cand.etdp"
    shutil.copy(etdump_dir / "toycnn_portable.N20.etdp", a)
    shutil.copy(etdump_dir / "toycnn_xnn.N20.etdp", b)
    res = CliRunner().invoke(main, ["report", str(a), str(b), "--html", str(tmp_path / "r.html"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["written"] == [str(tmp_path / "base_report.md"), str(tmp_path / "r.html")]
    html = (tmp_path / "r.html").read_text()
    assert html.count("<svg") >= 6 and "<script" not in html
    assert not re.search(r'(?:src|href)\s*=\s*"(?:https?:)?//', html)  # nothing loaded from the network
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left
    res = CliRunner().invoke(main, ["report", str(tmp_path / "nope.etdp")])
    assert res.exit_code == 2 and "nope.etdp: no such file" in res.output


# --------------------------------------------------------------------------------------------------
# HTML in headless Chromium
# --------------------------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("EDGEPROF_REQUIRE_CHROMIUM"),
                                    reason="Chromium is not installed (.ci/run installs it; CI sets "
                                           "EDGEPROF_REQUIRE_CHROMIUM so the test cannot be skipped there)")


def _chromium(tmp_path, *args) -> subprocess.CompletedProcess:
    assert CHROMIUM, "Chromium is required (EDGEPROF_REQUIRE_CHROMIUM is set)"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args], capture_output=True,
                          text=True, timeout=180, check=False)


@needs_chromium
@pytest.mark.parametrize("pair", ["toycnn", "tel"])
def test_html_renders_in_headless_chromium(pair, toycnn_pair, tel_pair, tmp_path):
    from PIL import Image

    d = toycnn_pair if pair == "toycnn" else tel_pair
    page = tmp_path / "report.html"
    page.write_text(rep.html(d))
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line
               or "Refused to" in line or "Failed to load" in line]
    assert console == [], console
    figures = re.findall(r'<figure data-chart="([a-z_]+)">(.*?)</figure>', dom.stdout, re.DOTALL)
    kinds = [k for k, _ in figures]
    assert {"latency_trend", "distribution", "stacked", "hbars", "timeline"} <= set(kinds)
    for kind, body in figures:
        assert "<svg" in body, kind
        marks = len(re.findall(r"<(?:rect|circle|polyline|line)\b", body))
        assert marks >= 5, (kind, marks)
    shot = tmp_path / "shot.png"
    res = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,3000", page.as_uri())
    assert res.returncode == 0 and shot.exists()
    img = Image.open(shot).convert("RGB")
    colors = img.getcolors(maxcolors=1 << 20) or []
    assert len(colors) > 50  # not blank
    present = {c for _, c in colors}
    # the series and category colours of the charts are on screen, so the SVG was drawn, not just parsed
    assert (0x25, 0x63, 0xEB) in present and (0xEA, 0x58, 0x0C) in present


def test_every_table_uses_the_same_steady_runs(toycnn_pair, etdump_dir):
    """The warm-up run is left out of every table and chart, and the report says so once at the top.

    Oracle: CONV time per steady run summed here from the ETDump records (reference FlatBuffers reader)."""
    from etdump_rewrite import PE, label, read

    d = toycnn_pair
    cand = next(c for c in d["configs"] if c["role"] == "candidate")
    w = cand["latency"]["warmup"]["count"]
    assert w == 1 and {k: cand["runs_used"][k] for k in ("first", "count", "total")} == {"first": 1, "count": 19, "total": 20}
    runs, _ = read((etdump_dir / "toycnn_xnn.N20.etdp").read_bytes())
    execute = [r for r in runs if r.name == "Execute"]
    conv = [sum(e.end - e.start for e in r.events if isinstance(e, PE) and label(e).startswith("Convolution"))
            for r in execute]
    want = sum(conv[w:]) / len(conv[w:]) / 1e6
    assert sum(conv) / len(conv) / 1e6 != pytest.approx(want, rel=1e-3)  # the warm-up run does change it
    in_breakdown = {x["line"]: x["avg_ms"] for x in cand["breakdown"]["categories"]}["CONV"]
    in_comparison = {x["line"]: x["candidate_ms"] for x in d["comparison"]["by_category"]["categories"]}["CONV"]
    in_operators = next(o["avg_ms"] for o in cand["breakdown"]["operators"] if o["operator"].startswith("Convolution"))
    assert in_breakdown == pytest.approx(want, abs=1e-9)
    assert in_comparison == pytest.approx(want, abs=1e-9)
    assert in_operators == pytest.approx(want, abs=1e-9)
    e2e = [sum(e.end - e.start for e in r.events if isinstance(e, PE) and e.name == "Method::execute") for r in execute]
    import numpy as np

    assert cand["latency"]["steady"]["median_ms"] == pytest.approx(np.median(e2e[w:]) / 1e6, abs=1e-9)
    md = rep.markdown(d)
    assert md.count("**Runs used in every table and chart below:**") == 1
    assert "toycnn_xnn.N20: runs 1–19 (19 of 20; run 0 left out as warm-up)" in md
    assert f"| {cand['name']} | 19 | {np.median(e2e[w:]) / 1e6:.4g} [" in md


def _inspector_execute_ms(name: str) -> list[float]:
    """Method::execute per run, from ExecuTorch Inspector's own table (the independent oracle)."""
    import csv
    import gzip
    with gzip.open(DATA / "ground_truth" / f"{name}.inspector.csv.gz", "rt") as f:
        runs = {int(r["run_index"]): float(r["duration_ms"]) for r in csv.DictReader(f) if r["event_name"] == "Method::execute"}
    return [runs[i] for i in sorted(runs)]


def test_report_numbers_against_inspectors_durations(toycnn_pair):
    import statistics
    md = rep.markdown(toycnn_pair, generated="2026-11-30 00:00 UTC")
    medians = {}
    for name in ("toycnn_portable.N20", "toycnn_xnn.N20"):
        ex = _inspector_execute_ms(name)
        m = re.search(rf"^\| {re.escape(name)} \| (\d+) \| ([0-9.e+-]+) \[", md, re.MULTILINE)
        assert m, name
        steady = int(m.group(1))
        assert 0 < steady <= len(ex) == 20
        # warm-up runs are leading runs: the steady runs are the last `steady` runs Inspector lists
        medians[name] = statistics.median(ex[len(ex) - steady:])
        assert float(m.group(2)) == pytest.approx(medians[name], rel=5e-4), name
    # 1 vs 1 launch: the headline speedup is the ratio of those medians (baseline / candidate)
    m = re.search(r"\*\*([0-9.]+)×\*\* \[", md)
    assert float(m.group(1)) == pytest.approx(medians["toycnn_portable.N20"] / medians["toycnn_xnn.N20"], rel=5e-4)


def test_a_multi_launch_report_uses_the_same_runs_everywhere(tmp_path):
    """Two launches of 20 and 200 runs per configuration (real launches of the noise corpus, warm-up included):
    every per-configuration figure — the configuration table, the latency table, the breakdown, the runs-used
    sentence — and the comparison use the same runs: every launch's steady runs. Checked against the runs the
    comparison counts (its own path) and a hand count from the recorded runs."""
    import noise_corpus as nc
    from corpus_etdump import etdump_of

    import edgeprof
    from edgeprof.analysis.latency import detect_warmup

    arms = {}
    for prog in ("toycnn_portable", "tel_portable"):
        ls = nc.session("c_quiet")[prog]
        folder = tmp_path / prog
        folder.mkdir()
        files = []
        for k, (launch, n) in enumerate(((ls[0], 20), (ls[1], 200)), 1):
            f = folder / f"{prog}_t1_l{k}.etdump"
            f.write_bytes(etdump_of(launch, runs=n))
            files.append(f)
        arms[prog] = files
    r = edgeprof.report(baseline=[str(f) for f in arms["toycnn_portable"]],
                        candidate=[str(f) for f in arms["tel_portable"]]).data
    cmp = r["comparison"]
    for cfg, side in zip(r["configs"], ("baseline", "candidate")):
        # hand count: each launch's runs after its warm-up (the warm-up rule applied to the recorded times)
        hand = 0
        for f in cfg["files"]:
            lat = edgeprof.load_etdump(f, warn=False).valid_runs().latency_ms()
            hand += lat.size - detect_warmup(lat)["count"]
        assert cfg["latency"]["count"] == cfg["runs_used"]["count"] == cfg["breakdown"]["runs"] == hand
        assert cmp[side]["count"] == hand
        assert cfg["runs_used"]["total"] == 220 and len(cfg["runs_used"]["launches"]) == 2
        assert cfg["breakdown"]["e2e_ms"]["mean"] == pytest.approx(cfg["latency"]["steady"]["mean_ms"], rel=1e-6)
        assert cfg["breakdown"]["e2e_ms"]["mean"] == pytest.approx(cmp[side]["mean_ms"], rel=1e-6)
    md = edgeprof.report(baseline=[str(f) for f in arms["toycnn_portable"]],
                         candidate=[str(f) for f in arms["tel_portable"]]).markdown()
    assert f"{r['configs'][0]['runs_used']['count']} of 220 runs in 2 launches" in md


def test_the_slower_checklist_says_what_the_latency_table_says_about_drift(tmp_path):
    """Three runs a configuration: the latency table says "too few runs to tell"; so does the checklist (it used
    to say "none significant")."""
    import gzip

    import edgeprof

    fs = []
    for n in ("toycnn_xnn.N3.debug", "toycnn_portable.N3.debug"):
        f = tmp_path / f"{n}.etdp"
        f.write_bytes(gzip.decompress((DATA / "etdump" / f"{n}.etdp.gz").read_bytes()))
        fs.append(str(f))
    rep = edgeprof.report(baseline=[fs[0]], candidate=[fs[1]])
    (check,) = [f for f in rep.data["findings"] if f["rule"] == "candidate_slower"]
    assert [i for i in check["items"] if i.startswith("thermal drift")] == \
        ["thermal drift: too few runs to tell (toycnn_xnn.N3.debug, toycnn_portable.N3.debug)"]
    assert "too few runs to tell" in rep.markdown() and "none significant" not in rep.markdown()
