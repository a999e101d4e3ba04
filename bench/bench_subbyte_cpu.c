/*
 * bench_subbyte_cpu: host copies of sub-byte elements (docs/subbyte.md)
 * through strided_view_copy, against a memcpy of the same bytes:
 *
 *   S1  4096^2 packed fp4 -> packed fp4, same layout    whole bytes
 *   S2  (4096,4095) packed fp4, rows of 4096 -> same    masked row ends
 *   S3  4096^2 packed fp4 -> padded fp4                 unpack
 *   S4  4096^2 padded fp4 -> packed fp4                 pack
 *   S5  4096^2 packed fp6 -> padded fp6                 unpack
 *   S6  4096^2 packed fp4, .T -> C                      transpose
 *   S7  4096^2 packed fp6, .T -> C                      transpose
 *
 * Each case runs on 1 thread and on all threads (OpenMP's default count).
 * The ceiling is the library's contiguous host kernel moving the larger of
 * the two views' bytes on the same threads. GB/s counts bytes read plus
 * bytes written: the source's bytes plus the destination's (for memcpy
 * twice its bytes). A measurement is the median of --repeat timed runs
 * (default 5, at least 3) after one untimed run. Before timing, the copy is
 * checked element by element against a reference that reads bits; a wrong
 * copy makes the program say which and exit with status 1.
 *
 * Output: a table on stdout; --json PATH writes the results as JSON too
 * (with cJSON). Options: --repeat N, --case ID (only the cases whose ID
 * starts with ID), --help. This is a benchmark, not a test.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "strided/buffer.h"
#include "strided/copy.h"
#include "strided/view.h"

#define MAX_REPEATS 101
#define N 4096

/* A 2-d view: shape, strides in elements, packed (else padded) and bits. */
struct side {
    int64_t shape[2], strides[2];
    bool padded;
};

struct bench_case {
    const char *id;
    const char *what;
    int bits; /* 4: float4_e2m1fn, 6: float6_e3m2fn */
    struct side dst, src;
};

static const struct bench_case cases[] = {
    {"S1", "4096^2 fp4 packed -> packed", 4, {{N, N}, {N, 1}, false}, {{N, N}, {N, 1}, false}},
    {"S2",
     "(4096,4095) fp4 packed rows",
     4,
     {{N, N - 1}, {N, 1}, false},
     {{N, N - 1}, {N, 1}, false}},
    {"S3", "4096^2 fp4 packed -> padded", 4, {{N, N}, {N, 1}, true}, {{N, N}, {N, 1}, false}},
    {"S4", "4096^2 fp4 padded -> packed", 4, {{N, N}, {N, 1}, false}, {{N, N}, {N, 1}, true}},
    {"S5", "4096^2 fp6 packed -> padded", 6, {{N, N}, {N, 1}, true}, {{N, N}, {N, 1}, false}},
    {"S6", "4096^2 fp4 packed .T -> C", 4, {{N, N}, {N, 1}, false}, {{N, N}, {1, N}, false}},
    {"S7", "4096^2 fp6 packed .T -> C", 6, {{N, N}, {N, 1}, false}, {{N, N}, {1, N}, false}},
};
#define NCASES (sizeof cases / sizeof cases[0])

struct result {
    const struct bench_case *c;
    int threads;
    double seconds, gbps, memcpy_seconds, memcpy_gbps;
};

/* The bytes a side's buffer has: its highest element's last bit. */
static int64_t bytes_of(const struct side *s, int bits)
{
    int64_t last = (s->shape[0] - 1) * s->strides[0] + (s->shape[1] - 1) * s->strides[1];
    return s->padded ? last + 1 : ((last + 1) * bits + 7) / 8;
}

static unsigned get_bits(const unsigned char *m, int64_t bit, int width)
{
    unsigned v = 0;
    for (int k = 0; k < width; k++)
        v |= (unsigned)((m[(bit + k) / 8] >> ((bit + k) % 8)) & 1) << k;
    return v;
}

static unsigned element(const struct side *s, int bits, const unsigned char *m, int64_t i,
                        int64_t j)
{
    int64_t o = i * s->strides[0] + j * s->strides[1];
    return s->padded ? get_bits(m, o * 8, bits) : get_bits(m, o * bits, bits);
}

static strided_view view_of(const struct side *s, int bits, unsigned char *mem, int64_t size)
{
    strided_buffer *b = NULL;
    strided_layout l;
    strided_dtype d = {
        (uint8_t)(bits == 4 ? STRIDED_DTYPE_FLOAT4_E2M1FN : STRIDED_DTYPE_FLOAT6_E3M2FN),
        (uint8_t)bits, 1};
    strided_view v = {0};
    if (strided_buffer_wrap(mem, (size_t)size, NULL, NULL, &b) != STRIDED_OK ||
        strided_layout_init(&l, 2, s->shape, s->strides, 1) != STRIDED_OK ||
        strided_view_from_buffer_ex(b, &l, &d, s->padded, false, &v) != STRIDED_OK) {
        fprintf(stderr, "bench_subbyte_cpu: %s\n", strided_last_error());
        exit(1);
    }
    strided_buffer_release(b);
    return v;
}

static void *alloc_or_die(int64_t size)
{
    void *p = malloc((size_t)size);
    if (p == NULL) {
        fprintf(stderr, "bench_subbyte_cpu: cannot allocate %lld bytes\n", (long long)size);
        exit(1);
    }
    return p;
}

static void copy_or_die(strided_view *d, const strided_view *s)
{
    if (strided_view_copy(d, s, NULL, STRIDED_COPY_DEFAULT) != STRIDED_OK) {
        fprintf(stderr, "bench_subbyte_cpu: %s\n", strided_last_error());
        exit(1);
    }
}

static double time_copy(strided_view *d, const strided_view *s, int repeats)
{
    double t[MAX_REPEATS];
    copy_or_die(d, s);
    for (int r = 0; r < repeats; r++) {
        double t0 = now_s();
        copy_or_die(d, s);
        t[r] = now_s() - t0;
    }
    qsort(t, (size_t)repeats, sizeof t[0], compare_double);
    return t[repeats / 2];
}

static double time_memcpy(const strided_copy_plan *p, char *dst, const char *src, int threads,
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

static void set_threads(int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
}

static void run_case(const struct bench_case *c, const int *threads, int counts, int repeats,
                     struct result *out)
{
    const int64_t dbytes = bytes_of(&c->dst, c->bits), sbytes = bytes_of(&c->src, c->bits);
    const int64_t big = dbytes > sbytes ? dbytes : sbytes;
    unsigned char *src = alloc_or_die(sbytes), *dst = alloc_or_die(dbytes);
    unsigned char *a = alloc_or_die(big), *b = alloc_or_die(big);
    uint64_t x = 88172645463325252u;
    for (int64_t i = 0; i < sbytes; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        src[i] = (unsigned char)x;
    }
    memset(dst, 0, (size_t)dbytes);
    memset(a, 1, (size_t)big);
    strided_view s = view_of(&c->src, c->bits, src, sbytes);
    strided_view d = view_of(&c->dst, c->bits, dst, dbytes);
    copy_or_die(&d, &s);
    for (int64_t i = 0; i < c->dst.shape[0]; i++)
        for (int64_t j = 0; j < c->dst.shape[1]; j++)
            if (element(&c->dst, c->bits, dst, i, j) != element(&c->src, c->bits, src, i, j)) {
                fprintf(stderr, "bench_subbyte_cpu: %s is wrong at (%lld, %lld)\n", c->id,
                        (long long)i, (long long)j);
                exit(1);
            }
    strided_copy_plan flat;
    memset(&flat, 0, sizeof flat);
    flat.kernel = STRIDED_COPY_CONTIGUOUS;
    flat.ndim = 1;
    flat.itemsize = 1;
    flat.src_unit_axis = -1;
    flat.volume = flat.shape[0] = big;
    flat.dst_strides[0] = flat.src_strides[0] = 1;
    for (int t = 0; t < counts; t++) {
        struct result *r = &out[t];
        r->c = c;
        r->threads = threads[t];
        set_threads(threads[t]);
        r->seconds = time_copy(&d, &s, repeats);
        r->memcpy_seconds = time_memcpy(&flat, (char *)b, (const char *)a, threads[t], repeats);
        r->gbps = (double)(sbytes + dbytes) / r->seconds / 1e9;
        r->memcpy_gbps = 2.0 * (double)big / r->memcpy_seconds / 1e9;
    }
    set_threads(threads[counts - 1]);
    strided_view_release(&s);
    strided_view_release(&d);
    free(src);
    free(dst);
    free(a);
    free(b);
}

static int write_json(const char *path, const struct result *results, int n, int repeats)
{
#ifdef HAVE_CJSON
    cJSON *root = cJSON_CreateObject();
    char method[400];
    cJSON_AddStringToObject(root, "benchmark", "subbyte_cpu");
    snprintf(method, sizeof method,
             "median of %d runs after one untimed run; GB/s = (bytes read + bytes written) / "
             "time; memcpy = the library's contiguous host kernel on the larger side's bytes, "
             "same threads",
             repeats);
    cJSON_AddStringToObject(root, "method", method);
    cJSON *machine = cJSON_AddObjectToObject(root, "machine");
    cJSON_AddNumberToObject(machine, "cpus_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON *list = cJSON_AddArrayToObject(root, "results");
    for (int i = 0; i < n; i++) {
        const struct result *r = &results[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", r->c->id);
        cJSON_AddStringToObject(o, "case", r->c->what);
        cJSON_AddNumberToObject(o, "threads", r->threads);
        cJSON_AddNumberToObject(o, "seconds", r->seconds);
        cJSON_AddNumberToObject(o, "gbps", r->gbps);
        cJSON_AddNumberToObject(o, "memcpy_seconds", r->memcpy_seconds);
        cJSON_AddNumberToObject(o, "memcpy_gbps", r->memcpy_gbps);
        cJSON_AddNumberToObject(o, "fraction_of_memcpy", r->gbps / r->memcpy_gbps);
        cJSON_AddItemToArray(list, o);
    }
    return bench_json_save(root, path, "bench_subbyte_cpu");
#else
    (void)results;
    (void)n;
    (void)repeats;
    fprintf(stderr, "bench_subbyte_cpu: built without cJSON, cannot write %s\n", path);
    return 0;
#endif
}

static void usage(FILE *f, const char *argv0)
{
    fprintf(f, "usage: %s [--repeat N] [--case ID] [--json PATH] [--help]\n", argv0);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"repeat", required_argument, NULL, 'r'},
        {"case", required_argument, NULL, 'c'},
        {"json", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    static struct result results[2 * NCASES];
    const char *json = NULL, *only = "";
    int repeats = 5, all = 1, opt, n = 0;
#ifdef _OPENMP
    all = omp_get_max_threads();
#endif
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'r': repeats = atoi(optarg); break;
        case 'c': only = optarg; break;
        case 'j': json = optarg; break;
        case 'H':
            usage(stdout, argv[0]);
            for (size_t i = 0; i < NCASES; i++)
                printf("  %-3s %s\n", cases[i].id, cases[i].what);
            return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (optind != argc || repeats < 3 || repeats > MAX_REPEATS) {
        usage(stderr, argv[0]);
        fprintf(stderr, "  --repeat: 3..%d\n", MAX_REPEATS);
        return 2;
    }
#ifndef HAVE_CJSON
    if (json != NULL)
        return write_json(json, results, 0, repeats) ? 0 : 2;
#endif
    const int threads[2] = {1, all};
    const int counts = all > 1 ? 2 : 1;
    printf("%-3s %-30s %7s %9s %9s %8s\n", "id", "case", "threads", "GB/s", "memcpy", "%");
    for (size_t i = 0; i < NCASES; i++) {
        if (strncmp(cases[i].id, only, strlen(only)) != 0)
            continue;
        run_case(&cases[i], threads, counts, repeats, &results[n]);
        for (int t = 0; t < counts; t++, n++) {
            const struct result *r = &results[n];
            printf("%-3s %-30s %7d %9.3f %9.2f %7.2f%%\n", r->c->id, r->c->what, r->threads,
                   r->gbps, r->memcpy_gbps, 100.0 * r->gbps / r->memcpy_gbps);
            fflush(stdout);
        }
    }
    if (json != NULL && !write_json(json, results, n, repeats))
        return 1;
    return 0;
}
