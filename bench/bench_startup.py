"""``edgeprof [cmd] --help`` start-up time beside its anchor, ``python -c "import click"`` (best of 7 fresh
processes each; the difference is what edgeprof adds).

    python bench/bench_startup.py

The tests count what ``--help`` imports instead (tests/core/test_layout.py): wall time is for benchmarks."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def wall(args: list[str], n: int = 7) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    base = wall([sys.executable, "-c", "import click"])
    anchor = 'python -c "import click" (anchor)'
    print(f"{anchor:36s} {base:6.3f} s")
    for cmd in ([], ["compare"], ["report"], ["ane"], ["analyze"], ["history"]):
        t = wall([sys.executable, "-m", "edgeprof", *cmd, "--help"])
        print(f"{'edgeprof ' + ' '.join(cmd + ['--help']):36s} {t:6.3f} s  ({t - base:+.3f} s, {t / base:.2f}× the anchor)")


if __name__ == "__main__":
    main()
