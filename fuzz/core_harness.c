/* The compiled ETDump walk (src/edgeprof/_core_walk.c) alone, for AddressSanitizer, UndefinedBehaviorSanitizer
 * and valgrind: no Python in the process, so every report is the walk's own.
 *
 *   core_harness FILE...                 walk each file as edgeprof does (envelope, RunData, events, strings)
 *   core_harness --mutate N SEED FILE... and N mutants of each (bytes flipped, words replaced by counts and
 *                                        offsets that point elsewhere, ranges cut or repeated), seeded
 *   core_harness --numbers N SEED        the text formatting (src/edgeprof/_core_text.c) of N random 64-bit
 *                                        patterns as doubles, integers and ns: each into a buffer of exactly
 *                                        EP_NUM_MAX bytes, each double's text read back to the same value
 *
 * Prints one line per input class (accepted / refused) and exits 0; a sanitizer finding aborts (exit ≠ 0).
 * Built by fuzz/core_sanitize.py; .ci/run runs it over the fuzz corpora. */
#include "../src/edgeprof/_core_walk.c"
#include "../src/edgeprof/_core_text.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The envelope and the RunData tables, as edgeprof.io.etdump_decode.RunDataIndex reads them: the events vectors
 * of every RunData, into *refs (malloc'd). Returns the number of RunData, or -1 (corrupt). */
static int64_t event_vectors(ep_buf *b, int64_t **refs) {
    *refs = NULL;
    if (b->n < 4)
        return fail(b, 0, "root offset outside the buffer");
    table top, rd;
    if (open_table(b, u32(b->b), "ETDump", &top) < 0)
        return -1;
    int64_t vec = ref(b, &top, 1, "ETDump", "ETDump.run_data");
    if (vec == -2)
        return -1;
    if (vec < 0)
        return 0;
    int64_t cnt = u32(b->b + vec);
    if (vec + 4 + 4 * cnt > b->n)
        return outside(b, vec, "ETDump.run_data vector", vec + 4, 4 * cnt);
    *refs = malloc((size_t)(cnt ? cnt : 1) * sizeof **refs);
    if (!*refs)
        return -1;
    for (int64_t i = 0; i < cnt; i++) {
        int64_t slot = vec + 4 + 4 * i, at = slot + (int64_t)u32(b->b + slot);
        if (at + 4 > b->n)
            return outside(b, slot, "ETDump.run_data element", at, 4);
        if (open_table(b, at, "RunData", &rd) < 0)
            return -1;
        int64_t ev = ref(b, &rd, 3, "RunData", "RunData.events");
        if (ev == -2)
            return -1;
        (*refs)[i] = ev;
    }
    return cnt;
}

/* Walk one input; 1 accepted, 0 refused. */
static int walk(const uint8_t *data, int64_t size) {
#ifdef PLANTED_OVERREAD /* a bug on purpose: the test that the sanitizers are live builds with it */
    volatile uint8_t past_the_end = data[size];
    (void)past_the_end;
#endif
    ep_buf b = {data, size, 0, 0, {0}};
    if (size >= 12 && memcmp(data + 8, "ED00", 4) == 0) { /* size-prefixed */
        int64_t declared = u32(data);
        if (declared > size - 4)
            return 0;
        b.b = data + 4, b.n = declared, b.base = 4;
    }
    int64_t *vecs = NULL, *pos = NULL, *run = NULL, *pay = NULL, *pe = NULL;
    int8_t *kind = NULL;
    int ok = 0;
    int64_t n_vec = event_vectors(&b, &vecs);
    if (n_vec < 0)
        goto out;
    int64_t total = 0;
    for (int64_t v = 0; v < n_vec; v++) /* what the numpy side counts: lengths of vectors that fit */
        if (vecs[v] >= 0 && vecs[v] + 4 <= b.n)
            total += u32(b.b + vecs[v]);
    if (4 * total > b.n)
        goto out;
    size_t m = (size_t)(total ? total : 1);
    pos = malloc(m * 8), run = malloc(m * 8), pay = malloc(m * 8), pe = malloc(m * 8), kind = malloc(m);
    if (!pos || !run || !pay || !pe || !kind)
        goto out;
    int64_t counts[3];
    if (ep_walk_events(&b, vecs, n_vec, total, pos, run, kind, pay, counts) < 0)
        goto out;
    int64_t n_pe = 0;
    for (int64_t i = 0; i < counts[0]; i++)
        if (kind[i] == 0)
            pe[n_pe++] = pay[i];
    size_t k = (size_t)(n_pe ? n_pe : 1);
    ep_pe_cols c = {malloc(k * 8), malloc(k * 4), malloc(k * 4), malloc(k * 4), malloc(k * 8), malloc(k * 8),
                    malloc(k * 8), malloc(k * 8)};
    int32_t *codes = malloc(k * 4);
    if (c.name_ref && c.chain && c.instr && c.dd_int && c.dd_str_ref && c.meta_ref && c.start && c.end && codes &&
        ep_profile_events(&b, pe, n_pe, &c) == 0) {
        ep_strings s1 = {0}, s2 = {0};
        ok = ep_intern(&b, c.name_ref, n_pe, codes, &s1) == 0 && ep_intern(&b, c.dd_str_ref, n_pe, codes, &s2) == 0;
        ep_strings_free(&s1);
        ep_strings_free(&s2);
    }
    free(c.name_ref), free(c.chain), free(c.instr), free(c.dd_int), free(c.dd_str_ref), free(c.meta_ref);
    free(c.start), free(c.end), free(codes);
out:
    free(vecs), free(pos), free(run), free(pay), free(pe), free(kind);
    return ok;
}

static uint64_t rng;
static uint64_t next(void) { /* splitmix64 */
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A mutant of data (same size or smaller) in out. */
static int64_t mutate(const uint8_t *data, int64_t size, uint8_t *out) {
    memcpy(out, data, (size_t)size);
    int64_t n = size;
    int edits = 1 + (int)(next() % 4);
    for (int e = 0; e < edits && n > 8; e++) {
        int64_t at = (int64_t)(next() % (uint64_t)(n - 4));
        switch (next() % 6) {
        case 0: out[at] ^= (uint8_t)(1u << (next() % 8)); break;
        case 1: out[at] = (uint8_t)next(); break;
        case 2: { /* a word that is a count or an offset reaching elsewhere in the file */
            static const uint32_t w[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0xfffffffcu, 4, 8, 0x10000};
            uint32_t v = next() % 2 ? w[next() % (sizeof w / sizeof *w)] : (uint32_t)(next() % (uint64_t)n);
            memcpy(out + (at & ~(int64_t)3), &v, 4);
            break;
        }
        case 3: n = at + 4; break; /* truncated */
        case 4: { /* a range repeated over another */
            int64_t len = (int64_t)(next() % 64), from = (int64_t)(next() % (uint64_t)n);
            if (from + len <= n && at + len <= n)
                memmove(out + at, out + from, (size_t)len);
            break;
        }
        default: { int16_t v = (int16_t)next(); memcpy(out + (at & ~(int64_t)1), &v, 2); } /* a vtable entry */
        }
    }
    return n;
}

static int numbers(long n) {
    long bad = 0;
    for (long k = 0; k < n; k++) {
        uint64_t bits = next();
        if (k % 4 == 1) /* integers over powers of ten, as the tables hold */
            bits = 0;
        double x;
        memcpy(&x, &bits, 8);
        if (k % 4 == 1)
            x = (double)(int64_t)(next() % 2000000000000001ULL - 1000000000000000LL) / P10[next() % 18];
        char *out = malloc(EP_NUM_MAX + 1); /* its own allocation: a write past EP_NUM_MAX is caught */
        size_t len = ep_fmt_f64(out, x);
        out[len] = 0;
        if (len > EP_NUM_MAX || (!isnan(x) && strtod(out, NULL) != x) || (isnan(x) && strcmp(out, "NaN") != 0)) {
            if (bad++ < 5)
                fprintf(stderr, "%.17g printed as %s\n", x, out);
        }
        if (ep_fmt_i64(out, (int64_t)bits) > EP_NUM_MAX || ep_fmt_micros(out, (int64_t)bits) > EP_NUM_MAX)
            bad++;
        free(out);
    }
    printf("%ld numbers, %ld misprinted\n", n, bad);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--numbers") == 0) {
        rng = strtoull(argv[3], NULL, 10);
        return numbers(strtol(argv[2], NULL, 10));
    }
    int i = 1;
    long mutants = 0;
    if (argc > 3 && strcmp(argv[1], "--mutate") == 0) {
        mutants = strtol(argv[2], NULL, 10);
        rng = strtoull(argv[3], NULL, 10);
        i = 4;
    }
    long accepted = 0, refused = 0;
    for (; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s: cannot open\n", argv[i]);
            return 2;
        }
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *data = malloc(size ? (size_t)size : 1), *scratch = malloc(size ? (size_t)size : 1);
        if (!data || !scratch || fread(data, 1, (size_t)size, f) != (size_t)size) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 2;
        }
        fclose(f);
        walk(data, size) ? accepted++ : refused++;
        for (long m = 0; m < mutants; m++) {
            int64_t n = mutate(data, size, scratch);
            uint8_t *exact = malloc(n ? (size_t)n : 1); /* its own allocation: a read past n is caught */
            memcpy(exact, scratch, (size_t)n);
            walk(exact, n) ? accepted++ : refused++;
            free(exact);
        }
        free(data);
        free(scratch);
    }
    printf("%ld accepted, %ld refused\n", accepted, refused);
    return 0;
}
