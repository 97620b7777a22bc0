"""Collection: run models and write the run folder the analysis reads.

This layer drives runtimes and devices and nothing else — across process boundaries only: the ExecuTorch
Python runtime in a worker process of its own (:mod:`.worker`, the only module that imports executorch or
torch), ``executor_runner``-style binaries, and Android devices through ``adb``. It plans (:mod:`.config`,
:mod:`.plan`), runs commands with timeouts (:mod:`.execute`) and records the machine (:mod:`.fingerprint`).
Reading what a launch wrote, the manifest and the report are the API's (:mod:`edgeprof.api.run`).
"""
