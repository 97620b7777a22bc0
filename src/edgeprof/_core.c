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
 * Logical layouts: int64 for positions, int32 / uint64 for fields, int8 for kinds (the caller checks itemsizes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    for (; got < 10; got++)
        if (get(o[got], &v[got], 1, size[got], n, name[got]) < 0)
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

static PyMethodDef methods[] = {
    {"walk_events", walk_events, METH_VARARGS, "The Event tables of vectors of events: positions, owners, payload kinds."},
    {"profile_events", profile_events, METH_VARARGS, "The fields of ProfileEvent tables, into column buffers."},
    {"intern", intern, METH_VARARGS, "Codes of the strings at refs (-1 absent) and the distinct byte strings."},
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
