"""Coverage in the `python -m edgeprof` processes a test starts, while the mutation tool maps tests to lines: the
lines such a process runs are recorded under the test that started it (its node id comes in
$EDGEPROF_MUTATION_CONTEXT, set by contexts.py), so a test that checks a command's output is mapped to the code
behind it; its children measure the same way through coveragerc. On the path only during the map
(tools/mutation/run.py); inert without its variables."""

import os

_ctx, _data = os.environ.get("EDGEPROF_MUTATION_CONTEXT"), os.environ.get("EDGEPROF_MUTATION_SUBCOV")
if _ctx and _data and not os.environ.get("COVERAGE_PROCESS_START"):  # (else coverage's own hook measures already)
    import atexit

    import coverage

    _cov = coverage.Coverage(data_file=_data, data_suffix=True, context=_ctx, config_file=False,
                             include=[p for p in os.environ.get("EDGEPROF_MUTATION_INCLUDE", "").split(",") if p] or None)
    # silent: a process that runs none of the measured code (a faked device's script) says nothing about it
    _cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-imported", "module-not-measured",
                                              "already-imported", "couldnt-parse", "no-ctracer"])
    _cov.start()
    # the children this process starts are isolated (edgeprof.child): they measure through coverage's start-up hook
    os.environ["COVERAGE_PROCESS_START"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coveragerc")

    def _save() -> None:
        _cov.stop()
        _cov.save()

    atexit.register(_save)
