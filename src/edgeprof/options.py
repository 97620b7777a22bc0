"""The options of the commands that compare, defined once: name, default and help of each, and which command
takes which. The CLI makes its options from these records (:func:`edgeprof.cli._base.options_of`), the api's
keyword defaults are their defaults, and the MCP tools' argument descriptions are their help
(:data:`edgeprof.server.tools.ARGS`); ``tests/core/test_options.py`` holds the three surfaces to them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .conventions import LEVEL, PERCENT_LEVEL, PERCENT_THRESHOLD, THRESHOLD


@dataclass(frozen=True)
class Option:
    name: str              # the api keyword (and the MCP argument)
    flag: str              # the CLI flag
    default: object        # the api default
    help: str
    kind: str = "text"     # fraction · int · text · flag · path · launch_cv · metric · warmup
    shown: object = None   # the default as the CLI writes it (None: ``default``)
    lower: float = 0.0     # fractions: the smallest value accepted
    upper: float = 1.0     # fractions: the bound a value stays below
    dest: str | None = None  # the CLI's parameter name where it differs from ``name``
    required: bool = False

    @property
    def cli_default(self):
        return self.default if self.shown is None else self.shown


THRESHOLD_OPTION = Option("threshold", "--threshold", THRESHOLD,
                          "δ: the smallest change that matters (2% or 0.02); sets the verdict and --fail-on.",
                          "fraction", PERCENT_THRESHOLD)
LEVEL_OPTION = Option("level", "--level", LEVEL, "Confidence level of the intervals (95% or 0.95).", "fraction",
                      PERCENT_LEVEL, lower=0.5)
WARMUP = Option("warmup", "--warmup", "auto",
                "Warm-up runs to leave out per launch: 'auto' (detected) or a number (0 keeps all).", "warmup")
METRIC = Option("metric", "--metric", "median",
                "What the verdict and --fail-on are about: median, mean, p90 or p99 (median_ms… accepted).", "metric")
LAUNCH_CV = Option("launch_cv", "--launch-cv", None,
                   "Launch-to-launch SD assumed where the arms cannot measure it (one launch per arm): 'auto' takes "
                   "it from --store, else the noise.json that edgeprof run/plan wrote beside the inputs, else the "
                   "default 25 % (calibrated on noisy real machines); or give one (15% or 0.15); 0 = none (the "
                   "interval is then about these launches only).", "launch_cv", "auto")
STORE = Option("store", "--store", None,
               "A history store (DuckDB file or Parquet folder) whose launches of the same device tell the "
               "launch-to-launch noise (with --launch-cv auto).", "path", dest="noise_store")
ALLOW_DIFFERENT = Option("allow_different", "--allow-different", False,
                         "Compare even when the arms recorded a different device or thread count besides what is "
                         "under test (the verdict is otherwise not_comparable).", "flag")
CATEGORIES = Option("categories", "--categories/--no-categories", True,
                    "Also compare by operator category and operator (needs ETDumps or timeline CSVs).", "flag")
SEED = Option("seed", "--seed", 0, "Bootstrap seed (results are deterministic).", "int")
RESAMPLES = Option("resamples", "--resamples", 2000, "Bootstrap resamples (100–100,000).", "int", lower=100,
                   upper=100000)
RUN_DIR = Option("run_dir", "--run-dir", None, "Run folder holding the experiments.", "path")
THREADS = Option("threads", "--threads", None, "Only runs with this thread count.", "int")
EFFECT = Option("effect", "--effect", None, "The change to resolve: 3% or 0.03.", "text", required=True)
POWER = Option("power", "--power", 0.80, "The probability of resolving the effect (80% or 0.8).", "fraction", "80%",
               lower=0.5, upper=0.995)

# history: what selects a series and how its changes are judged (its output options — --html, --markdown, --json,
# --last, --fail-on — are the CLI's own)
HISTORY_STORE = Option("store", "--store", None, "History store: a DuckDB file (history.duckdb) or DIR/ for a "
                       "Hive-partitioned Parquet dataset.", "path", required=True)
MODEL = Option("model", "--model", None, "Only this model's series.")
EXPERIMENT = Option("experiment", "--experiment", None, "Only this experiment's series.")
DEVICE = Option("device", "--device", None, "Only this device's series.")
BRANCH = Option("branch", "--branch", None, "Only launches of this branch.")
SERIES_METRIC = Option("metric", "--metric", "median_ms",
                       "The series' metric: median_ms, p90_ms, mean_ms, category:NAME (e.g. category:GEMM), "
                       "op:NAME (an operator type), or memory recorded by edgeprof run: peak_rss (a launch's "
                       "largest peak resident set), rss, pss, each also per phase (peak_rss:load).")
EAGER = Option("eager", "--eager", False,
               "Report changes at the newest commits without waiting for two more commits.", "flag")
SINCE = Option("since", "--since", None, "--fail-on considers changes at or after this commit (or ISO time).")
# options that share a name across commands but are a different quantity (the test of one meaning skips them)
DISTINCT = {"metric": "compare's is a statistic of the latency (median, p90…); history's names the series"}

COMMANDS: dict[str, tuple[Option, ...]] = {
    # compare, and latency --compare (which makes the same comparison)
    "compare": (THRESHOLD_OPTION, LEVEL_OPTION, WARMUP, METRIC, LAUNCH_CV, STORE, ALLOW_DIFFERENT, CATEGORIES, SEED,
                RESAMPLES, RUN_DIR, THREADS),
    "plan": (EFFECT,
             replace(THRESHOLD_OPTION, help="Resolve beyond this δ: compare's verdict threshold (the same default), "
                                            "so the promised power is the power of compare's verdict; 0 = resolve "
                                            "'not the same'."),
             POWER, LEVEL_OPTION, RUN_DIR, THREADS, LAUNCH_CV, STORE),
    "history": (HISTORY_STORE, MODEL, EXPERIMENT, DEVICE,
                replace(THREADS, help="Only launches with this thread count."), BRANCH, SERIES_METRIC,
                replace(THRESHOLD_OPTION, upper=10.0,
                        help="δ: the smallest relative change that counts as a change (2% or 0.02); sets --fail-on."),
                EAGER,
                replace(LAUNCH_CV, help="Launch-to-launch SD to use (15% or 0.15); 'auto': measured — the series' "
                                        "commits with several launches, else the store's repeated launches on the "
                                        "device, else the series' commit-to-commit spread, else 25 %."),
                SINCE),
}


def options(command: str, *names: str) -> tuple[Option, ...]:
    """The options of ``command`` (those named, in that order, when names are given)."""
    by_name = {o.name: o for o in COMMANDS[command]}
    return tuple(by_name[n] for n in names) if names else COMMANDS[command]
