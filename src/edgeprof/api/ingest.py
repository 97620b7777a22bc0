"""``edgeprof ingest``: launches (ETDumps, timeline CSVs, run folders) into a history store.

Each file is read once, summarised (:mod:`edgeprof.analysis.launch_summary`) and stored under the SHA-256 of
its bytes, so ingesting the same profile again adds nothing. Its identity — model, device, experiment, thread
count, commit, branch, time, labels — comes from the flags, else the run folder's ``manifest.json``, else the
git checkout named by ``git``, else the kit's file naming (time: the ingest time when nothing recorded one).
Files are read here (one process), on a local Dask cluster (``workers``) or on a Dask scheduler's workers
(``scheduler``); the rows of a batch are written at once (one transaction; for a Parquet dataset, parts staged
by the workers in parallel and renamed into place together). A file that cannot be read is reported and
skipped; the rest are stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time as _time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..conventions import OP_TYPES_REF
from ..conventions import TOOL_VERSION as __version__
from ..errors import EdgeprofError, InputError, UsageError
from ..files import command, display
from ..io.readers import profile_format
from ..io.workspace import Workspace
from ..store.schema import TABLES as _TABLES
from ._common import as_list, taxonomy_of, workspace
from .results_history import IngestResult


def parse_time(text: str, *, what: str = "--time") -> datetime:
    """An ISO 8601 time as naive UTC (a time without a zone is taken as UTC)."""
    s = text.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(s)
    except ValueError:
        raise UsageError(f"{what}: not an ISO 8601 time: '{text[:60]}'") from None
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return t


def parse_labels(items) -> dict:
    out = {}
    for item in items or ():
        if isinstance(item, tuple):
            k, v = item
        else:
            if "=" not in item:
                raise UsageError(f"--label takes KEY=VALUE, got '{item[:60]}'")
            k, v = item.split("=", 1)
        if not k.strip():
            raise UsageError("--label needs a key before '='")
        out[k.strip()] = v
    return out


def _shown(v):
    return display(v) if isinstance(v, str) else v


def identity(ws: Workspace, path: Path, *, flags: dict, git_rev: dict, now: datetime) -> tuple[dict, list[str]]:
    """The launch's columns that are not measurements, and warnings about what could not be used."""
    from ..io.manifest import launch_facts, recorded_device, recorded_revision
    from ..io.runfolder import name_base

    warnings = []
    manifest, _, _ = ws.manifest(path.parent)
    rev = recorded_revision(manifest)
    rf = ws.describe(path)
    model = flags.get("model")
    if model is None and isinstance(manifest, dict) and isinstance(manifest.get("model"), str):
        model = Path(manifest["model"]).stem or None
    model = display(model or rf.model or name_base(path))  # names from files: always valid UTF-8
    device = display(flags.get("device") or recorded_device(manifest)[0] or rf.platform or "unknown")
    t = None
    for source, value in (("--time", flags.get("time")), ("manifest.json", rev["time"]), ("git", git_rev.get("time"))):
        if value:
            try:
                t = parse_time(value, what=source) if isinstance(value, str) else value
                break
            except UsageError as e:
                if source == "--time":
                    raise
                warnings.append(f"{display(path)}: {e}; not used")
    facts = launch_facts(manifest, path)
    env = {k: v for k, v in facts.items() if k not in ("experiment", "threads") and v is not None}
    fingerprint = hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:12] if env else None
    t = t or now
    ident = {
        "model": model, "device": device, "date": t.date().isoformat(), "time": t,
        "experiment": _shown(flags.get("experiment") or facts["experiment"] or rf.experiment),
        "platform": rf.platform, "fingerprint": fingerprint,
        "threads": flags.get("threads") if flags.get("threads") is not None else (facts["threads"] or rf.threads),
        "commit": _shown(flags.get("commit") or rev["commit"] or git_rev.get("commit")),
        "branch": _shown(flags.get("branch") or rev["branch"] or git_rev.get("branch")),
        "labels": json.dumps(flags.get("labels") or {}, sort_keys=True),
        "source": display(path), "source_kind": profile_format(path),
        "edgeprof_version": __version__, "ingested_at": now,
    }
    return ident, warnings


# a launch's labels: the same measurement stored under other values of these is a conflict, never a silent skip
LABELS = ("model", "device", "experiment", "threads", "commit", "branch", "labels")


def _shown_labels(d: dict) -> str:
    return ", ".join(f"{k} {d[k]}" for k in LABELS if d.get(k) not in (None, "{}")) or "no labels"


def conflicts(stored: dict[str, dict], records: list[tuple[dict, bool]]) -> list[dict]:
    """The launches being ingested that are stored already under other labels (or, when this ingest records a
    time, another time): ``[{launch_id, source, stored, given, fields}]``."""
    out = []
    for ident, timed in records:
        old = stored.get(ident["launch_id"])
        if old is None:
            continue
        fields = [k for k in LABELS if old.get(k) != ident.get(k)]
        if timed and old.get("time") != ident["time"]:
            fields.append("time")
        if fields:
            out.append({"launch_id": ident["launch_id"], "source": ident["source"], "fields": fields,
                        "stored": {k: old.get(k) for k in (*LABELS, "time")},
                        "given": {k: ident.get(k) for k in (*LABELS, "time")}})
    return out


def _conflict_error(found: list[dict]) -> UsageError:
    c = found[0]
    diff = "; ".join(f"{k} {c['stored'][k]} → {c['given'][k]}" for k in c["fields"])
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return UsageError(f"{display(c['source'])}: this measurement is stored already as {_shown_labels(c['stored'])}; "
                      f"this ingest labels it {diff}{more}. The same launch cannot stand for two commits: ingest the "
                      "launch recorded for the new labels, or give --relabel to move it; nothing was stored")


def summarise_file(ws: Workspace, path: Path, taxonomy) -> tuple[str, dict]:
    """(launch id, store rows) of one launch file, read through ``ws`` — run where the file is read (this
    process or a Dask worker)."""
    from ..analysis.launch_summary import launch_record, summarise
    from .memory import launch_memory

    prof = ws.profile(path, keep=False)
    from ..io.litert_profile import require_runs

    require_runs(prof, path)  # a history keeps runs, not averages
    rec = launch_record(summarise(prof, taxonomy))
    rec["launch"]["taxonomy_version"] = taxonomy.version
    rec["memory"] = memory_rows(launch_memory(ws, path))
    return prof.sha256, rec


def memory_rows(memory: dict | None) -> list[dict]:
    """The memory table's rows of one launch: what edgeprof run recorded per phase (none when it recorded nothing)."""
    from ..analysis.memory import MEASURED_FIELDS

    rows = []
    for i, r in enumerate((memory or {}).get("phases") or []):
        if isinstance(r, dict) and isinstance(r.get("phase"), str):
            rows.append({"phase_index": i, "phase": r["phase"], **{
                f: r[f] if isinstance(r.get(f), int) and not isinstance(r.get(f), bool) and r[f] >= 0 else None
                for f in MEASURED_FIELDS}})
    return rows


def _remote(path: str, ident: dict, root: str, read, taxonomy, existing, dataset: str | None):
    """A worker's task: read and summarise one file; for a Parquet dataset also stage its parts (the client
    renames them into place). Errors come back as values, so one bad file does not fail the batch."""
    try:
        lid, rec = summarise_file(Workspace(root, read, op_types=OP_TYPES_REF), Path(path), taxonomy)
    except EdgeprofError as e:
        return {"path": path, "error": str(e)}
    if lid in existing:
        return {"path": path, "launch_id": lid, "skipped": "already stored"}
    out: dict[str, Any] = {"path": path, "launch_id": lid}
    if dataset is None:
        out["record"] = rec
        return out
    from ..store.dataset import dataset_parts, stage_parts
    from ..store.rows import frames

    out["staged"] = [(str(a), str(b)) for a, b in stage_parts(dataset_parts(Path(dataset), frames(
        [({**ident, "launch_id": lid}, rec)]), lid[:16]))]
    return out


@command
def ingest(inputs, *, store, commit: str | None = None, branch: str | None = None, model: str | None = None,
           device: str | None = None, experiment: str | None = None, time: str | None = None, labels=None,
           git=None, run_dir=None, threads: int | None = None, etrecord=None, taxonomy=None,
           workers: int | None = None, scheduler: str | None = None, lock_timeout: float = 60.0,
           relabel: bool = False, ws: Workspace | None = None, dashboard: bool = False) -> IngestResult:
    """Store the launches named by ``inputs`` in the history store ``store`` (a ``.duckdb`` file, or ``DIR/``
    for a Parquet dataset). See the module docstring; returns what was added, skipped and refused.

    A launch stored already under the same labels is skipped; under other labels (another commit, model,
    device, experiment, thread count, branch or ``--label``s, or another time when this ingest records one) it
    is a conflict: nothing is stored and the error names both, unless ``relabel`` moves the stored launch to
    the new labels (``relabeled`` in the result)."""
    from ..io.git import git_revision
    from ..store.backends import is_parquet_target, open_store
    from ..store.dataset import commit_parts, discard_parts

    if workers is not None and scheduler is not None:
        raise UsageError("give --workers N (a local cluster) or --scheduler ADDRESS, not both")
    if dashboard and workers is None:
        raise UsageError("--dashboard shows a local cluster's work: give --workers N too")
    started = _time.perf_counter()
    tax = taxonomy_of(taxonomy)
    ws = workspace(ws, run_dir, etrecord=etrecord)
    flags = {"commit": commit, "branch": branch, "model": model, "device": device, "experiment": experiment,
             "time": time, "labels": parse_labels(labels), "threads": threads}
    if time:
        parse_time(time)
    git_rev = git_revision(git) if git else {}
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    errors: list[tuple[str, str]] = []
    warnings: list[str] = []
    files: list[Path] = []
    for spec in as_list(inputs):
        try:
            files.extend(ws.resolve(spec, run_dir, threads))
        except InputError as e:
            errors.append((str(spec), str(e)))
    files = list(dict.fromkeys(files))
    idents, timed = {}, {}
    for f in files:
        idents[f], w = identity(ws, f, flags=flags, git_rev=git_rev, now=now)
        timed[f] = idents[f]["time"] is not now  # a recorded time (flag, manifest, git), not the ingest time
        warnings.extend(w)

    parquet = is_parquet_target(store)
    stored = _known(store)  # what is stored already (no lock held while the files are read)
    known = set(stored)
    results, engine = _summaries(files, idents, ws, tax, workers, scheduler, known,
                                 Path(store) if parquet else None, dashboard=dashboard)
    added: list[dict]
    skipped: list[dict]
    records: list[tuple[dict, Any]]  # (identity, rows: None when the worker staged its parts)
    staged: list[Any]  # the parts each worker staged, or None
    relabeled: list[dict]
    added, skipped, records, staged, relabeled = [], [], [], [], []
    timed_by_id: dict[str, bool] = {}
    seen: set[str] = set()
    read = [(f, r) for f, r in zip(files, results) if "error" not in r]
    found = conflicts(stored,
                      [({**idents[f], "launch_id": r["launch_id"]}, timed[f]) for f, r in read if r.get("skipped")])
    if found and not relabel:
        for _, r in read:
            discard_parts([(Path(a), Path(b)) for a, b in r.get("staged", [])])
        raise _conflict_error(found)
    for f, r in zip(files, results):
        if "error" in r:
            errors.append((str(f), r["error"]))
            continue
        lid = r["launch_id"]
        if r.get("skipped") or lid in seen:
            skipped.append({"source": str(f), "launch_id": lid, "why": r.get("skipped") or "same content as another input"})
            discard_parts([(Path(a), Path(b)) for a, b in r.get("staged", [])])
            continue
        seen.add(lid)
        timed_by_id[lid] = timed[f]
        records.append(({**idents[f], "launch_id": lid}, r.get("record")))
        staged.append(r.get("staged"))
    if not records and not found and not Path(store).exists():  # nothing to store: no empty store is left behind
        return _result(store, "parquet" if parquet else "duckdb", engine, added, skipped, errors,
                       dict.fromkeys(_TABLES, 0), started, warnings)
    st = open_store(store, write=True, lock_timeout=lock_timeout)  # a DuckDB file: waits here for its lock
    with st:  # closed at the end; a store this call created is removed again if it fails
        lock = st.lock() if parquet else contextlib.nullcontext()
        with lock:
            if parquet:
                st.refresh()
            if found:  # --relabel: the stored launches take the new labels (checked again under the lock)
                now_stored = _labels_of(st, [c["launch_id"] for c in found])
                again = conflicts(now_stored, [({**c["given"], "launch_id": c["launch_id"], "source": c["source"]},
                                                "time" in c["fields"]) for c in found])
                st.relabel({c["launch_id"]: _new_labels(c) for c in again})
                relabeled = [{"source": display(c["source"]), "launch_id": c["launch_id"], "fields": c["fields"],
                              "from": _jsonable(c["stored"]), "to": _jsonable(c["given"])} for c in again]
                skipped = [x for x in skipped if x["launch_id"] not in {c["launch_id"] for c in again}]
            existing = st.existing([i["launch_id"] for i, _ in records])  # another ingest may have stored them meanwhile
            late = conflicts(_labels_of(st, sorted(existing)), [(i, timed_by_id[i["launch_id"]]) for i, _ in records
                                                                 if i["launch_id"] in existing])
            if late:
                for k in range(len(records)):
                    discard_parts([(Path(a), Path(b)) for a, b in staged[k] or []])
                raise _conflict_error(late)  # stored meanwhile under other labels: nothing of this batch is written
            keep = [k for k, (i, _) in enumerate(records) if i["launch_id"] not in existing]
            for k, (i, _) in enumerate(records):
                if k not in keep:
                    skipped.append({"source": i["source"], "launch_id": i["launch_id"], "why": "already stored"})
                    discard_parts([(Path(a), Path(b)) for a, b in staged[k] or []])
            records = [records[k] for k in keep]
            if records:
                if parquet and any(staged):  # the workers staged the parts: rename them, launches last
                    parts = [(Path(a), Path(b)) for k in keep for a, b in staged[k]]
                    commit_parts(sorted(parts, key=lambda p: p[1].relative_to(st.path).parts[0] == "launches"))
                    st.refresh()
                else:
                    from ..store.rows import frames

                    st.write(frames(records))
            added = [{"source": i["source"], "launch_id": i["launch_id"], "model": i["model"], "device": i["device"],
                      "commit": i["commit"], "time": i["time"].isoformat()} for i, _ in records]
            counts = st.counts()
    return _result(store, st.kind, engine, added, skipped, errors, counts, started, warnings, relabeled)


def _new_labels(c: dict) -> dict:
    """The columns a relabelled launch takes: its labels, and its time (and date) when this ingest records one."""
    new = {k: c["given"][k] for k in LABELS}
    if "time" in c["fields"]:
        new.update(time=c["given"]["time"], date=c["given"]["time"].date().isoformat())
    return new


def _jsonable(d: dict) -> dict:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in d.items()}


def _labels_of(st, launch_ids: list[str] | None = None) -> dict[str, dict]:
    """{launch id: its labels and time} for ``launch_ids`` (every stored launch when None)."""
    if launch_ids is not None and not launch_ids:
        return {}
    cols = ", ".join(f'"{c}"' for c in ("launch_id", *LABELS, "time"))
    rows = st.rows(f"SELECT {cols} FROM launches", []) if launch_ids is None else \
        st.rows(f"SELECT {cols} FROM launches WHERE launch_id IN (SELECT unnest(?))", [list(launch_ids)])
    return {r[0]: dict(zip((*LABELS, "time"), r[1:])) for r in rows}


def _result(store, kind, engine, added, skipped, errors, counts, started, warnings, relabeled=()) -> IngestResult:
    return IngestResult({
        "store": str(store), "store_kind": kind, "engine": engine, "added": added, "skipped": skipped,
        "relabeled": list(relabeled),
        "errors": [{"input": display(a), "message": display(m)} for a, m in errors], "counts": counts,
        "seconds": round(_time.perf_counter() - started, 3), "warnings": warnings,
    }, error_lines=[m for _, m in errors])



def _known(store) -> dict[str, dict]:
    """The labels of every launch already in the store, by id (best effort: empty when it does not exist yet or a
    writer holds it) — read once, before the files, for the skip and the conflict check."""
    from ..store.backends import open_store

    try:
        with open_store(store, lock_timeout=0) as st:
            return _labels_of(st)
    except InputError:
        return {}


def _summaries(files, idents, ws: Workspace, tax, workers, scheduler, known: set[str],
               dataset: Path | None, dashboard: bool = False) -> tuple[list[dict], str]:
    """Per file: {launch_id, record | staged | skipped} or {error}; and where the work ran."""
    if workers is None and scheduler is None:
        out = []
        for f in files:
            try:
                lid, rec = summarise_file(ws, f, tax)
                out.append({"path": str(f), "launch_id": lid, "record": rec} if lid not in known else
                           {"path": str(f), "launch_id": lid, "skipped": "already stored"})
            except EdgeprofError as e:
                out.append({"path": str(f), "error": str(e)})
        return out, "local (1 process)"
    from ..collect.cluster import dask_client

    with dask_client(workers=workers, scheduler=scheduler, dashboard=dashboard) as (client, engine):
        existing = client.scatter([known], broadcast=True)[0]  # one future for the set, on every worker
        futures = client.map(_remote, [str(f) for f in files], [idents[f] for f in files],
                             [str(ws.root_for(f)) for f in files],
                             read=ws.options, taxonomy=tax, existing=existing,
                             dataset=str(dataset) if dataset is not None else None, pure=False)
        return client.gather(futures), engine
