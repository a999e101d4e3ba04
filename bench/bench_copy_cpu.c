/*
 * bench_copy_cpu: host strided copies against a parallel memcpy, rows C1-C4
 * of the copy suite (bench/README.md lists the rows and their targets).
 *
 * Each case is a pair of layouts (a C-contiguous destination, a view of a
 * C-contiguous source), planned once by strided_copy_plan_make; the plan is
 * timed with the host executor, strided__copy_host_run, on one thread and on
 * all threads. The kernels the planner picks:
 *
 *   C1   8192^2 fp32, .T -> C                      transpose
 *   C2a  400^3 fp32, permutation (2,1,0) -> C      transpose
 *   C2b  400^3 fp32, (0,2,1) -> C                  transpose
 *   C2c  400^3 fp32, (1,0,2) -> C                  rows
 *   C3   (2^24,3) fp32, (1,0) -> C (AoS to SoA)    transpose
 *   C4a  8192^2 fp32, [:, ::2] -> C                gather (merged to 1-d)
 *   C4b  8192^2 fp32, [:, ::-1] -> C               gather
 *
 * The ceiling of each case is a memcpy of the same number of bytes (the
 * library's contiguous kernel: one piece per thread), timed with the same
 * threads. Bandwidth counts bytes read plus bytes written: twice the
 * destination's size. A measurement is the median of --repeat timed runs
 * (default 7, at least 5) after one untimed run that faults the pages in.
 * After timing, every destination element is checked against the source;
 * a wrong copy makes the program say which and exit with status 1.
 *
 * Buffers are asked for on transparent huge pages (madvise), as NumPy does
 * for its arrays of 4 MiB and more, so that np.copyto on the same cases
 * compares like for like; --no-hugepages turns that off.
 *
 * Output: a table on stdout; --json PATH writes the results as JSON too
 * (with cJSON; a build without it refuses the option). Options: --repeat N,
 * --threads N (the "all threads" count; default omp_get_max_threads()),
 * --case ID (only the cases whose ID starts with ID, e.g. C2), --help.
 *
 * This is a benchmark, not a test: nothing is compared with a target.
 */
/* madvise and MADV_HUGEPAGE */
#define _DEFAULT_SOURCE

#include <getopt.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef HAVE_CJSON
#include <cJSON.h>
#endif

#include "bench_clock.h"
#include "bench_json.h"
#include "copy/host.h"

#define MAX_REPEATS 101
#define MAX_DIMS 3

struct bench_case {
    const char *id;
    const char *what;
    int ndim;
    int64_t shape[MAX_DIMS];
    int64_t dst_strides[MAX_DIMS];
    int64_t src_strides[MAX_DIMS];
    int64_t src_origin; /* the source's element 0, from its buffer's start */
    int64_t src_size;   /* elements in the source's buffer */
};

#define N8K 8192
#define N400 400
#define N24 (INT64_C(1) << 24)

/* Kept as written: clang-format reads N400 * N400 as a pointer declaration. */
/* clang-format off */
static const struct bench_case cases[] = {
    {"C1", "8192^2 fp32 .T -> C", 2, {N8K, N8K}, {N8K, 1}, {1, N8K}, 0, (int64_t)N8K * N8K},
    {"C2a", "400^3 fp32 (2,1,0) -> C", 3, {N400, N400, N400}, {N400 * N400, N400, 1},
     {1, N400, N400 * N400}, 0, N400 * N400 * N400},
    {"C2b", "400^3 fp32 (0,2,1) -> C", 3, {N400, N400, N400}, {N400 * N400, N400, 1},
     {N400 * N400, 1, N400}, 0, N400 * N400 * N400},
    {"C2c", "400^3 fp32 (1,0,2) -> C", 3, {N400, N400, N400}, {N400 * N400, N400, 1},
     {N400, N400 * N400, 1}, 0, N400 * N400 * N400},
    {"C3", "(2^24,3) fp32 (1,0) -> C", 2, {3, N24}, {N24, 1}, {1, 3}, 0, 3 * N24},
    {"C4a", "8192^2 fp32 [:, ::2] -> C", 2, {N8K, N8K / 2}, {N8K / 2, 1}, {N8K, 2}, 0,
     (int64_t)N8K * N8K},
    {"C4b", "8192^2 fp32 [:, ::-1] -> C", 2, {N8K, N8K}, {N8K, 1}, {N8K, -1}, N8K - 1,
     (int64_t)N8K * N8K},
};
/* clang-format on */
#define NCASES (sizeof cases / sizeof cases[0])

/* One measured configuration: a case (or its memcpy) on some threads. */
struct result {
    const struct bench_case *c;
    strided_copy_kernel kernel;
    int threads;
    double seconds;        /* median */
    double gbps;           /* (read + written) / seconds */
    double memcpy_seconds; /* median of the memcpy of the same bytes */
    double memcpy_gbps;
};

static strided_copy_plan plan_of(const struct bench_case *c)
{
    strided_layout dst, src;
    strided_copy_plan p;
    if (strided_layout_init(&dst, c->ndim, c->shape, c->dst_strides, 4) != STRIDED_OK ||
        strided_layout_init(&src, c->ndim, c->shape, c->src_strides, 4) != STRIDED_OK ||
        strided_copy_plan_make(&dst, &src, &p) != STRIDED_OK) {
        fprintf(stderr, "bench_copy_cpu: %s: %s\n", c->id, strided_last_error());
        exit(1);
    }
    return p;
}

static int64_t volume_of(const struct bench_case *c)
{
    int64_t v = 1;
    for (int k = 0; k < c->ndim; k++)
        v *= c->shape[k];
    return v;
}

/* The median time of repeats runs of p, after one untimed run. */
static double time_plan(const strided_copy_plan *p, char *dst, const char *src, int threads,
                        int repeats)
{
    double t[MAX_REPEATS];
    strided__copy_host_run(p, dst, src, threads);
    for (int r = 0; r < repeats; r++) {
        double t0 = now_s();
        strided__copy_host_run(p, dst, src, threads);
        t[r] = now_s() - t0;
    }
    qsort(t, (size_t)repeats, sizeof t[0], compare_double);
    return t[repeats / 2];
}

/* Whether every destination element holds its source element, by the
 * case's layouts (not the plan); says which does not. */
static int check(const struct bench_case *c, const uint32_t *dst, const uint32_t *src)
{
    int64_t idx[MAX_DIMS] = {0};
    const int64_t volume = volume_of(c);
    for (int64_t i = 0; i < volume; i++) {
        int64_t d = 0, s = 0, rem = i;
        for (int k = c->ndim - 1; k >= 0; k--) {
            idx[k] = rem % c->shape[k];
            rem /= c->shape[k];
            d += idx[k] * c->dst_strides[k];
            s += idx[k] * c->src_strides[k];
        }
        if (dst[d] != src[s]) {
            fprintf(stderr, "bench_copy_cpu: %s is wrong at flat index %lld\n", c->id,
                    (long long)i);
            return 0;
        }
    }
    return 1;
}

static bool hugepages = true;

/* size bytes, 2 MiB aligned, on huge pages if hugepages is set and the
 * kernel allows. */
static void *alloc_or_die(size_t size)
{
    const size_t huge = (size_t)2 << 20;
    size_t rounded = (size + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
    if (p == NULL) {
        fprintf(stderr, "bench_copy_cpu: cannot allocate %zu bytes\n", size);
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    if (hugepages)
        madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

/* Measure case c on each thread count; two results. */
static void run_case(const struct bench_case *c, const int *threads, int nthreads_counts,
                     int repeats, struct result *out)
{
    const strided_copy_plan p = plan_of(c);
    const int64_t bytes = volume_of(c) * 4;
    uint32_t *src = alloc_or_die((size_t)c->src_size * 4);
    uint32_t *dst = alloc_or_die((size_t)bytes);
    uint32_t *ceiling_dst = alloc_or_die((size_t)bytes);
    strided_copy_plan flat;

    for (int64_t i = 0; i < c->src_size; i++)
        src[i] = (uint32_t)(i * 2654435761u);
    memset(&flat, 0, sizeof flat);
    flat.kernel = STRIDED_COPY_CONTIGUOUS;
    flat.ndim = 1;
    flat.itemsize = 4;
    flat.src_unit_axis = -1;
    flat.volume = flat.shape[0] = volume_of(c);
    flat.dst_strides[0] = flat.src_strides[0] = 1;

    for (int t = 0; t < nthreads_counts; t++) {
        struct result *r = &out[t];
        r->c = c;
        r->kernel = p.kernel;
        r->threads = threads[t];
        memset(dst, 0, (size_t)bytes);
        r->seconds = time_plan(&p, (char *)(dst + p.dst_offset),
                               (const char *)(src + c->src_origin + p.src_offset), threads[t],
                               repeats);
        if (!check(c, dst, src + c->src_origin))
            exit(1);
        r->memcpy_seconds = time_plan(&flat, (char *)ceiling_dst, (const char *)src, threads[t],
                                      repeats);
        r->gbps = 2.0 * (double)bytes / r->seconds / 1e9;
        r->memcpy_gbps = 2.0 * (double)bytes / r->memcpy_seconds / 1e9;
    }
    free(src);
    free(dst);
    free(ceiling_dst);
}

static int write_json(const char *path, const struct result *results, int n, int repeats)
{
#ifdef HAVE_CJSON
    cJSON *root = cJSON_CreateObject();
    cJSON *machine, *list;
    char method[512];

    cJSON_AddStringToObject(root, "benchmark", "copy_cpu");
    snprintf(method, sizeof method,
             "median of %d runs after one untimed run; GB/s = (bytes read + bytes "
             "written) / time, 2 x the destination's bytes; memcpy = the same bytes, "
             "same threads; buffers %s",
             repeats, hugepages ? "madvised to huge pages" : "not madvised");
    cJSON_AddStringToObject(root, "method", method);
    machine = cJSON_AddObjectToObject(root, "machine");
    list = cJSON_AddArrayToObject(root, "results");
    cJSON_AddNumberToObject(machine, "cpus_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
#if defined(__clang__)
    cJSON_AddStringToObject(machine, "compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(machine, "compiler", "gcc " __VERSION__);
#endif
    for (int i = 0; i < n; i++) {
        const struct result *r = &results[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", r->c->id);
        cJSON_AddStringToObject(o, "case", r->c->what);
        cJSON_AddStringToObject(o, "kernel", strided_copy_kernel_name(r->kernel));
        cJSON_AddNumberToObject(o, "threads", r->threads);
        cJSON_AddNumberToObject(o, "bytes_moved", 2.0 * (double)volume_of(r->c) * 4.0);
        cJSON_AddNumberToObject(o, "seconds", r->seconds);
        cJSON_AddNumberToObject(o, "gbps", r->gbps);
        cJSON_AddNumberToObject(o, "memcpy_seconds", r->memcpy_seconds);
        cJSON_AddNumberToObject(o, "memcpy_gbps", r->memcpy_gbps);
        cJSON_AddNumberToObject(o, "fraction_of_memcpy", r->gbps / r->memcpy_gbps);
        cJSON_AddItemToArray(list, o);
    }
    return bench_json_save(root, path, "bench_copy_cpu");
#else
    (void)results;
    (void)n;
    (void)repeats;
    fprintf(stderr,
            "bench_copy_cpu: built without cJSON (Debian: libcjson-dev), "
            "cannot write %s\n",
            path);
    return 0;
#endif
}

static void usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [--repeat N] [--threads N] [--case ID] [--no-hugepages] "
            "[--json PATH] [--help]\n",
            argv0);
}

static void help(const char *argv0)
{
    usage(stdout, argv0);
    printf("Host strided copies (rows C1-C4 of the copy suite) against a memcpy of\n"
           "the same bytes, on 1 thread and on all threads; GB/s = (read + written) / time.\n"
           "  --repeat N       timed runs per measurement, the median is reported (5..%d;\n"
           "                   default 7)\n"
           "  --threads N      the \"all threads\" count (default: omp_get_max_threads())\n"
           "  --case ID        only the cases whose ID starts with ID (C1, C2, C2b, ...)\n"
           "  --no-hugepages   do not madvise the buffers to transparent huge pages\n"
           "  --json PATH      also write the results as JSON (needs cJSON)\n"
           "Cases:\n",
           MAX_REPEATS);
    for (size_t i = 0; i < NCASES; i++)
        printf("  %-4s %s\n", cases[i].id, cases[i].what);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"repeat", required_argument, NULL, 'r'},
        {"threads", required_argument, NULL, 't'},
        {"case", required_argument, NULL, 'c'},
        {"json", required_argument, NULL, 'j'},
        {"no-hugepages", no_argument, NULL, 'h'},
        {"help", no_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    static struct result results[2 * NCASES];
    const char *json = NULL, *only = "";
    int repeats = 7, all = 1, opt, n = 0;

#ifdef _OPENMP
    all = omp_get_max_threads();
#endif
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'r': repeats = atoi(optarg); break;
        case 't': all = atoi(optarg); break;
        case 'c': only = optarg; break;
        case 'j': json = optarg; break;
        case 'h': hugepages = false; break;
        case 'H': help(argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (optind != argc || repeats < 5 || repeats > MAX_REPEATS || all < 1) {
        usage(stderr, argv[0]);
        fprintf(stderr, "  --repeat: 5..%d; --threads: >= 1\n", MAX_REPEATS);
        return 2;
    }
    if (json != NULL) {
        /* Refuse --json before the long run, if it cannot be written. */
#ifndef HAVE_CJSON
        return write_json(json, results, 0, repeats) ? 0 : 2;
#endif
    }

    const int threads[2] = {1, all};
    const int counts = all > 1 ? 2 : 1;
    printf("%-4s %-28s %-9s %7s %9s %9s %7s\n", "id", "case", "kernel", "threads", "GB/s", "memcpy",
           "%");
    for (size_t i = 0; i < NCASES; i++) {
        if (strncmp(cases[i].id, only, strlen(only)) != 0)
            continue;
        run_case(&cases[i], threads, counts, repeats, &results[n]);
        for (int t = 0; t < counts; t++, n++) {
            const struct result *r = &results[n];
            printf("%-4s %-28s %-9s %7d %9.2f %9.2f %6.0f%%\n", r->c->id, r->c->what,
                   strided_copy_kernel_name(r->kernel), r->threads, r->gbps, r->memcpy_gbps,
                   100.0 * r->gbps / r->memcpy_gbps);
            fflush(stdout);
        }
    }
    if (json != NULL && !write_json(json, results, n, repeats))
        return 1;
    return 0;
}
