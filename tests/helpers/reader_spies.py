"""Spies on the ETDump reader for tests that bound memory by counting what is built."""

from __future__ import annotations


def built_blocks(monkeypatch) -> list[int]:
    """The event count of every block the reader normalizes from now on (``build_profile`` calls), in order."""
    from edgeprof.io import etdump as etdump_mod

    built: list[int] = []
    real = etdump_mod.build_profile

    def spy(dec, *a, **k):
        p = real(dec, *a, **k)
        built.append(p.n_events)
        return p

    monkeypatch.setattr("edgeprof.io.etdump_read.build_profile", spy)
    return built
