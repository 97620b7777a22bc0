"""Fuzz target for everything around the readers: whole commands on semantically hostile inputs and in a
hostile environment.

    python fuzz/fuzz_commands.py [SECONDS] [--seed N]
    setpriv --reuid=65534 --regid=65534 --clear-groups -- python fuzz/fuzz_commands.py 300   # as a regular user

Each case builds one input from the real fixtures — an ETDump whose timestamps, durations, names, run and
block structure were bent (allocation-only and debug-only runs included), or whose FlatBuffer offsets alias, or a
gzip bomb of one; an ETRecord with JSON values out of range or of the wrong kind (NaN/Infinity handles, lone
surrogate escapes); a timeline CSV with hostile cells (lone surrogates too); an ONNX Runtime profile whose names
escape lone surrogates; an ANE report with fields of the wrong type —
and runs one or two commands on it (in-process, through the command line), sometimes writing into a hostile
place: a full file system (a 64 KB tmpfs, mounted when running as root), ``/dev/full``, ``/dev/null``, a
folder where a file goes, a file where a folder goes, a name at the 255-byte limit, a name that is not UTF-8,
a read-only folder (as a regular user), or reading a FIFO or a symlink to ``/dev/zero``.

The properties: the exit code is 0, 1 (a failed check) or 2 (one ``edgeprof: error:`` line); no exception
escapes; no traceback or internal error is printed; no temporary file is left; the inputs are unchanged;
no case takes more than 20 s (SIGALRM) and the process stays under 500 MB. A violation saves the case to
fuzz/crashes/ and exits 1.
"""

from __future__ import annotations

import copy
import gc
import gzip
import hashlib
import io
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from click.testing import CliRunner  # noqa: E402
from etdump_builder import AE, DE, PE, Run, TensorMeta  # noqa: E402
from etdump_rewrite import read, write  # noqa: E402
import hostile_round3 as h3  # noqa: E402

from edgeprof.cli import main  # noqa: E402

DATA = ROOT / "tests" / "data"
CASE_SECONDS = 20
RSS_LIMIT_MB = 500
SPECIAL_TIMES = [0, 1, 2**31, 2**32 - 1, 2**32, 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
NAMES = ["", "Method::execute", "Method::init", "Program::load_method", "OPERATOR_CALL", "DELEGATE_CALL",
         "native_call_convolution.out", "native_call_.out", "Fully Connected (NC, F32) GEMM #1", "Convolution (NHWC",
         "x" * 5000, "<script>alert(1)</script>", "\u202e\u0000tab\tline\nbreak", "名前", "#", " #3"]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"case took longer than {CASE_SECONDS} s")


# --------------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------------

SEED_DUMPS = {n: read(gzip.decompress((DATA / "etdump" / f"{n}.etdp.gz").read_bytes()))
              for n in ("toycnn_xnn.N20", "toycnn_portable.N3.debug", "tel_xnn.N20")}


def mutate_runs(rng: random.Random, runs: list[Run]) -> list[Run]:
    runs = [replace(r, events=list(r.events)) for r in runs]
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        if not runs:
            runs.append(Run("Execute", []))
        r = rng.randrange(len(runs))
        events = runs[r].events
        pes = [i for i, e in enumerate(events) if isinstance(e, PE)]
        if op < 0.25 and pes:  # timestamps
            i = rng.choice(pes)
            e = events[i]
            pick = rng.random()
            if pick < 0.3:
                events[i] = replace(e, end=rng.choice(SPECIAL_TIMES))
            elif pick < 0.5:
                events[i] = replace(e, start=rng.choice(SPECIAL_TIMES))
            elif pick < 0.7:
                events[i] = replace(e, start=e.end, end=e.start)
            elif pick < 0.85:
                events[i] = replace(e, end=e.start)
            else:
                events[i] = replace(e, end=e.start + rng.randint(0, 10**12))
        elif op < 0.35 and pes:  # every Method::execute of a run bent the same way
            how = rng.choice(["zero", "back", "u64", "wrap"])
            for i in pes:
                e = events[i]
                if e.name == "Method::execute":
                    events[i] = {"zero": replace(e, end=e.start), "back": replace(e, start=2**40, end=2**40 - 9),
                                 "u64": replace(e, end=2**64 - 1), "wrap": replace(e, start=2**32 - 3, end=2)}[how]
        elif op < 0.45 and pes:  # names and ids
            i = rng.choice(pes)
            e = events[i]
            events[i] = replace(e, name=rng.choice(NAMES + [None]), instruction_id=rng.choice(
                [e.instruction_id, -1, 0, 2**31 - 1, -(2**31), rng.randint(-5, 500)]),
                dd_str=rng.choice([e.dd_str, None, "", rng.choice(NAMES)]), dd_int=rng.choice([e.dd_int, -1, 0, 7]))
        elif op < 0.55 and events:  # drop, duplicate, shuffle events
            k = rng.random()
            if k < 0.4:
                del events[rng.randrange(len(events))]
            elif k < 0.7:
                j = rng.randrange(len(events))
                events.insert(rng.randrange(len(events) + 1), events[j])
            else:
                rng.shuffle(events)
        elif op < 0.65:  # run structure
            k = rng.random()
            if k < 0.3 and len(runs) > 1:
                del runs[r]
            elif k < 0.5:
                runs.insert(rng.randrange(len(runs) + 1), runs[r])
            elif k < 0.7:
                runs[r] = replace(runs[r], name=rng.choice(["Default", "Execute", "", "Other", "Default"]))
            else:
                runs[r] = replace(runs[r], events=[])
        elif op < 0.8:  # allocation-only and debug-only runs
            if rng.random() < 0.5:
                runs[r] = replace(runs[r], events=[AE(rng.randint(-1, 3), rng.choice([0, 64, 2**64 - 1]))
                                                   for _ in range(rng.randint(1, 5))],
                                  allocators=rng.choice([[], ["a"], ["a", "b", "c"]]))
            else:
                runs[r] = replace(runs[r], events=[DE(name=rng.choice(NAMES), instruction_id=rng.randint(-1, 9),
                                                      tensor=TensorMeta(rng.randint(-5, 40), [rng.randint(-1, 9)],
                                                                        [1], rng.choice([-1, 0, 2**62])),
                                                      output=rng.random() < 0.5) for _ in range(rng.randint(1, 4))])
        elif op < 0.9 and pes:  # durations scaled
            f = rng.choice([0, 0.5, 2, 1000, 1e9])
            for i in pes:
                e = events[i]
                events[i] = replace(e, end=min(2**64 - 1, e.start + int((e.end - e.start) * f)) if e.end >= e.start
                                    else e.end)
        else:  # injected events of every kind at random places
            events.insert(rng.randrange(len(events) + 1), rng.choice([
                AE(0, 1), DE(name="d", instruction_id=1, int_value=rng.randint(-9, 9)),
                PE(rng.choice(NAMES), rng.choice(SPECIAL_TIMES), rng.choice(SPECIAL_TIMES), rng.randint(-1, 9))]))

    def fit(e):  # timestamps are uint64 in the format: what the mutations produce is kept inside that range
        if isinstance(e, PE):
            return replace(e, start=min(max(e.start, 0), 2**64 - 1), end=min(max(e.end, 0), 2**64 - 1))
        return e

    return [replace(r, events=[fit(e) for e in r.events]) for r in runs]


def etdump_case(rng: random.Random, folder: Path) -> Path:
    name = rng.choice(list(SEED_DUMPS))
    runs, version = SEED_DUMPS[name]
    p = folder / f"{name}_t1.etdp"
    r = rng.random()
    if r < 0.06:  # offsets that alias: one table reached from several places
        p.write_bytes(h3.aliased(write(runs, version), rng.choice(["run_table", "events_vector", "event_table",
                                                                   "events_of_runs", "payload"]),
                                 rng.choice([2, 50, 2000]), only_execute=rng.random() < 0.5))
    elif r < 0.08:  # a gzip bomb (each costs ~0.3 s per command)
        p = folder / f"{name}_t1.etdp.gz"
        p.write_bytes(h3.gzip_bomb(b"\0" * (1 << 20), 100, head=write(runs, version)[:64]))
    else:
        p.write_bytes(write(mutate_runs(rng, runs), version))
    return p


ODD = [None, True, False, 0, -1, 1.5, 2**63, 10**30, 1e308, float("inf"), float("nan"), "x", "", "9" * 5000,
       "\ud800", "a\udfff", "\ud83d\ude00",
       [], {}, [1, [2, [3]]], {"a": {"b": None}}, "NaN", -0.0]


def _edit_json(rng: random.Random, doc, edits: int):
    doc = json.loads(json.dumps(doc))
    for _ in range(edits):
        node, parent, key = doc, None, None
        for _ in range(rng.randint(1, 7)):
            if isinstance(node, dict) and node:
                parent, key = node, rng.choice(list(node))
            elif isinstance(node, list) and node:
                parent, key = node, rng.randrange(len(node))
            else:
                break
            node = parent[key]
        if parent is not None:
            parent[key] = copy.deepcopy(rng.choice(ODD))
    return doc


RECORD = DATA / "etrecord" / "toycnn_xnn.etrecord"
with zipfile.ZipFile(RECORD) as _z:
    RECORD_MEMBERS = {n: _z.read(n) for n in _z.namelist()}


def etrecord_case(rng: random.Random, folder: Path) -> Path:
    members = dict(RECORD_MEMBERS)
    victim = rng.choice([n for n in members if n != "ETRECORD_V0"])
    try:
        doc = json.loads(members[victim])
        members[victim] = json.dumps(_edit_json(rng, doc, rng.randint(1, 8)), allow_nan=True).encode()
    except ValueError:
        pass
    if rng.random() < 0.1:
        members[victim] = b"[" * 60000 + b"]" * 60000
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in members.items():
            z.writestr(n, data)
    p = folder / "toycnn_xnn.etrecord"
    p.write_bytes(buf.getvalue())
    return p


GOOD_CSV = None


def _good_csv(tmp: Path) -> str:
    global GOOD_CSV
    if GOOD_CSV is None:
        src = tmp / "csvseed"
        src.mkdir(exist_ok=True)
        (src / "good.etdp").write_bytes(gzip.decompress((DATA / "etdump" / "tel_xnn.N20.etdp.gz").read_bytes()))
        CliRunner().invoke(main, ["analyze", str(src / "good.etdp"), "--no-progress"])
        GOOD_CSV = (src / "good_exec_all_runs_timeline.csv").read_text()
    return GOOD_CSV


CELLS = ["", "NaN", "nan", "inf", "-inf", "-1", "0", "1e308", "1e-320", "9" * 400, "fast", "[1]", "12", '{"a":1}',
         "[" * 3000, '["aten.x"]', "null", "true", " ", "\u00e9", "-0", '["\\ud800"]', '["a\\udfffb"]',
         '["\\ud83d\\ude00"]']


def csv_case(rng: random.Random, folder: Path) -> Path:
    import csv

    rows = list(csv.reader(io.StringIO(_good_csv(folder.parent))))
    header, body = rows[0], rows[1:]
    for _ in range(rng.randint(1, 12)):
        col = rng.randrange(len(header))
        if rng.random() < 0.3:  # a whole column
            for r in body:
                r[col] = rng.choice(CELLS)
        else:
            body[rng.randrange(len(body))][col] = rng.choice(CELLS)
    if rng.random() < 0.1:
        rng.shuffle(body)
    if rng.random() < 0.05:
        header = header[: rng.randrange(len(header))]
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(header)
    w.writerows(body)
    p = folder / "fz_exec_all_runs_timeline.csv"
    p.write_text(out.getvalue())
    return p


ANE_DOCS = [json.loads(p.read_text()) for p in sorted((DATA / "anemll").glob("*.json"))]
ESCAPES = ["\\ud800", "\\udfff", "\\ud83d", "\\ud83d\\ude00", "\\\\ud800"]


def ort_case(rng: random.Random, folder: Path) -> Path:
    """The fixture ONNX Runtime profile with escapes spliced into some strings (lone surrogates, mostly)."""
    text = gzip.decompress((DATA / "ort" / "cnn_cpu_t1_l2.ort.json.gz").read_bytes()).decode()
    for _ in range(rng.randint(1, 3)):
        at = text.find('"', rng.randrange(len(text)))
        if at >= 0:
            text = text[: at + 1] + rng.choice(ESCAPES) + text[at + 1:]
    p = folder / "fz.ort.json"
    p.write_text(text)
    return p


def ane_case(rng: random.Random, folder: Path) -> Path:
    doc = _edit_json(rng, rng.choice(ANE_DOCS), rng.randint(1, 6))
    p = folder / "report.json"
    p.write_text(json.dumps(doc, allow_nan=True))
    return p


# --------------------------------------------------------------------------------------------------
# places
# --------------------------------------------------------------------------------------------------

class Places:
    """Hostile destinations and sources, made once per fuzz run."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.full = None
        if os.geteuid() == 0 and shutil.which("mount"):
            d = tmp / "full"
            d.mkdir()
            if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)],
                              capture_output=True).returncode == 0:
                self.full = d
        self.readonly = None
        if os.geteuid() != 0:
            d = tmp / "readonly"
            d.mkdir()
            os.chmod(d, 0o555)
            self.readonly = d
        self.a_file = tmp / "a_file"
        self.a_file.write_text("keep")
        self.a_dir = tmp / "a_dir"
        self.a_dir.mkdir()
        self.fifo = tmp / "fifo.etdp"
        os.mkfifo(self.fifo)
        self.zero = tmp / "zero.etdp"
        self.zero.symlink_to("/dev/zero")

    def out_dir(self, rng: random.Random, case: Path) -> Path:
        choices = [case / "out", case / "out", case / ("n" * 200), case / os.fsdecode(b"\xff\xfeout"), self.a_file]
        if self.full is not None:
            choices += [self.full / f"c{rng.randrange(10**9)}"] * 2
        if self.readonly is not None:
            choices += [self.readonly / "sub"] * 2
        return rng.choice(choices)

    def out_file(self, rng: random.Random, case: Path, suffix: str) -> Path:
        choices = [case / f"o{suffix}", case / f"o{suffix}", Path("/dev/null"), Path("/dev/full"), self.a_dir,
                   case / ("f" * (255 - len(suffix)) + suffix), case / os.fsdecode(b"\xfe" + suffix.encode())]
        if self.full is not None:
            choices.append(self.full / f"o{rng.randrange(10**9)}{suffix}")
        return rng.choice(choices)

    def close(self):
        if self.full is not None:
            subprocess.run(["umount", str(self.full)], check=False)


# --------------------------------------------------------------------------------------------------
# one case
# --------------------------------------------------------------------------------------------------

def commands(rng: random.Random, kind: str, p: Path, case: Path, places: Places) -> list[list]:
    good = case / "good.etdp"
    if kind in ("etdump", "csv", "ort"):
        if rng.random() < 0.05:
            p = rng.choice([places.fifo, places.zero])
        pool = [["latency", p, "--json", "--output-dir", places.out_dir(rng, case)],
                ["compare", good, p, "--out", places.out_file(rng, case, ".json")],
                ["breakdown", p, "--output-dir", places.out_dir(rng, case), "--json"],
                ["report", p, "--out", places.out_file(rng, case, ".md"), "--html", places.out_file(rng, case, ".html")],
                ["trace", p, "--out", places.out_file(rng, case, ".json"), "--json"],
                ["kernels", p, "--json"]]
        if kind == "etdump":
            pool += [["analyze", p, "--output-dir", places.out_dir(rng, case), "--no-progress", "--json"],
                     ["validate", p.parent]]
        return rng.sample(pool, 2)
    if kind == "etrecord":
        strict = ["--strict-etrecord"] if rng.random() < 0.4 else []
        return rng.sample([["analyze", good, "--etrecord", p, "--output-dir", places.out_dir(rng, case), "--no-progress",
                            *strict], ["breakdown", good, "--etrecord", p, "--no-write", "--json", *strict],
                           ["trace", good, "--etrecord", p, "--out", places.out_file(rng, case, ".json")]], 2)
    orig = DATA / "anemll" / "anemll_profile_0.4.1.illustrative.json"
    plan = DATA / "anemll" / "ane_costplan.illustrative.json"
    return rng.sample([["ane", p, "--json"], ["ane", p, "--markdown", places.out_file(rng, case, ".md")],
                       ["ane", "diff", orig, p], ["ane", "diff", plan, p, "--json"], ["ane", p, "--costplan", plan],
                       ["ane", case]], 2)


def _digest(folder: Path, only=None) -> dict:
    return {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in folder.iterdir()
            if f.is_file() and (only is None or str(f) in only)}


def run_case(rng: random.Random, tmp: Path, places: Places, n: int) -> tuple[str, list, str] | None:
    case = tmp / f"case{n}"
    case.mkdir()
    (case / "good.etdp").write_bytes(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))
    r = rng.random()
    kind = "etdump" if r < 0.45 else "csv" if r < 0.62 else "ort" if r < 0.7 else "etrecord" if r < 0.85 else "ane"
    p = {"etdump": etdump_case, "csv": csv_case, "etrecord": etrecord_case, "ane": ane_case,
         "ort": ort_case}[kind](rng, case)
    before = _digest(case)
    for cmd in commands(rng, kind, p, case, places):
        signal.alarm(CASE_SECONDS)
        try:
            res = CliRunner().invoke(main, [str(x) for x in cmd])
        except Hang as e:
            return kind, cmd, str(e)
        finally:
            signal.alarm(0)
            gc.unfreeze()  # the CLI freezes the heap for its one command per process; here many run in one process
            gc.collect()
        out = res.output
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            if isinstance(res.exception, Hang):
                return kind, cmd, str(res.exception)
            return kind, cmd, f"{type(res.exception).__name__}: {res.exception}"
        if res.exit_code not in (0, 1, 2):
            return kind, cmd, f"exit code {res.exit_code}"
        if "Traceback" in out or "internal error" in out:
            return kind, cmd, "traceback printed"
        if res.exit_code == 2 and out.count("edgeprof: error:") < 1:
            return kind, cmd, "exit 2 without an error line"
    if _digest(case, before) != before:
        return kind, [], "an input was modified"
    for root in (case, places.full, places.a_dir, tmp):
        if root is not None:
            left = [f for f in root.rglob("*.tmp") if ".edgeprof-" in f.name]
            if left:
                return kind, [], f"temporary files left: {left[:3]}"
    if places.a_file.read_text() != "keep" or any(places.a_dir.iterdir()):
        return kind, [], "a file in the way was replaced"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if rss > RSS_LIMIT_MB:
        return kind, [], f"peak RSS {rss:.0f} MB"
    shutil.rmtree(case, ignore_errors=True)
    if places.full is not None:
        for f in places.full.iterdir():
            shutil.rmtree(f, ignore_errors=True) if f.is_dir() else f.unlink()
    return None


def main_loop(seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    end = time.time() + seconds
    n = 0
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        places = Places(tmp)
        try:
            while time.time() < end:
                problem = run_case(rng, tmp, places, n)
                if problem:
                    kind, cmd, what = problem
                    crashes = ROOT / "fuzz" / "crashes"
                    crashes.mkdir(exist_ok=True)
                    keep = crashes / f"commands-{seed}-{n}"
                    shutil.copytree(tmp / f"case{n}", keep, dirs_exist_ok=True, symlinks=True)
                    print(f"PROBLEM after {n} cases ({kind}): {what}\n  edgeprof {' '.join(map(str, cmd))}\n  -> {keep}")
                    return 1
                n += 1
        finally:
            places.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} cases, no problem ({seconds:.0f} s, peak RSS {rss:.0f} MB, "
          f"{'with' if places.full else 'without'} a full tmpfs, {'with' if places.readonly else 'without'} a "
          "read-only folder)")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--seed")]
    seed = int(next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--seed=")), "1"))
    sys.exit(main_loop(float(args[0]) if args else 60, seed))
