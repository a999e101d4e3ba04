/*
 * bench_clock.h: what the C benchmarks share to time things: a monotonic
 * clock in seconds and the comparison qsort needs to take a median.
 */
#ifndef STRIDED_BENCH_CLOCK_H
#define STRIDED_BENCH_CLOCK_H

#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* For qsort over doubles, ascending. */
static inline int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
