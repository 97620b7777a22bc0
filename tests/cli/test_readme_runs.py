"""Every `edgeprof …` command the documentation (README and docs/) shows runs here, and what it says it does is checked.

The commands run in one folder that holds what they name: the README's own first commands make
`edgeprof-example` (its fenced blocks run in order, as written); the files its examples name (`off_1.etdp`,
`out/runs/mac`, `ON.csv`, `model.pte`, `profile.json`, …) are real recordings and reports from tests/data under
those names; placeholders (`RUN_DIR`, `INPUT`, `BEFORE`, …) are replaced by such a file, chosen per command. The
runner and the Android device of the collection examples are the fakes at their process boundary
(tests/helpers/fake_device.py); the Python-runtime collection runs for real (the run extra).

Checked for every command: it exits 0 (or the exit the README states); each file it is told to write
(`--out`, `--html`, `--as-anemll`, `--to`, `--output-dir`, `example DIR`, `skills install DIR`) exists and is not
empty; `--json` prints a JSON document of the command's kind. Then the outputs the README states (the roles
rule, the files a collection writes, launches per arm, the history gate's selection) are compared.

Not run, only parsed (tests/cli/test_readme_commands.py): installs, `edgeprof mcp` (a stdio server: driven by
tests/agent_server), `coreml plan` (macOS only), and prose that names a command in passing (MENTIONS)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_device import install
from readme_lines import block_commands, doc_blocks, inline_commands, stated_outputs
from testdata import DATA

from edgeprof.cli import main
from edgeprof.errors import MissingExtraError
from edgeprof.extras import missing

EX = "edgeprof-example"
X_PORT = f"{EX}/runs/linux/portable/toycnn_portable_t1.etdump"
X_FP32 = f"{EX}/runs/linux/xnnpack_fp32/toycnn_xnnpack_fp32_t1.etdump"
CM = DATA / "coreml"

# placeholder → what it names here, per command ("" applies to every command); a list is used in order
SUBS = {
    "": {"RUN_DIR": f"{EX}/runs/linux", "INPUT": X_FP32, "BASE": X_PORT, "CAND": X_FP32, "B": X_PORT,
         "C": X_FP32, "OFF": "mac_sme2_off_xnntrace.log", "ON": "mac_sme2_on_xnntrace.log", "DIR": "new_folder",
         "MODEL": "model.mlpackage", "ETDUMP": "llm_kv_xnn.etdp", "MODEL.pte": f"{EX}/artifacts/toycnn_portable.pte",
         "A.pte": f"{EX}/artifacts/toycnn_portable.pte", "B.pte": f"{EX}/artifacts/toycnn_xnnpack_fp32.pte",
         "F": "ON.csv", "D": "latency_out", "N": "SME2-On", "LOG": "mac_sme2_on_xnntrace.log",
         "CSV": ["kernels_on.csv", "kernels_off.csv"], "MD": "kernel_view.md"},
    "breakdown": {"ETDUMP": X_PORT},
    "numerics": {"BASE": "tel_xnn.debug.etdp", "CAND": "tel_xnnq8.debug.etdp"},
    "ane": {"FOLDER": "ane_reports", "FOLDER/": "ane_reports/"},
    "ane diff": {"BEFORE": "before.json", "AFTER": "after.json"},
    "coreml": {"FOLDER/": "coreml_models/"},
    "coreml diff": {"A": "before.mlpackage", "B": "after.mlpackage"},
    "phases": {"BEFORE": "llm_kv_portable.etdp", "AFTER": "llm_kv_xnn.etdp"},
    "analyze": {"DIR": "out/runs/mac"},
    "validate": {"DIR": "out/runs/mac_trace"},
    "export": {"DIR/": "exported/"},
    "kernel-view": {"CSV": ["kernels_on.csv", "kernels_off.csv"]},
}
# a README line that needs another input than its placeholders say (the line stays as written otherwise)
INPUT_FOR = {"edgeprof validate RUN_DIR --require manifest --require metrics": {"RUN_DIR": "collected_fake"}}
ENV = {"GITHUB_SHA": "c0ffee2", "BASE_SHA": "c0ffee1"}

MENTIONS = {  # prose naming a command (and maybe an option) in passing, not a command to type
    "edgeprof mcp", "edgeprof compare", "edgeprof run", "edgeprof ane", "edgeprof validate", "edgeprof trace --json",
    "edgeprof ingest", "edgeprof history", "edgeprof export", "edgeprof analyze", "edgeprof kernels",
    "edgeprof trace", "edgeprof report --html",
}
NOT_HERE = {"edgeprof coreml plan MODEL --out plan.json": "macOS only (Core ML's MLComputePlan)"}
# run with --dry-run: the Python-runtime collection runs for real once (the README's collection example, in
# full); this one's 12 launches are checked as planned
DRY = {"edgeprof run toycnn_portable.pte toycnn_xnn.pte --runs 20 --warmup 2 --threads 1,2 --launches 3 --report",
       # ONNX Runtime's pip build has no OpenVINO provider (onnxruntime-openvino is another package): planned only
       "edgeprof run model.onnx --providers OpenVINOExecutionProvider",
       # a debug recording (`numerics` then reads the bundled recordings of the same programs): planned here, recorded
       # for real in tests/cli/test_numerics_run.py
       "edgeprof run tel_xnn.pte tel_xnnq8.pte --runs 1 --warmup 0 --launches 1 --debug-buffer 2MB"}
# the sandbox's files made by `edgeprof coreml --as-anemll` (with the coreml extra only)
FROM_COREML = {"before.json", "after.json", "estimate.json"}


def _command_path(args: list[str]) -> str:
    words = []
    node = main
    for a in args:
        sub = getattr(node, "commands", {}).get(a)
        if sub is None:
            break
        words.append(a)
        node = sub
    return " ".join(words)


def _bind(line: str) -> list[str]:
    """The command's arguments with shell variables and placeholders replaced by files of the sandbox."""
    line = re.sub(r'"?\$\{?([A-Za-z_]\w*)\}?"?', lambda m: ENV[m.group(1)], line)
    args = shlex.split(line)[1:]
    path = _command_path(args)
    table = {**SUBS[""], **SUBS.get(path.split(" ")[0], {}), **SUBS.get(path, {}), **INPUT_FOR.get(line, {})}
    used: dict[str, int] = {}
    out = []
    for a in args:
        v = table.get(a) if re.fullmatch(r"[A-Z][A-Z_]*(\.pte)?/?", a) else None
        if isinstance(v, list):
            v, used[a] = v[used.get(a, 0)], used.get(a, 0) + 1
        out.append(v if v is not None else a)
    return out


@contextlib.contextmanager
def _in(folder: Path, env: dict):
    old, saved = Path.cwd(), {k: os.environ.get(k) for k in env}
    os.chdir(folder)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(old)
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def _invoke(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _readme_blocks():
    """The documentation's fenced shell blocks (the README's first), each as its `edgeprof` commands (installs left
    out)."""
    return [block_commands(b) for _, lang, b in doc_blocks(("bash", ""))]


def _gunzip(src: Path, dest: Path) -> None:
    dest.write_bytes(gzip.decompress(src.read_bytes()))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    import noise_corpus as nc
    from corpus_etdump import etdump_of


    sb = tmp_path_factory.mktemp("readme")
    fakes = install(sb / "_fakes")
    dev = Path(fakes["env"]["FAKE_ADB_ROOT"])
    shutil.copytree(dev / "R5CX", dev / "R5CX1234")  # the README's serial, a Pixel 8
    props = dev / "R5CX1234" / "props"
    props.write_text(props.read_text().replace("Pixel 9 Pro", "Pixel 8"))
    env = {"PATH": fakes["env"]["PATH"], "FAKE_LOG": fakes["env"]["FAKE_LOG"],
           "FAKE_ADB_ROOT": fakes["env"]["FAKE_ADB_ROOT"]}
    with _in(sb, env):
        first = _readme_blocks()[0]  # example, analyze, report: the README's first command, as written
        for cmd in first:
            r = _invoke(shlex.split(cmd)[1:])
            assert r.exit_code == 0, (cmd, r.output)
        for rel in ("executorch/cmake-out/mac-arm64", "android"):
            (sb / rel).mkdir(parents=True)
            shutil.copy2(fakes["runner"], sb / rel / "executor_runner")
        shutil.copy2(sb / EX / "artifacts" / "toycnn_xnnpack_fp32.pte", sb / "model.pte")
        shutil.copy2(sb / EX / "artifacts" / "toycnn_portable.pte", sb / "toycnn_portable.pte")
        shutil.copy2(sb / EX / "artifacts" / "toycnn_xnnpack_fp32.pte", sb / "toycnn_xnn.pte")
        shutil.copy2(sb / EX / "artifacts" / "toycnn_xnnpack_fp32.pte", sb / "mobilenet.pte")
        for src, name in (("cnn.onnx", "cnn.onnx"), ("cnn_int8.onnx", "cnn_int8.onnx"), ("cnn.onnx", "model.onnx")):
            shutil.copy2(DATA / "ort" / src, sb / name)
        for name in ("gate_xnn.N10.etdp.gz", "gate_nosigmoid.N10.etdp.gz", "gate_norelu.N10.etdp.gz", "gate_xnn.pte",
                     "gate_nosigmoid.pte"):  # `edgeprof placement`
            shutil.copy2(DATA / "placement" / name, sb / name)
        shutil.copy2(DATA / "memory" / "alloc" / "toycnn_portable.alloc.N3.etdp.gz", sb)  # `edgeprof memory`
        for name in ("cnn_mixed_ov_t1_l1.ort.json.gz", "cnn_mixed.onnx", "cnn_cpu_t1_l1.ort.json"):
            shutil.copy2(DATA / "ort" / name, sb / name)
        for name in ("cnn_xnnpack_benchmark.log", "cnn_cpu_ops.csv", "cnn.tflite"):
            shutil.copy2(DATA / "litert" / name, sb / name)
        (sb / "mac_config.json").write_text(json.dumps({
            "model": "model.pte", "output_root": "out_cfg/runs/mac",
            "experiments": [{"name": n, "runner_path": "cmake-out/mac-arm64/executor_runner", "mode": "timing",
                             "runs": 5, "warmup": 1, "threads": [1], "extra_args": []}
                            for n in ("mac_sme2_on", "mac_sme2_off")]}))
        # two real launches per arm (the real-noise corpus), and a kit run folder with trace logs
        corpus = nc.session("c_quiet")
        for arm, prog in (("off", "toycnn_portable"), ("on", "toycnn_xnn")):
            for k in (1, 2):
                (sb / f"{arm}_{k}.etdp").write_bytes(etdump_of(corpus[prog][k - 1], runs=40))
        for exp, src in (("mac_sme2_off", "toycnn_xnn"), ("mac_sme2_on", "toycnn_xnnq8")):
            d = sb / "out" / "runs" / "mac" / exp
            d.mkdir(parents=True)
            _gunzip(DATA / "etdump" / f"{src}.N20.etdp.gz", d / f"toycnn_{exp}_t1.etdump")
            (sb / "out" / "runs" / "mac_trace").mkdir(parents=True, exist_ok=True)
            shutil.copy2(DATA / "xnnpack" / f"{exp}_xnntrace.log",
                         sb / "out" / "runs" / "mac_trace" / f"toycnn_{exp}_xnntrace.log")
            shutil.copy2(DATA / "xnnpack" / f"{exp}_xnntrace.log", sb / f"{exp}_xnntrace.log")
        assert _invoke(["analyze", "out/runs/mac", "--quiet", "--no-progress"]).exit_code == 0
        for exp, name in (("mac_sme2_on", "ON.csv"), ("mac_sme2_off", "OFF.csv")):
            shutil.copy2(next((sb / "out" / "runs" / "mac" / exp).glob("*_all_runs_timeline.csv")), sb / name)
        for name in ("tel_xnn", "tel_xnnq8"):  # debug recordings for `edgeprof numerics` (tests/data/numerics)
            for ext in ("etdp", "bin"):
                _gunzip(DATA / "numerics" / f"{name}.debug.{ext}.gz", sb / f"{name}.debug.{ext}")
            shutil.copy2(DATA / "etrecord" / f"{name}.etrecord", sb / f"{name}.etrecord")
            shutil.copy2(DATA / "pte" / f"{name}.pte", sb / f"{name}.pte")
        for name in ("llm_kv_portable", "llm_kv_xnn"):
            _gunzip(DATA / "llm" / f"{name}.G2S64.etdp.gz", sb / f"{name}.etdp")
        # ANE and Core ML documents under the names the README uses
        shutil.copy2(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json", sb / "profile.json")
        shutil.copy2(DATA / "anemll" / "ane_costplan.illustrative.json", sb / "costplan.json")
        plan = json.loads((sb / "costplan.json").read_text())
        (sb / "plan_before.json").write_text(json.dumps(plan))
        for op in plan.get("ops", [])[:3]:
            op["device"] = "CPU" if op.get("device") == "ANE" else op.get("device")
        (sb / "plan_after.json").write_text(json.dumps(plan))
        (sb / "ane_reports").mkdir()
        shutil.copy2(sb / "profile.json", sb / "ane_reports" / "profile.json")
        shutil.copytree(CM / "conv_relu_linear_ios18.mlpackage", sb / "model.mlpackage")
        shutil.copytree(CM / "conv_relu_linear_ios18.mlpackage", sb / "before.mlpackage")
        shutil.copytree(CM / "conv_palettized4_ios18.mlpackage", sb / "after.mlpackage")
        (sb / "coreml_models").mkdir()
        shutil.copytree(CM / "conv_relu_linear_ios18.mlpackage", sb / "coreml_models" / "a.mlpackage")
        shutil.copytree(CM / "sdpa_block_ios18.mlpackage", sb / "coreml_models" / "b.mlpackage")
        for src, out in (("before.mlpackage", "before.json"), ("after.mlpackage", "after.json"),
                         ("model.mlpackage", "estimate.json")) if not missing("coreml") else ():
            assert _invoke(["coreml", src, "--as-anemll", out]).exit_code == 0
        # a collection with a manifest and metrics (the fake runner), for `validate --require manifest …`
        r = _invoke(["run", "model.pte", "--runner", "executorch/cmake-out/mac-arm64/executor_runner", "--runs", "5",
                     "--out", "collected_fake", "--no-progress"])
        assert r.exit_code == 0, r.output
        assert _invoke(["analyze", "collected_fake", "--quiet", "--no-progress"]).exit_code == 0
        assert _invoke(["kernels", "--xnntrace", "mac_sme2_off_xnntrace.log", "--out", "kernels_off.csv"]).exit_code == 0
        r = _invoke(["run", "mobilenet.pte", "--runner", "android/executor_runner", "--device", "adb:R5CX1234",
                     "--runs", "5", "--out", "out_mobilenet/runs/android", "--no-progress"])
        assert r.exit_code == 0, r.output
    return sb, env


def _lines():
    blocks_ = _readme_blocks()
    out = [(f"block{i + 1}", cmd) for i, b in enumerate(blocks_) if i > 0 for cmd in b]
    first = set(blocks_[0])
    return out + [("inline", c) for c in inline_commands() if c not in first]


ALL = [line for _, line in _lines()]
LINES = [pytest.param(line, id=f"{where}:{line[9:60]}") for where, line in _lines()
         if line not in MENTIONS and line not in NOT_HERE]


def _check_writes(args: list[str], sb: Path, r) -> None:
    for rel, _ in stated_outputs(args):
        target = sb / rel
        assert target.exists() and (target.is_dir() or target.stat().st_size > 0), (args, rel)
    path = _command_path(args)
    if path in ("example", "skills install"):
        target = sb / args[len(path.split())]
        assert target.is_dir() and any(target.iterdir()), args
    if "--json" in args:
        doc = json.loads(r.stdout)
        assert isinstance(doc, dict) and doc.get("kind"), args


def _run_line(line: str, sandbox):
    sb, env = sandbox
    args = _bind(line)
    if line in DRY:
        args.append("--dry-run")
    with _in(sb, env):
        r = _invoke(args)
    return sb, args, r


def _collection_extra(line: str) -> str | None:
    """The extra a documented collection through a Python runtime needs (None: a runner, a config, a dry run)."""
    if _command_path(shlex.split(line)[1:]) != "run" or "--runner" in line or "--config" in line \
            or "--dry-run" in line or line in DRY:
        return None
    return "ort" if ".onnx" in line else "litert" if ".tflite" in line else "run"


def _reads_a_collection_of(line: str) -> str | None:
    """The missing extra of an earlier documented collection whose --out folder ``line`` reads."""
    for other in ALL:
        extra = _collection_extra(other)
        args = shlex.split(other)
        if other != line and extra and missing(extra) and "--out" in args:
            out = args[args.index("--out") + 1]
            if re.search(rf"(^|\s){re.escape(out)}(/|\s|$)", line):
                return extra
    return None


@pytest.mark.parametrize("line", LINES)
def test_readme_command_runs(line, sandbox):
    extra = _collection_extra(line) or _reads_a_collection_of(line)
    if extra and missing(extra):
        raise MissingExtraError(extra, "this documented collection (or what it wrote)")
    if missing("coreml") and FROM_COREML & set(_bind(line)):
        raise MissingExtraError("coreml", "the estimates this line reads (made by `edgeprof coreml --as-anemll`)")
    sb, args, r = _run_line(line, sandbox)
    assert r.exit_code == 0, (line, args, r.output)
    _check_writes(args, sb, r)
    check = STATED.get(line)
    if check:
        check(sb, r)


def test_the_lists_name_only_readme_lines():
    """MENTIONS, NOT_HERE and STATED name lines the README has (a renamed line must be renamed here too)."""
    assert set(MENTIONS) | set(NOT_HERE) | set(STATED) | DRY <= set(ALL)
    assert len(LINES) >= 50 and len(MENTIONS) + len(NOT_HERE) <= 16


# ---- what the README states about the outputs


def _roles_in_order(sb, r):  # "else in order": the first input is the baseline
    assert "baseline portable, candidate xnnpack_fp32" in r.stderr


def _kit_roles(sb, r):  # the SME2-off input is the baseline whatever the flags
    assert re.search(r"roles: baseline SME2-Off, candidate SME2-On", r.stderr), r.stderr


def _two_launches_per_arm(sb, r):
    assert re.search(r"launches\s*│\s*2\s*│\s*2", r.stdout), r.stdout


def _run_folder_roles(sb, r):
    assert "baseline mac_sme2_off, candidate mac_sme2_on" in r.stderr


def _collected(sb, r):
    out = sb / EX / "collected"
    for exp in ("toycnn_portable", "toycnn_xnnpack_fp32"):
        assert sorted(p.name for p in (out / exp).glob("*.etdump")) == [f"{exp}_t1_l{k}.etdump" for k in (1, 2, 3)]
    for name in ("manifest.json", "metrics.json", "report.md", "report.html"):
        assert (out / name).stat().st_size > 0, name
    assert list(out.rglob("*_all_runs_timeline.csv")) and list(out.rglob("*_ops_stats.csv"))
    assert re.search(r"toycnn_portable: \d+ of 60 runs in 3 launches", (out / "report.md").read_text())


def _planned_12_launches(sb, r):  # 2 programs × 2 thread counts × 3 launches, interleaved
    launches = re.findall(r"_t([12])_l([123])\.etdump", r.output)
    assert len(launches) == 12 and len(set(launches)) == 6, r.output


def _config_run(sb, r):
    names = sorted(p.name for p in (sb / "out_cfg" / "runs" / "mac").rglob("*.etdump"))
    assert names and all(re.fullmatch(r"model_mac_sme2_o(n|ff)_t1(_l\d)?\.etdump", n) for n in names), names


def _on_device(sb, r):
    m = json.loads(next(sb.glob("out_model/runs/*/manifest.json")).read_text()) if list(
        sb.glob("out_model/runs/*/manifest.json")) else None
    calls = (sb / "_fakes" / "fake_calls.log").read_text()
    assert "taskset" in calls and "0x80" in calls and "R5CX1234" in calls
    assert m is None or m["status"] == "complete"


def _history_selects(sb, r):  # the gate's selection finds the launches ingested from the Pixel 8
    assert "mobilenet" in r.output and "no launches" not in r.output.lower(), r.output


def _gemm_series(sb, r):
    doc = json.loads(r.stdout)
    assert doc["metric"] == "category:GEMM" and doc["series"], doc


STATED = {
    "edgeprof compare BASE CAND": _roles_in_order,
    "edgeprof compare -b off_1.etdp -b off_2.etdp -c on_1.etdp -c on_2.etdp": _two_launches_per_arm,
    "edgeprof compare --run-dir out/runs/mac -b mac_sme2_off -c mac_sme2_on": _run_folder_roles,
    "edgeprof compare --timeline-csv ON.csv --compare OFF.csv --name1 SME2-On --name2 SME2-Off --verbose": _kit_roles,
    "edgeprof run edgeprof-example/artifacts/toycnn_portable.pte edgeprof-example/artifacts/toycnn_xnnpack_fp32.pte "
    "--runs 20 --launches 3 --out edgeprof-example/collected --force --report": _collected,
    "edgeprof run toycnn_portable.pte toycnn_xnn.pte --runs 20 --warmup 2 --threads 1,2 --launches 3 --report":
        _planned_12_launches,
    "edgeprof run --config mac_config.json": _config_run,
    'edgeprof history --store history.duckdb --model mobilenet --device "Pixel 8" --fail-on regression --since '
    '"$BASE_SHA"': _history_selects,
    "edgeprof history --store history.duckdb --metric category:GEMM --json": _gemm_series,
    "edgeprof run model.pte --runner android/executor_runner --device adb:R5CX1234 --cpu-affinity 0x80": _on_device,
}
