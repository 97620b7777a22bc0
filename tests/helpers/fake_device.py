"""Fake ``executor_runner`` and ``adb`` executables for collection tests: the real ones are faked only at their
process boundary — command-line flags, exit codes, output files, stdout/stderr — as the real tools behave.

``executor_runner --model_path M --num_executions N --cpu_threads T [--etdump_path E] [--fake SPEC]``
  writes a real ETDump (the recorded toycnn XNNPACK profile, its runs repeated to N) and prints ExecuTorch's
  ``Model executed successfully N time(s) in X ms``; ``--hold-mib M`` holds M MiB (each page touched) for 0.6 s.
  With ``XNN_LOG_LEVEL=5`` it prints XNNPACK's kernel
  lines (from the recorded SME2-on trace) on stderr, and appends them to the fake logcat when run on a fake
  device. ``--fake crash:l2,hang:l3,corrupt:l1,none:l2`` misbehaves on the named launches (the ``_l<k>`` of
  the ETDump name): exit 139 after "Segmentation fault", sleep forever, write garbage, or write no ETDump.
  Every invocation is appended to ``$FAKE_LOG`` (argv and the variables XNN_LOG_LEVEL, LD_LIBRARY_PATH).

``adb -s SERIAL push|pull|shell|logcat|devices``: a device is a folder ``$FAKE_ADB_ROOT/<serial>``;
  ``/data/local/tmp``, ``/proc`` and ``/sys`` in commands are rewritten into it (a process's own ``/proc/$PID`` is
  the real kernel's: the fake runner runs here); ``taskset MASK cmd`` records
  the mask and runs cmd; ``getprop`` answers from ``props``; an unknown serial fails like adb does.
"""

from __future__ import annotations

import gzip
import os
import stat
import sys
from pathlib import Path

from testdata import DATA, ROOT

RUNNER = r'''#!{python}
import math, os, re, sys, time
sys.path.insert(0, {helpers!r})
from etdump_rewrite import read, stretch, write
import random, zlib

args = sys.argv[1:]
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
with open({log!r}, "a") as f:  # named here: edgeprof passes its children only allow-listed variables
    f.write(repr({{"argv": sys.argv, "XNN_LOG_LEVEL": os.environ.get("XNN_LOG_LEVEL"),
                  "LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH"), "cwd": os.getcwd()}}) + "\n")
model, n, threads, etdump = opt("--model_path"), int(opt("--num_executions", "1")), opt("--cpu_threads"), opt("--etdump_path")
if model is None or not os.path.exists(model):
    print(f"E executor_runner.cpp:120] Failed to open program file {{model}}", file=sys.stderr)
    sys.exit(1)
launch = re.search(r"_l(\d+)\.etdump$", etdump or "")
plan = dict(x.split(":") for x in (opt("--fake") or "").split(",") if ":" in x)
what = next((k for k, v in plan.items() if launch and v == "l" + launch.group(1)), "ok")
if os.environ.get("XNN_LOG_LEVEL") == "5":
    lines = open({trace!r}, encoding="utf-8").read()
    sys.stderr.write(lines)
    if os.environ.get("FAKE_LOGCAT"):
        with open(os.environ["FAKE_LOGCAT"], "a") as f:
            f.write(lines)
if what == "hang":
    print("I executor_runner.cpp:200] running", flush=True)
    time.sleep(3600)
if what == "crash":
    print("Segmentation fault", file=sys.stderr)
    sys.exit(139)
t0 = time.perf_counter()
if etdump and what != "none":
    if what == "corrupt":
        open(etdump, "wb").write(b"\x00\x01garbage" * 10)
    else:
        runs, version = read(open({source!r}, "rb").read())
        execute = [r for r in runs if r.name == "Execute"]
        out = [r for r in runs if r.name != "Execute"] + [execute[i % len(execute)] for i in range(n)]
        # every launch its own luck (seeded by the ETDump's name), more threads a little faster
        rnd = random.Random(zlib.crc32(os.path.basename(etdump).encode()))
        factor = math.exp(rnd.gauss(0, 0.03)) / (1 + 0.3 * (int(threads or 1) - 1))
        out = stretch(out, lambda e: e.name == "Method::execute" or not e.name, factor)
        open(etdump, "wb").write(write(out, version))
hold = int(opt("--hold-mib", "0"))  # hold this much memory, every page touched, long enough to be sampled
if hold:
    buf = bytearray(hold << 20)
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    time.sleep(0.6)
ms = (time.perf_counter() - t0) * 1e3 + 0.1 * n
print(f"I executor_runner.cpp:330] Model executed successfully {{n}} time(s) in {{ms:.6f}} ms.")
'''

ADB = r'''#!{python}
import os, re, shutil, subprocess, sys
root = {devroot!r}
args = sys.argv[1:]
serial = None
if args[:1] == ["-s"]:
    serial, args = args[1], args[2:]
with open({log!r}, "a") as f:
    f.write(repr({{"adb": [serial] + args}}) + "\n")
devices = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
if args[:1] == ["devices"]:
    print("List of devices attached")
    for d in devices:
        print(f"{{d}}\tdevice")
    sys.exit(0)
if serial is None and len(devices) == 1:
    serial = devices[0]
if serial not in devices:
    print(f"adb: device '{{serial}}' not found", file=sys.stderr)
    sys.exit(1)
dev = os.path.join(root, serial)
def on_device(path):
    # the device's files; a process's own /proc/$PID/… is the kernel's the fake processes run on
    return re.sub(r"(?<![\w/])/(data/local/tmp|proc|sys)\b(?!/\$)", lambda m: dev + "/" + m.group(1), path)
cmd = args[0]
if cmd == "push":
    dst = on_device(args[2])
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(args[1], dst)
    print(f"{{args[1]}}: 1 file pushed, 0 skipped.")
elif cmd == "pull":
    src = on_device(args[1])
    if not os.path.exists(src):
        print(f"adb: error: failed to stat remote object '{{args[1]}}': No such file or directory", file=sys.stderr)
        sys.exit(1)
    dst = args[2]
    if os.path.isdir(dst):
        dst = os.path.join(dst, os.path.basename(src))
    shutil.copyfile(src, dst)
    print(f"{{args[1]}}: 1 file pulled, 0 skipped.")
elif cmd == "logcat":
    log = os.path.join(dev, "logcat.txt")
    if "-c" in args:
        open(log, "w").close()
    elif "-d" in args:
        text = open(log).read() if os.path.exists(log) else ""
        sys.stdout.write("".join(l for l in text.splitlines(True) if "XNNPACK" in l))
elif cmd == "shell":
    line = on_device(" ".join(args[1:]))
    getprop = "getprop() {{ case \"$1\" in " + "".join(
        f"{{k}}) echo {{v!r}};; " for k, v in [l.split("=", 1) for l in open(os.path.join(dev, "props")).read().splitlines() if "=" in l]
    ) + "esac; }}; "
    # taskset records the mask and execs the command, as toybox's does (the process keeps its pid)
    bindir = os.path.join(dev, "bin")
    if not os.path.exists(os.path.join(bindir, "taskset")):
        os.makedirs(bindir, exist_ok=True)
        with open(os.path.join(bindir, "taskset"), "w") as f:
            f.write(f"#!/bin/sh\necho \"$1\" >> {{dev}}/taskset.log\nshift\nexec \"$@\"\n")
        os.chmod(os.path.join(bindir, "taskset"), 0o755)
    env = dict(os.environ, FAKE_LOGCAT=os.path.join(dev, "logcat.txt"),
               PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run(["bash", "-c", getprop + line], env=env)
    sys.exit(r.returncode)
else:
    print(f"adb: unknown command {{cmd}}", file=sys.stderr)
    sys.exit(1)
'''  # noqa: E501 - the program as the fake adb runs it

CPUINFO = """processor\t: 0
BogoMIPS\t: 2000.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 i8mm bf16 sme sme2
CPU implementer\t: 0x41
CPU part\t: 0xd87
"""  # noqa: E501 - /proc/cpuinfo as a device shows it


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def install(tmp: Path) -> dict:
    """A bin folder with ``executor_runner`` and ``adb``, a device ``R5CX`` and the ETDump source; returns
    paths and the environment to run with (``FAKE_LOG``, ``FAKE_ADB_ROOT``, PATH)."""
    bin_dir = tmp / "fakebin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    source = tmp / "fake_source.etdp"
    source.write_bytes(gzip.decompress((DATA / "etdump" / "toycnn_xnn.N20.etdp.gz").read_bytes()))
    trace = DATA / "xnnpack" / "mac_sme2_on_xnntrace.log"
    log, devroot = tmp / "fake_calls.log", tmp / "devices"
    fmt = {"python": sys.executable, "helpers": str(ROOT / "tests" / "helpers"), "trace": str(trace),
           "source": str(source), "log": str(log), "devroot": str(devroot)}
    runner = _script(bin_dir / "executor_runner", RUNNER.format(**fmt))
    adb = _script(bin_dir / "adb", ADB.format(**fmt))
    dev = devroot / "R5CX"
    for d in ("data/local/tmp", "proc", "sys/devices/system/cpu/cpu0/cpufreq", "sys/class/thermal/thermal_zone0"):
        (dev / d).mkdir(parents=True, exist_ok=True)
    for i in range(1, 8):
        (dev / f"sys/devices/system/cpu/cpu{i}").mkdir(parents=True, exist_ok=True)
    (dev / "props").write_text("ro.product.model=Pixel 9 Pro\nro.product.manufacturer=Google\nro.soc.model=Tensor G4\n"
                               "ro.build.version.release=15\nro.product.cpu.abi=arm64-v8a\n")
    (dev / "proc/cpuinfo").write_text(CPUINFO)
    (dev / "proc/loadavg").write_text("1.50 1.20 0.90 2/500 1234\n")
    (dev / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").write_text("schedutil\n")
    (dev / "sys/class/thermal/thermal_zone0/type").write_text("cpu-big\n")
    (dev / "sys/class/thermal/thermal_zone0/temp").write_text("41500\n")
    env = {"FAKE_LOG": str(log), "FAKE_ADB_ROOT": str(devroot),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return {"bin": bin_dir, "runner": runner, "adb": adb, "device": dev, "log": log, "env": env}


def calls(log: Path) -> list[dict]:
    import ast

    return [ast.literal_eval(line) for line in log.read_text().splitlines()] if log.exists() else []
