"""XNNPACK logs as they really appear, read into a :class:`~edgeprof.model.KernelLog`.

Understood, in any mix:

* stdio (desktop, macOS, Linux): ``Note (XNNPACK): …`` (INFO, stderr), ``Debug (XNNPACK): …`` (DEBUG,
  stdout), ``Warning in XNNPACK: …``, ``Error in XNNPACK: …``, ``Fatal error in XNNPACK: …``;
* Android logcat, tag ``XNNPACK`` and no prefix: brief (``I/XNNPACK( 123): …``), tag (``I/XNNPACK: …``),
  time, threadtime (``08-22 10:15:42.120  4321  4321 I XNNPACK : …``) and long (header line, message below);
* bare messages from other loggers.

Messages are found anywhere in a line, so output interleaved with the program's own (stdout and
stderr merged) is read, as are CRLF line ends, lone CRs, gzip-compressed logs and a last line cut off
mid-message (reported, not guessed). Bytes that do not decode are replaced; binary input is refused.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from pathlib import Path

from ..conventions import csv_text
from ..errors import InputError
from ..model import KernelLog, KernelRegistration

MAX_MESSAGES = 200
_MAX_REPEATS = 100_000
_BINARY_PROBE = 8192

_KERNEL = re.compile(r"Using (\w+) microkernel '([A-Za-z_][A-Za-z0-9_]*)'(?:\. \((\w+), ([^()]*?:\d+)\))?")
_KERNEL_HINT = "microkernel '"
_RUNNING = re.compile(r"(skip )?running operator (\d+):(\d+) \((.*)$")
_TRAILER = re.compile(r"\s\((\w+), ([^()]*?):(\d+)\)\s*$")
_ASSUMED = re.compile(r"Setting assumed_datatype=(\w+) for node #(\d{1,18})(?!\d) \(([^)]*)\)")
_TILE = re.compile(r"Tile size for GEMM with num_groups=(\d{1,18}), m=(\d{1,18}), n=(\d{1,18}) and "
                   r"mr=(\d{1,18}), nr=(\d{1,18}) set to \[(\d{1,18}), (\d{1,18})\] \((\d{1,18}) tiles\)")
_INLINE = re.compile(r"Inlining LHS packing for (.+?)(?: with m=\d+|\.\s*\(|\.\s*$)")
_HW = (
    ("l1_data_cache_bytes", re.compile(r"l1_data_cache_bytes=(\d{1,18})(?!\d)"), int),
    ("l2_data_cache_bytes", re.compile(r"l2_data_cache_bytes=(\d{1,18})(?!\d)"), int),
    ("uarch_count", re.compile(r"cpuinfo_get_uarchs_count: (\d{1,18})(?!\d)"), int),
    ("threads", re.compile(r"Resetting threadpool (?:with num threads = |to )(\d{1,18})(?!\d)"), int),
    ("riscv_vlenb", re.compile(r"RISC-V VLENB: (\d{1,18})(?!\d)"), int),
)
_HW_HINTS = ("cache_bytes", "uarch", "threadpool", "VLENB")
_UARCH = re.compile(r"cpu_get_uarch\((\d{1,18})\): (0x[0-9a-fA-F]{1,16})(?![0-9a-fA-F])")
# XNNPACK's own prefixes (stdio) and logcat forms; the level letter / word is group 1
_STDIO = re.compile(r"(Note|Debug) \(XNNPACK\): |(Warning|Error|Fatal error) in XNNPACK: ")
_LOGCAT = re.compile(r"(?:^|[\s\]])([VDIWEF])[/ ]XNNPACK\s*(?:\(\s*\d+\))?\s*: ")
_LOGCAT_LONG = re.compile(r"^\[ .*\b([VDIWEF])/XNNPACK\s*\]\s*$")
_LEVEL = {"Note": "info", "Debug": "debug", "Warning": "warning", "Error": "error", "Fatal error": "fatal",
          "V": "debug", "D": "debug", "I": "info", "W": "warning", "E": "error", "F": "fatal"}


MAX_CSV_BYTES = 256 << 20        # a kernels CSV lists each kernel once: far below this
MAX_LINE = 1 << 20               # a longer line is not a log line: refused (memory stays bounded)
MAX_LOG_BYTES = 16 << 30         # decompressed bytes read from one log (a gzip log: edgeprof.io.sniff's rule)
MAX_UTF16_BYTES = 512 << 20      # UTF-16 logs are decoded whole: at most this many bytes
_BLOCK = 1 << 20                 # read size: never above MAX_LINE
_HINTS = (b"XNNPACK", b"microkernel '", b"running operator", b"assumed_datatype", b"Tile size for GEMM",
          b"Inlining LHS packing", b"FP16 inference mode", b"cache_bytes", b"uarch", b"threadpool", b"VLENB")
_HINT = re.compile(b"|".join(re.escape(h) for h in _HINTS))


def _check_text(path: Path, probe: bytes) -> None:
    nul = probe.find(b"\x00")
    if nul >= 0:
        raise InputError(path, "not a text log (binary data)", offset=nul)


def _utf16(probe: bytes) -> str | None:
    """The codec when the first bytes look like UTF-16 text (a BOM, or NULs in every other byte), else None."""
    if probe.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    even, odd = probe[0::2][:256], probe[1::2][:256]
    if len(odd) >= 8 and odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if len(even) >= 8 and even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return None


def read_xnnlog(path) -> KernelLog:
    """Read one log file, streaming (memory does not grow with the log). Raises :class:`InputError` for a
    missing, unreadable, binary or non-regular file, a line longer than 1 MiB, and a gzip bomb."""
    from ..files import open_regular
    from .sniff import GzipStream

    path = Path(path)
    raw = open_regular(path)
    st = os.fstat(raw.fileno())
    try:
        with raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            f = GzipStream(raw, path, st.st_size, MAX_LOG_BYTES, "log") if gz else raw
            probe = f.read(_BINARY_PROBE)
            enc = _utf16(probe)
            if enc:  # UTF-16 (a Windows console capture, say): decoded, then read like any other log
                data = probe + f.read(MAX_UTF16_BYTES + 1)
                if len(data) > MAX_UTF16_BYTES:
                    raise InputError(path, f"UTF-16 log larger than {MAX_UTF16_BYTES >> 20} MB: convert it to UTF-8 first")
                text = data.decode(enc, errors="replace").lstrip("\ufeff")
                return _parse_lines(_lines(io.BytesIO(text.encode("utf-8")), path), str(path))
            _check_text(path, probe)
            f.seek(0)
            return _parse_lines(_lines(f, path), str(path))
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise InputError(path, f"cannot read the log ({e.__class__.__name__}: {e})") from None


def parse_xnnlog(data: bytes | str, source: str = "<memory>") -> KernelLog:
    """Parse log text (bytes are decoded as UTF-8 with replacement). Never raises on content."""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    return _parse_lines(_lines(io.BytesIO(data), source, limits=False), source)


def _lines(f, path, limits: bool = True):
    """(line number, raw line) for every line that can matter, reading blocks: a block with none of the
    messages' key words is only counted, so a log of millions of unrelated lines costs a scan, not a loop.
    The last item is (line count, None). Lines over :data:`MAX_LINE` and logs over :data:`MAX_LOG_BYTES` raise
    InputError (a gzip bomb is stopped by the stream: :class:`~edgeprof.io.sniff.GzipStream`)."""
    lineno = 0
    carry = b""
    total = 0
    while True:
        block = f.read(_BLOCK)
        if not block:
            break
        total += len(block)
        if limits and total > MAX_LOG_BYTES:
            raise InputError(path, f"larger than {MAX_LOG_BYTES >> 30} GB: not a log")
        data = carry + block if carry else block
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            if limits and len(carry) > MAX_LINE:
                raise InputError(path, f"line {lineno + 1} is longer than {MAX_LINE >> 20} MiB: not a log line")
            continue
        # a block is never longer than MAX_LINE, so only the line begun in an earlier block can be too long
        if limits and carry and data.find(b"\n") > MAX_LINE:
            raise InputError(path, f"line {lineno + 1} is longer than {MAX_LINE >> 20} MiB: not a log line")
        body, carry = data[: cut + 1], data[cut + 1:]  # carry < _BLOCK <= MAX_LINE: checked with the next block
        if limits and len(body) > MAX_LINE:
            lengths = list(map(len, body.split(b"\n")))
            if max(lengths) > MAX_LINE:
                k = next(i for i, n in enumerate(lengths) if n > MAX_LINE)
                raise InputError(path, f"line {lineno + k + 1} is longer than {MAX_LINE >> 20} MiB: not a log line")
        # the lines holding a key word, found by one search of the block (a block of a million empty lines and one
        # key word costs a scan, not a loop over its lines), numbered by counting the newlines before them
        at, before = 0, lineno  # ``before``: lines ended before byte ``at`` of the body
        for m in _HINT.finditer(body):
            if m.start() < at:
                continue  # a later key word of a line already given
            start = max(body.rfind(b"\n", at, m.start()) + 1, at)
            before += body.count(b"\n", at, start)
            end = body.index(b"\n", m.start()) + 1
            yield before + 1, body[start:end]
            at, before = end, before + 1
        lineno += body.count(b"\n")
    if carry:
        lineno += 1
        yield lineno, carry
    yield lineno, None


def _parse_lines(lines, source: str) -> KernelLog:
    """``lines``: (line number, raw bytes) from :func:`_lines`; the last item carries the line count."""
    log = KernelLog(source=source)
    repeats: dict[str, tuple] = {}
    pending = None  # logcat -v long: a header line names the level, the message follows on the next line
    pending_line = -1
    for lineno, raw in lines:
        if raw is None:
            log.lines = lineno
            break
        if pending is not None and lineno != pending_line + 1:
            pending = None  # the header's message line held none of the key words
        # only the final line can lack its newline: then it may be cut off mid-message
        cut = not raw.endswith((b"\n", b"\r"))
        for part in raw.decode("utf-8", errors="replace").rstrip("\r\n").split("\r"):
            if not part:
                continue
            m = _LOGCAT_LONG.match(part) if part[0] == "[" else None
            if m:
                pending, pending_line = _LEVEL[m.group(1)], lineno
                continue
            hit = repeats.get(part)
            if hit is not None:  # level-5 logs repeat the same operator lines every inference
                style, op, skipped = hit
                _count(log, style)
                target = log.operators_skipped if skipped else log.operators_run
                target[op] += 1
            else:
                _line(log, part, lineno, cut=cut, given=("logcat", pending, 0) if pending else None, repeats=repeats)
            pending = None
    return log


def _style(part: str):
    if "XNNPACK" not in part:
        return None, None, 0
    m = _STDIO.search(part)
    if m:
        return "stdio", _LEVEL[m.group(1) or m.group(2)], m.end()
    m = _LOGCAT.search(part)
    if m:
        return "logcat", _LEVEL[m.group(1)], m.end()
    return None, None, 0


def _count(log: KernelLog, style: str) -> None:
    log.xnnpack_lines += 1
    log.formats[style] = log.formats.get(style, 0) + 1


def _line(log: KernelLog, part: str, lineno: int, cut: bool, given=None, repeats=None) -> None:
    """One message (or several run together): kernel registrations, warnings/errors, and the Debug/Info lines
    worth knowing. Each pattern is searched anywhere in the text, behind a cheap substring test."""
    m: re.Match[str] | None
    style, level, start = given or _style(part)
    found = False
    if _KERNEL_HINT in part:
        for m in _KERNEL.finditer(part):
            found = True
            log.registrations.append(KernelRegistration(kind=m.group(1).lower(), name=m.group(2),
                                                        function=m.group(3) or "", source=m.group(4) or "",
                                                        line=lineno))
        if not found and cut:
            log.truncated_last_line = True
    if style or found:
        _count(log, style or "bare")
    if level in ("warning", "error", "fatal") and not found:
        if len(log.messages) < MAX_MESSAGES:
            log.messages.append({"level": level, "text": _TRAILER.sub("", part[start:]).strip(), "line": lineno})
        return
    if "running operator" in part:
        m = _RUNNING.search(part)
        if m:
            body = _TRAILER.sub("", m.group(4)).rstrip()
            if body.endswith(")"):
                op = body[:-1].strip()
                op = op.removesuffix(" Default")
                target = log.operators_skipped if m.group(1) else log.operators_run
                target[op] = target.get(op, 0) + 1
                if repeats is not None and style and not found and len(repeats) < _MAX_REPEATS \
                        and part.count("running operator") == 1 and not any(h in part for h in _HW_HINTS):
                    repeats[part] = (style, op, bool(m.group(1)))
            elif cut:
                log.truncated_last_line = True
    if "assumed_datatype" in part:
        m = _ASSUMED.search(part)
        if m:
            log.assumed_datatypes.append({"node": int(m.group(2)), "datatype": m.group(1), "op": m.group(3),
                                          "line": lineno})
        elif cut:
            log.truncated_last_line = True
    if "Tile size for GEMM" in part:
        m = _TILE.search(part)
        if m:
            g = [int(x) for x in m.groups()]
            log.tiles.append({"num_groups": g[0], "m": g[1], "n": g[2], "mr": g[3], "nr": g[4], "tile_m": g[5],
                              "tile_n": g[6], "tiles": g[7], "line": lineno})
    if "Inlining LHS packing" in part:
        m = _INLINE.search(part)
        if m and m.group(1) not in log.inlined_lhs_packing:
            log.inlined_lhs_packing.append(m.group(1))
    if "FP16 inference mode" in part:
        log.hardware["fp16_inference"] = True
    if any(h in part for h in _HW_HINTS):
        for key, rx, conv in _HW:
            m = rx.search(part)
            if m:
                log.hardware[key] = conv(m.group(1))
        m = _UARCH.search(part)
        if m:
            log.hardware.setdefault("uarchs", {})[m.group(1)] = m.group(2).lower()


def read_kernel_csv(path) -> list[dict]:
    """Rows of a kernels CSV (edgeprof's or the Arm kit's ``xnntrace_to_kernels.py`` output).

    Only ``kernel_name`` is required; ``category``, ``count``, ``model_id``, ``config`` and ``first_line``
    are kept when present. Errors name the file and line.
    """
    import csv
    import io

    from ..files import read_regular

    path = Path(path)
    raw = read_regular(path, MAX_CSV_BYTES, "kernels CSV")
    _check_text(path, raw[:_BINARY_PROBE])
    text = raw.decode("utf-8-sig", errors="replace")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        if "kernel_name" not in header:
            raise InputError(path, "not a kernels CSV: no kernel_name column", line=1)
        rows = []
        for rec in reader:
            name = csv_text((rec.get("kernel_name") or "").strip())  # edgeprof's own apostrophe undone (csv_cell)
            count = (rec.get("count") or "").strip()
            if not name or (count and not (count.isdigit() and len(count) <= 18)):
                raise InputError(path, "bad row: " + ("empty kernel_name" if not name else f"count '{count[:40]}' is "
                                 "not a whole number below 10^18"), line=reader.line_num)
            rows.append({k: (csv_text(v.strip()) if isinstance(v, str) else v) for k, v in rec.items() if k is not None})
    except csv.Error as e:
        raise InputError(path, f"malformed CSV ({e})", line=reader.line_num) from None
    return rows
