"""``plan`` groups launches as ``compare -b FILES`` does: files that name no experiment (and no manifest beside
them records one) are the launches of one configuration, whatever they are called — three launches renamed
``first``, ``second``, ``third`` are one pilot of 3 launches (2 df), not three one-launch configurations."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from testdata import DATA

FILES = ["cnn_cpu_t1_l1.ort.json", "cnn_cpu_t1_l2.ort.json.gz", "cnn_cpu_t1_l3.ort.json.gz"]
NAMES = ["first.ort.json", "second.ort.json.gz", "third.ort.json.gz"]


def _plan(*files) -> dict:
    r = subprocess.run([sys.executable, "-m", "edgeprof", "plan", *map(str, files), "--effect", "30%", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_files_named_anyhow_are_launches_of_one_configuration(tmp_path):
    for src, dst in zip(FILES, NAMES):
        shutil.copy(DATA / "ort" / src, tmp_path / dst)
    renamed = _plan(*(tmp_path / n for n in NAMES))
    (c,) = renamed["configurations"]
    assert c["launches"] == 3 and renamed["launch_noise"]["df"] == 2
    original = _plan(*(DATA / "ort" / f for f in FILES))
    # the same launches give the same plan, whatever their names
    for key in ("launch_sd", "within_sd", "recommended", "launch_noise"):
        if key == "launch_noise":
            assert {k: v for k, v in renamed[key].items() if k != "detail"} == \
                   {k: v for k, v in original[key].items() if k != "detail"}
        else:
            assert renamed[key] == original[key], key
