"""The profile formats edgeprof reads, one record each: how a file is recognised (the name endings that decide
without reading, then a test of its first bytes), the reader that makes a :class:`~edgeprof.model.Profile` of it,
the runtime that wrote it (:mod:`edgeprof.runtimes`) and what it can give — the capabilities the commands ask,
never a format's name:

- ``streams``: readable block by block, so a large file is never held whole (analyze, breakdown, trace);
- ``takes_program``: an ETRecord or the program names its instructions, and a run-order file names its phases;
- ``has_runs``: one row per run (False: one average run, as LiteRT's op profiles give);
- ``stands_for``: the recording a file was made from (a timeline CSV stands for its ETDump: its launch facts);
- ``kit_names``: its reports are named as the Arm kit names an ETDump's (``<stem>_exec_all_runs_timeline``); another
  runtime's profile is named by its file (the output files keep the kit's names either way).

:func:`detect` decides a file's format (:func:`edgeprof.io.readers.profile_format`), :func:`read` reads it. A new
format is one module with a reader and a sniff, one :func:`register` call, and its tests.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

from ..conventions import (ETDUMP_SUFFIXES, FORMAT_ETDUMP, FORMAT_LITERT_OPS, FORMAT_ORT_JSON, FORMAT_TIMELINE_CSV,
                           LITERT_LAUNCH_TAIL)

_HEAD = 4096


@dataclass(frozen=True)
class InputFormat:
    name: str                              # the format's key: Profile.format, and the evidence label of its figures
    runtime: str                           # the runtime that writes it (edgeprof.runtimes)
    title: str                             # what such a file is, for the message naming what a file is not
    reader: str | Callable                 # "module:function" (or a callable): path -> Profile, its sha256 set
    suffixes: tuple[str, ...] = ()         # name endings (lower case, without .gz) that decide it without reading
    folder_tails: tuple[str, ...] = ()     # endings a run-folder scan takes as a launch's recording
    sniff: str | Callable | None = None    # (first bytes, gunzipped) -> bool, tried in registry order
    sniff_late: str | Callable | None = None  # a weaker test, tried after every format's sniff
    streams: bool = False
    takes_program: bool = False
    has_runs: bool = True
    stands_for: str | Callable | None = None  # path -> the recording it stands for
    kit_names: bool = False                # its reports are named as the Arm kit names them (<stem>_exec_all_runs_timeline)

    def call(self, what: str, *args):
        fn = getattr(self, what)
        if isinstance(fn, str):
            module, _, name = fn.partition(":")
            fn = getattr(importlib.import_module(module, __package__), name)
        return fn(*args)


def _etdump_sniff(head: bytes) -> bool:
    from .sniff import kind

    return kind(head)[0] == "etdump"


def _timeline_sniff(head: bytes) -> bool:
    from .sniff import kind

    return kind(head)[0] == "text" and timeline_header(head)


def _ort_sniff(head: bytes) -> bool:
    from .ort_profile import looks_like_ort
    from .sniff import kind

    return kind(head)[0] == "json" and looks_like_ort(head)


def _read_etdump(path):
    from .etdump_read import read_etdump

    return read_etdump(path, allow_empty=True)  # read_profile checks for runs, as for every format


def header_columns(head: bytes) -> set[bytes]:
    """The column names of a CSV's first line (a BOM and quotes left out)."""
    first = head.split(b"\n", 1)[0].strip().lstrip(b"\xef\xbb\xbf")
    return {c.strip().strip(b'"') for c in first.split(b",")}


def timeline_header(head: bytes) -> bool:
    return {b"name", b"duration_ms"} <= header_columns(head)


# in the order their content tests are tried (the ETDump's identifier first; LiteRT's text tables before the
# timeline CSV's header, which a LiteRT CSV also has; LiteRT's protobuf, a weak test, after every other)
FORMATS: list[InputFormat] = [
    InputFormat(FORMAT_ETDUMP, "executorch", "an ETDump .etdump/.etdp", _read_etdump, suffixes=ETDUMP_SUFFIXES,
                folder_tails=ETDUMP_SUFFIXES, sniff=_etdump_sniff, streams=True, takes_program=True, kit_names=True),
    InputFormat(FORMAT_LITERT_OPS, "litert", "a LiteRT op profile", ".litert_profile:read_litert_profile",
                sniff=".litert_profile:looks_like_litert", sniff_late=".litert_proto:proto_head", has_runs=False),
    InputFormat(FORMAT_TIMELINE_CSV, "executorch", "a timeline CSV *_all_runs_timeline.csv",
                ".timeline_csv:read_timeline_csv", suffixes=(".csv",), folder_tails=(LITERT_LAUNCH_TAIL,),
                sniff=_timeline_sniff, stands_for=".runfolder:etdump_of_timeline", kit_names=True),
    InputFormat(FORMAT_ORT_JSON, "onnxruntime", "an ONNX Runtime profile JSON", ".ort_profile:read_ort_profile",
                folder_tails=(".ort.json.gz", ".ort.json"), sniff=_ort_sniff),
]


def register(fmt: InputFormat, *, first: bool = False) -> InputFormat:
    """Add a format (replacing one of the same name): tried after the others, or before them with ``first``."""
    unregister(fmt.name)
    FORMATS.insert(0, fmt) if first else FORMATS.append(fmt)
    return fmt


def unregister(name: str) -> None:
    FORMATS[:] = [f for f in FORMATS if f.name != name]


def by_name(name: str | None) -> InputFormat:
    """The record of a format (ETDump's when unknown: the normalized model's own shape)."""
    return next((f for f in FORMATS if f.name == name), None) or _etdump()


def _etdump() -> InputFormat:
    return next(f for f in FORMATS if f.name == FORMAT_ETDUMP)


def expected() -> str:
    """What a profile may be, for the message naming what a file is not."""
    return "a profile (" + ", ".join(f.title for f in FORMATS) + "; each may be gzip-compressed)"


def head(path: Path) -> bytes:
    """The first bytes of the file, or of its content when it is gzip-compressed (as far as they go)."""
    from .sniff import gunzip_head, head_of

    h = head_of(path, _HEAD)
    return gunzip_head(h, _HEAD) if h[:2] == b"\x1f\x8b" else h


def detect(path) -> InputFormat:
    """The format of a profile file: a name ending that decides, else the first content test that holds; an input
    error naming what the file is otherwise. A folder is left to the ETDump reader (which says what it is)."""
    from ..errors import InputError
    from ..files import is_dir
    from .sniff import wrong_kind

    path = Path(path)
    name = path.name.lower().removesuffix(".gz")
    if is_dir(path):
        return _etdump()
    for f in FORMATS:
        if f.suffixes and name.endswith(f.suffixes):
            return f
    h = head(path)
    for test in ("sniff", "sniff_late"):
        for f in FORMATS:
            if getattr(f, test) is not None and f.call(test, h):
                return f
    raise InputError(path, wrong_kind(path, expected(), h[:64]))


def folder_tails() -> tuple[str, ...]:
    """The name endings a run-folder scan takes as recordings of launches."""
    return tuple(t for f in FORMATS for t in f.folder_tails)


def read(path):
    """The file as a :class:`~edgeprof.model.Profile`, through its format's reader, with its runtime recorded on
    it (the format its reader recorded decides: a timeline reader hands a LiteRT op-profile CSV to LiteRT's)."""
    fmt = detect(path)
    prof = fmt.call("reader", Path(path))
    if prof.format == FORMAT_ETDUMP:  # the model's default: a reader that says nothing made the format it reads
        prof.format = fmt.name
    if prof.runtime is None:
        prof.runtime = by_name(prof.format).runtime
    return prof
