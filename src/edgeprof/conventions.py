"""Conventions every command shares, each defined once: the JSON schema version and result kinds, units and
number formatting, the speedup direction and the verdict rule, evidence labels, ExecuTorch's framework event
names and XNNPACK's instance suffix, how output file names are kept within the file system's limit, and how text
from outside is shown to people (:func:`shown`: the one escaping function of terminal, Markdown and HTML output) and
written into CSV cells (:func:`csv_cell`, :func:`csv_text`).

Pure and dependency-free: every layer may import it.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from enum import Enum

from .errors import _visible, one_line  # noqa: F401 - the errors' line rule, stated there with the escapes

# --------------------------------------------------------------------------------------------------
# JSON documents
# --------------------------------------------------------------------------------------------------

TOOL_VERSION = "0.1.0"  # edgeprof's version (pyproject.toml has the same); `edgeprof.__version__`
SCHEMA_VERSION = 1
# set (not "0"): every document is checked against its declared type before it is printed or written
# (render/json_schema.py; needs jsonschema — the tests set it)
CHECK_JSON_ENV = "EDGEPROF_CHECK_JSON"
# set (not "0"): every document is walked for what must hold in any honest report before it is printed or written —
# a point inside its interval, shares in [0, 100], sentences quoting the figures beside them (edgeprof/invariants.py;
# no dependency). EDGEPROF_CHECK_JSON implies it.
CHECK_ENV = "EDGEPROF_CHECK"
# which ETDump walk reads: "c" (the compiled edgeprof._core; an error where it is not built), "python" (the numpy
# reader, the oracle), unset or "auto": the compiled one where it is built (edgeprof.io.etdump_core)
CORE_ENV = "EDGEPROF_CORE"
# the ``kind`` every command's JSON carries (one per result type)
KINDS = ("analysis_summary", "latency", "comparison", "breakdown", "kernels", "executed_kernels", "kernel_view",
         "validation", "ane_analysis", "ane_plan", "ane_diff", "ane_folder", "report", "trace", "example", "collection", "plan",
         "ingest", "history", "export", "coreml_static", "coreml_diff", "program", "program_diff", "skills", "phases",
         "phase_comparison", "numerics", "placement", "placement_diff", "memory")

# numerical debugging (edgeprof numerics): SQNR above NUMERICS_NOISE_FLOOR_DB is float noise (float32 rounds at 2⁻²⁴,
# ≈ 144 dB for one rounding; operators run in another order stay well above 100 dB); accuracy is lost where SQNR falls
# by more than NUMERICS_THRESHOLD_DB from one point to the next (6.02 dB: the error's share of the signal doubles)
NUMERICS_NOISE_FLOOR_DB = 100.0
NUMERICS_THRESHOLD_DB = 6.0

# --------------------------------------------------------------------------------------------------
# units and numbers: nanoseconds inside, milliseconds in reports and files
# --------------------------------------------------------------------------------------------------

NS_PER_MS = 1e6


def ms(ns):
    """Nanoseconds (a number or a numpy array) in milliseconds."""
    return ns / NS_PER_MS


def fmt_ms(v, digits: int = 4, *, fixed: bool = False) -> str:
    """A time in ms for people — every sentence, table and chart label writes ms through here: ``digits``
    significant digits (``fixed``: decimals), thousands separated from 1,000 ms, ``—`` when unknown."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    if fixed:
        return f"{v:,.{digits}f}"
    return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def fmt_bytes(v) -> str:
    """An amount of memory for people — every sentence and table writes bytes through here: MiB from 1 MiB
    (one decimal, thousands separated), else KiB; ``—`` when unknown."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v / 2**20:,.1f} MiB" if abs(v) >= 2**20 else f"{v / 1024:,.1f} KiB"


def fmt_pct(v, digits: int = 1) -> str:
    return "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


def fmt_ci(low, high, digits: int = 4) -> str:
    """`` [low–high]`` (with its leading space), empty when the interval is unknown."""
    return "" if low is None or high is None else f" [{low:.{digits}g}–{high:.{digits}g}]"


def fmt_ratio(x: float) -> str:
    """A speedup for a sentence: ``3.21×``, ``55.1×``."""
    return f"{x:.3g}×" if x < 10 else f"{x:.1f}×"


# --------------------------------------------------------------------------------------------------
# baseline vs candidate
# --------------------------------------------------------------------------------------------------

# what validation says of an analysis output of a folder ``edgeprof run`` wrote and nothing analysed yet
PENDING = ("not written yet: this folder holds what `edgeprof run` collected and no analysis output at all "
           "(`edgeprof analyze` writes them)")
SPEEDUP = "speedup = baseline / candidate (> 1: candidate faster)"


class Verdict(str, Enum):
    """A comparison's verdict. A ``str`` (its value) wherever it goes — JSON, tables, sentences — so a document
    holds ``"faster"``; code names the member, so a misspelt verdict is an error, not a silent mismatch."""

    FASTER = "faster"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    INCONCLUSIVE = "inconclusive"
    NOT_COMPARABLE = "not_comparable"

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]  # str's formatting: mypy checks it against Enum's signature


VERDICTS = tuple(v.value for v in Verdict)


class LineStatus(str, Enum):
    """The status of one line (category, overhead, operator) of a comparison: a ``str`` like :class:`Verdict`."""

    FASTER = "faster"
    SLOWER = "slower"
    NO_CHANGE = "no significant change"
    UNTESTED = "in too few runs to test"
    ABSENT = "absent in candidate"
    NEW = "new in candidate"

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]  # str's formatting: mypy checks it against Enum's signature


def line_status(low: float, high: float, q: float, threshold: float, alpha: float) -> LineStatus:
    """A tested line's status — the one rule for categories and operators alike: ``faster``/``slower`` when its
    interval clears the threshold (:func:`verdict`) *and* its Benjamini–Hochberg q-value is ≤ ``alpha``; else no
    significant change."""
    v = verdict(low, high, threshold)
    if q <= alpha and v in (Verdict.FASTER, Verdict.SLOWER):
        return LineStatus(v.value)
    return LineStatus.NO_CHANGE


def speedup(baseline: float | None, candidate: float | None) -> float | None:
    """baseline / candidate, or None when either is missing or not positive."""
    if baseline is None or candidate is None or baseline <= 0 or candidate <= 0:
        return None
    return baseline / candidate


MEMORY_VERDICTS = {"faster": "smaller", "slower": "larger", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def memory_verdict(low: float | None, high: float | None, threshold: float) -> str:
    """The verdict of a memory ratio interval [low, high] (candidate / baseline: > 1, the candidate takes more) at
    δ = ``threshold``: the time rule (:func:`verdict`) applied to its inverse — ``larger`` when the whole interval is
    above 1 + δ, ``smaller`` below 1/(1 + δ), ``equivalent`` inside, else ``inconclusive``."""
    if low is None or high is None or low <= 0 or high <= 0:
        return "inconclusive"
    return MEMORY_VERDICTS[verdict(1 / high, 1 / low, threshold).value]


def verdict(low: float | None, high: float | None, threshold: float) -> Verdict:
    """The verdict of a speedup interval [low, high] at δ = ``threshold``, on the log scale: ``faster`` when the
    whole interval is above 1 + δ, ``slower`` when it is below 1/(1 + δ), ``equivalent`` when it lies inside
    [1/(1 + δ), 1 + δ] (δ > 0), else ``inconclusive``."""
    if low is None or high is None or low <= 0 or high <= 0:
        return Verdict.INCONCLUSIVE
    d = math.log1p(threshold)
    lo, hi = math.log(low), math.log(high)
    if lo > d:
        return Verdict.FASTER
    if hi < -d:
        return Verdict.SLOWER
    if lo >= -d and hi <= d and threshold > 0:
        return Verdict.EQUIVALENT
    return Verdict.INCONCLUSIVE


# --------------------------------------------------------------------------------------------------
# evidence
# --------------------------------------------------------------------------------------------------

ESTIMATE_TOOL = "edgeprof-coreml-estimate"  # the ``tool`` of an anemll-profile–shaped static estimate
FORMAT_ETDUMP = "etdump"  # a Profile's format (io/readers decides it), also the evidence name of its figures
FORMAT_TIMELINE_CSV = "timeline_csv"
FORMAT_ORT_JSON = "ort_json"  # an ONNX Runtime profile (SessionOptions.enable_profiling): io/ort_profile
FORMAT_LITERT_OPS = "litert_ops"  # LiteRT benchmark_model op profiling (averages, not runs): io/litert_profile
FORMAT_XNNPACK_LOG = "xnnpack_log"  # kernel evidence: an XNNPACK log (registrations), or the kernel table CSV
FORMAT_KERNEL_CSV = "kernel_csv"

# How a timeline CSV and a trace carry each event's op-type list (the ATen ops the ETRecord maps it to; a
# DELEGATE_CALL's list names every op of its partition, the same list in every run):
OP_TYPES_REF = "ref"  # an id per distinct list (column op_types_id), the lists written once beside the table
OP_TYPES_INLINE = "inline"  # the list itself in every row (column op_types)
OP_TYPES_MODES = (OP_TYPES_REF, OP_TYPES_INLINE)
OP_TYPES_ID = "op_types_id"
OP_TYPES_TAIL = "_op_types.csv"  # the lists of <name>.csv: <name>_op_types.csv beside it (op_types_id, op_types)
EVIDENCE_NAMES = {
    "etdump": "ETDump timeline",
    "timeline_csv": "timeline CSV",
    "ort_json": "ONNX Runtime profile",
    "litert_ops": "LiteRT op profile",
    "ops_stats": "ops-stats CSV",
    "metrics_json": "metrics JSON",
    "xnntrace": "xnntrace log",
    "validate": "run-folder validation",
    "manifest": "run manifest",
    "anemll_json": "anemll-profile JSON",
    "costplan_json": "ane-costplan JSON",
    "mil_static": "Core ML model (static)",
    "pte_static": "ExecuTorch program (static)",
    "ort_assignment": "ONNX Runtime session assignment",
    "onnx": "ONNX model",
}
TIERS = ("registered", "executed")  # kernel evidence: a log shows it set up / an ETDump shows it ran


def evidence_name(label: str) -> str:
    """The reader's name of an evidence label; ``a+b`` (a finding resting on two sources) names both."""
    return " + ".join(EVIDENCE_NAMES.get(part, part) for part in label.split("+"))


# --------------------------------------------------------------------------------------------------
# ExecuTorch event names
# --------------------------------------------------------------------------------------------------

METHOD_EXECUTE = "Method::execute"
RUNTIME_ARGS = "runtime_args"  # an events column: what another runtime recorded per event, JSON text (trace shows it)
METHOD_INIT = "Method::init"
LOAD_METHOD = "Program::load_method"
FRAMEWORK_EVENTS = (METHOD_EXECUTE, METHOD_INIT, LOAD_METHOD)
OPERATOR_CALL = "OPERATOR_CALL"
DELEGATE_CALL = "DELEGATE_CALL"
WRAPPER_EVENTS = (OPERATOR_CALL, DELEGATE_CALL, *FRAMEWORK_EVENTS)
INSTANCE_SUFFIX = re.compile(r" #\d+$")  # XNNPACK numbers each operator within one delegate call: ``… #3``


def op_type(name: str) -> str:
    """An event name without XNNPACK's per-call instance suffix (the Arm kit's ``type``)."""
    return INSTANCE_SUFFIX.sub("", name.strip())


# --------------------------------------------------------------------------------------------------
# output file names
# --------------------------------------------------------------------------------------------------

NAME_MAX = 255  # bytes in one file name on Linux, macOS and Windows file systems
# the launch files `edgeprof run` writes besides ETDumps, found in run folders: ONNX Runtime's profile, and the
# per-run latencies of a LiteRT launch (a timeline CSV of Method::execute rows)
ETDUMP_SUFFIXES = (".etdump", ".etdp")  # an ETDump's names (io/formats: they decide its format)
LITERT_LAUNCH_TAIL = ".litert.csv"
LAUNCH_TAILS = (".ort.json.gz", ".ort.json", LITERT_LAUNCH_TAIL)
PROFILE_TAILS = (*LAUNCH_TAILS, ".json.gz", ".json")  # names whose format suffix is more than the last dot


def profile_stem(path) -> str:
    """A profile's name without its format's suffixes (``cnn_t1.ort.json.gz`` → ``cnn_t1``; else ``Path.stem``)."""
    name = os.path.basename(os.fspath(path))
    for tail in PROFILE_TAILS:
        if name.endswith(tail) and len(name) > len(tail):
            return name[: -len(tail)]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def fit_name(stem: str, tail: str) -> str:
    """``stem + tail`` as a file name, shortened deterministically when it would exceed 255 bytes: the stem is
    cut and ``~`` plus ten hex digits of its hash keep it unique (``<cut stem>~1a2b3c4d5e<tail>``)."""
    import hashlib

    name = stem + tail
    if len(os.fsencode(name)) <= NAME_MAX:
        return name
    digest = hashlib.blake2b(os.fsencode(stem), digest_size=5).hexdigest()
    tail_b = os.fsencode(tail)[-(NAME_MAX - 32):]
    budget = NAME_MAX - len(tail_b) - len(digest) - 1
    head = os.fsencode(stem)[:max(budget, 0)]
    while head and (head[-1] & 0xC0) == 0x80:  # do not end inside a UTF-8 character
        head = head[:-1]
    if head and head[-1] >= 0xC0:
        head = head[:-1]
    return os.fsdecode(head + b"~" + digest.encode() + tail_b)


# --------------------------------------------------------------------------------------------------
# text from outside (names in profiles, logs, manifests, file names) on its way to people and spreadsheets
# --------------------------------------------------------------------------------------------------

# What never reaches a terminal, a Markdown or an HTML page as itself: C0 controls, DEL, C1 controls (CSI 0x9b and
# NEL among them), the bidirectional marks, embeddings, overrides and isolates that reorder what is shown (U+061C,
# U+200E/F, U+202A–202E, U+2066–2069), the line and paragraph separators (U+2028/9) and the noncharacters
# U+FFFE/U+FFFF (no XML document may hold them: a JUnit report); a block of several lines keeps tabs and newlines.
# (JSON leaves these raw: jsonfmt escapes them)
UNSAFE_BEYOND_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufffe\uffff"
_BLOCK_UNSAFE = "\x00-\x08\x0b-\x1f" + UNSAFE_BEYOND_C0
UNSAFE_CHARS = "\t\n" + _BLOCK_UNSAFE  # a regex character class's contents
_UNSAFE = {(lines, rendered): re.compile("[" + ("" if rendered else "\\\\") + ("" if lines else "\t\n")
                                         + _BLOCK_UNSAFE + "]")
           for lines in (False, True) for rendered in (False, True)}
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(value, *, lines: bool = False, rendered: bool = False) -> str:
    """Text from outside as people are shown it: the one escaping function every terminal line, Markdown and HTML
    page, error and warning goes through (JSON and Parquet keep the raw text; CSV cells: :func:`csv_cell`).

    Every character of :data:`UNSAFE_CHARS` is shown as Python writes it in a string literal (``\\t``, ``\\n``,
    ``\\r``, ``\\x1b`` below U+0100, ``\\u202e`` above) and a backslash as ``\\\\``, so what is shown reads back
    unambiguously: ``a\\x1bb`` is an ESC between two letters, ``a\\\\x1bb`` the six characters. Bytes that are not
    UTF-8 are U+FFFD (:func:`display`). ``lines``: a block of several lines (tab and newline kept). ``rendered``: a
    document whose outside text went through here already (Markdown): only what is still unsafe is escaped, its
    backslashes are its own."""
    return _UNSAFE[lines, rendered].sub(_visible, display(value))


def display(path) -> str:
    """A path (or any value) as text that can always be written — to JSON, a CSV, a store: bytes that are not UTF-8
    (a file name from another system) and lone surrogates are U+FFFD; everything else is kept as it is (on its way
    to people it goes through :func:`shown`)."""
    s = os.fspath(path) if isinstance(path, os.PathLike) else path
    if isinstance(s, bytes):
        return s.decode("utf-8", "replace")
    s = s if isinstance(s, str) else str(s)
    if s.isascii():
        return s
    with contextlib.suppress(UnicodeEncodeError):  # a surrogate that is no escaped byte (a broken escape in a JSON profile)
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _SURROGATE.sub("\ufffd", s)


# A CSV cell a spreadsheet would evaluate starts with one of these (the common rule: a formula, a sign, a DDE
# call, or a tab/CR some importers strip first). edgeprof writes such a cell with a leading apostrophe (which a
# spreadsheet shows as text, not a formula), and so also a cell that already starts with apostrophes followed by
# one (so a name that itself starts with ``'=`` reads back exactly); a plain number (``-1.5``, ``+3``) is left alone.
# Reading its own CSVs back, edgeprof removes exactly that one apostrophe.
CSV_FORMULA = "^'*[=+\\-@\\t\\r]"  # a cell to write with a leading apostrophe (unless CSV_NUMBER)
CSV_NUMBER = "^[+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
CSV_GUARDED = "^'('*[=+\\-@\\t\\r])"  # a cell written so: its raw text is group 1 onwards
_CSV_FORMULA = re.compile(CSV_FORMULA)
_CSV_NUMBER = re.compile(CSV_NUMBER)
_CSV_GUARDED = re.compile(CSV_GUARDED)


def csv_cell(s: str) -> str:
    """A string as edgeprof writes it into a CSV cell: one that a spreadsheet would evaluate (``=cmd|' /C calc'!A0``,
    ``+HYPERLINK(…)``, ``@SUM(…)``, ``-2+3``) gets a leading apostrophe; anything else, numbers included, is
    unchanged. Numeric columns are never passed here."""
    # fullmatch: Python's ``$`` also matches before a final line break, Polars' (the tables' guard) does not
    return "'" + s if _CSV_FORMULA.match(s) and not _CSV_NUMBER.fullmatch(s) else s


def csv_text(s: str) -> str:
    """A string cell of a CSV edgeprof wrote, back to its raw text (:func:`csv_cell` undone)."""
    return s[1:] if _CSV_GUARDED.match(s) else s


_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
               "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


def parse_bytes(text: str, option: str) -> int:
    """A size option: ``4GB``, ``1500MB``, ``512k`` or a number of bytes (binary units: 1 GB = 2^30 bytes)."""
    import re

    from .errors import UsageError

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _BYTE_UNITS:
        raise UsageError(f"{option}: expected a size such as 4GB or 1500MB, got '{str(text)[:40]}'")
    n = int(float(m.group(1)) * _BYTE_UNITS[m.group(2).lower()])
    if n < 64 << 20:
        raise UsageError(f"{option}: {text} is too small to run anything (at least 64MB)")
    return n


# What a verdict can be about: one vocabulary for ``compare --metric``, ``--fail-on`` and ``history --metric``
# (whose stored column names stay accepted).
METRICS = ("median", "mean", "p90", "p99")
# The comparison options every command shares, defined once: the CLI's option defaults, the api's keyword defaults
# and the MCP tools' documented defaults are these. THRESHOLD: δ, the smallest change that matters (a verdict of
# faster/slower needs the interval beyond it; plan designs for it); LEVEL: the confidence level of every interval.
THRESHOLD = 0.02
LEVEL = 0.95
PERCENT_THRESHOLD = f"{100 * THRESHOLD:g}%"  # as the CLI writes and reads them
PERCENT_LEVEL = f"{100 * LEVEL:g}%"
METRIC_ALIASES = {"median_ms": "median", "mean_ms": "mean", "p90_ms": "p90", "p99_ms": "p99"}


# the memory a launch of edgeprof run recorded, as history follows it (``peak_rss``: the largest peak resident set over
# a launch's phases, ``peak_rss:PHASE`` that phase's; ``rss``, ``pss`` likewise; bytes)
MEMORY_METRICS = ("peak_rss", "rss", "pss")


def metric_name(text: str) -> str:
    """``median``/``mean``/``p90``/``p99`` (or a stored alias such as ``median_ms``) → its one name."""
    m = METRIC_ALIASES.get(str(text), str(text))
    if m not in METRICS:
        raise ValueError(f"a metric is one of {', '.join(METRICS)}, got '{str(text)[:40]}'")
    return m


def parse_fraction(text, option: str, *, upper: float = 1.0, allow_zero: bool = True) -> float:
    """A relative amount as people write it: ``3%``, ``3 %`` or ``0.03`` → 0.03. A bare number above 1 is refused
    with the hint (``3`` is not 300 %: write ``3%``); so is a negative one or one at or above ``upper``."""
    from .errors import UsageError

    s = str(text).strip()
    pct = s.endswith("%")
    try:
        v = float(s[:-1].strip()) / 100 if pct else float(s)
    except ValueError:
        raise UsageError(f"{option}: a relative amount such as 3% or 0.03, got '{str(text)[:40]}'") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise UsageError(f"{option}: must be {'at least' if allow_zero else 'above'} 0, got '{str(text)[:40]}'")
    if not pct and v > 1:
        raise UsageError(f"{option}: {s} would be {100 * v:g} %; write {s}% for {s} percent, or {v / 100:g}")
    if v >= upper:
        raise UsageError(f"{option}: must be below {100 * upper:g} %, got '{str(text)[:40]}'")
    return v
