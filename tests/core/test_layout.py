"""The package's shape: no layer imports upward, no module grows past ~450 lines without saying why, and
asking for help costs no more than starting Python and click."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import edgeprof

SRC = Path(edgeprof.__file__).parent
LAYERS = ("cli", "server", "api", "analysis", "render", "io", "collect", "store")
# what each layer may import (``core``: model, conventions, documents, errors, taxonomy, kernel_names, access and files —
# where a process may read and write, and the one bounded opener — and private helpers)
ALLOWED = {"cli": {"cli", "server", "api", "render", "core"}, "server": {"server", "api", "render", "core"},
           "api": {"api", "analysis", "render", "io", "collect", "store", "core"}, "store": {"store", "core"},
           "analysis": {"analysis", "core"}, "render": {"render", "core"}, "io": {"io", "core"},
           "collect": {"collect", "core"}, "core": {"core"}}
MAX_LINES = 450


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "core"


def _modules():
    for f in sorted(SRC.rglob("*.py")):
        rel = f.relative_to(SRC.parent).with_suffix("")
        name = ".".join(rel.parts)
        pkg = name[: -len(".__init__")] if name.endswith(".__init__") else name.rsplit(".", 1)[0]
        yield f, name.removesuffix(".__init__"), pkg


def _statements(f: Path, pkg: str):
    """(module, names imported from it) of every import in the file, top level or inside functions; relative
    imports resolved against the package ``pkg`` (``import x`` gives (x, ()))."""
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names)


def _imports(f: Path, pkg: str):
    for target, names in _statements(f, pkg):
        if target in ("edgeprof", "edgeprof.io", "edgeprof.analysis", "edgeprof.render", "edgeprof.api"):
            yield from (f"{target}.{n}" for n in names)
        else:
            yield target


def test_no_layer_imports_upward():
    bad = []
    for f, name, pkg in _modules():
        if name in ("edgeprof", "edgeprof.__main__"):  # the package's lazy facade and the entry point
            continue
        for target in _imports(f, pkg):
            if target.startswith("edgeprof.") and _layer(target) not in ALLOWED[_layer(name)]:
                bad.append(f"{name} imports {target}")
    assert bad == []


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule above is not vacuous: a planted analysis → io import is caught."""
    f = tmp_path / "planted.py"
    f.write_text("from ..io.etdump import read_etdump\nimport edgeprof.render.svg\n")
    found = list(_imports(f, "edgeprof.analysis"))
    assert found == ["edgeprof.io.etdump", "edgeprof.render.svg"]
    assert all(_layer(t) not in ALLOWED["analysis"] for t in found)


def _module_graph(modules) -> dict[str, set[str]]:
    """Module → the package modules it imports (at the top or inside functions): `from X import y` is X.y when
    that is a module, else X."""
    names = {name for _, name, _ in modules}
    graph = {}
    for f, name, pkg in modules:
        deps = set()
        for target, imported in _statements(f, pkg):
            deps |= {f"{target}.{n}" if f"{target}.{n}" in names else target for n in imported} or {target}
        graph[name] = {d for d in deps if d in names and d != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iteratively)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles():
    """No two modules of the package import each other, directly or through others — imports inside functions
    included (the package's lazy facade imports api only on first use and is left out)."""
    modules = [m for m in _modules() if m[1] != "edgeprof"]
    assert _cycles(_module_graph(modules)) == []


def test_the_cycle_checker_sees_a_cycle_inside_a_function(tmp_path):
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .c import g\n")
    (pkg / "c.py").write_text("from .a import x\n")
    (pkg / "d.py").write_text("from .a import x\n")
    mods = [(pkg / f"{n}.py", f"p.{n}", "p") for n in "abcd"]
    assert _cycles(_module_graph(mods)) == [["p.a", "p.b", "p.c"]]


def test_no_module_is_long():
    """No module over MAX_LINES lines, and no exemption: a long module is split along its seams."""
    long = [f"{name}: {f.read_text().count(chr(10))} lines" for f, name, _ in _modules()
            if f.read_text().count("\n") > MAX_LINES]
    assert long == []


@pytest.mark.parametrize("cmd", [[], ["compare"], ["report"], ["ane"], ["analyze"]])
def test_help_is_fast_and_loads_no_numerics(cmd):
    """``edgeprof [cmd] --help`` in a fresh process loads little beyond click — counted, not timed (a loaded
    machine makes wall time flaky; ``bench/bench_startup.py`` times it): none of numpy, polars, scipy or rich,
    no edgeprof module besides the CLI's own, its conventions and errors, and at most 45 modules in all beyond
    ``import click``."""
    probe = ("import sys\nimport click\nbase = set(sys.modules)\nimport edgeprof.cli as c\n"
             "try:\n    c.main(sys.argv[1:], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
             "new = sorted(set(sys.modules) - base)\n"
             "print('NEW', ' '.join(new), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe, *cmd, "--help"], capture_output=True, text=True, check=True)
    new = next(ln for ln in r.stderr.splitlines() if ln.startswith("NEW")).split()[1:]
    assert not {"numpy", "polars", "scipy", "rich"} & {m.split(".")[0] for m in new}, new
    ours = [m for m in new if m.split(".")[0] == "edgeprof"]
    assert all(m in ("edgeprof", "edgeprof.conventions", "edgeprof.errors", "edgeprof.options")
               or m.startswith("edgeprof.cli")
               for m in ours), ours
    assert len(new) <= 45, (len(new), new)


@pytest.mark.parametrize("args, absent", [
    (["ane", "{data}/anemll/anemll_profile_0.4.1.illustrative.json"], ("numpy", "polars", "scipy")),
    (["kernels", "{data}/xnnpack/mac_sme2_on_xnntrace.log", "--no-write"], ("numpy", "polars", "scipy")),
    (["kernel-view", "-b", "{data}/xnnpack/mac_sme2_off_xnntrace.log", "-c", "{data}/xnnpack/mac_sme2_on_xnntrace.log"],
     ("numpy", "polars", "scipy")),
    (["breakdown", "{example}", "--no-write"], ("scipy",)),
    (["trace", "{example}", "--out", "{tmp}/t.json"], ("scipy",)),
    (["validate", "{example_dir}"], ("scipy",)),
    (["latency", "{example}", "--no-write"], ("scipy",)),
    (["report", "{example_dir}", "--out", "{tmp}/r.md"], ("scipy",)),
])
def test_a_command_imports_only_what_it_needs(args, absent, tmp_path):
    """JSON and log commands never load the numeric stack; statistics use edgeprof's own distribution functions
    (``analysis.special``), so no command but ``history`` (ruptures) loads scipy."""
    from testdata import DATA

    ex = tmp_path / "ex"
    subprocess.run([sys.executable, "-m", "edgeprof", "example", str(ex)], check=True, capture_output=True)
    etd = sorted(ex.rglob("*.etdump"))[0]
    args = [a.format(data=DATA, example=etd, example_dir=ex, tmp=tmp_path) for a in args]
    probe = ("import sys, edgeprof.cli as c\n"
             "try:\n    c.main(sys.argv[1:], standalone_mode=False)\nexcept SystemExit as e:\n"
             "    assert not e.code or e.code == 1, e.code\n"
             "print('LOADED', sorted(m for m in ('numpy', 'polars', 'scipy') if m in sys.modules), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    loaded = eval(r.stderr.rsplit("LOADED", 1)[1])
    assert not set(loaded) & set(absent), loaded
