"""Where two programs' results part ways: the comparable points of two debug recordings of the same input
(fp32 against int8, portable against XNNPACK, two compiler versions), matched and measured.

A program's *points* are the tensors its debug recording holds for one run: the model's outputs; the output of every
operator it ran outside a delegate; the inputs and outputs of every delegate call (the runtime logs a delegate call's
arguments, inputs first; the ETRecord says how many are outputs). A delegate is opaque: nothing inside it is
visible, so a delegate output covers every operator the delegate ran (its *span*). A delegate input equal to a tensor
logged before it is that tensor again and is not a point of its own.

Matching: the outputs by position; the other points in program order (a monotone alignment: no crossing), a pair
only between tensors of one shape (or, where debug handles or module paths pair them, one element count: the same
values reshaped, compared in row-major order) and comparable dtype, preferring in turn the same debug handle and op type, the
same module path and op type, the same module path (or one inside the other: an operator inside the module a
delegate call covers), and — when neither program has an ETRecord — order and shape alone, which each pair says.

Everything here is numpy over plain data (:func:`program_points` takes the rows the API read); no torch.
"""

from __future__ import annotations

import numpy as np

from .numerics_metrics import DEFAULT_THRESHOLD_DB, NOISE_FLOOR_DB, compare_tensors, effective_sqnr, first_loss

INPUT = "the model input"
# how a pair was matched, best first (the score of each in the alignment)
METHODS = {"debug_handle": 4.0, "module_path+op_type": 3.0, "module_path": 2.0, "order_and_shape": 1.0}


def program_points(events: list[dict]) -> list[dict]:
    """The points of one run. ``events``: its debug events in file order, each ``{instruction, is_output, tensors,
    delegate (bool), backend, num_outs, op (kernel op name or None), module, op_types, handles}``."""
    points: list[dict] = []
    seen: list = []
    by_instr: dict[tuple, list] = {}
    outputs = []
    for e in events:
        if e["is_output"]:
            for t in e["tensors"]:
                outputs.append(t)
            continue
        by_instr.setdefault((e["instruction"], e["delegate"]), []).append(e)
    order = []
    for e in events:  # instruction groups in order of first appearance
        key = (e["instruction"], e["delegate"])
        if not e["is_output"] and key not in order:
            order.append(key)
    for key in order:
        group = by_instr[key]
        first = group[0]
        tensors = [t for g in group for t in g["tensors"]]
        if first["delegate"] and not first.get("num_outs"):  # no ETRecord: inputs and outputs cannot be told apart
            roles = ["delegate_argument"] * len(tensors)
        elif first["delegate"]:
            n_out = min(first["num_outs"], len(tensors))
            roles = ["delegate_input"] * (len(tensors) - n_out) + ["delegate_output"] * n_out
        else:
            roles = ["operator"] * len(tensors)
        for k, (t, role) in enumerate(zip(tensors, roles)):
            if role in ("delegate_input", "delegate_argument") and any(_same(t, s) for s in seen):
                continue  # the value of an earlier point, passed on
            seen.append(t)
            points.append({"role": role, "instruction": first["instruction"], "index": k, "tensor": t,
                           "op": first.get("op"), "module": first.get("module"), "op_types": first.get("op_types") or [],
                           "handles": list(first.get("handles") or []), "backend": first.get("backend"),
                           "position": len(points)})
    for k, t in enumerate(outputs):
        points.append({"role": "output", "instruction": None, "index": k, "tensor": t, "op": None, "module": None,
                       "op_types": [], "handles": [], "backend": None, "position": len(points)})
    return points


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def _comparable(a: np.ndarray, b: np.ndarray, reshaped: bool = False) -> bool:
    """One shape (or, with ``reshaped``, one element count: the same values laid out in another shape, as a
    delegate's ``[32, 1, 3, 128]`` output is the ``[32, 384]`` one operator gave) and comparable dtypes."""
    if a.shape != b.shape and not (reshaped and a.size == b.size and a.size > 0):
        return False
    fa, fb = np.issubdtype(a.dtype, np.floating), np.issubdtype(b.dtype, np.floating)
    return (fa and fb) or a.dtype == b.dtype


def _as_baseline(p: dict, q: dict) -> np.ndarray:
    """``q``'s tensor in ``p``'s shape (row-major order, as a reshape keeps it)."""
    t = q["tensor"]
    return t if t.shape == p["tensor"].shape else t.reshape(p["tensor"].shape)


def _module(p: dict) -> str | None:
    """A point's module path; a delegate call whose operators share no module covers the whole model ("")."""
    if p["module"] is None and p["role"].startswith("delegate") and p["op_types"]:
        return ""
    return p["module"]


def _inside(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    return a == b or a == "" or b == "" or a.startswith(b + ".") or b.startswith(a + ".")


def _op_name(op: str) -> str:
    """``aten._softmax.default`` → ``_softmax`` (the name without namespace and overload)."""
    return op.split(".")[1] if op.count(".") >= 2 else op


def _base(op: str) -> str:
    """``aten._softmax.default`` / ``_softmax`` → ``softmax``."""
    return _op_name(op).lstrip("_")


def _ops(p: dict) -> set[str]:
    """The operators that may have produced a point's value (empty: unknown). Quantize/dequantize nodes are left out:
    they change a value's representation, not what it is."""
    if p["role"] == "operator":
        return {_base(p["op"])} if p["op"] else set()
    if p["role"] == "delegate_output":
        return {b for b in map(_base, p["op_types"]) if "quantize" not in b}
    return set()


def _ops_agree(p: dict, q: dict) -> bool:
    a, b = _ops(p), _ops(q)
    return not a or not b or bool(a & b)


def _method(p: dict, q: dict, have_records: bool) -> str | None:
    """How ``p`` and ``q`` can be paired (None: they cannot)."""
    if not _comparable(p["tensor"], q["tensor"], reshaped=have_records):
        return None
    if not have_records:
        return "order_and_shape"  # order alone: one shape too (a reshape is trusted only where names pair them)
    same_op = p["op"] is not None and p["op"] == q["op"]
    if same_op and p["handles"] and p["handles"] == q["handles"] and p["module"] == q["module"]:
        return "debug_handle"
    if same_op and p["module"] is not None and p["module"] == q["module"]:
        return "module_path+op_type"
    if _inside(_module(p), _module(q)):
        return "module_path"
    return None


def align(a: list[dict], b: list[dict], have_records: bool) -> list[tuple[int, int, str]]:
    """The monotone pairing of points ``a`` and ``b`` (outputs excluded) with the largest total score: each pair
    scores its method (:data:`METHODS`), half a point more when the operators that may have produced the two values
    agree, and — between pairs matched by module path or order alone — up to a quarter point for values that agree
    (SQNR, capped at the noise floor; a quarter point for pairs matched by name). A pair matched by
    module path or order alone whose difference is as large as the signal (SQNR ≤ 0 dB) is not the same value and is
    not made. Returns (index in a, index in b, method)."""
    n, m = len(a), len(b)
    score = np.zeros((n + 1, m + 1))
    how: dict[tuple[int, int], tuple[str, float]] = {}
    for i in range(n):
        for j in range(m):
            meth = _method(a[i], b[j], have_records)
            if meth is None:
                continue
            closeness = 0.25
            if METHODS[meth] <= METHODS["module_path"]:  # values are looked at only where names cannot decide
                s = effective_sqnr(compare_tensors(a[i]["tensor"], _as_baseline(a[i], b[j])))
                if s is None or s <= 0:
                    continue
                closeness = 0.25 * s / NOISE_FLOOR_DB
            how[i, j] = (meth, METHODS[meth] + (0.5 if _ops_agree(a[i], b[j]) else 0.0) + closeness)
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(score[i + 1, j], score[i, j + 1])
            if (i, j) in how:
                best = max(best, how[i, j][1] + score[i + 1, j + 1])
            score[i, j] = best
    out, i, j = [], 0, 0
    while i < n and j < m:
        if (i, j) in how and np.isclose(score[i, j], how[i, j][1] + score[i + 1, j + 1]):
            out.append((i, j, how[i, j][0]))
            i, j = i + 1, j + 1
        elif np.isclose(score[i, j], score[i + 1, j]):
            i += 1
        else:
            j += 1
    return out


def name_of(p: dict) -> str:
    """A point's name for people: the module path and op of what produced it."""
    if p["role"] == "output":
        return f"model output {p['index']}"
    where = p["module"] or ("model" if _module(p) == "" else f"instruction {p['instruction']}")
    if p["role"] == "operator":
        return f"{where} {p['op'] or 'operator'}" + (f" (output {p['index']})" if p["index"] else "")
    what = {"delegate_input": "input", "delegate_output": "output"}.get(p["role"], "argument")
    return f"{where} {p['backend'] or 'delegate'} call (instruction {p['instruction']}) {what} {p['index']}"


def span_of(p: dict) -> str:
    """What a point covers: one operator, or a whole delegate call (opaque: its inside is not visible)."""
    if p["role"] == "output":
        return "the whole program"
    if p["role"] == "operator":
        return f"one operator ({p['op'] or 'unknown'}, instruction {p['instruction']})"
    ops = sorted({_op_name(t) for t in p["op_types"]})
    inside = f": {', '.join(ops[:8])}{'…' if len(ops) > 8 else ''}" if ops else ""
    side = {"delegate_input": "its input", "delegate_output": "everything it ran"}.get(
        p["role"], f"its argument {p['index']} (input or output: no ETRecord says which)")
    return f"a {p['backend'] or 'delegate'} call (instruction {p['instruction']}), {side}{inside}"


def _pair(p: dict, q: dict, method: str) -> dict:
    m = compare_tensors(p["tensor"], _as_baseline(p, q))
    return {"name": name_of(p), "candidate_name": name_of(q), "role": p["role"], "candidate_role": q["role"],
            "method": method, "shape": list(p["tensor"].shape), "candidate_shape": list(q["tensor"].shape),
            "dtype": str(p["tensor"].dtype),
            "candidate_dtype": str(q["tensor"].dtype), "span": span_of(p), "candidate_span": span_of(q),
            "base_instruction": p["instruction"], "candidate_instruction": q["instruction"], "metrics": m}


def compare_points(a: list[dict], b: list[dict], *, have_records: bool,
                   threshold_db: float = DEFAULT_THRESHOLD_DB) -> dict:
    """The matched points of baseline ``a`` and candidate ``b`` (:func:`program_points`), in the baseline's order,
    their metrics, and where accuracy is first lost."""
    ia = [p for p in a if p["role"] != "output"]
    ib = [p for p in b if p["role"] != "output"]
    pairs = [_pair(ia[i], ib[j], meth) for i, j, meth in align(ia, ib, have_records)]
    oa = [p for p in a if p["role"] == "output"]
    ob = [p for p in b if p["role"] == "output"]
    outputs = []
    problems = []
    if len(oa) != len(ob):
        problems.append(f"the programs have {len(oa)} and {len(ob)} outputs: the first {min(len(oa), len(ob))} compared")
    for p, q in zip(oa, ob):
        if not _comparable(p["tensor"], q["tensor"]):
            problems.append(f"model output {p['index']}: {p['tensor'].dtype}{list(p['tensor'].shape)} against "
                            f"{q['tensor'].dtype}{list(q['tensor'].shape)} cannot be compared")
            continue
        outputs.append(_pair(p, q, "output"))
    # the error is followed along the floating-point values (a boolean mask is right or wrong, not noisier), from the
    # input both programs were given (the same: that is what a pair of debug recordings is)
    along = [{"name": INPUT, "metrics": {"identical": True, "sqnr_db": None}}]
    along += [p for p in pairs + outputs if p["dtype"].startswith(("float", "bfloat"))]
    loss = first_loss(along, threshold_db)
    lost = None
    if loss is not None:
        i, j, drop = loss
        s0 = along[i]["metrics"]
        s1 = along[j]["metrics"]
        lost = {"after": along[i]["name"], "at": along[j]["name"], "drop_db": drop,
                "sqnr_before_db": s0["sqnr_db"], "sqnr_after_db": s1["sqnr_db"],
                "statement": f"accuracy lost between {along[i]['name']} and {along[j]['name']}: SQNR "
                             f"{_db(s0)} → {_db(s1)}"}
    methods = sorted({p["method"] for p in pairs})
    return {"points": pairs, "outputs": outputs, "accuracy_lost": lost, "threshold_db": threshold_db,
            "noise_floor_db": NOISE_FLOOR_DB, "matched_by": methods, "problems": problems,
            "base_points": len(ia), "candidate_points": len(ib)}


def _db(m: dict) -> str:
    if m["identical"]:
        return "identical"
    s = effective_sqnr(m)
    if s is None:
        return "—"
    return f"{m['sqnr_db']:.0f} dB"
