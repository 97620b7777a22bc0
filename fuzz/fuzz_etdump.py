"""Fuzz target for the ETDump and ETRecord readers.

    python fuzz/fuzz_etdump.py [SECONDS]        # random mutations of the test fixtures (no extra deps)
    python fuzz/fuzz_etdump.py -atheris [...]   # coverage-guided, with `pip install atheris`

The property: any byte string gives a Profile or a typed edgeprof InputError — never another
exception. A crash writes the input to fuzz/crashes/ and exits 1.

Besides byte mutations (some of which repeat a word where a count or an offset belongs), the cases hold:
FlatBuffers whose offsets alias (one RunData, events vector, Event or payload reached twice — built with the
reference runtime, tests/helpers/hostile_round3.py) read whole and in blocks of runs, which must agree; gzip'd
ETDumps, damaged or bombs (through the file reader: the decompression rule); and ETRecords whose JSON members hold
lone surrogate escapes, NaN/Infinity and other values where debug handles belong.
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
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

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


def check_etdump_file(data: bytes, tmp: Path, max_events: int | None = None) -> None:
    """Through the file reader (gzip, the decompression rule), whole; and, with ``max_events``, in blocks of runs,
    which must refuse exactly what the whole read refuses."""
    from edgeprof.io.etdump_read import ETDumpBlocks, read_etdump

    p = tmp / ("fuzz.etdp.gz" if data[:2] == b"\x1f\x8b" else "fuzz.etdp")
    p.write_bytes(data)
    try:
        whole = read_etdump(p, allow_empty=True)
    except InputError:
        whole = None
    if max_events is None:
        return
    try:
        blocks = list(ETDumpBlocks(p, max_events=max_events))
    except InputError:
        blocks = None
    assert (whole is None) == (blocks is None), "read whole and read in blocks disagree on refusing the file"
    if blocks is not None:
        assert sum(b.n_events for b in blocks) == whole.n_events


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


def aliased_case(rng: random.Random) -> bytes:
    """A FlatBuffer whose offsets alias, now and then byte-mutated on top."""
    import hostile_round3 as h3

    how = rng.choice(["run_table", "events_vector", "event_table", "events_of_runs", "payload"])
    data = h3.aliased(rng.choice(SEEDS), how, rng.choice([2, 3, 50, 1000]), only_execute=rng.random() < 0.5)
    return mutate(rng, data) if rng.random() < 0.2 else data


def gzip_case(rng: random.Random) -> bytes:
    """A gzip'd ETDump: whole, cut short, with bytes after it, or (rarely: each costs ~0.2 s) a bomb."""
    import hostile_round3 as h3

    r = rng.random()
    if r < 0.05:
        return h3.gzip_bomb(rng.choice([b"\0", b"ED00", rng.randbytes(7)]) * (1 << 18), rng.randint(80, 120),
                            head=rng.choice(SEEDS)[:rng.choice([0, 12, 64])])
    data = gzip.compress(mutate(rng, rng.choice(SEEDS)) if rng.random() < 0.5 else rng.choice(SEEDS))
    if r < 0.4:
        data = data[: rng.randrange(len(data))]
    elif r < 0.55:
        data += rng.choice([b"\0", rng.randbytes(9), data])
    return data


ODD_HANDLES = [b"NaN", b"Infinity", b"-Infinity", b"1.5", b"1e999", b'"7a"', b"null", b"true", b"[[1]]", b'{"a": 1}',
               b"-1", b"9223372036854775808", b'"\\ud800"', b"\"x\\udfff\"", b'"\\ud83d\\ude00"']


def mutate_json_member(rng: random.Random, data: bytes) -> bytes:
    """Rewrite an ETRecord with numbers and strings of one JSON member replaced by odd values: NaN, Infinity,
    fractions, text, nesting, lone surrogate escapes (and a surrogate pair, which is text)."""
    import re

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        names = [n for n in zin.namelist() if n != "ETRECORD_V0"]
        victim = rng.choice(names)
        for n in zin.namelist():
            content = zin.read(n)
            if n == victim:
                tokens = list(re.finditer(rb'-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*"', content))
                for m in sorted(rng.sample(tokens, min(len(tokens), rng.randint(1, 6))), key=lambda m: -m.start()):
                    content = content[: m.start()] + rng.choice(ODD_HANDLES) + content[m.end():]
            zout.writestr(n, content)
    return out.getvalue()


def next_case(rng: random.Random, tmp: Path):
    r = rng.random()
    if r < 0.65:
        return "etdump", check_etdump, mutate(rng, rng.choice(SEEDS)), ()
    if r < 0.72:
        return "etdump-aliased", check_etdump_file, aliased_case(rng), (tmp, rng.choice([1, 5, 40]))
    if r < 0.78:
        return "etdump-gzip", check_etdump_file, gzip_case(rng), (tmp,)
    if r < 0.86:
        return "etrecord-json", check_etrecord, mutate_json_member(rng, rng.choice(RECORDS)), (tmp,)
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
