"""The debug-buffer reader under fuzzing (fuzz/fuzz_debug_buffer.py, seeded): mutated ETDump metadata, truncated and
mutated buffers give every tensor in its described shape or a typed InputError, never another exception."""

from __future__ import annotations

import importlib.util
import random
import sys

from testdata import ROOT


def _target():
    sys.path.insert(0, str(ROOT / "fuzz"))
    spec = importlib.util.spec_from_file_location("fuzz_debug_buffer", ROOT / "fuzz" / "fuzz_debug_buffer.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fuzz_mutated_debug_recordings():
    fz = _target()
    rng = random.Random(20261203)
    for _ in range(300):
        fz.check(*fz.case(rng))


def test_the_property_holds_for_the_unmutated_recordings():
    fz = _target()
    for etdump, buffer in fz.SEEDS:
        fz.check(etdump, buffer)
        fz.check(etdump, buffer[:-1])  # one byte short: an InputError, not another exception
