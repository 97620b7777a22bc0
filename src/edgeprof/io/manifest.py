"""What a run recorded about itself in ``manifest.json`` — the device, the runners, the environment of an
``edgeprof run`` collection and each launch's facts — never the analysis host."""

from __future__ import annotations

from pathlib import Path

from .runfolder import describe

_DEVICE_KEYS = ("device", "device_name", "device_model", "soc", "chip", "cpu_model", "hardware")


def recorded_device(manifest: dict | None) -> tuple[str | None, str | None]:
    """(device, where) as the run recorded it."""
    if not isinstance(manifest, dict):
        return None, None
    for holder, where in ((manifest, "manifest.json"), (manifest.get("config"), "manifest.json config"),
                          (manifest.get("metadata"), "manifest.json metadata")):
        if isinstance(holder, dict):
            for k in _DEVICE_KEYS:
                v = holder.get(k)
                if isinstance(v, (str, int, float)) and str(v).strip():
                    return str(v), f"{where} ({k})"
                if isinstance(v, dict) and v:
                    return ", ".join(f"{a}={b}" for a, b in v.items() if isinstance(b, (str, int, float))), f"{where} ({k})"
    return None, None


def recorded_runners(manifest: dict | None) -> dict:
    """Runner paths the run recorded, by experiment (or config key)."""
    cfg = manifest.get("config") if isinstance(manifest, dict) else None
    out = {}
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            if "runner" in k.lower() and isinstance(v, str):
                out[k] = v
        for exp in cfg.get("experiments", []) if isinstance(cfg.get("experiments"), list) else []:
            if isinstance(exp, dict) and isinstance(exp.get("runner_path"), str):
                out[str(exp.get("name", len(out)))] = exp["runner_path"]
    return out



def recorded_runtimes(manifest: dict | None, names) -> list[str]:
    """Each runtime of ``names`` (:mod:`edgeprof.runtimes`) in its own words with the versions the run recorded of
    its packages (``ONNX Runtime (onnxruntime 1.23.2)``); the runtime alone when nothing recorded them."""
    from ..runtimes import runtime

    recorded: dict = {}
    machines = got if isinstance(got := (manifest or {}).get("machines"), dict) else {}
    for m in machines.values():
        if isinstance(m, dict) and isinstance(m.get("versions"), dict):
            recorded.update({k: v for k, v in m["versions"].items() if isinstance(v, str)})
    for r in (manifest or {}).get("results") or [] if isinstance((manifest or {}).get("results"), list) else []:
        v = (r.get("metrics") or {}).get("versions") if isinstance(r, dict) and isinstance(r.get("metrics"), dict) else None
        if isinstance(v, dict):
            recorded.update({k: x for k, x in v.items() if isinstance(x, str)})
    out = []
    for name in dict.fromkeys(n or "executorch" for n in names):
        r = runtime(name)
        v = r.versions(recorded)
        out.append(f"{r.title} ({v})" if v else f"{r.title} (version not recorded)")
    return out


def recorded_environment(manifest: dict | None, runtimes=None) -> list[tuple[str, str]]:
    """What ``edgeprof run`` recorded about the machine and the collection, as (label, value) rows: CPU and its
    feature flags, cores, versions, the collection's status and order, and how load, governor and temperature
    moved across the launches. Empty for a manifest that recorded none of it. ``runtimes``: the runtimes the
    profiles were recorded with — the versions of other runtimes' packages installed beside them are left out
    (an ONNX Runtime collection is not described by the ExecuTorch that happens to be installed)."""
    if not isinstance(manifest, dict):
        return []
    from ..runtimes import RUNTIMES, runtime

    used = {runtime(n).name for n in runtimes} if runtimes is not None else set(RUNTIMES)
    other = {p for r in RUNTIMES.values() if r.name not in used for p in r.packages}
    rows: list[tuple[str, str]] = []
    machines = got if isinstance(got := manifest.get("machines"), dict) else {}
    for key, m in machines.items():
        if not isinstance(m, dict):
            continue
        where = "" if len(machines) == 1 else f" ({key})"
        cpu = m.get("cpu_model") or ", ".join(map(str, m.get("cpu_parts") or [])) or None
        flags = m.get("cpu_flags") if isinstance(m.get("cpu_flags"), list) else []
        if cpu or flags:
            rows.append((f"CPU{where}", (cpu or "model not readable") + (f"; flags: {', '.join(map(str, flags))}"
                                                                            if flags else "")))
        if isinstance(m.get("cores"), int):
            rows.append((f"Cores{where}", str(m["cores"])))
        v = got if isinstance(got := m.get("versions"), dict) else {}
        v = {k: x for k, x in v.items() if x and k not in other}
        if v:
            rows.append((f"Software{where}", ", ".join(f"{k} {x}" for k, x in v.items())))
    results = [r for r in manifest.get("results", []) if isinstance(r, dict)] if isinstance(
        manifest.get("results"), list) else []
    if manifest.get("tool") == "edgeprof" and results:
        failed = sum(1 for r in results if r.get("status") != "ok")
        cfg = got if isinstance(got := manifest.get("config"), dict) else {}
        rows.append(("Collection", f"{manifest.get('status', '?')}: {len(results) - failed} launch(es) recorded"
                     + (f", {failed} failed" if failed else "") + f"; interleaved, seed {cfg.get('seed', '?')}"))
        loads, govs, temps = [], set(), []
        for r in results:
            fp = got if isinstance(got := r.get("fingerprint"), dict) else {}
            for side in ("before", "after"):
                st = got if isinstance(got := fp.get(side), dict) else {}
                la = st.get("loadavg")
                if isinstance(la, list) and la and isinstance(la[0], (int, float)):
                    loads.append(float(la[0]))
                if isinstance(st.get("governor"), str):
                    govs.add(st["governor"])
                t = st.get("temperatures_c")
                if isinstance(t, dict):
                    temps += [float(x) for x in t.values() if isinstance(x, (int, float))]
        if loads:
            rows.append(("Load (1-min average, across launches)", f"{min(loads):.2f}–{max(loads):.2f}"))
        if govs:
            rows.append(("CPU governor", ", ".join(sorted(govs))))
        if temps:
            rows.append(("Temperature (hottest zone, across launches)", f"{min(temps):.1f}–{max(temps):.1f} °C"))
    ov = manifest.get("overhead")
    if isinstance(ov, dict) and isinstance(ov.get("statement"), str):
        rows.append(("ETDump overhead", ov["statement"].split(": ", 1)[-1]))
    return rows


def launch_facts(manifest: dict | None, etdump: Path) -> dict:
    """What the run recorded about the launch that wrote ``etdump``, for the comparability check: experiment
    and threads (from the name when nothing else says), and from an ``edgeprof run`` manifest the device, CPU
    model and flags, threads in effect, core mask, governor, runtime versions, the runner's and the program's
    hashes. Unknown facts are None."""
    rf = describe(etdump)
    facts: dict = {"experiment": rf.experiment, "threads": rf.threads, "device": None, "cpu_model": None,
                   "cpu_flags": None, "threads_in_effect": None, "core_mask": None, "governor": None,
                   "runtime": None, "runner": None, "program": None, "runtime_options": None}
    if not isinstance(manifest, dict):
        return facts
    dev, _ = recorded_device(manifest)
    facts["device"] = dev
    results = got if isinstance(got := manifest.get("results"), list) else []
    entry = None
    for r in results:
        m = got if isinstance(r, dict) and isinstance(got := r.get("metrics"), dict) else {}
        for key in ("etdump", "etdump_rel"):
            p = m.get(key)
            if isinstance(p, str) and (p == str(etdump) or Path(p).name == etdump.name):
                entry = r
                break
        if entry:
            break
    if entry is None:
        return facts
    m = entry.get("metrics") or {}
    facts["experiment"] = entry.get("experiment") if isinstance(entry.get("experiment"), str) else facts["experiment"]
    facts["threads"] = entry.get("threads") if isinstance(entry.get("threads"), int) else facts["threads"]
    facts["threads_in_effect"] = m.get("threads_in_effect")
    v = m.get("versions") if isinstance(m.get("versions"), dict) else None
    cfg = got if isinstance(got := manifest.get("config"), dict) else {}
    exp = next((e for e in cfg.get("experiments", []) if isinstance(e, dict) and e.get("name") == facts["experiment"]),
               {}) if isinstance(cfg.get("experiments"), list) else {}
    machines = got if isinstance(got := manifest.get("machines"), dict) else {}
    machine = machines.get(f"adb:{exp['device']}" if exp.get("device") else "host") or {}
    if isinstance(machine, dict):
        facts["cpu_model"] = machine.get("cpu_model") or (", ".join(machine.get("cpu_parts", [])) or None)
        flags = machine.get("cpu_flags")
        facts["cpu_flags"] = ", ".join(flags) if isinstance(flags, list) else None
        if v is None and isinstance(machine.get("versions"), dict):
            v = machine["versions"]
        if exp.get("device") and machine.get("model"):
            facts["device"] = machine.get("model")
    if v:
        from ..runtimes import for_model, runtime

        rt = runtime(exp.get("runtime")) if exp.get("runtime") else for_model(exp.get("model") or "")
        facts["runtime"] = rt.versions({k: x for k, x in v.items() if isinstance(x, str)})
    runner = exp.get("runner")
    rsha = runner.get("sha256") if isinstance(runner, dict) else None
    facts["runner"] = (f"sha256 {rsha[:12]}" if isinstance(rsha, str) else None) or exp.get("runner_path")
    msha = exp.get("model_sha256")
    facts["program"] = f"sha256 {msha[:12]}" if isinstance(msha, str) else None
    facts["core_mask"] = exp.get("cpu_affinity")
    facts["runtime_options"] = runtime_options(exp)
    fp = got if isinstance(got := entry.get("fingerprint"), dict) else {}
    before = got if isinstance(got := fp.get("before"), dict) else {}
    facts["governor"] = before.get("governor")
    return facts


# what makes launches launches of one configuration: the program (its hash where the manifest records it), the
# runtime (versions), the runtime options (threads, core mask) and the experiment — never the file's name alone
CONFIGURATION = ("experiment", "program", "runtime", "runtime_options", "threads", "core_mask")


def runtime_options(exp: dict) -> str | None:
    """The runtime options an experiment ran with, as one text (part of a configuration's identity): ONNX Runtime's
    providers and graph optimization level, LiteRT's delegate."""
    parts = []
    if isinstance(exp.get("providers"), list) and exp["providers"]:
        parts.append("providers " + ",".join(map(str, exp["providers"])))
    if isinstance(exp.get("graph_optimization"), str):
        parts.append(f"graph optimization {exp['graph_optimization']}")
    if isinstance(exp.get("memory_arena"), str) and exp["memory_arena"] != "on":
        parts.append(f"memory arena {exp['memory_arena']}")
    if isinstance(exp.get("delegate"), str):
        parts.append(f"delegate {exp['delegate']}")
    return "; ".join(parts) or None


def configuration(facts: dict) -> tuple:
    """The identity of the configuration a launch belongs to, from its :func:`launch_facts`."""
    return tuple((k, facts.get(k)) for k in CONFIGURATION)


_COMMIT_KEYS = ("commit", "git_commit", "git_sha", "revision")
_TIME_KEYS = ("time", "timestamp", "generated_at", "started_at", "created_at")


def recorded_revision(manifest: dict | None) -> dict:
    """The source revision a run recorded: ``commit``, ``branch`` and ``time`` (ISO text) from the manifest's top
    level or its ``git`` object (``{"commit"|"sha", "branch"}``); None where not recorded."""
    out: dict = {"commit": None, "branch": None, "time": None}
    if not isinstance(manifest, dict):
        return out
    git = got if isinstance(got := manifest.get("git"), dict) else {}
    # top level: the commit keys only (a bare "sha" there is ExecuTorch's in the kit's manifest); git: also "sha"
    for holder, commit_keys in ((manifest, _COMMIT_KEYS), (git, (*_COMMIT_KEYS, "sha"))):
        for k in commit_keys:
            v = holder.get(k)
            if out["commit"] is None and isinstance(v, (str, int)) and str(v).strip():
                out["commit"] = str(v).strip()
        v = holder.get("branch")
        if out["branch"] is None and isinstance(v, str) and v.strip():
            out["branch"] = v.strip()
        for k in _TIME_KEYS:
            v = holder.get(k)
            if out["time"] is None and isinstance(v, str) and v.strip():
                out["time"] = v.strip()
    return out
