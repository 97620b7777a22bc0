"""ETRecord reader (torch-free) and the enrichment of a Profile with it.

An ETRecord is a zip. We read only its JSON members and never unpickle anything:

* ``debug_handle_map``: ``{method: {instruction_id: handle | [handles]}}``
* ``delegate_map``: ``{method: {instruction_id: {"name": backend, "delegate_map": {delegate id: handles}}}}``
* ``instruction_id_to_num_outs_map``: ``{method: {instruction_id: n}}``
* ``edge_dialect_exported_program/<method>`` (or the older single ``edge_dialect_exported_program``): the
  serialized edge program (torch.export JSON); each node has ``target``, ``metadata.debug_handle``,
  ``metadata.stack_trace`` and ``metadata.nn_module_stack``.

``op_types`` of an event follow ExecuTorch Inspector: the targets of the graph nodes whose debug handles
the event's instruction maps to, in handle order (a handle shared by several nodes contributes all of
them; a repeated handle contributes again). ``Method::init``, ``Program::load_method`` and
``Method::execute`` get none.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field

from ..conventions import FRAMEWORK_EVENTS, OP_TYPES_ID
from ..errors import ETRecordError
from .etrecord_zip import MAX_MEMBERS, check_directory, read_member

EDGE_PREFIX = "edge_dialect_exported_program"
JSON_MEMBERS = ("debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map")
MAX_MAP_BYTES = 64 * 1024**2  # a map member larger than this is refused
MAX_GRAPH_BYTES = 512 * 1024**2  # the edge-program JSON of very large models stays well below this
RESERVED_EVENTS = FRAMEWORK_EVENTS  # events the ETRecord maps to no operator
_EDGE_OPS = "executorch.exir.dialects.edge.ops."
_SKIPPED_TARGETS = ("_operator.getitem", "operator.getitem", "executorch.exir.memory.alloc")


@dataclass
class GraphNode:
    name: str
    op_type: str
    debug_handle: int | None
    stack_trace: str | None = None
    module_path: str | None = None


@dataclass
class ETRecord:
    path: str
    method: str
    methods: list[str]
    debug_handle_map: dict[int, list[int]]
    delegate_map: dict[int, dict]
    num_outs: dict[int, int]
    nodes: list[GraphNode] = field(default_factory=list)
    nodes_by_handle: dict[int, list[GraphNode]] = field(default_factory=dict)

    def backend_of(self, instruction_id: int) -> str | None:
        d = self.delegate_map.get(instruction_id)
        return (d.get("name") or "") if d is not None else None


def op_type_of(target: str) -> str:
    """Inspector's op name for a serialized node target (``aten.convolution.default``)."""
    if target.startswith(_EDGE_OPS):
        return target[len(_EDGE_OPS):]
    if target.startswith("torch.ops.higher_order."):
        return target.rsplit(".", 1)[-1]
    if target.startswith("torch.ops."):
        return target[len("torch.ops."):]
    return target.rsplit(".", 1)[-1]


def _innermost_module(stack) -> str | None:
    """``nn_module_stack`` → the innermost module path (``layer.self_attn``)."""
    if isinstance(stack, str):
        entries = [e for e in stack.split(";") if e]
        if not entries:
            return None
        parts = entries[-1].split(",")
        return parts[1] if len(parts) >= 2 else None
    if isinstance(stack, dict) and stack:  # {key: [path, class]} in some serializations
        last = list(stack.values())[-1]
        if isinstance(last, (list, tuple)) and last:
            return str(last[0])
    return None


def _loads(data: bytes, what: str, path):
    from .jsontext import lone_surrogate

    at = lone_surrogate(data)
    if at is not None:
        raise ETRecordError(path, f"{what} escapes a lone UTF-16 surrogate at byte {at} of the member: no UTF-8 text "
                                  "can hold it")
    try:
        # torch.export JSON holds Infinity/NaN constants (value ranges): accepted; only integer handles and ids are used
        return json.loads(data)
    except RecursionError:
        raise ETRecordError(path, f"{what} is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ETRecordError(path, f"{what} is not valid JSON ({e})") from None


def _int_keyed(d, what, path) -> dict:
    if not isinstance(d, dict):
        raise ETRecordError(path, f"{what} is not a JSON object")
    out = {}
    for k, v in d.items():
        try:
            if len(k) > 20:
                raise ValueError
            out[int(k)] = v
        except (TypeError, ValueError):
            raise ETRecordError(path, f"{what} has a non-integer instruction id {k[:40]!r}") from None
    return out


class _NotAHandle(ValueError):
    def __init__(self, value, where: str):
        super().__init__(where)
        self.value, self.where = value, where


def _handle_of(h, where: str = "a node") -> int | None:
    """A node's debug handle: the serialized edge program writes it as a number or a string of digits; None when the
    node has none. Any other value (NaN, Infinity, a fraction, text, a list) is not a handle: :class:`_NotAHandle`."""
    if h is None or h == "":
        return None
    if isinstance(h, str):
        t = h.strip()
        if 0 < len(t) <= 18 and t.lstrip("-").isdigit():
            return int(t)
    elif isinstance(h, float):
        if h.is_integer() and abs(h) < 2**53:
            return int(h)
    elif _is_handle(h):
        return h
    raise _NotAHandle(h, where)


def _is_handle(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and abs(x) < 2**63


def _handles(v, where: str = "a map") -> list[int]:
    """The debug handles a map gives an instruction: one integer or a list of them; anything else (NaN, Infinity,
    fractions, nested lists, objects, null) is not a handle: :class:`_NotAHandle`."""
    if _is_handle(v):
        return [v]
    if isinstance(v, list):
        bad = [x for x in v if not _is_handle(x)][:1]  # (a null in the list is a bad value, not "none found")
        if not bad:
            return v
        v = bad[0]
    raise _NotAHandle(v, where)


def read_etrecord(path, method: str | None = None) -> ETRecord:
    """Read the JSON members of an ETRecord. Raises :class:`ETRecordError` on anything unusable."""
    path = os.fspath(path)
    from ..files import open_regular

    with open_regular(path, ETRecordError) as f:
        try:
            return _read_etrecord(path, method, f)
        except _NotAHandle as e:  # a value where a debug handle belongs that is none: the ETRecord cannot be used
            raise ETRecordError(path, f"{e.where}: {json.dumps(e.value, default=str)[:40]} is not a debug handle (an "
                                      "integer): the ETRecord cannot tie events to operators") from None
        except (TypeError, AttributeError, KeyError, OverflowError, RecursionError, ValueError) as e:  # defensive
            raise ETRecordError(path, f"unusable ETRecord ({type(e).__name__}: {str(e)[:120]})") from None


def _read_etrecord(path: str, method: str | None, f) -> ETRecord:
    try:
        check_directory(f, path)
        z = zipfile.ZipFile(f)
    except FileNotFoundError:
        raise ETRecordError(path, "no such ETRecord file") from None
    except IsADirectoryError:
        raise ETRecordError(path, "is a directory, expected an ETRecord file") from None
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError, RuntimeError) as e:
        raise ETRecordError(path, f"not an ETRecord (not a readable zip archive: {e})") from None
    with z:
        infos = z.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ETRecordError(path, f"{len(infos)} zip members: refused")
        by_name = {i.filename: i for i in infos}
        if "ETRECORD_V0" not in by_name and "debug_handle_map" not in by_name:
            raise ETRecordError(path, "zip archive without an ETRecord marker or debug_handle_map: not an ETRecord")
        maps = {}
        for m in JSON_MEMBERS:
            if m in by_name:
                maps[m] = _loads(read_member(z, by_name[m], MAX_MAP_BYTES, path), m, path)
        if "debug_handle_map" not in maps:
            raise ETRecordError(path, "ETRecord has no debug_handle_map: it cannot be tied to ETDump events")
        dhm = maps["debug_handle_map"]
        if not isinstance(dhm, dict) or not dhm:
            raise ETRecordError(path, "debug_handle_map is empty or not an object")
        methods = sorted(dhm)
        if method is None:
            method = "forward" if "forward" in dhm else methods[0]
        if method not in dhm:
            raise ETRecordError(path, f"ETRecord has no method {method!r} (has: {', '.join(methods)})")
        handle_map = {k: _handles(v, f"debug_handle_map of {method!r}, instruction {k}")
                      for k, v in _int_keyed(dhm[method], "debug_handle_map", path).items()}
        dm = maps.get("delegate_map") or {}
        delegate_map = {}
        if isinstance(dm, dict) and isinstance(dm.get(method), dict):
            for k, v in _int_keyed(dm[method], "delegate_map", path).items():
                if isinstance(v, dict):
                    inner = got if isinstance(got := v.get("delegate_map"), dict) else {}
                    inner = {d: _handles(h, f"delegate_map of {method!r}, instruction {k}, delegate id {d[:40]!r}")
                             for d, h in inner.items()}
                    delegate_map[k] = {"name": str(v.get("name") or ""), "delegate_map": inner}
        no = maps.get("instruction_id_to_num_outs_map") or {}
        num_outs = {}
        if isinstance(no, dict) and isinstance(no.get(method), dict):
            num_outs = {k: v for k, v in _int_keyed(no[method], "instruction_id_to_num_outs_map", path).items()
                        if isinstance(v, int)}
        graph_member: str | None = f"{EDGE_PREFIX}/{method}"
        if graph_member not in by_name:
            graph_member = EDGE_PREFIX if EDGE_PREFIX in by_name else None
        nodes: list[GraphNode] = []
        if graph_member is not None:
            nodes = _graph_nodes(_loads(read_member(z, by_name[graph_member], MAX_GRAPH_BYTES, path), graph_member, path), path)
    by_handle: dict[int, list[GraphNode]] = {}
    for nd in nodes:
        if nd.debug_handle is not None:
            by_handle.setdefault(nd.debug_handle, []).append(nd)
    return ETRecord(path=path, method=method, methods=methods, debug_handle_map=handle_map,
                    delegate_map=delegate_map, num_outs=num_outs, nodes=nodes, nodes_by_handle=by_handle)


def _graph_nodes(doc, path) -> list[GraphNode]:
    try:
        raw = doc["graph_module"]["graph"]["nodes"]
    except (KeyError, TypeError):
        raise ETRecordError(path, "edge program JSON has no graph_module.graph.nodes") from None
    if not isinstance(raw, list):
        raise ETRecordError(path, "edge program graph nodes are not a list")
    out = []
    for nd in raw:
        if not isinstance(nd, dict):
            continue
        target = nd.get("target")
        if not isinstance(target, str) or target in _SKIPPED_TARGETS:
            continue
        meta = got if isinstance(got := nd.get("metadata"), dict) else {}
        handle = _handle_of(meta.get("debug_handle"), f"the edge program's node {str(nd.get('name', ''))[:40]!r}")
        st = meta.get("stack_trace")
        out.append(GraphNode(name=str(nd.get("name", "")), op_type=op_type_of(target), debug_handle=handle,
                             stack_trace=st if isinstance(st, str) else None,
                             module_path=_innermost_module(meta.get("nn_module_stack"))))
    return out


# --------------------------------------------------------------------------------------------------
# enrichment
# --------------------------------------------------------------------------------------------------

def _event_handles(rec: ETRecord, instr: int, delegate_id) -> tuple[list[int] | None, str | None]:
    """(debug handles, backend name) of one event, following Inspector's resolution rules."""
    if instr not in rec.debug_handle_map:
        return None, None
    if delegate_id is None:
        return rec.debug_handle_map[instr], None
    d = rec.delegate_map.get(instr)
    if d is None:
        return rec.debug_handle_map[instr], None
    inner = d["delegate_map"]
    hit = inner.get(str(delegate_id))
    if hit is None:
        for key, value in inner.items():
            if key in str(delegate_id):
                hit = value
    return (_handles(hit) if hit is not None else None), d["name"]


def sources_of(rec: ETRecord, instr: int | None, handles: list[int] | None = None) -> tuple[list[str], str | None]:
    """(op types, innermost common module path) of an instruction, or of the graph nodes with ``handles`` (an
    XNNPACK node carries the debug handle of the graph node it came from), as the ETRecord maps them."""
    if handles is None:
        handles = rec.debug_handle_map.get(instr, []) if instr is not None else []
    nodes = [nd for h in handles for nd in rec.nodes_by_handle.get(h, [])]
    return [nd.op_type for nd in nodes], _common_module([nd.module_path or "" for nd in nodes])


def _common_module(paths: list[str]) -> str | None:
    paths = [p for p in paths if p]
    if not paths:
        return None
    split = [p.split(".") for p in paths]
    prefix = split[0]
    for s in split[1:]:
        k = 0
        while k < min(len(prefix), len(s)) and prefix[k] == s[k]:
            k += 1
        prefix = prefix[:k]
    return ".".join(prefix) or None


def check_match(profile, rec: ETRecord, distinct=None) -> str | None:
    """Why ``rec`` does not belong to ``profile`` (None when it plausibly does). ``distinct``: the distinct
    (instruction_id, name, kind) rows of its execute events, where the caller has them."""
    import polars as pl

    # the few distinct (instruction, name, kind) rows, not a copy of the event table
    ev = (profile.execute_events().select("instruction_id", "name", "kind") if distinct is None else distinct).unique()
    used = ev.filter(~pl.col("name").is_in(list(RESERVED_EVENTS)))
    instrs = set(used["instruction_id"].unique().to_list()) - {-1}
    if not instrs:
        return None
    missing = sorted(instrs - set(rec.debug_handle_map))
    if missing:
        return (f"ETDump instruction ids {missing[:5]}{'…' if len(missing) > 5 else ''} are not in the ETRecord's "
                f"debug_handle_map (it maps {len(rec.debug_handle_map)} instructions): ETRecord of a different program?")
    unseen = len(set(rec.debug_handle_map) - instrs)
    if unseen > len(rec.debug_handle_map) / 2:
        return (f"the ETDump executed only {len(instrs)} of the ETRecord's {len(rec.debug_handle_map)} instructions: "
                "ETRecord of a different program?")
    dcalls = set(used.filter(pl.col("kind") == "delegate_call")["instruction_id"].unique().to_list())
    not_delegated = sorted(i for i in dcalls if i not in rec.delegate_map)
    if not_delegated:
        return f"DELEGATE_CALL instructions {not_delegated[:5]} are not delegate instructions in the ETRecord"
    kernels = used.filter(pl.col("kind") == "kernel").unique(["instruction_id", "name"]).select("instruction_id", "name")
    bad = 0
    for instr, name in kernels.iter_rows():
        if instr in rec.delegate_map:
            return f"portable kernel {name} runs instruction {instr}, which the ETRecord says is a delegate call"
        op = name[len("native_call_"):].split(".")[0].lstrip("_")
        types = {t.split(".")[1].lstrip("_") if t.count(".") >= 2 else t
                 for h in rec.debug_handle_map.get(instr, []) for t in (n.op_type for n in rec.nodes_by_handle.get(h, []))}
        if types and op not in types:
            bad += 1
    if kernels.height and bad / kernels.height > 0.2:
        return f"{bad} of {kernels.height} portable kernels do not match the ETRecord's op types at their instruction"
    return None


def enrich(profile, rec: ETRecord, *, strict: bool = False, by_reference: bool = False):
    """Attach op types, module paths and backend names from ``rec``; returns a new Profile. ``by_reference``: each
    event's op-type list as an id (events column ``op_types_id``) into :attr:`Profile.op_type_lists`, no list column.

    A mismatched ETRecord raises :class:`ETRecordError` when ``strict``, else the profile is returned
    unchanged with a warning and ``profile.etrecord.status == "mismatch"``.
    """
    import dataclasses

    import numpy as np
    import polars as pl

    from .._ids import dense_rows, distinct_ids, first_index
    from ..model import ETRecordInfo

    ev = profile.events
    # one id per distinct (instruction, name, delegate debug id, kind) — the key the ETRecord is looked up by —
    # found with integer codes, so the events frame is never joined or copied: only four columns are replaced
    cols = ("instruction_id", "name", "delegate_debug_id_int", "delegate_debug_id_str", "kind")
    key = dense_rows(*(distinct_ids(ev[c])[0] for c in cols)) if ev.height else np.zeros(0, np.int32)
    first = first_index(key)
    firsts = ev.select(cols)[first]
    executed = np.bincount(key[ev["run_index"].to_numpy() >= 0], minlength=first.size) > 0
    why = check_match(profile, rec, firsts.filter(pl.Series(executed)).select("instruction_id", "name", "kind"))
    if why is not None:
        if strict:
            raise ETRecordError(rec.path, f"does not match {profile.source}: {why}")
        info = ETRecordInfo(path=rec.path, status="mismatch", message=why, method=rec.method)
        return dataclasses.replace(profile, etrecord=info,
                                   warnings=[*profile.warnings, f"ETRecord {rec.path} ignored: {why}"])
    op_types: list = [None] * first.size
    module: list = [None] * first.size
    backend_new: list = [None] * first.size
    found = False
    for k, (instr, name, dint, dstr, kind) in enumerate(firsts.iter_rows()):
        if name in RESERVED_EVENTS:
            continue
        delegated = dint is not None or (dstr is not None and dstr != "")
        did = dint if dint is not None else (dstr if delegated else None)
        handles, backend = _event_handles(rec, instr, did)
        if handles is None and backend is None:
            continue
        nodes = [nd for h in (handles or []) for nd in rec.nodes_by_handle.get(h, [])]
        if kind == "delegate_call":
            backend = rec.backend_of(instr)
        op_types[k] = [nd.op_type for nd in nodes]
        module[k] = _common_module([nd.module_path or "" for nd in nodes])
        backend_new[k] = backend
        found = True
    info = ETRecordInfo(path=rec.path, status="attached", method=rec.method,
                        backends={k: v["name"] for k, v in rec.delegate_map.items()})
    if not found:
        return dataclasses.replace(profile, etrecord=info)
    cat = pl.Categorical
    # the new backend and its source are functions of (key, old backend, old source): decided on those few
    # pairs and gathered back as categorical codes, so no string column of the event table's length is built
    old_b, _ = distinct_ids(ev["delegate_backend"])
    old_s, _ = distinct_ids(ev["backend_source"])
    pair = dense_rows(key, old_b, old_s) if key.size else np.zeros(0, np.int32)
    pfirst = first_index(pair)
    pk = key[pfirst] if key.size else np.zeros(0, np.int32)
    backends, sources = [], []
    for k, b, src in zip(pk.tolist(), ev["delegate_backend"].gather(pfirst).to_list(),
                         ev["backend_source"].gather(pfirst).to_list()):
        new = backend_new[k]
        backends.append(new if new else b)
        sources.append("etrecord" if new else src)
    # events sharing a key share a list: equal lists of different keys are merged here, on the few keys
    list_id: dict = {}
    small = np.array([list_id.setdefault(tuple(x or ()), len(list_id)) for x in op_types], dtype=np.int32)
    ids = small[key] if key.size else np.zeros(0, np.int32)
    if by_reference:
        lists = pl.Series(OP_TYPES_ID, ids)
        columns = [c if c != "op_types" else OP_TYPES_ID for c in ev.columns]
    else:
        lists = pl.Series("op_types", [x if x is not None else [] for x in op_types], dtype=pl.List(cat)).gather(key)
        columns = ev.columns
    joined = ev.with_columns(
        lists,
        pl.Series("module_path", module, dtype=cat).gather(key),
        pl.Series("delegate_backend", backends, dtype=cat).gather(pair),
        pl.Series("backend_source", sources, dtype=cat).gather(pair),
    )
    del pair, old_b, old_s
    if by_reference:
        return dataclasses.replace(profile, events=joined.select(columns), etrecord=info,
                                   op_type_lists=[list(t) for t in list_id])
    out = dataclasses.replace(profile, events=joined.select(columns), etrecord=info)
    out.remember_op_type_groups(ids.astype(np.int64), first_index(ids))
    return out
