"""Which execution provider an ONNX Runtime session assigns each node of a model, without running it.

ONNX Runtime records the assignment when a session is made with the config entry
``session.record_ep_graph_assignment_info`` and hands it back through
``InferenceSession.get_provider_graph_assignment_info()`` (one entry per assigned subgraph: its provider and
nodes). The names are the model's own node names as partitioning saw them — before the providers' layout
transformations, whose renamed nodes (``…_nchwc``) appear in profiles only.

The session is made in a child process started by :mod:`edgeprof.child` (an isolated interpreter, no inherited
environment): a model the runtime cannot load fails there, and comes back as one line naming the file. Needs the
``ort`` extra (``onnxruntime``); a provider the installed build lacks is refused by name.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import InputError, MissingExtraError, UsageError

TIMEOUT_S = 300.0
CONFIG_KEY = "session.record_ep_graph_assignment_info"


def assignment(path, providers: list[str] | None = None) -> dict:
    """``{"providers": [...], "available": [...], "assigned": {node name: provider}, "subgraphs": n}`` of the
    session ONNX Runtime makes for ``path`` with ``providers`` (CPUExecutionProvider last, as its fallback)."""
    import importlib.util

    from .. import child

    if importlib.util.find_spec("onnxruntime") is None:
        raise MissingExtraError("ort", "placing an ONNX model on execution providers")
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such ONNX model")
    provs = list(providers or [])
    if "CPUExecutionProvider" not in provs:
        provs.append("CPUExecutionProvider")
    argv = child.python_argv("edgeprof.io.ort_assignment", str(path.resolve()), ",".join(provs))
    try:
        done = child.run(argv, timeout=TIMEOUT_S)
    except Exception as e:  # a timeout or a child that could not start
        raise InputError(path, f"ONNX Runtime could not make a session ({type(e).__name__})") from None
    if done.returncode != 0:
        lines = [x for x in (done.stderr or "").strip().splitlines() if x.strip()]
        last = lines[-1] if lines else f"exit status {done.returncode}"
        if last.startswith("UNAVAILABLE "):
            raise UsageError(last[len("UNAVAILABLE "):])
        raise InputError(path, f"ONNX Runtime could not make a session: {last[:300]}")
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise InputError(path, "ONNX Runtime's assignment could not be read") from None


def _main(model: str, providers: str) -> int:  # pragma: no cover - runs in the child (tested through assignment)
    import onnxruntime as ort

    wanted = [p for p in providers.split(",") if p]
    available = ort.get_available_providers()
    missing = [p for p in wanted if p not in available]
    if missing:
        print(f"UNAVAILABLE execution provider {missing[0]} is not in this onnxruntime build "
              f"(available: {', '.join(available)})", file=sys.stderr)
        return 3
    so = ort.SessionOptions()
    so.add_session_config_entry(CONFIG_KEY, "1")
    try:
        s = ort.InferenceSession(model, so, providers=wanted)
    except Exception as e:  # ORT raises its own exception types
        print(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 1
    assigned: dict[str, str] = {}
    subgraphs = s.get_provider_graph_assignment_info()
    for sg in subgraphs:
        for n in sg.get_nodes():
            assigned[n.name] = sg.ep_name
    print(json.dumps({"providers": s.get_providers(), "available": available, "assigned": assigned,
                      "subgraphs": len(subgraphs)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_main(sys.argv[1], sys.argv[2]))
