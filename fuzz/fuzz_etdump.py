"""Fuzz target for the ETDump and ETRecord readers.

    python fuzz/fuzz_etdump.py [SECONDS]        # random mutations of the test fixtures (no extra deps)
    python fuzz/fuzz_etdump.py -atheris [...]   # coverage-guided, with `pip install atheris`

The property: any byte string gives a Profile or a typed edgeprof InputError — never another
exception. A crash writes the input to fuzz/crashes/ and exits 1.
"""

from __future__ import annotations

import gzip
import io
import random
import struct
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from edgeprof.errors import InputError  # noqa: E402
from edgeprof.io.etdump import build_profile  # noqa: E402
from edgeprof.io.etdump_decode import decode  # noqa: E402
from edgeprof.io.etrecord import read_etrecord  # noqa: E402

SEEDS = [gzip.decompress(p.read_bytes()) for p in sorted((ROOT / "tests" / "data" / "etdump").glob("toycnn*.etdp.gz"))]
RECORDS = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "etrecord").glob("toycnn_x*.etrecord"))
           if ".full." not in p.name]


def check_etdump(data: bytes) -> None:
    try:
        build_profile(decode(data, "fuzz.etdp"), "fuzz.etdp", len(data))
    except InputError:
        pass


def check_etrecord(data: bytes, tmp: Path) -> None:
    p = tmp / "fuzz.etrecord"
    p.write_bytes(data)
    try:
        read_etrecord(p)
    except InputError:
        pass


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not b:
            break
        op = rng.random()
        i = rng.randrange(len(b))
        if op < 0.4:
            b[i] ^= 1 << rng.randrange(8)
        elif op < 0.6:
            b[i:i + 4] = struct.pack("<I", rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, rng.getrandbits(32), len(b)]))
        elif op < 0.75:
            del b[i:]
        elif op < 0.9:
            b[i:i] = rng.randbytes(rng.randint(1, 16))
        else:
            del b[i:i + rng.randint(1, 64)]
    if rng.random() < 0.5 and len(b) >= 4:
        b[0:4] = struct.pack("<I", len(b) - 4)
    return bytes(b)


def mutate_zip(rng: random.Random, data: bytes) -> bytes:
    """Rewrite an ETRecord with one JSON member damaged (structure kept, content fuzzed)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        names = zin.namelist()
        victim = rng.choice(names)
        for n in names:
            content = zin.read(n)
            zout.writestr(n, mutate(rng, content) if n == victim else content)
    return out.getvalue()


CASE_SECONDS = 20      # an input taking longer is a hang
RSS_LIMIT_MB = 500     # the process may not grow past this


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"one input took longer than {CASE_SECONDS} s")


def fuzz_loop(seconds: float, seed: int, next_case) -> int:
    """Run ``fn(data, *args)`` for ``(kind, fn, data, args) = next_case(rng, tmp)`` until time is up; the first
    exception, hang (> 20 s for one input) or peak RSS over 500 MB saves its input to fuzz/crashes/ and
    returns 1."""
    import resource
    import signal

    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(seed)
    n = 0
    slowest = 0.0
    end = time.time() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        while time.time() < end:
            kind, fn, data, args = next_case(rng, Path(tmp))
            t0 = time.perf_counter()
            signal.alarm(CASE_SECONDS)
            try:
                fn(data, *args)
                problem = None
            except Exception as e:  # noqa: BLE001 - that is the point
                problem = f"{type(e).__name__}: {e}"
            finally:
                signal.alarm(0)
            slowest = max(slowest, time.perf_counter() - t0)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            if problem is None and rss > RSS_LIMIT_MB:
                problem = f"peak RSS {rss:.0f} MB"
            if problem:
                crashes = ROOT / "fuzz" / "crashes"
                crashes.mkdir(exist_ok=True)
                out = crashes / f"{kind}-{n}.bin"
                out.write_bytes(data)
                print(f"CRASH after {n} inputs: {problem} -> {out}")
                return 1
            n += 1
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} inputs, no crash ({seconds:.0f} s, slowest input {slowest:.2f} s, peak RSS {rss:.0f} MB)")
    return 0


def next_case(rng: random.Random, tmp: Path):
    if rng.random() < 0.8:
        return "etdump", check_etdump, mutate(rng, rng.choice(SEEDS)), ()
    data = mutate_zip(rng, rng.choice(RECORDS)) if rng.random() < 0.7 else mutate(rng, rng.choice(RECORDS))
    return "etrecord", check_etrecord, data, (tmp,)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "-atheris":
        import atheris

        def one(data: bytes) -> None:
            check_etdump(data)

        atheris.Setup([sys.argv[0]] + sys.argv[2:], one)
        atheris.Fuzz()
        return 0
    return fuzz_loop(float(sys.argv[1]) if len(sys.argv) > 1 else 60, 1234, next_case)


if __name__ == "__main__":
    sys.exit(main())
