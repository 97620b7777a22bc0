/* Numbers as text, the way edgeprof's tables and traces write them (built into edgeprof._core; the Python path
 * writes the same bytes through Polars, which stays the oracle: tests/render/test_core_text.py). Each function
 * writes at most EP_NUM_MAX bytes at out and returns how many. */
#ifndef EDGEPROF_CORE_TEXT_H
#define EDGEPROF_CORE_TEXT_H
#include <stddef.h>
#include <stdint.h>

#define EP_NUM_MAX 40

/* A decimal integer. */
size_t ep_fmt_i64(char *out, int64_t v);

/* A float64 as Polars' CSV writer prints it: the shortest text that reads back as the same double; positional
 * with at least one decimal ("0.0", "12.5", "1000000000000000.0") from 1e-5 up to 1e16, else scientific
 * ("9.99e-6", "1e+16"); "NaN", "inf", "-inf". */
size_t ep_fmt_f64(char *out, double x);

/* Integer nanoseconds as microseconds with exactly three decimals ("-12.045"). */
size_t ep_fmt_micros(char *out, int64_t ns);
#endif
