/* Numbers as text (see _core_text.h). Free of Python, so the sanitizer harness can run it alone. */
#include "_core_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t digits_u64(char *out, uint64_t v) {
    char t[24];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = t[n - 1 - i];
    return n;
}

size_t ep_fmt_i64(char *out, int64_t v) {
    if (v < 0) {
        out[0] = '-';
        return 1 + digits_u64(out + 1, (uint64_t)0 - (uint64_t)v);
    }
    return digits_u64(out, (uint64_t)v);
}

size_t ep_fmt_micros(char *out, int64_t ns) {
    size_t n = 0;
    uint64_t a = (uint64_t)ns;
    if (ns < 0) {
        out[n++] = '-';
        a = (uint64_t)0 - a;
    }
    n += digits_u64(out + n, a / 1000);
    uint64_t f = a % 1000;
    out[n++] = '.';
    out[n++] = (char)('0' + f / 100);
    out[n++] = (char)('0' + f / 10 % 10);
    out[n++] = (char)('0' + f % 10);
    return n;
}

static const double P10[18] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
                               1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};

/* The shortest decimal digits of x > 0 (finite): dig[0..*nd) with no trailing zero, x ≈ 0.dig × 10^*e10.
 *
 * Fast path — most of edgeprof's floats are integers over a power of ten (ns → µs, rounded percentages): if
 * k / 10^d, for an integer 0 < k < 10^15, divides (correctly rounded) to exactly x, that decimal has at most 15
 * significant digits, and no two decimals of at most 15 significant digits round to the same double, so it is the
 * shortest text of x. Otherwise the C library's exact printf at 15, 16 then 17 significant digits: the first that
 * reads back as x is the shortest (a shorter one would make the correctly rounded text at its length read back);
 * from one digit up for subnormal numbers. */
static void shortest(double x, char *dig, int *nd, int *e10) {
    static const int order[18] = {6, 3, 0, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    for (int i = 0; i < 18; i++) {
        int d = order[i];
        double m = x * P10[d];
        if (!(m < 1e15))
            continue;
        uint64_t k = (uint64_t)(m + 0.5);
        if (k == 0 || (double)k / P10[d] != x)
            continue;
        size_t n = digits_u64(dig, k);
        *e10 = (int)n - d;
        while (n > 1 && dig[n - 1] == '0')
            n--;
        *nd = (int)n;
        return;
    }
    char buf[40];
    /* below the normal range a double holds fewer digits: start from one */
    for (int p = x < 2.2250738585072014e-308 ? 1 : 15; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (p < 17 && strtod(buf, NULL) != x)
            continue;
        /* buf: d.ddd…e±XX */
        int n = 0;
        const char *s = buf;
        for (; *s && *s != 'e'; s++)
            if (*s >= '0' && *s <= '9')
                dig[n++] = *s;
        int e = *s == 'e' ? atoi(s + 1) : 0;
        while (n > 1 && dig[n - 1] == '0')
            n--;
        *nd = n;
        *e10 = e + 1;
        return;
    }
}

size_t ep_fmt_f64(char *out, double x) {
    if (isnan(x)) {
        memcpy(out, "NaN", 3);
        return 3;
    }
    size_t n = 0;
    if (signbit(x)) {
        out[n++] = '-';
        x = -x;
    }
    if (isinf(x)) {
        memcpy(out + n, "inf", 3);
        return n + 3;
    }
    if (x == 0) {
        memcpy(out + n, "0.0", 3);
        return n + 3;
    }
    char dig[24];
    int nd, e10;
    shortest(x, dig, &nd, &e10);
    int e = e10 - 1; /* the first digit's power of ten */
    if (e < -5 || e >= 16) {
        out[n++] = dig[0];
        if (nd > 1) {
            out[n++] = '.';
            memcpy(out + n, dig + 1, (size_t)nd - 1);
            n += (size_t)nd - 1;
        }
        out[n++] = 'e';
        if (e < 0) {
            out[n++] = '-';
            e = -e;
        } else
            out[n++] = '+';
        return n + digits_u64(out + n, (uint64_t)e);
    }
    if (e10 <= 0) { /* 0.000ddd */
        out[n++] = '0';
        out[n++] = '.';
        for (int i = 0; i < -e10; i++)
            out[n++] = '0';
        memcpy(out + n, dig, (size_t)nd);
        return n + (size_t)nd;
    }
    if (nd <= e10) { /* ddd000.0 */
        memcpy(out + n, dig, (size_t)nd);
        n += (size_t)nd;
        for (int i = nd; i < e10; i++)
            out[n++] = '0';
        out[n++] = '.';
        out[n++] = '0';
        return n;
    }
    memcpy(out + n, dig, (size_t)e10); /* ddd.ddd */
    n += (size_t)e10;
    out[n++] = '.';
    memcpy(out + n, dig + e10, (size_t)(nd - e10));
    return n + (size_t)(nd - e10);
}
