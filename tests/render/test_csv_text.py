"""Text written by the compiled core (edgeprof._core: csv_rows, trace_lines, fmt_f64) against its oracle, Polars'
writer: numbers at every magnitude and bit pattern, random tables of every column type the core writes (nulls,
quotes, line breaks, spreadsheet formulas, in the header too), tables it hands to Polars, hostile arguments, and
every table and trace the commands write from the recordings in tests/data by both paths (EDGEPROF_CORE=c, =python)."""

from __future__ import annotations

import io
import json
import random
import shutil

import numpy as np
import polars as pl
import pytest
from testdata import DATA, ETRECORD_MODELS, need_core

from edgeprof.columns import Columns, from_series
from edgeprof.conventions import CORE_ENV
from edgeprof.render import csv_text
from edgeprof.render.csv_text import guarded_text


@pytest.fixture(autouse=True)
def _core():
    need_core()


def _polars(df: pl.DataFrame, header: bool = True) -> bytes:
    out = io.BytesIO()
    guarded_text(df).write_csv(out, include_header=header, null_value="")
    return out.getvalue()


def _core_text(df: pl.DataFrame, header: bool = True) -> bytes:
    out = io.BytesIO()
    csv_text.write_csv(df, out, header=header)
    return out.getvalue()


def _doubles(rng: np.random.Generator, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        powers = 10.0 ** np.arange(-330, 310).astype(float)
        parts = [
            rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64),  # any bit pattern: NaNs, subnormals, huge
            rng.integers(-10**15, 10**15, n) / 10.0 ** rng.integers(0, 18, n),  # integers over powers of ten
            np.round(rng.random(n) * 100, 6), rng.integers(0, 10**13, n) / 1e3,  # percentages, ns as µs
            rng.random(n) * 10.0 ** rng.integers(-330, 310, n),
            powers, np.nextafter(powers, 0), np.nextafter(powers, np.inf),  # every layout boundary and its neighbours
            np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -5e-324, 2.2250738585072014e-308,
                      1.7976931348623157e308, 1e-5, 9.999999999999999e-6, 1e16, 9999999999999998.0, 0.1, 1 / 3]),
        ]
    return np.concatenate(parts)


def test_floats_print_as_polars_prints_them():
    x = _doubles(np.random.default_rng(52), 60_000)
    df = pl.DataFrame({"x": x})
    assert _core_text(df) == _polars(df)
    from edgeprof import _core

    lines = _polars(df, header=False).split(b"\n")
    for v, want in zip(x[-16:].tolist(), lines[-17:-1]):  # one value at a time, too
        assert _core.fmt_f64(v) == want


_TEXT = ["", "a", "a,b", 'say "hi"', "two\nlines", "cr\rhere", " lead", "tab\there", "=1+2", "+49 123", "-5", "-5\n",
         "@SUM(A1)", "'quoted", "=cmd|' /C calc'!A0", "1e5", "-", "é", "日本", "a;b", "\t=x", "''=y", "0.5", ".5"]
_TYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64, pl.Float64, pl.Boolean,
          pl.String, pl.Categorical, pl.Null]


def _column(rng: random.Random, dtype, n: int) -> pl.Series:
    if dtype == pl.Null:
        return pl.Series([None] * n, dtype=pl.Null)
    if dtype == pl.Float64:
        vals = _doubles(np.random.default_rng(rng.randrange(1 << 30)), 8)
        v = [float(rng.choice(vals)) for _ in range(n)]
    elif dtype == pl.Boolean:
        v = [rng.random() < 0.5 for _ in range(n)]
    elif dtype in (pl.String, pl.Categorical):
        v = [rng.choice(_TEXT) + (rng.choice(_TEXT) if rng.random() < 0.3 else "") for _ in range(n)]
    else:
        info = np.iinfo(np.dtype(str(dtype).lower()))
        top = min(int(info.max), 2**63 - 1)  # UInt64 past Int64 goes to Polars (the test after this one)
        v = [rng.randint(int(info.min), top) if rng.random() < 0.5 else rng.randint(-3, 3) % (top + 1)
             for _ in range(n)]
    v = [None if rng.random() < 0.15 else x for x in v]
    return pl.Series(v, dtype=dtype, strict=False)


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_write_the_same_bytes_as_polars(seed, monkeypatch):
    rng = random.Random(seed)
    monkeypatch.setattr(csv_text, "ROWS_PER_CALL", rng.choice([1, 7, 64, 32768]))  # rows split across calls
    n = rng.choice([0, 1, 2, 50, 300])
    names = rng.sample(["a", "b,c", 'q"', "=x", "line\nbreak", "", "é", "-1", "name", "start_us"], rng.randint(1, 8))
    df = pl.DataFrame([_column(rng, rng.choice(_TYPES), n).alias(c) for c in names])
    assert csv_text.columns(df) is not None
    plain = Columns({c: from_series(df[c]) for c in df.columns})  # the same table as plain columns (the timelines')
    assert csv_text.plain_columns(plain) is not None
    for header in (True, False):
        want = _polars(df, header)
        assert _core_text(df, header) == want, df
        assert _core_text(plain, header) == want, df
        assert _polars(plain.to_polars(), header) == want, df


def test_the_guard_of_the_tables_is_the_conventions_rule():
    """The spreadsheet guard as the tables apply it (one Polars expression per column) and as
    :func:`edgeprof.conventions.csv_cell` states it give every cell the same text ("-5" is a number, "-5\\n" is not)."""
    from edgeprof.conventions import csv_cell

    values = _TEXT + [a + b for a in _TEXT for b in ("\n", "x", "1")]
    shown = guarded_text(pl.DataFrame({"v": values})).to_series().to_list()
    assert shown == [csv_cell(v) for v in values]


@pytest.mark.parametrize("series", [
    pl.Series("f32", [1.1, None, 3e-7], dtype=pl.Float32),
    pl.Series("big", [2**64 - 1, 1, None], dtype=pl.UInt64),
    pl.Series("day", [0, 1, None], dtype=pl.Int32).cast(pl.Date),
])
def test_types_the_core_does_not_write_go_to_polars(series):
    df = pl.DataFrame([series, pl.Series("x", [1.5, None, -0.0])])
    assert csv_text.columns(df) is None
    assert _core_text(df) == _polars(df)
    plain = Columns({c: from_series(df[c]) for c in df.columns})
    assert csv_text.plain_columns(plain) is None
    assert _core_text(plain) == _polars(df)


def test_the_core_writes_into_one_reused_buffer():
    """Given a bytearray the core writes into it from its start (growing it, never shrinking it) and returns the count:
    the same bytes as the call that returns them, for CSV rows and trace lines; a buffer still viewed cannot grow."""
    from edgeprof import _core

    rng = random.Random(7)
    df = pl.DataFrame([_column(rng, t, 300).alias(str(i)) for i, t in enumerate([pl.Int64, pl.Float64, pl.String])])
    cols = csv_text.columns(df)
    buf = bytearray()
    sizes = []
    for a, b in ((0, 300), (5, 6), (100, 300), (7, 7)):
        n = _core.csv_rows(cols, a, b, buf)
        assert bytes(buf[:n]) == _core.csv_rows(cols, a, b)
        sizes.append(len(buf))
    assert sizes == sorted(sizes) and sizes[0] >= 300 * 3  # kept from call to call
    z = np.arange(4, dtype=np.int64)
    args = (b",", [b"{a", b"{b"], np.array([0, 1, 1, 0], np.uint32), z, z * 1000, z, z, z, z - 1,
            np.array([0, 1, 0, 1], np.uint8), z, z)
    n = _core.trace_lines(*args, buf)
    assert bytes(buf[:n]) == _core.trace_lines(*args)
    small = bytearray(8)
    with memoryview(small), pytest.raises(BufferError):
        _core.csv_rows(cols, 0, 300, small)
    with pytest.raises(TypeError, match="bytearray"):
        _core.csv_rows(cols, 0, 3, b"")


def test_hostile_arguments_are_refused():
    from edgeprof import _core

    n = np.arange(3, dtype=np.int64)
    codes = np.array([0, 1, 2], dtype=np.uint32)
    with pytest.raises(ValueError, match="no cell"):
        _core.csv_rows([(3, codes, None, [b"a", b"b"])], 0, 3)
    with pytest.raises(ValueError):  # a column shorter than the rows asked for
        _core.csv_rows([(0, n, None, None)], 0, 4)
    with pytest.raises(ValueError):  # a mask shorter than the rows
        _core.csv_rows([(0, n, np.zeros(2, np.uint8), None)], 0, 3)
    with pytest.raises(TypeError):
        _core.csv_rows([(3, codes, None, ["a", "b", "c"])], 0, 3)
    with pytest.raises(ValueError):
        _core.csv_rows([(9, n, None, None)], 0, 3)
    with pytest.raises(ValueError):
        _core.csv_rows([(0, n, None, None)], 2, 1)
    with pytest.raises(ValueError):  # int64 data where float64's 8 bytes are fine, but int32 is not
        _core.csv_rows([(0, n.astype(np.int32), None, None)], 0, 3)
    assert _core.csv_rows([(0, n, None, None), (4, None, None, None)], 0, 3) == b"0,\n1,\n2,\n"
    z = np.zeros(2, np.int64)
    with pytest.raises(ValueError, match="no prefix"):
        _core.trace_lines(b",", [b"{"], np.array([0, 1], np.uint32), z, z, z, z, z, z, np.zeros(2, np.uint8), z, z)
    with pytest.raises(ValueError):  # a column shorter than combo
        _core.trace_lines(b",", [b"{"], np.array([0, 0], np.uint32), z[:1], z, z, z, z, z, np.zeros(2, np.uint8), z, z)


RECORDINGS = sorted(DATA.rglob("*.etdp.gz"))


def _outputs(folder) -> dict:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            out[str(p.relative_to(folder))] = data.replace(str(folder).encode(), b"<out>")
    return out


def test_every_recording_writes_the_same_bytes_by_both_paths(tmp_path, monkeypatch):
    """analyze (CSV timelines with op types by reference and inline, ops stats, summary), breakdown's tables and
    trace, by the compiled core and by the pure-Python path (numpy walk, Polars writer)."""
    import gzip

    from edgeprof import api

    assert len(RECORDINGS) >= 20
    checked = 0
    for i, gz in enumerate(RECORDINGS):
        src = tmp_path / "in" / str(i)
        src.mkdir(parents=True)
        f = src / gz.name[: -len(".gz")]
        f.write_bytes(gzip.decompress(gz.read_bytes()))
        model = gz.name.split(".")[0]
        rec = DATA / "etrecord" / f"{model}.etrecord"
        kw = {"etrecord": rec} if model in ETRECORD_MODELS else {}
        got = {}
        for walk in ("c", "python"):
            monkeypatch.setenv(CORE_ENV, walk)
            out = tmp_path / walk
            shutil.rmtree(out, ignore_errors=True)
            api.analyze([f], output_dir=out / "a", jobs=1, **kw)
            api.analyze([f], output_dir=out / "i", jobs=1, op_types="inline", **kw)
            api.breakdowns([f], write=True, output_dir=out / "b", **kw)
            api.trace(f, out=out / "t.json", **kw)
            got[walk] = _outputs(out)
        assert got["c"].keys() == got["python"].keys()
        assert any(k.endswith("_all_runs_timeline.csv") for k in got["c"]), got["c"].keys()
        for k in got["c"]:
            assert got["c"][k] == got["python"][k], (gz.name, k)
        json.loads(got["c"]["t.json"])
        checked += 1
    assert checked == len(RECORDINGS)
