"""Loaded by every Python process of a traced server (``PYTHONPATH`` names this folder): when
``EDGEPROF_AUDIT_LOG`` is set, a Python audit hook logs every file the process opens or lists — the path as
given, its real path, and the open flags — one JSON line each, to that file (opened now, before any
confinement, and written with os.write so the hook triggers no event of its own)."""

import json
import os
import sys

_LOG = os.environ.get("EDGEPROF_AUDIT_LOG")
if _LOG:
    _fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _busy = [False]
    _EVENTS = {"open", "os.listdir", "os.scandir", "glob.glob", "os.rename", "os.remove", "os.mkdir", "os.symlink",
               "os.link", "os.truncate", "os.chmod", "shutil.rmtree", "shutil.copyfile", "os.rmdir"}

    def _hook(event, args):
        if event not in _EVENTS or _busy[0]:
            return
        _busy[0] = True
        try:
            path = args[0] if args else None
            if isinstance(path, int) or path is None:
                return
            path = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else str(path)
            flags = args[2] if event == "open" and len(args) > 2 and isinstance(args[2], int) else None
            mode = args[1] if event == "open" and len(args) > 1 and isinstance(args[1], str) else None
            rec = {"pid": os.getpid(), "event": event, "path": path, "real": os.path.realpath(path),
                   "flags": flags, "mode": mode}
            os.write(_fd, (json.dumps(rec) + "\n").encode())
        except Exception:  # the hook must never break the process it watches
            pass
        finally:
            _busy[0] = False

    sys.addaudithook(_hook)

    # edgeprof starts its Python children isolated (edgeprof.child: PYTHONPATH, and so this file, does not reach
    # them): each is given this hook in the start-up line edgeprof runs before anything else in it
    if __name__ == "sitecustomize":  # (not when run so in a child)
        try:
            from edgeprof import child as _child
        except ImportError:  # an edgeprof without that rule: its children inherit PYTHONPATH
            pass
        else:
            _start = f"exec(compile(open({__file__!r}).read(), {__file__!r}, 'exec'), {{'__name__': 'audit'}})"
            _child.BOOT = f"{_start};{_child.BOOT}"
