"""Which reader a profile goes to — decided once, by the format registry (:mod:`edgeprof.io.formats`), so that no
command tests file suffixes. A known name decides (``.etdump``/``.etdp``, ``.csv``, either with ``.gz``: the file
is then opened once, by its reader, which checks the content); any other name is decided by the content — an
ETDump by its FlatBuffers identifier, a timeline CSV by its header's ``name`` and ``duration_ms`` columns, an ONNX
Runtime profile by its JSON trace events of ``cat`` ``Session``/``Node``, a LiteRT op profile by its ``Run Order``
tables (or its ``BenchmarkProfilingData`` protobuf), each looked for inside gzip as well. The format and runtime
are recorded on the :class:`~edgeprof.model.Profile` the reader gives (``Profile.format``, ``Profile.runtime``), and
commands ask the format's record for what it can give. Kernel evidence (logs, kernel tables) is told apart here
too (:func:`kernel_input_format`)."""

from __future__ import annotations

from pathlib import Path

from ..conventions import FORMAT_ETDUMP as ETDUMP
from ..conventions import FORMAT_KERNEL_CSV as KERNEL_CSV
from ..conventions import FORMAT_TIMELINE_CSV as TIMELINE_CSV
from ..conventions import FORMAT_XNNPACK_LOG as XNNPACK_LOG
from .formats import head as _head
from .formats import header_columns as _header_columns
from .formats import timeline_header as _timeline_header
from .runfolder import ETDUMP_SUFFIXES


def profile_format(path) -> str:
    """The name of a profile file's format (:func:`edgeprof.io.formats.detect`: ``etdump``, ``timeline_csv``,
    ``ort_json``, ``litert_ops`` or a registered one); an input error naming what the file is otherwise."""
    from .formats import detect

    return detect(path).name


def input_format(path):
    """The :class:`~edgeprof.io.formats.InputFormat` record of a profile file (its capabilities)."""
    from .formats import detect

    return detect(path)


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
    """The file as a :class:`~edgeprof.model.Profile`, through the reader of its format
    (:func:`edgeprof.io.formats.read`). Whatever the format, a profile without a run that has a valid end-to-end
    time is an input error saying why (unless ``allow_empty``)."""
    from .etdump_read import check_has_runs
    from .formats import read

    prof = read(path)
    if not allow_empty:
        check_has_runs(prof, path)
    return prof
