"""Runs grouped by their signature (the sequence of their event names) without a tuple per run, against grouping by
tuples: on every recording in tests/data, on random sequences, and with every hash colliding (the exact fallback)."""

from __future__ import annotations

import gzip
import random

import numpy as np
import polars as pl
import pytest
from testdata import DATA

from edgeprof.analysis import phases
from edgeprof.analysis.phases import run_signatures
from edgeprof.io.etdump_read import read_etdump


def _by_tuples(run_index, codes, runs):
    seqs: dict = {}
    for r, c in zip(run_index, codes):
        if r >= 0:
            seqs.setdefault(r, []).append(c)
    names: dict = {}
    return [names.setdefault(tuple(seqs.get(i, ())), len(names)) for i in runs]


def test_every_recording_groups_its_runs_as_tuples_do(tmp_path):
    files = sorted(DATA.rglob("*.etdp.gz"))
    assert len(files) >= 20
    groups = 0
    for f in files:
        p = tmp_path / f.name[: -len(".gz")]
        p.write_bytes(gzip.decompress(f.read_bytes()))
        prof = read_etdump(p, allow_empty=True)
        runs = prof.runs.filter(pl.col("run_index") >= 0).sort("run_index")["run_index"].to_list()
        ids, _, _ = prof.name_groups()
        ri = prof.events["run_index"].to_numpy()
        got = run_signatures(ri, ids, runs)
        assert got == _by_tuples(ri.tolist(), prof.events["name"].cast(pl.String).to_list(), runs), f.name
        groups += len(set(got)) > 1
    assert groups >= 1  # some recording has runs of different signatures (the LLM's prefill and decode)


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_random_runs_group_as_tuples_do(seed, collide, monkeypatch):
    if collide:  # every run of a length hashes alike: only the exact comparison separates them
        monkeypatch.setattr(phases, "HASH_MULTIPLIER", 0)
    rng = random.Random(seed)
    templates = [[rng.randrange(4) for _ in range(rng.randint(0, 6))] for _ in range(rng.randint(1, 4))]
    runs = list(range(rng.randint(1, 30)))
    events = [(r, c) for r in runs if rng.random() > 0.1 for c in rng.choice(templates)]
    events += [(-1, rng.randrange(4)) for _ in range(rng.randint(0, 3))]  # load/init events belong to no run
    rng.shuffle(events)
    events.sort(key=lambda e: e[0])  # runs apart, each run's events in order; init events among them
    ri = np.array([e[0] for e in events], dtype=np.int64)
    codes = np.array([e[1] for e in events], dtype=np.int64)
    assert run_signatures(ri, codes, runs) == _by_tuples(ri.tolist(), codes.tolist(), runs)
