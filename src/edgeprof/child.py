"""Every process edgeprof starts is started here, by one rule.

A working folder may belong to someone else: a ``json.py``, ``signal.py``, ``sitecustomize.py`` or ``edgeprof/``
placed there must never run, and nothing in the parent's environment beyond what a child needs reaches it. So
every child (tool-call workers of ``edgeprof mcp``, collection workers of ``edgeprof run``, Dask workers of
``--workers N``, and the programs edgeprof runs: runners, ``adb``, ``git``, ``sysctl``) gets:

* **An isolated interpreter** when it is Python (:func:`python_argv`): ``python -I`` puts neither the current
  folder nor a script's folder on ``sys.path`` and ignores every ``PYTHON*`` variable and the user's
  site-packages; ``-B`` writes no bytecode, ``-u`` leaves no output in a buffer should the child be killed.
  edgeprof's own location is given on the command line, not through the environment: a short bootstrap
  (:data:`BOOT`) puts the folder holding the parent's ``edgeprof`` package first on ``sys.path`` when it is not on
  it already, then runs the module as ``python -m`` would. The child runs the parent's copy of edgeprof (a source
  checkout, an installed one, a copy on trial) and imports nothing from its working folder. Children the child
  starts through :mod:`multiprocessing` inherit ``-I`` from it.
* **An environment built from an allow-list** (:func:`environment`), never the parent's whole: ``EDGEPROF_*``;
  ``TMPDIR``; the locale (``LANG``, ``LANGUAGE``, ``LC_*``) and ``TZ``; ``PATH``, to find programs;
  the runtime library paths (``LD_LIBRARY_PATH``, ``DYLD_LIBRARY_PATH``, ``DYLD_FALLBACK_LIBRARY_PATH``);
  ``COVERAGE_PROCESS_START``/``COVERAGE_PROCESS_CONFIG`` (coverage measured in children, by the tests and the
  mutation tool); ``HOME``, ``ANDROID_*`` and ``ADB_*`` for ``adb`` and ``git``: ``adb`` finds the key the
  device authorised under ``HOME`` (or ``ANDROID_USER_HOME``), its server and default device through
  ``ANDROID_*``/``ADB_*``, and ``git`` the user's configuration (``safe.directory``) under ``HOME``; for an
  isolated interpreter ``HOME`` carries no code (``-I`` ignores the user's site-packages). Anything else —
  ``PYTHONPATH``, ``PYTHONSTARTUP``, ``LD_PRELOAD``, tokens — stays with the parent, unless the user names it
  in ``EDGEPROF_PASS_ENV`` (comma-separated: what a runner of theirs needs, e.g. ``VK_ICD_FILENAMES``; an
  isolated interpreter ignores ``PYTHON*`` variables even then). The caller adds what one child needs
  (``XNN_LOG_LEVEL``, its scratch folder).
* **Library search paths of absolute folders only** (:func:`absolute_search_path`): an empty entry of
  ``LD_LIBRARY_PATH`` (``export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/x`` gives ``:/opt/x`` when it was unset)
  or a relative one makes the dynamic loader look in the working folder of whoever loads a library: a
  ``libz.so.1`` placed there would run inside the process. Children get those variables (and macOS's
  ``DYLD_*`` paths, :data:`LOADER_PATHS`) without such entries. The loader reads them once, when a program
  starts, so the ``edgeprof`` program itself starts again without them (:func:`restart_without_relative_libraries`,
  called by :mod:`edgeprof.cli` before it imports anything that loads a library), saying so in one line.
* **A working folder it owns** (:func:`private_folder`): a fresh 0700 folder, removed once the child has ended —
  except for an ``executor_runner``-style binary, which the Arm kit runs in its launch folder: its caller names
  that folder.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

# (shutil and tempfile are imported where used: they load zlib, bz2 and lzma, whose libraries the loader finds by
# its search path — this module is imported before a program with an unsafe one has started again)

# python -I -B -u -c BOOT LOCATION -m MODULE ARGS...: sys.argv is ['-c', LOCATION, '-m', MODULE, ARGS...]
# (runpy is imported before edgeprof's folder joins the path, so it cannot come from there)
BOOT = ("import sys,runpy;p=sys.argv[1];p in sys.path or sys.path.insert(0,p);del sys.argv[:3];"
        "runpy._run_module_as_main(sys.argv[0])")

NAMES = frozenset({"PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
                   "DYLD_FALLBACK_LIBRARY_PATH", "COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"})
PREFIXES = ("EDGEPROF_", "LC_", "ANDROID_", "ADB_")
# the dynamic loader's search paths (Linux; macOS): an entry that is not an absolute folder names the working folder
LOADER_PATHS = ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH",
                "DYLD_FALLBACK_FRAMEWORK_PATH")
RESTARTED = "EDGEPROF_RESTARTED"  # set for the program started again by restart_without_relative_libraries


def absolute_search_path(name: str, value: str) -> str | None:
    """``value`` of the search path ``name`` with only its absolute folders (an empty entry, ``.`` or ``lib``
    means the working folder of whoever loads a library), None when none is left. glibc splits
    ``LD_LIBRARY_PATH`` at ``:`` and ``;``."""
    entries = value.replace(";", ":").split(":") if name == "LD_LIBRARY_PATH" else value.split(":")
    kept = [e for e in entries if e.startswith("/")]
    return ":".join(kept) if kept else None


def without_relative_libraries(env: Mapping[str, str]) -> dict:
    """``env`` with every :data:`LOADER_PATHS` variable holding only absolute folders (dropped when none is left)."""
    out = dict(env)
    for name in LOADER_PATHS:
        if name in out:
            kept = absolute_search_path(name, out[name])
            if kept is None:
                del out[name]
            else:
                out[name] = kept
    return out


def restart_without_relative_libraries() -> None:
    """At the start of the ``edgeprof`` program (the console script, ``python -m edgeprof``), before anything that
    loads a shared library is imported: when a :data:`LOADER_PATHS` variable holds an entry that is not an
    absolute folder, start the program again (the same interpreter and arguments, :func:`os.execve`) with those
    entries removed, and say so in one line on stderr. The variable is read by the loader once, at start: no
    change made later would reach the libraries this process loads. Marked with :data:`RESTARTED` so it happens
    once; a variable still unsafe after that is refused (exit 2). Not on Windows (no such variables)."""
    if os.name != "posix":
        return
    clean = without_relative_libraries(os.environ)
    unsafe = [n for n in LOADER_PATHS if os.environ.get(n) != clean.get(n)]
    if not unsafe:
        os.environ.pop(RESTARTED, None)  # (its children need not know)
        return
    names = "/".join(unsafe)
    if os.environ.get(RESTARTED) or not sys.executable or not getattr(sys, "orig_argv", None):
        sys.stderr.write(f"edgeprof: error: {names} holds an empty or relative entry (the loader would search the "
                         f"working folder for libraries): refused — give absolute folders only\n")
        sys.exit(2)
    sys.stderr.write(f"edgeprof: warning: {names} holds an empty or relative entry (the loader would search the "
                     f"working folder for libraries): started again without it\n")
    sys.stderr.flush()
    clean[RESTARTED] = "1"
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], clean)


def location() -> str:
    """The folder holding the ``edgeprof`` package this process runs (not resolved: a copy made of links stays
    that copy)."""
    import edgeprof

    return os.path.dirname(os.path.abspath(next(iter(edgeprof.__path__))))


def python_argv(module: str, *args, python: str | None = None) -> list[str]:
    """The command line running ``module`` (``edgeprof.server.worker``, …) as ``__main__`` in an
    isolated interpreter, with this process's edgeprof first on its path."""
    return [python or sys.executable, "-I", "-B", "-u", "-c", BOOT, location(), "-m", module, *map(str, args)]


def environment(extra: dict | None = None) -> dict[str, str]:
    """The allow-listed part of this process's environment, plus ``extra``; library search paths of absolute
    folders only (see the module docstring)."""
    named = {n.strip() for n in os.environ.get("EDGEPROF_PASS_ENV", "").split(",") if n.strip()}
    env = {k: v for k, v in os.environ.items() if k in NAMES or k in named or k.startswith(PREFIXES)}
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    return without_relative_libraries(env)


def private_folder(prefix: str = "edgeprof-child-") -> str:
    """A new folder only this user can enter (0700), under ``TMPDIR`` (named, not probed: :mod:`tempfile`'s probe
    would write a file in the current folder when no temporary folder is usable)."""
    import tempfile

    base = os.environ.get("TMPDIR") or "/tmp"
    return tempfile.mkdtemp(prefix=prefix, dir=base if os.path.isdir(base) else None)


def remove_folder(folder: str | None) -> None:
    if folder:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


class Child(subprocess.Popen):
    """A started child. ``own_folder``: the working folder made for it, removed by :meth:`release` (after the
    child has ended)."""

    own_folder: str | None = None

    def release(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(OSError):
                self.kill()
            self.wait()
        remove_folder(self.own_folder)
        self.own_folder = None


def start(argv, *, cwd=None, env: dict | None = None, **popen) -> Child:
    """Start ``argv`` under the rule: the allow-listed environment plus ``env``; in ``cwd`` when the caller names
    the folder (a launch folder, a folder it made for the child), else in a private folder made here and removed
    by :meth:`Child.release`. Python children are started with :func:`python_argv`."""
    own = None
    if cwd is None:
        own = cwd = private_folder()
    try:
        proc = Child([str(a) for a in argv], env=environment(env), cwd=str(cwd), close_fds=True, **popen)
    except BaseException:
        remove_folder(own)
        raise
    proc.own_folder = own
    return proc


def run(argv, *, timeout: float, env: dict | None = None, cwd=None, text: bool = True) -> subprocess.CompletedProcess:
    """Run ``argv`` to its end (as :func:`subprocess.run` with ``capture_output``), started by :func:`start`;
    :class:`subprocess.TimeoutExpired` once ``timeout`` seconds passed (the child killed)."""
    proc = start(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=text)
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    finally:
        proc.release()
