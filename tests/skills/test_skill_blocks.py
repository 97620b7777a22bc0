"""Every command block of every shipped skill runs, as written, against the fixtures — so a skill can never
go stale. Blocks of one skill run in order in one folder (later blocks read what earlier ones wrote), with the
skill's input variables pointing at fixtures; a block's ``# expect-exit: N`` comment states a non-zero exit it
must produce (a gate that must fail)."""

from __future__ import annotations

import os
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from readme_lines import block_commands, stated_outputs

from edgeprof.api.skills import SKILLS_DIR, install_skills, skills

DATA = Path(__file__).resolve().parent.parent / "data"
BIN = Path(sys.executable).parent
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
NAMES = [s["name"] for s in skills()]


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    root = tmp_path_factory.mktemp("skills") / "out_toycnn"
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    subprocess.run(["edgeprof", "example", str(root), "--force"], check=True, env=env, capture_output=True)
    return root


def _env(example: Path) -> dict:
    cm = DATA / "coreml"
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                RUN_DIR=str(example / "runs" / "linux"), BASELINE="portable", CANDIDATE="xnnpack_fp32",
                TRACE_ON=str(DATA / "xnnpack" / "mac_sme2_on_xnntrace.log"),
                TRACE_OFF=str(DATA / "xnnpack" / "mac_sme2_off_xnntrace.log"),
                MODEL_A=str(example / "artifacts" / "toycnn_portable.pte"),
                MODEL_B=str(example / "artifacts" / "toycnn_xnnpack_fp32.pte"), OUT="collected",
                PROFILE_JSON=str(DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json"),
                COSTPLAN_JSON=str(DATA / "anemll" / "ane_costplan.illustrative.json"),
                COREML_MODEL=str(cm / "int32_kvcache_state_ios18.mlpackage"),
                COREML_BEFORE=str(cm / "conv_relu_linear_ios18.mlpackage"),
                COREML_AFTER=str(cm / "conv_palettized4_ios18.mlpackage"), STORE="history.duckdb")


def test_every_skill_has_front_matter_and_blocks():
    assert set(NAMES) == {"analyze-results", "generate-report", "collect", "compare-and-gate", "ane-profile",
                          "coreml-static", "history-regressions"}
    for s in skills():
        text = Path(s["path"]).read_text()
        assert s["description"] and len(s["description"]) > 60 and s["name"] == Path(s["path"]).parent.name
        assert BLOCK.findall(text), s["name"]
        assert "## Success criteria" in text and "## Procedure" in text


@pytest.mark.parametrize("name", NAMES)
def test_skill_blocks_run_as_written(name, example, tmp_path):
    if name == "collect":
        try:
            import executorch  # noqa: F401
        except ImportError:
            if os.environ.get("EDGEPROF_REQUIRE_RUN"):
                raise
            pytest.skip("the collect skill needs the run extra (executorch)")
    text = (SKILLS_DIR / name / "SKILL.md").read_text()
    env = _env(example)
    for i, block in enumerate(BLOCK.findall(text)):
        m = re.search(r"#\s*expect-exit:\s*(\d+)", block)
        want = int(m.group(1)) if m else 0
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == want, f"{name} block {i + 1} exited {r.returncode}:\n{block}\n{r.stderr[-2000:]}"
        # what the block says it writes is there: each output file, each `--json > F` a JSON document of a kind
        for cmd in block_commands(block):
            for rel, is_json in stated_outputs(shlex.split(
                    re.sub(r"\$\{?(\w+)\}?", lambda m: env[m.group(1)], cmd))):
                f = tmp_path / rel
                assert f.exists() and (f.is_dir() or f.stat().st_size > 0), (name, cmd, rel)
                if is_json:
                    assert json.loads(f.read_text()).get("kind"), (name, cmd, rel)


def test_install_copies_and_keeps_local_edits(tmp_path):
    written = install_skills(tmp_path / "skills")
    assert len(written) == len(NAMES) and all(Path(p).read_text() == (SKILLS_DIR / Path(p).parent.name / "SKILL.md")
                                               .read_text() for p in written)
    edited = tmp_path / "skills" / "collect" / "SKILL.md"
    edited.write_text("mine")
    r = subprocess.run([str(BIN / "edgeprof"), "skills", "install", str(tmp_path / "skills")], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "differs from the shipped skill" in r.stderr and edited.read_text() == "mine"
    r = subprocess.run([str(BIN / "edgeprof"), "skills", "install", str(tmp_path / "skills"), "--force"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and edited.read_text() != "mine"
    shutil.rmtree(tmp_path / "skills")
    assert install_skills(tmp_path / "one", names=["ane-profile"])[0].endswith("ane-profile/SKILL.md")


def test_skills_name_only_verdicts_and_paths_that_exist(example, tmp_path):
    """What the skills tell an agent to read exists: every verdict word they list is one of the verdicts, and
    every `comparison.json` path they quote is in a real comparison document."""
    import json as _json

    from edgeprof import api
    from edgeprof.conventions import VERDICTS

    doc = _json.loads(_json.dumps(api.compare(["portable"], ["xnnpack_fp32"], run_dir=example / "runs" / "linux")
                                  .to_json(), default=str))
    for s in skills():
        text = Path(s["path"]).read_text()
        for line in re.findall(r"`verdict` is ([^;]+);", text):
            words = re.findall(r"`([a-z_]+)`", line)
            assert words and set(words) <= set(VERDICTS), (s["name"], words)
        for path in re.findall(r"`((?:by_category|bottleneck|speedup|ci|launch_noise|tests|metrics)\.[a-z_.]+)`", text):
            node = doc
            for key in path.split("."):
                assert isinstance(node, dict) and key in node, (s["name"], path)
                node = node[key]
