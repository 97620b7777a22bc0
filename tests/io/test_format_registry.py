"""A new input format is one record: a toy profile format — its own runtime, its own name ending, its own content
test and reader — registered in edgeprof.io.formats (and its runtime in edgeprof.runtimes) and nothing else, is
taken by every command: analyze, latency, breakdown, compare, report, trace, ingest, and by a folder scan. The
figures each command gives are checked against the toy file's own numbers (written here), and the runtime's own
words appear where edgeprof speaks of it.

The toy format (``.toyprof``): a first line ``#toyprof 1``, then ``run <start µs> <duration µs>`` for each run and
``op <name> <start µs> <duration µs>`` for each operator of the run above it."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from edgeprof import api, runtimes
from edgeprof.io import formats

RUN_US = [(0, 1000), (2000, 1100), (4000, 1000), (6000, 1050), (8000, 990), (10000, 1010)]
OPS = [("conv2d", 100, 600), ("relu", 720, 100)]  # offsets within a run


def _write(path, scale: float = 1.0):
    lines = ["#toyprof 1"]
    for s, d in RUN_US:
        lines.append(f"run {s} {round(d * scale)}")
        lines += [f"op {n} {s + o} {round(du * scale)}" for n, o, du in OPS]
    path.write_text("\n".join(lines) + "\n")
    return path


def _read_toy(path):
    """The toy reader: runs and operators into edgeprof's event model (a run's span, each op as a wrapper and its
    kernel), with the runtime's name recorded."""
    from edgeprof.io.etdump import build_profile, events_only
    from edgeprof.model import KINDS

    rows, names = [], {}

    def code(s):
        return names.setdefault(s, len(names))

    run, span = -1, None

    def close():  # a run's span is recorded after what it holds (as a runtime records an event at its end)
        if span is not None:
            rows.append((run, code("Method::execute"), -1, span[0], span[0] + span[1], -1))

    for line in path.read_text().splitlines()[1:]:
        kind, *rest = line.split()
        if kind == "run":
            close()
            run, span = run + 1, tuple(map(int, rest))
        else:
            n, s, d = rest[0], int(rest[1]), int(rest[2])
            rows.append((run, code(n), len(rows), s, s + d, KINDS.index("kernel")))
            rows.append((run, code("OPERATOR_CALL"), len(rows) - 1, s, s + d, KINDS.index("operator_call")))
    close()
    col = list(zip(*rows))
    us = [np.array(col[j], dtype=np.uint64) * 1000 for j in (3, 4)]
    dec = events_only(["Execute"] * (run + 1), col[0], col[1], [-1] * len(rows), list(names), col[2], *us,
                      pe_kind=np.array(col[5], dtype=np.int8))
    prof = build_profile(dec, path, file_size=path.stat().st_size)
    prof.runtime = "toyrt"
    prof.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()  # the content identity the history store keys on
    return prof


@pytest.fixture
def toy(tmp_path):
    rt = runtimes.register(runtimes.Runtime(
        name="toyrt", title="ToyRT", run_event="infer", host_backend="toy cpu", accelerated="toy accelerator",
        profile_noun="toy profile", node="step", overhead="toy tracing overhead", host_title="Toy CPU",
        accelerated_title="toy accelerators", event_names=(("Method::execute", "infer"),)))
    fmt = formats.register(formats.InputFormat(
        "toy_profile", "toyrt", "a toy profile .toyprof", _read_toy, suffixes=(".toyprof",),
        folder_tails=(".toyprof",), sniff=lambda head: head.startswith(b"#toyprof")))
    try:
        yield rt, fmt
    finally:
        formats.unregister("toy_profile")
        runtimes.unregister("toyrt")


def test_every_command_takes_a_registered_format(toy, tmp_path):
    base = _write(tmp_path / "toy_base.toyprof")
    cand = _write(tmp_path / "toy_cand.toyprof", scale=0.25)
    # a name that says nothing: the content test decides
    anon = tmp_path / "anonymous.dat"
    anon.write_bytes(base.read_bytes())
    assert formats.detect(anon).name == "toy_profile" and formats.detect(base).name == "toy_profile"

    lat = api.latency([str(base)])[0].doc
    assert lat["count"] == 6 and lat["median_ms"] == pytest.approx(np.median([d for _, d in RUN_US]) / 1000)
    assert lat["runtime"] == "toyrt"

    bd = api.breakdown(str(base)).doc
    rows = {c["line"]: c for c in bd["categories"]}
    per_run = np.mean([d for _, d in RUN_US]) / 1000
    assert bd["runtime"] == "toyrt" and bd["e2e_ms"]["mean"] == pytest.approx(per_run)
    assert sum(c["avg_ms"] for c in bd["categories"]) == pytest.approx(per_run)  # the lines add up to the run
    assert rows["CONV"]["avg_ms"] == pytest.approx(0.6) and rows["ACTIVATION"]["avg_ms"] == pytest.approx(0.1)

    cmp = api.compare([str(base)], [str(cand)])
    assert cmp.doc["speedup"]["estimate"] == pytest.approx(4.0, rel=0.01)
    assert {c["line"]: c for c in cmp.doc["by_category"]["categories"]}["CONV"]["speedup"] == pytest.approx(4.0)

    rep = api.report([str(base), str(cand)], out=tmp_path / "r.md", write=True)
    md = (tmp_path / "r.md").read_text()
    assert "## Toy CPU vs toy accelerators" in md and "| Runtime | ToyRT (version not recorded) |" in md
    assert "toy cpu" in md and "portable" not in md.lower() and "ETDump" not in md
    assert rep["comparison"]["verdict"] == cmp.doc["verdict"] == "faster"

    tr = api.trace(str(base), out=str(tmp_path / "t.json"))
    doc = json.loads((tmp_path / "t.json").read_text())
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == len(RUN_US) * (1 + 2 * len(OPS)) == tr["slices"]
    assert sum(e["name"] == "infer" for e in slices) == len(RUN_US)  # the run in the runtime's words

    out = tmp_path / "analysed"
    res = api.analyze([str(base)], output_dir=str(out))
    assert res.summary["analysed_count"] == 1 and any(p.endswith("_all_runs_timeline.csv") for p in map(str, res.outputs))

    store = tmp_path / "h.duckdb"
    ing = api.ingest([str(base), str(cand)], store=str(store), commit="c1", model="toy", device="d")
    assert len(ing["added"]) == 2 and ing["counts"]["runs"] == 12 and ing["counts"]["operators"] == 4

    # a folder scan finds the format by its registered name ending
    from edgeprof.io.runfolder import find_etdumps

    assert sorted(p.name for p in find_etdumps([tmp_path])) == ["toy_base.toyprof", "toy_cand.toyprof"]


def test_an_unregistered_format_is_named_in_the_error(tmp_path):
    from edgeprof.errors import InputError

    p = _write(tmp_path / "x.toyprof")
    with pytest.raises(InputError) as e:
        formats.detect(p)
    assert "x.toyprof" in str(e.value) and "ONNX Runtime profile" in str(e.value)
