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


def second_block_attaches_differently(monkeypatch) -> list[int]:
    """From now on the second block a workspace attaches an ETRecord to comes out with an extra warning (its
    outcome differs from the first block's); returns the event counts of the blocks attached, in order."""
    import dataclasses

    from edgeprof.io.workspace import Workspace

    real, seen = Workspace._with_etrecord, []

    def second_differs(self, path, prof, **kw):
        out = real(self, path, prof, **kw)
        seen.append(prof.n_events)
        if len(seen) == 2:
            out = dataclasses.replace(out, warnings=[*out.warnings, "this block attached differently"])
        return out

    monkeypatch.setattr(Workspace, "_with_etrecord", second_differs)
    return seen
