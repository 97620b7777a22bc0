/* The ETDump FlatBuffer walk (see _core_walk.h). Every read is preceded by a check that it lies inside
 * [0, b->n); positions are int64 and every length is at most 2^32, so no sum below overflows. */
#include "_core_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint64_t u64(const uint8_t *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

static int fail(ep_buf *b, int64_t off, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof b->msg, fmt, ap);
    va_end(ap);
    b->err_off = off;
    return -1;
}

static int outside(ep_buf *b, int64_t origin, const char *what, int64_t to, int64_t nbytes) {
    return fail(b, origin, "%s reference points to byte %lld (%lld bytes), outside the %lld-byte file: truncated or "
                "corrupt ETDump", what, (long long)(to + b->base), (long long)nbytes, (long long)(b->n + b->base));
}

typedef struct {
    int64_t pos, vt, vtsize, tsize;
} table;

/* A table at pos, checked as edgeprof.io.flatbuf.FlatBuffer.tables checks it. */
static int open_table(ep_buf *b, int64_t pos, const char *what, table *t) {
    if (pos < 0 || pos + 4 > b->n)
        return fail(b, pos, "%s table header (4 bytes) runs outside the %lld-byte file: truncated or corrupt ETDump",
                    what, (long long)(b->n + b->base));
    int64_t vt = pos - (int64_t)(int32_t)u32(b->b + pos);
    if (vt < 0 || vt + 4 > b->n)
        return outside(b, pos, what, vt, 4);
    int64_t vs = u16(b->b + vt), ts = u16(b->b + vt + 2);
    if (vs < 4 || vs % 2 == 1 || ts < 4)
        return fail(b, vt, "%s vtable has impossible sizes (vtable %lld, table %lld)", what, (long long)vs, (long long)ts);
    if (vt + vs > b->n)
        return fail(b, vt, "%s vtable (%lld bytes) runs outside the %lld-byte file: truncated or corrupt ETDump", what,
                    (long long)vs, (long long)(b->n + b->base));
    if (pos + ts > b->n)
        return outside(b, pos, what, pos, ts);
    t->pos = pos, t->vt = vt, t->vtsize = vs, t->tsize = ts;
    return 0;
}

/* Position of field k (size bytes) of t, -1 when absent; -2 (error set) when it lies past the table's end. */
static int64_t field(ep_buf *b, const table *t, int k, int64_t size, const char *what) {
    int64_t slot = 4 + 2 * (int64_t)k;
    if (t->vtsize < slot + 2)
        return -1;
    int64_t off = u16(b->b + t->vt + slot);
    if (off == 0)
        return -1;
    if (off + size > t->tsize) {
        fail(b, t->pos + off, "%s field %d lies past the end of its table", what, k);
        return -2;
    }
    return t->pos + off;
}

/* The target of reference field k (-1 absent, -2 error). */
static int64_t ref(ep_buf *b, const table *t, int k, const char *what, const char *field_what) {
    int64_t f = field(b, t, k, 4, what);
    if (f < 0)
        return f;
    int64_t to = f + (int64_t)u32(b->b + f);
    if (to + 4 > b->n) {
        outside(b, f, field_what, to, 4);
        return -2;
    }
    return to;
}

int ep_walk_events(ep_buf *b, const int64_t *vec_refs, int64_t n_vec, int64_t cap, int64_t *ev_pos, int64_t *ev_run,
                   int8_t *kind, int64_t *payload, int64_t counts[3]) {
    int64_t total = 0;
    for (int64_t v = 0; v < n_vec; v++) { /* the vectors' lengths first, as vector_lengths / _check_total */
        int64_t r = vec_refs[v];
        if (r < 0)
            continue;
        if (r + 4 > b->n)
            return outside(b, r, "RunData.events vector", r, 4);
        int64_t cnt = u32(b->b + r);
        if (r + 4 + 4 * cnt > b->n)
            return outside(b, r, "RunData.events vector", r + 4, 4 * cnt);
        total += cnt;
    }
    if (4 * total > b->n)
        return fail(b, n_vec ? vec_refs[0] : 0, "RunData.events vectors claim %lld bytes in a %lld-byte buffer "
                    "(overlapping): corrupt ETDump", (long long)(4 * total), (long long)b->n);
    if (total > cap)
        return fail(b, 0, "RunData.events hold %lld events where %lld were counted", (long long)total, (long long)cap);
    static const char *payload_what[3] = {"Event.profile_event", "Event.allocation_event", "Event.debug_event"};
    int64_t i = 0, empty = 0, ambiguous = 0;
    for (int64_t v = 0; v < n_vec; v++) {
        int64_t r = vec_refs[v];
        if (r < 0)
            continue;
        int64_t cnt = u32(b->b + r);
        for (int64_t j = 0; j < cnt; j++, i++) {
            int64_t slot = r + 4 + 4 * j;
            int64_t at = slot + (int64_t)u32(b->b + slot);
            if (at + 4 > b->n)
                return outside(b, slot, "RunData.events element", at, 4);
            table t;
            if (open_table(b, at, "Event", &t) < 0)
                return -1;
            int8_t k = -1;
            int64_t first = -1;
            int present = 0;
            for (int f = 0; f < 3; f++) {
                int64_t p = ref(b, &t, f, "Event", payload_what[f]);
                if (p == -2)
                    return -1;
                if (p >= 0) {
                    present++;
                    if (k < 0)
                        k = (int8_t)f, first = p;
                }
            }
            empty += present == 0;
            ambiguous += present > 1;
            ev_pos[i] = at, ev_run[i] = v, kind[i] = k, payload[i] = first;
        }
    }
    counts[0] = i, counts[1] = empty, counts[2] = ambiguous;
    return 0;
}

int ep_profile_events(ep_buf *b, const int64_t *pe_pos, int64_t n, ep_pe_cols *c) {
    static const char *W = "ProfileEvent";
    for (int64_t i = 0; i < n; i++) {
        table t;
        if (open_table(b, pe_pos[i], W, &t) < 0)
            return -1;
        int64_t f;
        if ((c->name_ref[i] = ref(b, &t, 0, W, "ProfileEvent.name")) == -2)
            return -1;
        if ((c->dd_str_ref[i] = ref(b, &t, 4, W, "ProfileEvent.delegate_debug_id_str")) == -2)
            return -1;
        if ((c->meta_ref[i] = ref(b, &t, 5, W, "ProfileEvent.delegate_debug_metadata")) == -2)
            return -1;
        if ((f = field(b, &t, 1, 4, W)) == -2)
            return -1;
        c->chain[i] = f >= 0 ? (int32_t)u32(b->b + f) : 0;
        if ((f = field(b, &t, 2, 4, W)) == -2)
            return -1;
        c->instr[i] = f >= 0 ? (int32_t)u32(b->b + f) : -1;
        if ((f = field(b, &t, 3, 4, W)) == -2)
            return -1;
        c->dd_int[i] = f >= 0 ? (int32_t)u32(b->b + f) : -1;
        if ((f = field(b, &t, 6, 8, W)) == -2)
            return -1;
        c->start[i] = f >= 0 ? u64(b->b + f) : 0;
        if ((f = field(b, &t, 7, 8, W)) == -2)
            return -1;
        c->end[i] = f >= 0 ? u64(b->b + f) : 0;
    }
    return 0;
}

/* ---- interning: open addressing, keyed first by the string's position (a writer shares strings), then by its
 * bytes; the hash is seeded per table, so no file can choose its collisions in advance. ---- */

typedef struct {
    int64_t *key;   /* position (pos table) or -1 */
    int32_t *code;  /* the code stored there */
    int64_t cap, n;
} slots;

static uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t hash_bytes(const uint8_t *p, int64_t len, uint64_t seed) {
    uint64_t h = seed ^ (uint64_t)len * 0x9e3779b97f4a7c15ULL;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8)
        h = mix(h ^ u64(p + i)) + 0x9e3779b97f4a7c15ULL;
    uint64_t tail = 0;
    for (int s = 0; i < len; i++, s += 8)
        tail |= (uint64_t)p[i] << s;
    return mix(h ^ tail);
}

static int slots_init(slots *s, int64_t cap) {
    s->cap = cap, s->n = 0;
    s->key = malloc((size_t)cap * sizeof *s->key);
    s->code = malloc((size_t)cap * sizeof *s->code);
    if (!s->key || !s->code)
        return -2;
    for (int64_t i = 0; i < cap; i++)
        s->key[i] = -1;
    return 0;
}

static void slots_free(slots *s) {
    free(s->key);
    free(s->code);
    s->key = NULL, s->code = NULL;
}

void ep_strings_free(ep_strings *s) {
    free(s->start);
    free(s->len);
    s->start = s->len = NULL;
    s->n = s->cap = 0;
}

static int add_string(ep_strings *s, int64_t start, int64_t len) {
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        int64_t *a = realloc(s->start, (size_t)cap * sizeof *a);
        if (!a)
            return -2;
        s->start = a;
        int64_t *l = realloc(s->len, (size_t)cap * sizeof *l);
        if (!l)
            return -2;
        s->len = l, s->cap = cap;
    }
    s->start[s->n] = start, s->len[s->n] = len;
    s->n++;
    return 0;
}

/* Room for one more key: doubles (rehashing by `hashes`, the hash each stored key was placed by) past half full. */
static int slots_grow(slots *s, uint64_t **hashes) {
    if (2 * (s->n + 1) <= s->cap)
        return 0;
    slots t = {0};
    int64_t cap = s->cap * 2;
    uint64_t *h = malloc((size_t)cap * sizeof *h);
    if (!h || slots_init(&t, cap) != 0) {
        free(h);
        slots_free(&t);
        return -2;
    }
    for (int64_t i = 0; i < s->cap; i++) {
        if (s->key[i] < 0)
            continue;
        uint64_t j = (*hashes)[i] & (uint64_t)(cap - 1);
        while (t.key[j] >= 0)
            j = (j + 1) & (uint64_t)(cap - 1);
        t.key[j] = s->key[i], t.code[j] = s->code[i], h[j] = (*hashes)[i];
    }
    t.n = s->n;
    slots_free(s);
    free(*hashes);
    *s = t, *hashes = h;
    return 0;
}

/* Insert key/code with hash h (the key is known to be absent). */
static void slots_put(slots *s, uint64_t *hashes, uint64_t h, int64_t key, int32_t code) {
    uint64_t j = h & (uint64_t)(s->cap - 1);
    while (s->key[j] >= 0)
        j = (j + 1) & (uint64_t)(s->cap - 1);
    s->key[j] = key, s->code[j] = code, hashes[j] = h;
    s->n++;
}

int ep_intern(ep_buf *b, const int64_t *refs, int64_t n, int32_t *codes, ep_strings *out) {
    const int64_t cap0 = 256;
    uint64_t seed = mix((uint64_t)(uintptr_t)refs ^ (uint64_t)(uintptr_t)&n ^ (uint64_t)n);
    slots by_pos = {0}, by_text = {0}; /* long strings by position; every string by its bytes */
    uint64_t *h_pos = malloc(cap0 * sizeof *h_pos), *h_text = malloc(cap0 * sizeof *h_text);
    int rc = h_pos && h_text ? 0 : -2;
    if (rc == 0)
        rc = slots_init(&by_pos, cap0);
    if (rc == 0)
        rc = slots_init(&by_text, cap0);
    int64_t long_bytes = 0;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        int64_t r = refs[i];
        if (r < 0) {
            codes[i] = -1;
            continue;
        }
        if (r + 4 > b->n) {
            rc = outside(b, r, "string", r, 4);
            break;
        }
        int64_t len = u32(b->b + r);
        uint64_t hp = 0;
        if (len > EP_SHORT_STRING) { /* a long string read once per position however many refer to it */
            hp = mix((uint64_t)r ^ seed);
            uint64_t j = hp & (uint64_t)(by_pos.cap - 1);
            while (by_pos.key[j] >= 0 && by_pos.key[j] != r)
                j = (j + 1) & (uint64_t)(by_pos.cap - 1);
            if (by_pos.key[j] == r) {
                codes[i] = by_pos.code[j];
                continue;
            }
        }
        if (r + 4 + len > b->n) {
            rc = fail(b, r, "string reference points to byte %lld (%lld bytes), outside the %lld-byte file: "
                      "truncated or corrupt ETDump", (long long)(r + 4 + b->base), (long long)len,
                      (long long)(b->n + b->base));
            break;
        }
        if (len > EP_SHORT_STRING && (long_bytes += len) > b->n) {
            rc = fail(b, r, "strings claim %lld bytes in a %lld-byte buffer (overlapping): corrupt ETDump",
                      (long long)long_bytes, (long long)b->n);
            break;
        }
        const uint8_t *p = b->b + r + 4;
        uint64_t ht = hash_bytes(p, len, seed);
        int32_t code = -1;
        for (uint64_t j = ht & (uint64_t)(by_text.cap - 1);; j = (j + 1) & (uint64_t)(by_text.cap - 1)) {
            if (by_text.key[j] < 0)
                break;
            int32_t c = by_text.code[j];
            if (out->len[c] == len && memcmp(b->b + out->start[c], p, (size_t)len) == 0) {
                code = c;
                break;
            }
        }
        if (code < 0) {
            code = (int32_t)out->n;
            if ((rc = add_string(out, r + 4, len)) != 0 || (rc = slots_grow(&by_text, &h_text)) != 0)
                break;
            slots_put(&by_text, h_text, ht, r, code);
        }
        if (len > EP_SHORT_STRING) {
            if ((rc = slots_grow(&by_pos, &h_pos)) != 0)
                break;
            slots_put(&by_pos, h_pos, hp, r, code);
        }
        codes[i] = code;
    }
    slots_free(&by_pos);
    slots_free(&by_text);
    free(h_pos);
    free(h_text);
    if (rc != 0)
        ep_strings_free(out);
    return rc;
}
