"""Fuzz target for the agent server: random tool calls, as a confused or hostile agent would send them, on a
root full of traps that also changes between calls.

    python fuzz/fuzz_mcp.py [SECONDS] [--seed N]

One ``edgeprof mcp --allow-write`` server (the SDK's stdio client, as an agent uses it) on the trap root of
tests/helpers/traps.py. Each call is a random tool with random arguments — trap paths (``..``, absolute,
symlinks out, FIFOs, devices, stores with views), honest inputs, and values of the wrong kind (numbers, lists,
objects, NUL bytes, 10,000-character strings). Between calls the root grows new traps: a symlink to a random
outside file (or ``/etc/passwd``, ``/dev/zero``, ``/proc/self/environ``), a manifest naming one, a FIFO where an
output goes. The properties: every call answers (a result or a one-line error) within its budget; no answer
holds a secret from outside the root; the outside folder is unchanged; an honest call still succeeds after
every 25 calls (the server never wedges). A violation prints the call and exits 1.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

import traps  # noqa: E402
from mcp_client import server_params  # noqa: E402

BUDGET = 10.0  # the server's --timeout for this run
OUTSIDE_TARGETS = ["/etc/passwd", "/dev/zero", "/proc/self/environ", "/dev/urandom"]


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


def _paths(t: dict) -> list:
    root, out = t["root"], t["outside"]
    honest = ["tel_xnn.etdp", "tel_xnnq8.etdp", "tel_xnnq8.pte", "profile.json", "kv.mlpackage", "xnn.log", ".",
              "deep/out_toycnn/runs/linux", "r6", "r7", "mf_abs", "mf_rel/secret_t1.etdump"]
    hostile = ["linked_t1.etdump", "leak.mlmodelc", "zero.mlmodelc", "fifo.etdp", "fifo_store", "view.duckdb",
               "huge.duckdb", "../outside/secret_t1.etdump", str(out / "notes.txt"), str(out), "..", "/", "/etc/passwd",
               "/dev/zero", "/proc/self/fd/1", "../../..", "deep/../../outside/secret.pte", "~", "$HOME", "*.etdp",
               "linked_t1.etdump/..", str(root) + "/../outside/secret.etrecord"]
    return honest + hostile + [p.name for p in root.iterdir()]


def _value(rng: random.Random, t: dict):
    r = rng.random()
    if r < 0.7:
        return rng.choice(_paths(t))
    return rng.choice([None, 0, -1, 3.5, True, [], ["tel_xnn.etdp"], {"path": "x"}, "", "\x00", "a\x00b",
                       "x" * 10000, "é" * 50, "\ufffd", "portable", "0:1=prefill,1:=decode",
                       "0:99999999999=x", "%s%n", "{}", "../" * 200])


def _grow_trap(rng: random.Random, t: dict, k: int) -> None:
    root, out = t["root"], t["outside"]
    target = rng.choice([*OUTSIDE_TARGETS, *(str(p) for p in out.iterdir())])
    kind = rng.randrange(4)
    name = root / f"trap{k}"
    try:
        if kind == 0:
            name.with_suffix(".etdp").symlink_to(target)
        elif kind == 1:
            name.mkdir()
            (name / "x_t1.etdump").write_bytes((root / "tel_xnn.etdp").read_bytes())
            (name / "manifest.json").write_text(json.dumps({"model": target, "device": "d"}))
        elif kind == 2:
            name.mkdir()
            (name / "toy_t1.etdump").write_bytes((root / "tel_xnn.etdp").read_bytes())
            os.mkfifo(name / "report.md") if rng.random() < 0.5 else (name / "report.md").symlink_to(target)
        else:
            (name.with_suffix(".mlmodelc")).mkdir()
            (name.with_suffix(".mlmodelc") / "model.mil").symlink_to(target)
    except OSError:
        pass


async def _session(seconds: float, seed: int) -> int:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="edgeprof-fuzz-mcp-"))
    t = traps.build(base)
    before = _digest(t["outside"])
    params = server_params(t["root"], "--allow-write", "--timeout", str(BUDGET))
    n = errors = 0
    slowest = 0.0
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = {x.name: list((x.input_schema or {}).get("properties", {})) for x in (await s.list_tools()).tools}
            end = time.time() + seconds
            while time.time() < end:
                if rng.random() < 0.2:
                    _grow_trap(rng, t, n)
                name = rng.choice(sorted(tools))
                args = {p: _value(rng, t) for p in tools[name] if rng.random() < 0.85}
                if n % 25 == 24:
                    name, args = "program", {"path": "tel_xnnq8.pte"}
                t0 = time.perf_counter()
                try:
                    res = await asyncio.wait_for(s.call_tool(name, args), BUDGET + 60)
                except asyncio.TimeoutError:
                    print(f"NO ANSWER within {BUDGET + 60:.0f} s: {name} {args!r:.300}")
                    return 1
                took = time.perf_counter() - t0
                slowest = max(slowest, took)
                text = "".join(getattr(c, "text", "") for c in res.content)
                if traps.SECRET in text or "root:x:0:0" in text:
                    print(f"LEAK: {name} {args!r:.300} -> {text[:300]}")
                    return 1
                if res.is_error:
                    errors += 1
                    if "\n" in text.strip() and "validation error" not in text:  # the SDK's own argument checks
                        print(f"MULTI-LINE ERROR: {name} {args!r:.300} -> {text[:500]}")
                        return 1
                if n % 25 == 24 and res.is_error:
                    print(f"WEDGED: the honest call failed after {n} calls: {text[:300]}")
                    return 1
                n += 1
    if _digest(t["outside"]) != before:
        print("the outside folder changed")
        return 1
    print(f"{n} calls ({errors} answered with an error), no leak, no hang, outside unchanged "
          f"({seconds:.0f} s, slowest call {slowest:.1f} s, seed {seed})")
    return 0


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--seed")]
    seed = int(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--seed=")), 2727))
    return asyncio.run(_session(float(args[0]) if args else 60, seed))


if __name__ == "__main__":
    sys.exit(main())
