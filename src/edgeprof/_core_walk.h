/* The ETDump FlatBuffer walk, free of Python (built into edgeprof._core, and alone into the sanitizer harness,
 * fuzz/core_harness.c). Each function returns 0, or -1 with b->err_off / b->msg saying where and why the input is
 * corrupt (-2: out of memory). Schema: ExecuTorch devtools/etdump/etdump_schema_flatcc.fbs. */
#ifndef EDGEPROF_CORE_WALK_H
#define EDGEPROF_CORE_WALK_H
#include <stdint.h>

typedef struct {
    const uint8_t *b; /* the FlatBuffer (after any size prefix) */
    int64_t n;        /* its length */
    int64_t base;     /* its offset in the file (a size prefix): for messages only */
    int64_t err_off;  /* where the first problem is */
    char msg[240];    /* what it is */
} ep_buf;

/* Vectors of Event tables at vec_refs[i] (-1: none): each event's table position, owning vector, payload kind
 * (0 profile, 1 allocation, 2 debug, -1 none; the first present, as Inspector takes it) and payload position.
 * counts: events, events without payload, events with more than one. cap: room in the outputs. */
int ep_walk_events(ep_buf *b, const int64_t *vec_refs, int64_t n_vec, int64_t cap, int64_t *ev_pos, int64_t *ev_run,
                   int8_t *kind, int64_t *payload, int64_t counts[3]);

typedef struct {
    int64_t *name_ref;   /* field 0 name (string position, -1 absent) */
    int32_t *chain;      /* field 1, default 0 */
    int32_t *instr;      /* field 2, default -1 */
    int32_t *dd_int;     /* field 3, default -1 */
    int64_t *dd_str_ref; /* field 4 */
    int64_t *meta_ref;   /* field 5 (vector of bytes) */
    uint64_t *start;     /* field 6, default 0 */
    uint64_t *end;       /* field 7, default 0 */
} ep_pe_cols;

int ep_profile_events(ep_buf *b, const int64_t *pe_pos, int64_t n, ep_pe_cols *c);

typedef struct {
    int64_t n, cap;
    int64_t *start, *len; /* the distinct strings, in order of first appearance */
} ep_strings;

/* Codes of the strings at refs (-1 absent → -1) into the distinct strings found (by content). */
int ep_intern(ep_buf *b, const int64_t *refs, int64_t n, int32_t *codes, ep_strings *out);
void ep_strings_free(ep_strings *s);

#define EP_SHORT_STRING 96 /* longer strings count toward the overlap rule (as in the numpy reader) */
#endif
