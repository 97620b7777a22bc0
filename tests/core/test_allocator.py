"""Polars' allocator is told to give freed pages back at once (the peak memory of large reads), unless the user set it."""

import os
import subprocess
import sys

OURS = "dirty_decay_ms:0,muzzy_decay_ms:0"

# RSS (MB) before, while a 400 MB Polars column lives, and right after it is dropped
PROBE = """
import os, edgeprof, polars as pl
def rss():
    return int(next(l for l in open('/proc/self/status') if l.startswith('VmRSS')).split()[1]) // 1024
before = rss()
s = pl.int_range(0, 50_000_000, eager=True)
held = rss()
del s
print(os.environ.get('_RJEM_MALLOC_CONF'), before, held, rss())
"""


def _probe(env_value):
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    if env_value is not None:
        env["_RJEM_MALLOC_CONF"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True).stdout
    conf, *mb = out.split()
    return conf, [int(x) for x in mb]


def test_freed_polars_memory_goes_back_at_once():
    conf, (before, held, after) = _probe(None)
    assert conf.endswith(OURS)  # Polars puts its own defaults first; the last setting wins
    assert held - before >= 350  # the column was resident …
    assert after - before < 50  # … and its pages were returned when it was dropped, not seconds later


def test_a_users_allocator_setting_is_kept():
    conf, _ = _probe("dirty_decay_ms:5000")
    assert conf.endswith("dirty_decay_ms:5000") and OURS not in conf
