"""The machine a launch ran on, as it was: CPU model and the feature flags that decide kernels (SME, SME2,
I8MM, BF16, dot product, SVE; AVX2, AVX-512, AMX), core count, frequency governor, load average and
temperatures before and after each launch, Python/ExecuTorch/torch versions, and each runner's hash.

Host facts come from ``/proc/cpuinfo`` and ``/sys`` (Linux) or ``sysctl`` (macOS); device facts from
``getprop``, ``/proc/cpuinfo`` and ``/sys`` through ``adb shell``. A fact that cannot be read is left out,
never guessed.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import platform
import re
import subprocess
import sys

from .. import child

FLAGS = ("sme", "sme2", "smef64f64", "i8mm", "bf16", "asimddp", "sve", "sve2", "avx2", "avx512f", "avx512vnni",
         "avx512_bf16", "amx_tile", "amx_int8", "fma")


def _read(path: str, limit: int = 1 << 20) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def cpuinfo_facts(text: str) -> dict:
    """CPU model and the flags of interest from a ``/proc/cpuinfo`` text (x86 ``flags``, Arm ``Features``)."""
    model = None
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "hardware", "processor") and not model and value.strip() and not value.strip().isdigit():
            model = value.strip()
        elif key in ("flags", "features"):
            flags.update(value.split())
    parts = list(re.findall(r"CPU part\s*:\s*(0x[0-9a-f]+)", text, re.I))
    out = {"cpu_model": model, "cpu_flags": sorted(f for f in flags if f in FLAGS)}
    if parts and not model:
        out["cpu_parts"] = sorted(set(parts))
    return out


def _sysctl(*names: str) -> dict:
    out = {}
    for n in names:
        try:
            r = child.run(["sysctl", "-n", n], timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and r.stdout.strip():
            out[n] = r.stdout.strip()
    return out


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("executorch", "torch", "edgeprof"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def host_facts() -> dict:
    """What does not change during a collection."""
    facts: dict[str, object] = {"system": platform.system(), "machine": platform.machine(), "release": platform.release(),
             "cores": os.cpu_count(), "versions": _versions(), "python_executable": sys.executable}
    if platform.system() == "Darwin":
        s = _sysctl("machdep.cpu.brand_string", "hw.model", "hw.optional.arm.FEAT_SME", "hw.optional.arm.FEAT_SME2",
                    "hw.optional.arm.FEAT_I8MM", "hw.optional.arm.FEAT_BF16")
        facts["cpu_model"] = s.get("machdep.cpu.brand_string")
        facts["model"] = s.get("hw.model")
        facts["cpu_flags"] = sorted(k.rsplit("FEAT_", 1)[1].lower() for k, v in s.items() if "FEAT_" in k and v == "1")
    else:
        facts.update(cpuinfo_facts(_read("/proc/cpuinfo") or ""))
        facts["model"] = (_read("/sys/firmware/devicetree/base/model") or _read("/sys/class/dmi/id/product_name")
                          or "").strip("\x00\n ") or None
        mem = re.search(r"MemTotal:\s+(\d+) kB", _read("/proc/meminfo") or "")
        facts["memory_gb"] = round(int(mem.group(1)) / 1024**2, 1) if mem else None
    return {k: v for k, v in facts.items() if v not in (None, [], "")}


def host_state() -> dict:
    """What can change from one launch to the next: load, governor, temperatures."""
    state: dict = {}
    with contextlib.suppress(OSError):
        state["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    gov = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if gov:
        state["governor"] = gov.strip()
    temps = {}
    for zone in sorted(glob.glob("/sys/class/thermal/thermal_zone*"))[:16]:
        t, kind = _read(zone + "/temp"), _read(zone + "/type")
        if t and t.strip().lstrip("-").isdigit():
            temps[(kind or os.path.basename(zone)).strip()] = int(t) / 1000
    if temps:
        state["temperatures_c"] = temps
    return state


def device_facts(shell) -> dict:
    """An Android device's facts; ``shell(cmd)`` runs ``adb -s SERIAL shell cmd`` and returns its output."""
    facts = {}
    for key, prop in (("model", "ro.product.model"), ("manufacturer", "ro.product.manufacturer"),
                      ("soc", "ro.soc.model"), ("android", "ro.build.version.release"),
                      ("abi", "ro.product.cpu.abi")):
        v = (shell(f"getprop {prop}") or "").strip()
        if v:
            facts[key] = v
    facts.update(cpuinfo_facts(shell("cat /proc/cpuinfo") or ""))
    n = (shell("ls -d /sys/devices/system/cpu/cpu[0-9]* | wc -l") or "").strip()
    if n.isdigit():
        facts["cores"] = int(n)
    return {k: v for k, v in facts.items() if v not in (None, [], "")}


def device_state(shell) -> dict:
    state: dict = {}
    la = (shell("cat /proc/loadavg") or "").split()
    with contextlib.suppress(ValueError):
        state["loadavg"] = [float(x) for x in la[:3]]
    gov = (shell("cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or "").strip()
    if gov and " " not in gov:
        state["governor"] = gov
    temps = {}
    for line in (shell("for z in /sys/class/thermal/thermal_zone*; do echo $(cat $z/type) $(cat $z/temp); done")
                 or "").splitlines()[:32]:
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            temps[parts[0]] = int(parts[1]) / 1000
    if temps:
        state["temperatures_c"] = temps
    return state


def file_hash(path) -> dict:
    """``{path, sha256, bytes}`` of a runner or model (``sha256`` None when it cannot be read)."""
    h = hashlib.sha256()
    n = 0
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
                n += len(chunk)
    except OSError:
        return {"path": str(path), "sha256": None, "bytes": None}
    return {"path": str(path), "sha256": h.hexdigest(), "bytes": n}


def describe_machine(facts: dict) -> str:
    """One line naming a machine, for the report's device line."""
    name = facts.get("model") or " ".join(x for x in (facts.get("manufacturer"), facts.get("soc")) if x)
    cpu = facts.get("cpu_model") or ", ".join(facts.get("cpu_parts", []))
    bits = [b for b in (name, cpu) if b]
    flags = [f for f in facts.get("cpu_flags", []) if f in ("sme", "sme2", "i8mm", "bf16", "avx512f", "amx_tile")]
    return " — ".join(bits or [facts.get("machine") or "unknown machine"]) + (f" ({', '.join(flags)})" if flags else "")
