"""A strict checker of the Chrome trace-event JSON format, as edgeprof writes it (written for the tests,
independent of the exporter): required fields and types, metadata naming every process and thread, and
complete (``X``) slices nesting strictly within each track, in integer nanoseconds as trace_processor
reads them (``llround(ts_us * 1000)``)."""

from __future__ import annotations

import math

PHASES_M = {"process_name", "thread_name", "process_sort_index", "thread_sort_index", "process_labels"}


def _ns(x) -> int:
    return math.floor(x * 1000 + 0.5)


def check_trace(doc) -> dict:
    """Raise AssertionError on the first violation; return counts."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "top level: {traceEvents: [...]}"
    procs, threads, used_threads = {}, {}, set()
    slices: dict[tuple, list] = {}
    by_key: dict[tuple, tuple] = {}
    for i, e in enumerate(doc["traceEvents"]):
        where = f"event {i}"
        assert isinstance(e, dict), where
        assert e.get("ph") in ("X", "M"), f"{where}: unexpected phase {e.get('ph')!r}"
        assert isinstance(e.get("name"), str), f"{where}: name must be a string"
        assert isinstance(e.get("pid"), int) and not isinstance(e.get("pid"), bool), f"{where}: pid must be an int"
        assert isinstance(e.get("tid"), int) and not isinstance(e.get("tid"), bool), f"{where}: tid must be an int"
        if "args" in e:
            assert isinstance(e["args"], dict), f"{where}: args must be an object"
        if e["ph"] == "M":
            assert e["name"] in PHASES_M, f"{where}: unknown metadata {e['name']!r}"
            args = e.get("args", {})
            if e["name"] == "process_name":
                assert isinstance(args.get("name"), str) and args["name"], f"{where}: process_name needs args.name"
                procs[e["pid"]] = args["name"]
            elif e["name"] == "thread_name":
                assert isinstance(args.get("name"), str) and args["name"], f"{where}: thread_name needs args.name"
                threads[(e["pid"], e["tid"])] = args["name"]
            else:
                assert isinstance(args.get("sort_index"), int), f"{where}: sort index must be an int"
            continue
        for f in ("ts", "dur"):
            v = e.get(f)
            assert isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v), f"{where}: {f} must be a number"
            assert v >= 0, f"{where}: {f} must not be negative"
        if "cat" in e:
            assert isinstance(e["cat"], str), f"{where}: cat must be a string"
        track = (e["pid"], e["tid"])
        used_threads.add(track)
        s = _ns(e["ts"])
        slices.setdefault(track, []).append((s, s + _ns(e["dur"]), i, e))
        args = e.get("args", {})
        if "event_index" in args:
            by_key[(track, args["run_index"], args["event_index"])] = (s, s + _ns(e["dur"]))
    for track in used_threads:
        assert track[0] in procs, f"process {track[0]} has no process_name"
        assert track in threads, f"thread {track} has no thread_name"
    n = 0
    for track, lst in slices.items():
        lst.sort(key=lambda x: (x[0], -(x[1] - x[0]), x[2]))
        stack: list[tuple] = []
        for s, end, i, e in lst:
            while stack and stack[-1][1] <= s and not (stack[-1][1] == s and stack[-1][0] == s):
                stack.pop()
            if stack:
                ps, pe = stack[-1][0], stack[-1][1]
                assert ps <= s and end <= pe, (f"event {i} {e['name']!r} [{s}, {end}) overlaps "
                                               f"{stack[-1][3]['name']!r} [{ps}, {pe}) on track {track} without nesting")
            stack.append((s, end, i, e))
            n += 1
            args = e.get("args", {})
            if "parent_event_index" in args:
                parent = by_key.get((track, args["run_index"], args["parent_event_index"]))
                assert parent is not None, f"event {i}: its parent is not on its track"
                assert parent[0] <= s and end <= parent[1], f"event {i} {e['name']!r} lies outside its parent"
    return {"slices": n, "tracks": len(slices), "processes": len(procs)}
