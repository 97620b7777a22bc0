"""Real ExecuTorch ETDumps with allocator + allocation events, and their truth listings
(Not run by the tests; made once with executorch 1.5.1 in the project venv)::

    . .venv/bin/activate && python tests/data/memory/alloc/record.py

What it does, exactly:

1. Compiles ``driver.cpp`` (next to this file) against the executorch wheel in the venv
   (``executorch 1.5.1+cpu``, git 3b60683923245cf472b7323426920e15623ba361, ``site-packages/executorch``)
   with Debian ``g++ (Debian 12.2.0-14+deb12u1) 12.2.0``::

       g++ -std=c++17 -O1 -DC10_USING_CUSTOM_GENERATED_MACROS -DET_EVENT_TRACER_ENABLED \\
           -I$ET/include -I$ET/include/executorch/runtime/core/portable_type/c10 \\
           driver.cpp -o $TMP/driver -L$ET/lib -Wl,--no-as-needed \\
           -lexecutorch_etdump -lexecutorch_kernels_optimized -lexecutorch_backend_xnnpack -lexecutorch \\
           -Wl,--as-needed -Wl,-rpath,$ET/lib

   (the two -D's are the wheel's ``EXECUTORCH_COMPILE_DEFINITIONS``; ``--no-as-needed`` keeps the kernel and
   XNNPACK libraries, which register themselves from static initialisers, linked; the portable/optimized kernels
   live in ``libexecutorch_kernels_optimized.so``). The binary goes to a temp dir and is not kept.

2. Runs ``driver <pte> 3 <out>`` for each model below. The driver (ExecuTorch's C++ runtime, not the Python
   pybinding, which records no allocations): FileDataLoader -> Program::load -> planned memory from
   ``MethodMeta::memory_planned_buffer_size(i)`` -> a 4 MiB ``method_allocator`` and a 4 MiB ``temp_allocator``
   (MemoryAllocator subclasses that call ``EventTracer::track_allocation(id, bytes)`` after each successful
   ``allocate()``; bytes = bump-pointer bytes consumed incl. alignment padding) -> ``ETDumpGen`` subclass that
   registers both allocators with ``ETDumpGen::track_allocator(name)`` at the start of every event block the
   runtime opens ("Default" from Program::load_method, one "Execute" per Method::execute) -> load_method with the
   tracer -> inputs = ones of the dtype/shape/dim-order in the method meta -> execute 3x ->
   ``get_etdump_data()`` written verbatim.

3. Writes ``<name>.alloc.N3.etdp.gz`` (gzip, mtime 0, of those exact bytes) and ``<name>.alloc.N3.truth.json``:
   the ETDump decoded by ExecuTorch's own ``executorch.devtools.etdump.serialize.deserialize_from_etdump_flatcc``
   (via the venv's ``flatc``) -- per run block: allocator names, allocation events per allocator (count, total
   bytes, sizes in order), profile events, and every event in file order -- plus the driver's own counters
   (stderr) as a cross-check, and whether ExecuTorch's Inspector can open the file (in 1.5.1 it cannot:
   ``find_populated_event`` raises ``ValueError("Unable to find populated event")`` on an AllocationEvent).

Facts seen in these files: ``AllocationEvent.allocator_id`` is 1-based (ETDumpGen::track_allocator returns the
allocators vector length after the push, so allocators[0] has id 1); only the "Default" (load) block carries
allocation events -- none of these programs allocates from either allocator while executing; zero-byte
allocations occur; every block re-lists the allocators. Timings (ProfileEvent start/end ticks, ns) are whatever
this machine produced.
"""
import gzip
import json
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

import executorch
from executorch.version import __version__ as ET_VERSION, git_version as ET_GIT
from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1]
ET = Path(executorch.version.__file__).resolve().parent
N = 3
MODELS = OrderedDict([
    ("gate_xnn", DATA / "placement" / "gate_xnn.pte"),  # XNNPACK-delegated
    ("toycnn_portable", DATA / "pte" / "toycnn_portable.pte"),  # portable/optimized kernels
])
CXXFLAGS = ["-std=c++17", "-O1", "-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_EVENT_TRACER_ENABLED",
            f"-I{ET}/include", f"-I{ET}/include/executorch/runtime/core/portable_type/c10"]
LDFLAGS = [f"-L{ET}/lib", "-Wl,--no-as-needed", "-lexecutorch_etdump", "-lexecutorch_kernels_optimized",
           "-lexecutorch_backend_xnnpack", "-lexecutorch", "-Wl,--as-needed", f"-Wl,-rpath,{ET}/lib"]


def truth(raw: bytes, name: str, pte: Path, driver_log: list) -> dict:
    et = deserialize_from_etdump_flatcc(raw)
    blocks, totals = [], OrderedDict()
    for b, rd in enumerate(et.run_data):
        names = [a.name for a in (rd.allocators or [])]
        per = OrderedDict((n, {"allocator_id": i + 1, "count": 0, "total_bytes": 0, "sizes": []})
                          for i, n in enumerate(names))
        events, profile = [], []
        for ev in rd.events or []:
            if ev.allocation_event is not None:
                a = ev.allocation_event
                key = names[a.allocator_id - 1] if 1 <= a.allocator_id <= len(names) else f"<id {a.allocator_id}>"
                slot = per.setdefault(key, {"allocator_id": a.allocator_id, "count": 0, "total_bytes": 0,
                                            "sizes": []})
                slot["count"] += 1
                slot["total_bytes"] += a.allocation_size
                slot["sizes"].append(a.allocation_size)
                events.append({"kind": "allocation", "allocator_id": a.allocator_id,
                               "allocation_size": a.allocation_size})
            elif ev.profile_event is not None:
                p = ev.profile_event
                rec = OrderedDict([("name", p.name), ("delegate_debug_id_str", p.delegate_debug_id_str),
                                   ("delegate_debug_id_int", p.delegate_debug_id_int),
                                   ("chain_index", p.chain_index), ("instruction_id", p.instruction_id),
                                   ("start_time", p.start_time), ("end_time", p.end_time),
                                   ("delegate_debug_metadata_len", len(p.delegate_debug_metadata or b""))])
                profile.append(rec)
                events.append(OrderedDict([("kind", "profile"), *rec.items()]))
            else:
                events.append({"kind": "debug"})
        for n, s in per.items():
            t = totals.setdefault(n, {"count": 0, "total_bytes": 0})
            t["count"] += s["count"]
            t["total_bytes"] += s["total_bytes"]
        blocks.append(OrderedDict([
            ("index", b), ("name", rd.name), ("bundled_input_index", rd.bundled_input_index),
            ("allocators", names), ("n_events", len(rd.events or [])),
            ("n_allocation_events", sum(e["kind"] == "allocation" for e in events)),
            ("n_profile_events", len(profile)),
            ("n_debug_events", sum(e["kind"] == "debug" for e in events)),
            ("allocations", per), ("profile_event_names", [p["name"] or p["delegate_debug_id_str"]
                                                          for p in profile]),
            ("events", events)]))
    try:
        from executorch.devtools import Inspector
        with tempfile.NamedTemporaryFile(suffix=".etdp") as tmp:
            tmp.write(raw)
            tmp.flush()
            ins = Inspector(etdump_path=tmp.name)
            inspector = {"opens": True, "event_blocks": [b.name for b in ins.event_blocks]}
    except Exception as exc:  # recorded, not hidden
        inspector = {"opens": False, "error": f"{type(exc).__name__}: {exc}"}
    return OrderedDict([
        ("etdump", f"{name}.alloc.N{N}.etdp.gz"), ("program", str(pte.relative_to(DATA.parents[1]))),
        ("runs", N), ("recorded_by", "tests/data/memory/alloc/record.py + driver.cpp (ExecuTorch C++ runtime)"),
        ("decoded_by", f"executorch.devtools.etdump.serialize.deserialize_from_etdump_flatcc "
                       f"(executorch {ET_VERSION})"),
        ("etdump_bytes", len(raw)), ("version", et.version),
        ("allocator_id_base", 1), ("n_run_blocks", len(blocks)),
        ("totals_per_allocator", totals), ("inspector", inspector),
        ("driver_log", driver_log), ("run_blocks", blocks)])


def main() -> None:
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    print(gxx, "| executorch", ET_VERSION, ET_GIT, file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmpd:
        exe = Path(tmpd) / "driver"
        subprocess.run(["g++", *CXXFLAGS, str(HERE / "driver.cpp"), "-o", str(exe), *LDFLAGS], check=True)
        for name, pte in MODELS.items():
            out = Path(tmpd) / f"{name}.etdp"
            proc = subprocess.run([str(exe), str(pte), str(N), str(out)], capture_output=True, text=True)
            sys.stderr.write(proc.stderr)
            proc.check_returncode()
            log = [ln for ln in proc.stderr.splitlines() if re.match(r"(planned buffer|after |input |wrote )", ln)]
            log = [re.sub(r"wrote \S+", f"wrote {name}.etdp", ln) for ln in log]
            raw = out.read_bytes()
            (HERE / f"{name}.alloc.N{N}.etdp.gz").write_bytes(gzip.compress(raw, mtime=0))
            t = truth(raw, name, pte, log)
            (HERE / f"{name}.alloc.N{N}.truth.json").write_text(json.dumps(t, indent=1) + "\n")
            print(name, len(raw), "bytes;", dict(t["totals_per_allocator"]), file=sys.stderr)


if __name__ == "__main__":
    main()
