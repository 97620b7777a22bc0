"""The launch schedule: every configuration (experiment × thread count) launched K times, as separate processes,
interleaved — each round runs every configuration once, in a seeded random order — so drift over the session
hits every arm alike. Files follow the Arm kit's layout with the launch index added:
``<run_dir>/<experiment>/<model>_<experiment>_t<T>_l<k>.etdump`` (``<experiment>_t<T>_l<k>`` when the model
file is named like the experiment; ``….ort.json`` for an ONNX model, ONNX Runtime's profile; ``….litert.csv`` for a
LiteRT model, its runs' latencies), its ``_latency.log``
and, in xnntrace mode, ``_xnntrace.log``.

``--overhead-check`` adds launches without ETDump (``…_l<k>_noetdump_latency.log``) to the first rounds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from .config import CollectionConfig, Experiment

OVERHEAD_LAUNCHES = 2  # per configuration, with --overhead-check


@dataclass(frozen=True)
class Launch:
    position: int          # 1-based place in the schedule
    round: int             # 1-based round
    experiment: Experiment
    threads: int
    launch: int            # 1-based launch index of this configuration
    folder: Path
    stem: str              # file prefix
    etdump_on: bool = True  # False: an overhead-check launch (no ETDump)

    @property
    def config_key(self) -> str:
        return f"{self.experiment.name}_t{self.threads}"

    @property
    def label(self) -> str:
        return f"{self.experiment.name} t{self.threads} launch {self.launch}" + ("" if self.etdump_on else " (no ETDump)")

    @property
    def etdump(self) -> Path | None:
        """The profile this launch records: an ETDump, or ONNX Runtime's profile for an ONNX model."""
        if not self.etdump_on or self.experiment.mode != "timing":
            return None
        from ..runtimes import runtime

        return self.folder / (self.stem + (runtime(self.experiment.runtime).profile_tail or ".etdump"))

    @property
    def log(self) -> Path:
        return self.folder / f"{self.stem}{'' if self.etdump_on else '_noetdump'}_latency.log"

    @property
    def xnntrace(self) -> Path | None:
        return self.folder / f"{self.stem}_xnntrace.log" if self.experiment.mode == "xnntrace" else None

    def outputs(self) -> list[Path]:
        return [p for p in (self.etdump, self.log, self.xnntrace) if p is not None]


def stem_of(exp: Experiment, threads: int, launch: int) -> str:
    model = exp.model.stem
    head = exp.name if model == exp.name else f"{model}_{exp.name}"
    return f"{head}_t{threads}_l{launch}"


def schedule(cfg: CollectionConfig, run_dir: Path, *, overhead_check: bool = False) -> list[Launch]:
    """Launches in the order they run."""
    rng = random.Random(cfg.seed)
    rounds = max(e.launches for e in cfg.experiments)
    out: list[Launch] = []
    for r in range(1, rounds + 1):
        batch = [(e, t, r, True) for e in cfg.experiments for t in e.threads if r <= e.launches]
        if overhead_check:
            batch += [(e, t, r, False) for e in cfg.experiments for t in e.threads
                      if e.mode == "timing" and r <= min(OVERHEAD_LAUNCHES, e.launches)]
        rng.shuffle(batch)
        for e, t, k, on in batch:
            out.append(Launch(len(out) + 1, r, e, t, k, run_dir / e.name, stem_of(e, t, k), on))
    return out
