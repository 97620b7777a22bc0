"""Which reader a profile goes to — decided here once, so that no command tests file suffixes. A known name
decides (``.etdump``/``.etdp``, ``.csv``, either with ``.gz``: the file is then opened once, by its reader,
which checks the content); any other name is decided by the content — an ETDump by its FlatBuffers
identifier, a timeline CSV by its header's ``name`` and ``duration_ms`` columns, an ONNX Runtime profile by its
JSON trace events of ``cat`` ``Session``/``Node``, a LiteRT op profile by its ``Run Order`` tables (or its
``BenchmarkProfilingData`` protobuf), each looked for inside gzip as well. The format is recorded on the :class:`~edgeprof.model.Profile` the reader gives (``Profile.format``),
and commands read it there. Adding a profile format means a detector and a reader here."""

from __future__ import annotations

from pathlib import Path

from ..conventions import FORMAT_ETDUMP as ETDUMP
from ..conventions import FORMAT_KERNEL_CSV as KERNEL_CSV
from ..conventions import FORMAT_LITERT_OPS as LITERT_OPS
from ..conventions import FORMAT_ORT_JSON as ORT_JSON
from ..conventions import FORMAT_TIMELINE_CSV as TIMELINE_CSV
from ..conventions import FORMAT_XNNPACK_LOG as XNNPACK_LOG
from ..errors import InputError
from .runfolder import ETDUMP_SUFFIXES
EXPECTED = ("a profile (an ETDump .etdump/.etdp, a timeline CSV *_all_runs_timeline.csv, an ONNX Runtime profile "
            "JSON or a LiteRT op profile, each may be gzip-compressed)")
_HEAD = 4096


def _head(path: Path) -> bytes:
    """The first bytes of the file, or of its content when it is gzip-compressed (as far as they go)."""
    from .sniff import gunzip_head, head_of

    head = head_of(path, _HEAD)
    return gunzip_head(head, _HEAD) if head[:2] == b"\x1f\x8b" else head


def _header_columns(head: bytes) -> set[bytes]:
    """The column names of a CSV's first line (a BOM and quotes left out)."""
    first = head.split(b"\n", 1)[0].strip().lstrip(b"\xef\xbb\xbf")
    return {c.strip().strip(b'"') for c in first.split(b",")}


def _timeline_header(head: bytes) -> bool:
    return {b"name", b"duration_ms"} <= _header_columns(head)


def profile_format(path) -> str:
    """``etdump``, ``timeline_csv``, ``ort_json`` or ``litert_ops`` for a profile file; an input error naming what
    the file is otherwise. A folder is left to the ETDump reader (which says what it is)."""
    from ..files import is_dir
    from .litert_profile import looks_like_litert
    from .litert_proto import proto_head
    from .ort_profile import looks_like_ort
    from .sniff import kind, wrong_kind

    path = Path(path)
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(ETDUMP_SUFFIXES) or is_dir(path):
        return ETDUMP
    if name.endswith(".csv"):  # a LiteRT op-profile CSV is handed over by the timeline reader, still read once
        return TIMELINE_CSV
    head = _head(path)
    k = kind(head)[0]
    if k == "etdump":
        return ETDUMP
    if looks_like_litert(head):
        return LITERT_OPS
    if k == "text" and _timeline_header(head):
        return TIMELINE_CSV
    if k == "json" and looks_like_ort(head):
        return ORT_JSON
    if proto_head(head):
        return LITERT_OPS
    raise InputError(path, wrong_kind(path, EXPECTED, head[:64]))


def kernel_input_format(path) -> str:
    """What a kernel-evidence input is: a profile (``etdump``/``timeline_csv``: executed evidence), a kernel table
    CSV (``kernel_csv``, written by ``edgeprof kernels`` or the Arm kit), or an XNNPACK log (``xnnpack_log``: any
    other text, plain or gzip). A known name decides (``.etdump``/``.etdp``, ``.log``); any other by the content
    (a ``.csv`` that is no timeline is a kernel table: its reader checks the columns)."""
    path = Path(path)
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(ETDUMP_SUFFIXES):
        return ETDUMP
    if name.endswith(".log"):
        return XNNPACK_LOG
    from .sniff import kind

    head = _head(path)
    if kind(head)[0] == "etdump":
        return ETDUMP
    if _timeline_header(head):
        return TIMELINE_CSV
    if name.endswith(".csv") or {b"model_id", b"kernel_name"} <= _header_columns(head):
        return KERNEL_CSV
    return XNNPACK_LOG


def read_profile(path, *, allow_empty: bool = False):
    """The file as a :class:`~edgeprof.model.Profile`, through the reader of its format. Whatever the format, a
    profile without a run that has a valid end-to-end time is an input error saying why (unless ``allow_empty``)."""
    from .etdump_read import check_has_runs, read_etdump

    fmt = profile_format(path)
    if fmt == TIMELINE_CSV:
        from .timeline_csv import read_timeline_csv

        prof = read_timeline_csv(path)
    elif fmt == ORT_JSON:
        from .ort_profile import read_ort_profile

        prof = read_ort_profile(path)
    elif fmt == LITERT_OPS:
        from .litert_profile import read_litert_profile

        prof = read_litert_profile(path)
    else:
        return read_etdump(path, allow_empty=allow_empty)
    if not allow_empty:
        check_has_runs(prof, path)
    return prof
