/* edgeprof._core: the ETDump FlatBuffer walk in C (optional; edgeprof.io.etdump_core chooses it or numpy).
 *
 * Reads hostile bytes: every position, vtable, field, vector and string is checked against the buffer before it is
 * read, in 64-bit arithmetic (a FlatBuffer is under 4 GiB, so no sum here can overflow), with the same rules as
 * the numpy reader (edgeprof.io.flatbuf), which stays the oracle. A bad input raises edgeprof._core.Corrupt with
 * (byte offset in the buffer, message); nothing is read outside the buffer whatever the input.
 *
 * Outputs go into writable buffers the caller allocated (numpy arrays), so this module needs no numpy headers:
 *   walk_events(buf, base, vec_refs, ev_pos, ev_run, kind, payload) -> (n_events, n_empty, n_ambiguous)
 *   profile_events(buf, base, pe_pos, name_ref, chain, instr, dd_int, dd_str_ref, meta_ref, start, end)
 *   intern(buf, base, refs, codes) -> [bytes of each distinct string, in order of first appearance]
 * (base: the buffer's offset in its file, for the byte offsets messages name)
 * and writes rows of text straight from column buffers (edgeprof.render.fast_text; Polars writes the same bytes):
 *   csv_rows(columns, start, stop[, out]) -> bytes of CSV rows start..stop
 *   trace_lines(lead, prefixes, combo, tid, ts, dur, ev, run, parent, adj, rts, rdur[, out]) -> bytes of trace slices
 *   (given a bytearray `out`, both write into it from its start, growing it as needed, and return the byte count)
 * and groups integer columns (edgeprof._ids; numpy is the oracle): dense(values, out) -> k, first_rows(ids, out)
 * Logical layouts: int64 for positions, int32 / uint64 for fields, int8 for kinds (the caller checks itemsizes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_core_text.h"
#include "_core_walk.h"

static PyObject *Corrupt;

static int raise_corrupt(const ep_buf *b) {
    PyObject *args = Py_BuildValue("(Ls)", (long long)b->err_off, b->msg);
    if (args) {
        PyErr_SetObject(Corrupt, args);
        Py_DECREF(args);
    }
    return -1;
}

/* A buffer argument of at least `n` items of `itemsize` bytes (writable when `w`). */
static int get(PyObject *o, Py_buffer *v, int w, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (PyObject_GetBuffer(o, v, (w ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (v->itemsize != itemsize || v->len < n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: want %zd items of %zd bytes", name, n, itemsize);
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* Buffers o[from..to) into v, each of at least n items of size[i] bytes (writable when w); returns the index of the
 * first that failed (an exception set), or `to`: the count of v held either way. */
static int get_rest(PyObject **o, Py_buffer *v, int from, int to, int w, const Py_ssize_t *size, const char **name,
                    Py_ssize_t n) {
    int i = from;
    for (; i < to; i++)
        if (get(o[i], &v[i], w, size[i], n, name[i]) < 0)
            break;
    return i;
}

static PyObject *walk_events(PyObject *self, PyObject *args) {
    PyObject *o[6];
    long long base;
    if (!PyArg_ParseTuple(args, "OLOOOOO", &o[0], &base, &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Py_buffer buf, refs, pos, run, kind, pay;
    if (PyObject_GetBuffer(o[0], &buf, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    PyObject *res = NULL;
    if (get(o[1], &refs, 0, 8, 0, "vec_refs") < 0)
        goto r0;
    Py_ssize_t cap = 0;
    {
        Py_buffer t;
        if (PyObject_GetBuffer(o[2], &t, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto r1;
        cap = t.itemsize == 8 ? t.len / 8 : -1;
        PyBuffer_Release(&t);
        if (cap < 0) {
            PyErr_SetString(PyExc_ValueError, "ev_pos: want 8-byte items");
            goto r1;
        }
    }
    if (get(o[2], &pos, 1, 8, cap, "ev_pos") < 0)
        goto r1;
    if (get(o[3], &run, 1, 8, cap, "ev_run") < 0)
        goto r2;
    if (get(o[4], &kind, 1, 1, cap, "kind") < 0)
        goto r3;
    if (get(o[5], &pay, 1, 8, cap, "payload") < 0)
        goto r4;
    {
        ep_buf b = {.b = (const uint8_t *)buf.buf, .n = (int64_t)buf.len, .base = base};
        int64_t counts[3] = {0, 0, 0};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ep_walk_events(&b, (const int64_t *)refs.buf, (int64_t)(refs.len / 8), (int64_t)cap,
                            (int64_t *)pos.buf, (int64_t *)run.buf, (int8_t *)kind.buf, (int64_t *)pay.buf, counts);
        Py_END_ALLOW_THREADS
        if (rc < 0)
            raise_corrupt(&b);
        else
            res = Py_BuildValue("(LLL)", (long long)counts[0], (long long)counts[1], (long long)counts[2]);
    }
    PyBuffer_Release(&pay);
r4:
    PyBuffer_Release(&kind);
r3:
    PyBuffer_Release(&run);
r2:
    PyBuffer_Release(&pos);
r1:
    PyBuffer_Release(&refs);
r0:
    PyBuffer_Release(&buf);
    return res;
}

static PyObject *profile_events(PyObject *self, PyObject *args) {
    PyObject *o[10];
    long long base;
    if (!PyArg_ParseTuple(args, "OLOOOOOOOOO", &o[0], &base, &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9]))
        return NULL;
    static const Py_ssize_t size[10] = {1, 8, 8, 4, 4, 4, 8, 8, 8, 8};
    static const char *name[10] = {"buf", "pe_pos", "name_ref", "chain", "instr", "dd_int", "dd_str_ref", "meta_ref",
                                   "start", "end"};
    Py_buffer v[10];
    int got = 0;
    PyObject *res = NULL;
    if (PyObject_GetBuffer(o[0], &v[0], PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    got = 1;
    if (get(o[1], &v[1], 0, 8, 0, name[1]) < 0)
        goto done;
    got = 2;
    Py_ssize_t n = v[1].len / 8;
    if ((got = get_rest(o, v, 2, 10, 1, size, name, n)) < 10)
        goto done;
    {
        ep_buf b = {.b = (const uint8_t *)v[0].buf, .n = (int64_t)v[0].len, .base = base};
        ep_pe_cols c = {(int64_t *)v[2].buf, (int32_t *)v[3].buf, (int32_t *)v[4].buf, (int32_t *)v[5].buf,
                        (int64_t *)v[6].buf, (int64_t *)v[7].buf, (uint64_t *)v[8].buf, (uint64_t *)v[9].buf};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ep_profile_events(&b, (const int64_t *)v[1].buf, (int64_t)n, &c);
        Py_END_ALLOW_THREADS
        if (rc < 0)
            raise_corrupt(&b);
        else
            res = (Py_INCREF(Py_None), Py_None);
    }
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    return res;
}

static PyObject *intern(PyObject *self, PyObject *args) {
    PyObject *ob, *orefs, *ocodes;
    long long base;
    if (!PyArg_ParseTuple(args, "OLOO", &ob, &base, &orefs, &ocodes))
        return NULL;
    Py_buffer buf, refs, codes;
    PyObject *res = NULL;
    if (PyObject_GetBuffer(ob, &buf, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (get(orefs, &refs, 0, 8, 0, "refs") < 0)
        goto r0;
    Py_ssize_t n = refs.len / 8;
    if (get(ocodes, &codes, 1, 4, n, "codes") < 0)
        goto r1;
    {
        ep_buf b = {.b = (const uint8_t *)buf.buf, .n = (int64_t)buf.len, .base = base};
        ep_strings s = {0};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ep_intern(&b, (const int64_t *)refs.buf, (int64_t)n, (int32_t *)codes.buf, &s);
        Py_END_ALLOW_THREADS
        if (rc == -2)
            PyErr_NoMemory();
        else if (rc < 0)
            raise_corrupt(&b);
        else if ((res = PyList_New((Py_ssize_t)s.n)) != NULL) {
            for (int64_t i = 0; i < s.n; i++) {
                PyObject *x = PyBytes_FromStringAndSize((const char *)b.b + s.start[i], (Py_ssize_t)s.len[i]);
                if (!x) {
                    Py_CLEAR(res);
                    break;
                }
                PyList_SET_ITEM(res, (Py_ssize_t)i, x);
            }
        }
        ep_strings_free(&s);
    }
    PyBuffer_Release(&codes);
r1:
    PyBuffer_Release(&refs);
r0:
    PyBuffer_Release(&buf);
    return res;
}

/* A growing output buffer: malloc'd, handed back as bytes; or the caller's bytearray (`ba`), grown as needed and
 * never shrunk, so one reused across calls keeps its pages (the call returns the count of bytes written). */
typedef struct {
    char *p;
    size_t n, cap;
    PyObject *ba;
} obuf;

/* Writes into `out` when it is a bytearray, else into a buffer of its own; 0, or -1 with TypeError. */
static int obuf_init(obuf *o, PyObject *out) {
    memset(o, 0, sizeof(*o));
    if (out == NULL || out == Py_None)
        return 0;
    if (!PyByteArray_Check(out)) {
        PyErr_SetString(PyExc_TypeError, "out: a bytearray");
        return -1;
    }
    o->ba = out;
    o->p = PyByteArray_AS_STRING(out);
    o->cap = (size_t)PyByteArray_GET_SIZE(out);
    return 0;
}

static int reserve(obuf *o, size_t more) {
    if (o->n + more <= o->cap)
        return 0;
    size_t cap = o->cap ? o->cap : 1 << 16;
    while (cap < o->n + more)
        cap *= 2;
    if (o->ba) {
        if (PyByteArray_Resize(o->ba, (Py_ssize_t)cap) < 0)
            return -1;
        o->p = PyByteArray_AS_STRING(o->ba);
    } else {
        char *p = realloc(o->p, cap);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        o->p = p;
    }
    o->cap = cap;
    return 0;
}

/* The result: the bytes written (own buffer, then freed) or their count (the caller's bytearray). */
static PyObject *take(obuf *o) {
    if (o->ba)
        return PyLong_FromSize_t(o->n);
    PyObject *r = PyBytes_FromStringAndSize(o->p ? o->p : "", (Py_ssize_t)o->n);
    free(o->p);
    o->p = NULL;
    return r;
}

static void obuf_free(obuf *o) {
    if (!o->ba)
        free(o->p);
    o->p = NULL;
}

enum { COL_INT = 0, COL_FLOAT = 1, COL_BOOL = 2, COL_CODES = 3, COL_NULL = 4 };

typedef struct {
    int kind;
    Py_buffer data, mask;
    int has_data, has_mask;
    PyObject *cells; /* list of bytes, for COL_CODES */
} col;

static void release_cols(col *c, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (c[i].has_data)
            PyBuffer_Release(&c[i].data);
        if (c[i].has_mask)
            PyBuffer_Release(&c[i].mask);
    }
    free(c);
}

static PyObject *csv_rows(PyObject *self, PyObject *args) {
    PyObject *spec, *out = NULL;
    Py_ssize_t start, stop;
    obuf o;
    if (!PyArg_ParseTuple(args, "Onn|O", &spec, &start, &stop, &out) || obuf_init(&o, out) < 0)
        return NULL;
    PyObject *seq = PySequence_Fast(spec, "columns: a sequence of (kind, data, mask, cells)");
    if (!seq)
        return NULL;
    Py_ssize_t nc = PySequence_Fast_GET_SIZE(seq);
    col *c = calloc((size_t)(nc ? nc : 1), sizeof(col));
    PyObject *res = NULL;
    Py_ssize_t ready = 0;
    if (!c) {
        PyErr_NoMemory();
        goto out;
    }
    if (start < 0 || stop < start) {
        PyErr_SetString(PyExc_ValueError, "csv_rows: bad row range");
        goto out;
    }
    static const Py_ssize_t width[4] = {8, 8, 1, 4};
    for (; ready < nc; ready++) {
        PyObject *d, *m;
        col *k = &c[ready];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, ready), "iOOO", &k->kind, &d, &m, &k->cells))
            goto out;
        if (k->kind < COL_INT || k->kind > COL_NULL) {
            PyErr_SetString(PyExc_ValueError, "csv_rows: unknown column kind");
            goto out;
        }
        if (k->kind != COL_NULL) {
            if (get(d, &k->data, 0, width[k->kind], stop, "column") < 0)
                goto out;
            k->has_data = 1;
        }
        if (m != Py_None) {
            if (get(m, &k->mask, 0, 1, stop, "mask") < 0)
                goto out;
            k->has_mask = 1;
        }
        if (k->kind == COL_CODES && !PyList_Check(k->cells)) {
            PyErr_SetString(PyExc_TypeError, "csv_rows: codes need a list of bytes cells");
            goto out;
        }
    }
    /* room for a whole row, reserved once per row: numbers take at most EP_NUM_MAX bytes, text its longest cell */
    size_t row_max = 1;
    for (Py_ssize_t i = 0; i < nc; i++) {
        size_t w = EP_NUM_MAX;
        if (c[i].kind == COL_CODES)
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(c[i].cells); j++) {
                PyObject *cell = PyList_GET_ITEM(c[i].cells, j);
                if (!PyBytes_Check(cell)) {
                    PyErr_SetString(PyExc_TypeError, "csv_rows: cells must be bytes");
                    goto out;
                }
                if ((size_t)PyBytes_GET_SIZE(cell) > w)
                    w = (size_t)PyBytes_GET_SIZE(cell);
            }
        row_max += w + 1;
    }
    if (reserve(&o, (size_t)(stop - start) * (row_max < 256 ? row_max / 2 : 128)) < 0)
        goto out;
    for (Py_ssize_t r = start; r < stop; r++) {
        if (reserve(&o, row_max) < 0)
            goto out;
        for (Py_ssize_t i = 0; i < nc; i++) {
            col *k = &c[i];
            if (i)
                o.p[o.n++] = ',';
            if (k->kind == COL_NULL || (k->has_mask && ((const uint8_t *)k->mask.buf)[r]))
                continue;
            switch (k->kind) {
            case COL_INT:
                o.n += ep_fmt_i64(o.p + o.n, ((const int64_t *)k->data.buf)[r]);
                break;
            case COL_FLOAT:
                o.n += ep_fmt_f64(o.p + o.n, ((const double *)k->data.buf)[r]);
                break;
            case COL_BOOL:
                if (((const uint8_t *)k->data.buf)[r]) {
                    memcpy(o.p + o.n, "true", 4);
                    o.n += 4;
                } else {
                    memcpy(o.p + o.n, "false", 5);
                    o.n += 5;
                }
                break;
            default: {
                uint32_t code = ((const uint32_t *)k->data.buf)[r];
                if ((Py_ssize_t)code >= PyList_GET_SIZE(k->cells)) {
                    PyErr_Format(PyExc_ValueError, "csv_rows: code %u has no cell", code);
                    goto out;
                }
                PyObject *cell = PyList_GET_ITEM(k->cells, code);
                memcpy(o.p + o.n, PyBytes_AS_STRING(cell), (size_t)PyBytes_GET_SIZE(cell));
                o.n += (size_t)PyBytes_GET_SIZE(cell);
            }
            }
        }
        o.p[o.n++] = '\n';
    }
    res = take(&o);
out:
    obuf_free(&o);
    if (c)
        release_cols(c, nc); /* flags say what each holds */
    Py_DECREF(seq);
    return res;
}

static int append(obuf *o, const char *s, size_t n) {
    if (reserve(o, n) < 0)
        return -1;
    memcpy(o->p + o->n, s, n);
    o->n += n;
    return 0;
}
#define LIT(o, s) append(o, s, sizeof(s) - 1)

static PyObject *trace_lines(PyObject *self, PyObject *args) {
    PyObject *lead, *prefixes, *ob[10], *out = NULL;
    obuf o;
    if (!PyArg_ParseTuple(args, "SO!OOOOOOOOOO|O", &lead, &PyList_Type, &prefixes, &ob[0], &ob[1], &ob[2], &ob[3],
                          &ob[4], &ob[5], &ob[6], &ob[7], &ob[8], &ob[9], &out) || obuf_init(&o, out) < 0)
        return NULL;
    static const Py_ssize_t size[10] = {4, 8, 8, 8, 8, 8, 8, 1, 8, 8};
    static const char *name[10] = {"combo", "tid", "ts", "dur", "ev", "run", "parent", "adj", "rts", "rdur"};
    Py_buffer v[10];
    int got = 0;
    PyObject *res = NULL;
    if (get(ob[0], &v[0], 0, 4, 0, name[0]) < 0)
        return NULL;
    got = 1;
    Py_ssize_t n = v[0].len / 4;
    if ((got = get_rest(ob, v, 1, 10, 0, size, name, n)) < 10)
        goto done;
    {
        const uint32_t *combo = v[0].buf;
        const int64_t *tid = v[1].buf, *ts = v[2].buf, *dur = v[3].buf, *ev = v[4].buf, *run = v[5].buf,
                      *parent = v[6].buf, *rts = v[8].buf, *rdur = v[9].buf;
        const uint8_t *adj = v[7].buf;
        Py_ssize_t np_ = PyList_GET_SIZE(prefixes);
        for (Py_ssize_t r = 0; r < n; r++) {
            if ((Py_ssize_t)combo[r] >= np_ || !PyBytes_Check(PyList_GET_ITEM(prefixes, combo[r]))) {
                PyErr_Format(PyExc_ValueError, "trace_lines: combination %u has no prefix", combo[r]);
                goto done;
            }
            PyObject *p = PyList_GET_ITEM(prefixes, combo[r]);
            if (append(&o, PyBytes_AS_STRING(lead), (size_t)PyBytes_GET_SIZE(lead)) < 0 ||
                append(&o, PyBytes_AS_STRING(p), (size_t)PyBytes_GET_SIZE(p)) < 0 || reserve(&o, 8 * EP_NUM_MAX + 160) < 0)
                goto done;
            /* reserved above: the rest of the line is fixed text and numbers */
#define PUT(s) (memcpy(o.p + o.n, s, sizeof(s) - 1), o.n += sizeof(s) - 1)
            PUT(",\"event_index\":");
            o.n += ep_fmt_i64(o.p + o.n, ev[r]);
            PUT(",\"run_index\":");
            o.n += ep_fmt_i64(o.p + o.n, run[r]);
            if (parent[r] >= 0) {
                PUT(",\"parent_event_index\":");
                o.n += ep_fmt_i64(o.p + o.n, parent[r]);
            }
            if (adj[r]) {
                PUT(",\"adjusted\":{\"recorded_ts_us\":");
                o.n += ep_fmt_micros(o.p + o.n, rts[r]);
                PUT(",\"recorded_dur_us\":");
                o.n += ep_fmt_micros(o.p + o.n, rdur[r]);
                PUT("}");
            }
            PUT("},\"tid\":");
            o.n += ep_fmt_i64(o.p + o.n, tid[r]);
            PUT(",\"ts\":");
            o.n += ep_fmt_micros(o.p + o.n, ts[r]);
            PUT(",\"dur\":");
            o.n += ep_fmt_micros(o.p + o.n, dur[r]);
            PUT("}\n");
#undef PUT
        }
        res = take(&o);
    }
done:
    obuf_free(&o);
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    return res;
}

static PyObject *fmt_f64(PyObject *self, PyObject *arg) {
    double x = PyFloat_AsDouble(arg);
    if (x == -1.0 && PyErr_Occurred())
        return NULL;
    char out[EP_NUM_MAX];
    return PyBytes_FromStringAndSize(out, (Py_ssize_t)ep_fmt_f64(out, x));
}

/* dense(values int64[n], out int32[n]) -> k: each value's rank among the distinct values (0..k-1, in value order)
 * by a lookup table over the values' range; -1 (nothing written) when the range is wider than 2n + 1024, where the
 * caller sorts instead (edgeprof._ids.dense, the numpy oracle, decides the same way). */
static PyObject *dense(PyObject *self, PyObject *args) {
    PyObject *ov, *oo;
    if (!PyArg_ParseTuple(args, "OO", &ov, &oo))
        return NULL;
    Py_buffer v, o;
    if (get(ov, &v, 0, 8, 0, "values") < 0)
        return NULL;
    Py_ssize_t n = v.len / 8;
    if (get(oo, &o, 1, 4, n, "out") < 0) {
        PyBuffer_Release(&v);
        return NULL;
    }
    const int64_t *x = v.buf;
    int32_t *out = o.buf;
    long long k = 0;
    if (n > 0) {
        int64_t lo = x[0], hi = x[0];
        for (Py_ssize_t i = 1; i < n; i++) {
            if (x[i] < lo)
                lo = x[i];
            if (x[i] > hi)
                hi = x[i];
        }
        /* the span in unsigned arithmetic: int64 extremes cannot overflow it */
        uint64_t span = (uint64_t)hi - (uint64_t)lo;
        if (span > (uint64_t)(2 * n + 1024)) {
            k = -1;
        } else {
            int32_t *rank = calloc((size_t)span + 1, sizeof *rank);
            if (!rank) {
                PyBuffer_Release(&o);
                PyBuffer_Release(&v);
                return PyErr_NoMemory();
            }
            for (Py_ssize_t i = 0; i < n; i++)
                rank[(uint64_t)x[i] - (uint64_t)lo] = 1;
            int32_t r = 0;
            for (uint64_t j = 0; j <= span; j++) {
                int32_t seen = rank[j];
                rank[j] = r;
                r += seen;
            }
            for (Py_ssize_t i = 0; i < n; i++)
                out[i] = rank[(uint64_t)x[i] - (uint64_t)lo];
            k = r;
            free(rank);
        }
    }
    PyBuffer_Release(&o);
    PyBuffer_Release(&v);
    return PyLong_FromLongLong(k);
}

/* first_rows(ids int32[n], out int64[k]): the first row of each id 0..k-1 (n where none); an id outside 0..k-1 is
 * refused. */
static PyObject *first_rows(PyObject *self, PyObject *args) {
    PyObject *oi, *oo;
    if (!PyArg_ParseTuple(args, "OO", &oi, &oo))
        return NULL;
    Py_buffer v, o;
    if (get(oi, &v, 0, 4, 0, "ids") < 0)
        return NULL;
    if (get(oo, &o, 1, 8, 0, "out") < 0) {
        PyBuffer_Release(&v);
        return NULL;
    }
    Py_ssize_t n = v.len / 4, k = o.len / 8;
    const int32_t *ids = v.buf;
    int64_t *out = o.buf;
    PyObject *res = Py_None;
    for (Py_ssize_t j = 0; j < k; j++)
        out[j] = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= k) {
            PyErr_Format(PyExc_ValueError, "first_rows: id %d at row %zd is outside 0..%zd", ids[i], i, k - 1);
            res = NULL;
            break;
        }
        if (out[ids[i]] == n)
            out[ids[i]] = i;
    }
    PyBuffer_Release(&o);
    PyBuffer_Release(&v);
    if (res)
        Py_INCREF(res);
    return res;
}

static PyMethodDef methods[] = {
    {"walk_events", walk_events, METH_VARARGS, "The Event tables of vectors of events: positions, owners, payload kinds."},
    {"profile_events", profile_events, METH_VARARGS, "The fields of ProfileEvent tables, into column buffers."},
    {"intern", intern, METH_VARARGS, "Codes of the strings at refs (-1 absent) and the distinct byte strings."},
    {"csv_rows", csv_rows, METH_VARARGS,
     "CSV text of rows start..stop of (kind, data, mask, cells) columns (bytes; or into bytearray out, -> count)."},
    {"trace_lines", trace_lines, METH_VARARGS, "Trace-event JSON lines of slices (prefix per combination + numbers)."},
    {"fmt_f64", fmt_f64, METH_O, "One float64 as the tables write it (bytes)."},
    {"dense", dense, METH_VARARGS, "Dense ranks of int64 values by a lookup table (-1: range too wide)."},
    {"first_rows", first_rows, METH_VARARGS, "The first row of each dense id."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", "edgeprof's compiled ETDump walk.", -1, methods};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Corrupt = PyErr_NewException("edgeprof._core.Corrupt", PyExc_ValueError, NULL);
    if (!Corrupt || PyModule_AddObject(m, "Corrupt", Corrupt) < 0) {
        Py_XDECREF(Corrupt);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(Corrupt);
    return m;
}
