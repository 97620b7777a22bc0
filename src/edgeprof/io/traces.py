"""XNNPACK trace logs of a run folder and the SME2 role of a run: which logs belong to a run folder (in it
or in its ``<platform>_trace`` sibling), how they are named (``<prefix>_xnntrace.log``), and whether a name
or the manifest marks a run as SME2 on or off."""

from __future__ import annotations

from pathlib import Path

SME2_OFF = ("sme2_off", "sme2-off", "sme2off", "nosme2", "no_sme2", "no-sme2")
SME2_ON = ("sme2_on", "sme2-on", "sme2on")
TRACE_SUFFIX = "_xnntrace"
_TRACE_PROBE = 16 << 20  # kernel lines come at start-up: look this far into other *.log files
_TRACE_EXTS = (".log", ".txt", ".gz")


def sme2_role(text: str) -> str | None:
    """``"off"``/``"on"`` when a name says so (``sme2_off`` wins over ``sme2_on`` inside it), else None."""
    low = text.lower()
    if any(t in low for t in SME2_OFF):
        return "off"
    if any(t in low for t in SME2_ON):
        return "on"
    return None


def trace_folders(run_dir: Path) -> list[Path]:
    """Where trace logs of a run folder live: the folder itself and a sibling ``<platform>_trace``."""
    from ..files import is_dir

    out = [run_dir]
    sib = run_dir.parent / f"{run_dir.name}_trace"
    if is_dir(sib):  # never outside the allowed roots
        out.append(sib)
    return out


def _looks_like_trace(f: Path) -> bool:
    if f.name.endswith((TRACE_SUFFIX + ".log", TRACE_SUFFIX + ".log.gz", TRACE_SUFFIX + ".txt")):
        return True
    if f.suffix == ".gz":
        return False
    from ..errors import InputError
    from ..files import open_regular

    try:
        with open_regular(f) as fh:
            return b"microkernel '" in fh.read(_TRACE_PROBE)
    except (OSError, InputError):
        return False


def find_trace_logs(run_dir: Path) -> list[Path]:
    """XNNPACK trace logs below ``run_dir`` and its ``<platform>_trace`` sibling: ``*_xnntrace.log`` files, and
    other ``*.log``/``*.txt`` files that hold ``Using … microkernel`` lines."""
    from ..files import is_file

    out = []
    for folder in trace_folders(run_dir):
        for f in sorted(folder.rglob("*")):
            if (f.suffix in _TRACE_EXTS and is_file(f) and not any(p.startswith(".") for p in f.relative_to(folder).parts)
                    and _looks_like_trace(f)):
                out.append(f)
    return out


def find_kernel_tables(run_dir: Path) -> list[Path]:
    """Kernel tables (``*_kernels.csv``, edgeprof's or the Arm kit's) below ``run_dir`` and its trace sibling."""
    from ..files import is_file

    out = []
    for folder in trace_folders(run_dir):
        out += [f for f in sorted(folder.rglob("*_kernels.csv")) if is_file(f)
                and not any(p.startswith(".") for p in f.relative_to(folder).parts)]
    return out


def trace_stem(path: Path) -> str:
    """``<prefix>`` of ``<prefix>_xnntrace.log`` (or the plain stem of another log)."""
    name = path.name
    for ext in (".gz", ".log", ".txt"):
        name = name.removesuffix(ext)
    return name.removesuffix(TRACE_SUFFIX)


def manifest_sme2_roles(manifest: dict | None) -> dict[str, str]:
    """experiment → ``"on"``/``"off"`` for manifest results marked with ``sme2``/``sme2_enabled``/``sme2_on``."""
    roles = {}
    results = manifest.get("results") if isinstance(manifest, dict) else None
    for r in results if isinstance(results, list) else []:
        if not isinstance(r, dict) or not isinstance(r.get("experiment"), str):
            continue
        for holder in (r, m if isinstance(m := r.get("metrics"), dict) else {},
                       c if isinstance(c := r.get("config"), dict) else {}):
            for key in ("sme2", "sme2_enabled", "sme2_on"):
                if key in holder:
                    v = holder[key]
                    on = v if isinstance(v, bool) else str(v).strip().lower() in ("on", "true", "1", "yes", "enabled")
                    roles[r["experiment"]] = "on" if on else "off"
    return roles
