/*
 * bench_copy_overhead: the host time of a copy call, in nanoseconds: rows
 * O2, Z1 and Z2 of the copy suite (bench/README.md lists the rows and their
 * targets).
 *
 *   P*   planning: strided_copy_plan_make (the public planner, uncached) on
 *        layout pairs of 2, 3, 8 and 24 axes (transpose, rows, gather: the
 *        destination C-dense, the source a permuted, padded or gapped view);
 *   L*   the same pairs through the plan cache that copies use
 *        (strided__copy_plan_cached): "hit" repeats one pair, "miss" cycles
 *        through more pairs than the cache holds (a first call on a new
 *        layout pair: planning plus filling an entry);
 *   H*   host copies: strided_copy_host of a 32x32 fp32 transpose (.T -> C)
 *        and of 4 KiB contiguous, and strided_view_copy of the same between
 *        host views (with NO_STREAM, and with the NULL stream, which waits
 *        for the stream when a driver is loaded); each row's result is
 *        checked afterwards;
 *   X*   with a device: entering and leaving device 0's primary context
 *        (what every device copy does), with no context current and with
 *        that one current; and the driver's floor under a small copy:
 *        cuLaunchKernel of an empty kernel (no parameter, and one the size
 *        of the copy kernels' arguments for few and for many axes) and
 *        cuMemcpyAsync of 4 KiB, pipelined like the Z rows, on the legacy
 *        and on the per-thread default stream (X-launch-*, X-memcpy*);
 *   Z*   device copies, when device 0 exists: strided_view_copy of 32x32,
 *        256x256 and 1024x1024 fp32 .T -> C and of 4 KiB contiguous, in
 *        device memory from strided_device_resource_create, on the legacy
 *        default stream. "pipe": 2000 calls, all NONBLOCKING but the last,
 *        which is BLOCKING (so the time includes draining the queue); the
 *        "enqueue" column is the time of the NONBLOCKING calls alone.
 *        "pipe-pt": the same on the per-thread default stream;
 *        "pipe-cur": the same with device 0's primary context current on
 *        the calling thread (no context switches); "run": the device
 *        executor alone (strided__copy_device_run on the views' plan: no
 *        view checks, no planning), pipelined the same way. "block":
 *        BLOCKING on every call. "first" is the first device copy of the
 *        process (it loads the kernels) and of each layout pair. After
 *        each row the destination is checked against the source's pattern
 *        (a wrong copy is reported and the program exits with status 1),
 *        except under STRIDED_CUDA_DRIVER (the test suite's fake driver
 *        runs no kernels; its figures are the library's own host work plus
 *        the fake's).
 *
 * A measurement is the median (and the minimum) over --repeat timed loops
 * (default 7) of one calibrated length (at least --min-ms milliseconds,
 * default 20; the device loops are --calls calls, default 2000). Without
 * a device the Z rows print "skipped: no CUDA device" and say why.
 *
 * Output: a table on stdout; --json PATH writes the results as JSON too
 * (with cJSON; a build without it refuses the option). --only PREFIX runs
 * the rows whose id starts with PREFIX.
 *
 * This is a benchmark, not a test: nothing is compared with a target.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_CJSON
#include <cJSON.h>
#endif

#include "bench_clock.h"
#include "bench_json.h"
#include "copy/kernels.h"
#include "copy/launch.h"
#include "copy/plan.h"
#include "cuda/driver.h"
#include "strided.h"

#define MAX_REPEATS 101
#define MAX_ROWS 96
#define MAX_DIMS 24
/* Layout pairs the miss rows cycle through: more than the cache holds. */
#define MISS_PAIRS 256

static int repeats = 7;
static double min_seconds = 0.020;
static long device_calls = 2000;
static const char *only = "";

static void die(const char *what)
{
    fprintf(stderr, "bench_copy_overhead: %s: %s\n", what, strided_last_error());
    exit(1);
}

struct row {
    char id[16];
    char what[64];
    const char *kernel;  /* the plan's kernel, or NULL */
    const char *skipped; /* why not measured, or NULL */
    double ns, ns_min;   /* per call: median and fastest loop */
    double enqueue_ns;   /* pipelined device rows: the NONBLOCKING calls; else 0 */
    long calls;          /* per timed loop */
    const char *checked; /* copy rows: "yes", "WRONG" or why not checked */
};

static struct row rows[MAX_ROWS];
static int nrows;
/* A copy wrote a wrong result: the exit status is 1. */
static bool wrong;

static bool wanted(const char *id)
{
    return strncmp(id, only, strlen(only)) == 0;
}

static struct row *add_row(const char *id, const char *what, const char *kernel)
{
    if (nrows == MAX_ROWS) {
        fprintf(stderr, "bench_copy_overhead: more than %d rows\n", MAX_ROWS);
        exit(1);
    }
    struct row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->what, sizeof r->what, "%s", what);
    r->kernel = kernel;
    return r;
}

static void print_row(const struct row *r)
{
    if (r->skipped != NULL) {
        printf("%-12s %-52s %-10s skipped: %s\n", r->id, r->what, r->kernel ? r->kernel : "",
               r->skipped);
    } else {
        printf("%-12s %-52s %-10s %10.1f %10.1f", r->id, r->what, r->kernel ? r->kernel : "", r->ns,
               r->ns_min);
        if (r->enqueue_ns > 0)
            printf(" %10.1f", r->enqueue_ns);
        else
            printf(" %10s", "");
        printf(" %8ld%s%s\n", r->calls, r->checked ? "  checked: " : "",
               r->checked ? r->checked : "");
    }
    fflush(stdout);
}

/* Runs n calls of an operation on ctx. */
typedef void (*loop_fn)(void *ctx, long n);

/* Time loop on ctx: calibrate a length of at least min_seconds, then keep
 * the median and the fastest of repeats loops, per call. */
static void measure(struct row *r, loop_fn loop, void *ctx)
{
    double t[MAX_REPEATS];
    long n = 1;
    loop(ctx, 1); /* warm */
    for (;;) {
        double t0 = now_s();
        loop(ctx, n);
        double dt = now_s() - t0;
        if (dt >= min_seconds || n >= (1L << 40))
            break;
        n = dt <= 0 ? n * 16 : (long)((double)n * (1.25 * min_seconds / dt)) + 1;
    }
    for (int i = 0; i < repeats; i++) {
        double t0 = now_s();
        loop(ctx, n);
        t[i] = (now_s() - t0) / (double)n;
    }
    qsort(t, (size_t)repeats, sizeof t[0], compare_double);
    r->ns = 1e9 * t[repeats / 2];
    r->ns_min = 1e9 * t[0];
    r->calls = n;
}

struct pair {
    strided_layout dst, src;
};

static void plan_loop(void *ctx, long n)
{
    const struct pair *p = ctx;
    strided_copy_plan plan;
    for (long i = 0; i < n; i++)
        if (strided_copy_plan_make(&p->dst, &p->src, &plan) != STRIDED_OK)
            die("strided_copy_plan_make");
}

static void cached_loop(void *ctx, long n)
{
    const struct pair *p = ctx;
    strided_copy_plan plan;
    for (long i = 0; i < n; i++)
        if (strided__copy_plan_cached(&p->dst, &p->src, &plan) != STRIDED_OK)
            die("strided__copy_plan_cached");
}

struct pairs {
    struct pair *p;
    int n;
};

static void miss_loop(void *ctx, long n)
{
    const struct pairs *ps = ctx;
    strided_copy_plan plan;
    for (long i = 0; i < n; i++) {
        const struct pair *p = &ps->p[i % ps->n];
        if (strided__copy_plan_cached(&p->dst, &p->src, &plan) != STRIDED_OK)
            die("strided__copy_plan_cached");
    }
}

enum shape_kind { TRANSPOSE, ROWS, GATHER };
static const char *const kind_names[] = {"transpose", "rows", "gather"};

/* A pair of ndim axes: the destination C-dense of shape, the source the
 * reversed-axes view (TRANSPOSE), a view of the first shape[last] elements
 * of rows 3 longer (ROWS), or every other element of rows twice as long
 * (GATHER). extra is added to the first extent (for distinct pairs). */
static struct pair make_pair(int ndim, enum shape_kind kind, int64_t extent, int64_t extra)
{
    struct pair p;
    int64_t shape[MAX_DIMS], strides[MAX_DIMS], parent[MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        shape[i] = parent[i] = extent;
    shape[0] = parent[0] = extent + extra;
    if (strided_layout_init(&p.dst, ndim, shape, NULL, 4) != STRIDED_OK)
        die("strided_layout_init");
    switch (kind) {
    case TRANSPOSE: {
        /* A C-dense array of the reversed shape, its axes reversed. */
        int64_t step = 1;
        for (int i = 0; i < ndim; i++) {
            strides[i] = step;
            step *= shape[i];
        }
        break;
    }
    case ROWS:
    case GATHER: {
        parent[ndim - 1] = kind == ROWS ? extent + 3 : 2 * extent;
        int64_t step = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            strides[i] = step;
            step *= parent[i];
        }
        if (kind == GATHER)
            strides[ndim - 1] = 2;
        break;
    }
    }
    if (strided_layout_init(&p.src, ndim, shape, strides, 4) != STRIDED_OK)
        die("strided_layout_init");
    return p;
}

static void planning_rows(void)
{
    static const struct {
        int ndim;
        int64_t extent;
    } sizes[] = {{2, 32}, {3, 16}, {8, 4}, {24, 2}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int k = TRANSPOSE; k <= GATHER; k++) {
            int ndim = sizes[s].ndim;
            struct pair p = make_pair(ndim, (enum shape_kind)k, sizes[s].extent, 0);
            strided_copy_plan plan;
            if (strided_copy_plan_make(&p.dst, &p.src, &plan) != STRIDED_OK)
                die("strided_copy_plan_make");
            const char *kernel = strided_copy_kernel_name(plan.kernel);
            char id[16], what[64];
            snprintf(what, sizeof what, "%d-d %s, extent %lld (plan ndim %d)", ndim, kind_names[k],
                     (long long)sizes[s].extent, plan.ndim);
            snprintf(id, sizeof id, "P%d%c", ndim, "trg"[k]);
            if (wanted(id)) {
                struct row *r = add_row(id, what, kernel);
                measure(r, plan_loop, &p);
                print_row(r);
            }
            snprintf(id, sizeof id, "L%d%c-hit", ndim, "trg"[k]);
            if (wanted(id)) {
                struct row *r = add_row(id, what, kernel);
                measure(r, cached_loop, &p);
                print_row(r);
            }
            snprintf(id, sizeof id, "L%d%c-miss", ndim, "trg"[k]);
            if (wanted(id)) {
                static struct pair many[MISS_PAIRS];
                struct pairs ps = {many, MISS_PAIRS};
                for (int i = 0; i < MISS_PAIRS; i++)
                    many[i] = make_pair(ndim, (enum shape_kind)k, sizes[s].extent, i);
                struct row *r = add_row(id, what, kernel);
                measure(r, miss_loop, &ps);
                print_row(r);
            }
        }
    }
}

struct host_copy {
    strided_layout dst_layout, src_layout;
    float *dst, *src;
    strided_view dv, sv;
    unsigned flags;
};

static void host_copy_loop(void *ctx, long n)
{
    struct host_copy *c = ctx;
    for (long i = 0; i < n; i++)
        if (strided_copy_host(c->dst, &c->dst_layout, c->src, &c->src_layout, 0) != STRIDED_OK)
            die("strided_copy_host");
}

static void host_view_loop(void *ctx, long n)
{
    struct host_copy *c = ctx;
    for (long i = 0; i < n; i++)
        if (strided_view_copy(&c->dv, &c->sv, NULL, c->flags) != STRIDED_OK)
            die("strided_view_copy");
}

/* The source of an n x n transpose holds i at element i; after the copy
 * dst[i][j] must be src[j][i]. */
static bool transposed(const float *dst, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            if (dst[i * n + j] != src[j * n + i])
                return false;
    return true;
}

static void host_rows(void)
{
    strided_memory_resource *mr = NULL;
    static const struct {
        const char *id, *what;
        int64_t n; /* n x n transpose, or 0: 1024 contiguous floats */
    } cases[] = {{"H1", "32x32 fp32 .T -> C", 32}, {"H2", "4 KiB contiguous", 0}};
    if (strided_host_resource_create(64, &mr) != STRIDED_OK)
        die("strided_host_resource_create");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t n = cases[k].n, count = n > 0 ? n * n : 1024;
        struct host_copy c;
        memset(&c, 0, sizeof c);
        strided_buffer *db = NULL, *sb = NULL;
        strided_dtype f32 = {STRIDED_DTYPE_FLOAT, 32, 1};
        if (strided_buffer_alloc(mr, (size_t)count * 4, NULL, &db) != STRIDED_OK ||
            strided_buffer_alloc(mr, (size_t)count * 4, NULL, &sb) != STRIDED_OK)
            die("strided_buffer_alloc");
        c.dst = strided_buffer_ptr(db);
        c.src = strided_buffer_ptr(sb);
        for (int64_t i = 0; i < count; i++)
            c.src[i] = (float)i;
        if (n > 0) {
            if (strided_layout_init(&c.dst_layout, 2, (int64_t[]){n, n}, NULL, 4) != STRIDED_OK ||
                strided_layout_init(&c.src_layout, 2, (int64_t[]){n, n}, (int64_t[]){1, n}, 4) !=
                    STRIDED_OK)
                die("strided_layout_init");
        } else if (strided_layout_init(&c.dst_layout, 1, &count, NULL, 4) != STRIDED_OK) {
            die("strided_layout_init");
        } else {
            c.src_layout = c.dst_layout;
        }
        if (strided_view_from_buffer(db, &c.dst_layout, &f32, false, &c.dv) != STRIDED_OK ||
            strided_view_from_buffer(sb, &c.src_layout, &f32, true, &c.sv) != STRIDED_OK)
            die("strided_view_from_buffer");
        strided_copy_plan plan;
        if (strided_copy_plan_make(&c.dst_layout, &c.src_layout, &plan) != STRIDED_OK)
            die("strided_copy_plan_make");
        const char *kernel = strided_copy_kernel_name(plan.kernel);
        char id[16];
        snprintf(id, sizeof id, "%s-host", cases[k].id);
        if (wanted(id)) {
            struct row *r = add_row(id, "", kernel);
            snprintf(r->what, sizeof r->what, "strided_copy_host %s", cases[k].what);
            memset(c.dst, 0, (size_t)count * 4);
            measure(r, host_copy_loop, &c);
            bool ok = n > 0 ? transposed(c.dst, c.src, n)
                            : memcmp(c.dst, c.src, (size_t)count * 4) == 0;
            r->checked = ok ? "yes" : "WRONG";
            wrong = wrong || !ok;
            print_row(r);
        }
        static const struct {
            const char *suffix, *what;
            unsigned flags;
        } modes[] = {{"-view", "NO_STREAM", STRIDED_COPY_NO_STREAM},
                     {"-view-sync", "stream NULL", STRIDED_COPY_DEFAULT}};
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            snprintf(id, sizeof id, "%s%s", cases[k].id, modes[m].suffix);
            if (!wanted(id))
                continue;
            struct row *r = add_row(id, "", kernel);
            snprintf(r->what, sizeof r->what, "view_copy host %s, %s", cases[k].what,
                     modes[m].what);
            c.flags = modes[m].flags;
            memset(c.dst, 0, (size_t)count * 4);
            measure(r, host_view_loop, &c);
            bool ok = n > 0 ? transposed(c.dst, c.src, n)
                            : memcmp(c.dst, c.src, (size_t)count * 4) == 0;
            r->checked = ok ? "yes" : "WRONG";
            wrong = wrong || !ok;
            print_row(r);
        }
        strided_view_release(&c.dv);
        strided_view_release(&c.sv);
        strided_buffer_release(db);
        strided_buffer_release(sb);
    }
    strided_memory_resource_release(mr);
}

static char no_device[256];
/* STRIDED_CUDA_DRIVER names another driver than libcuda.so.1: the test
 * suite's fake, which runs no kernels, so device copies are not checked. */
static bool fake_driver;

struct device_copy {
    strided_view dv, sv; /* device: the copy timed */
    unsigned flags;
    void *stream; /* NULL: the legacy default stream */
    /* run_only: NONBLOCKING calls go to strided__copy_device_run with the
     * views' plan and addresses (no view checks, no planning); BLOCKING
     * calls stay view copies. */
    bool run_only;
    strided_copy_plan plan;
    uintptr_t dst, src;
};

static void device_loop(void *ctx, long n)
{
    struct device_copy *c = ctx;
    if (c->run_only && c->flags == STRIDED_COPY_NONBLOCKING) {
        for (long i = 0; i < n; i++)
            if (strided__copy_device_run(&c->plan, c->dst, c->src, c->stream, 0) != STRIDED_OK)
                die("strided__copy_device_run");
        return;
    }
    for (long i = 0; i < n; i++)
        if (strided_view_copy(&c->dv, &c->sv, c->stream, c->flags) != STRIDED_OK)
            die("strided_view_copy (device)");
}

/* Ends a pipelined loop: one more call, and the wait for the queue. */
typedef void (*finish_fn)(void *ctx);

/* repeats loops of device_calls calls: device_calls - 1 by enqueue, the
 * last by finish (which returns when the queue has drained). Per call: the
 * whole loop (ns) and the enqueued calls alone (enqueue_ns). */
static void measure_pipelined(struct row *r, loop_fn enqueue, finish_fn finish, void *ctx)
{
    double total[MAX_REPEATS], queued[MAX_REPEATS];
    const long n = device_calls;
    for (int i = -1; i < repeats; i++) { /* i = -1: warm */
        double t0 = now_s();
        enqueue(ctx, n - 1);
        double t1 = now_s();
        finish(ctx);
        double t2 = now_s();
        if (i >= 0) {
            total[i] = (t2 - t0) / (double)n;
            queued[i] = (t1 - t0) / (double)(n - 1);
        }
    }
    qsort(total, (size_t)repeats, sizeof total[0], compare_double);
    qsort(queued, (size_t)repeats, sizeof queued[0], compare_double);
    r->ns = 1e9 * total[repeats / 2];
    r->ns_min = 1e9 * total[0];
    r->enqueue_ns = 1e9 * queued[repeats / 2];
    r->calls = n;
}

/* Device copies pipelined: NONBLOCKING, the last BLOCKING. */
static void enqueue_copies(void *ctx, long n)
{
    struct device_copy *c = ctx;
    c->flags = STRIDED_COPY_NONBLOCKING;
    device_loop(c, n);
}

static void finish_copies(void *ctx)
{
    struct device_copy *c = ctx;
    c->flags = STRIDED_COPY_BLOCKING;
    device_loop(c, 1);
}

/* repeats loops of device_calls BLOCKING calls. */
static void measure_blocking(struct row *r, struct device_copy *c)
{
    double t[MAX_REPEATS];
    const long n = device_calls;
    c->flags = STRIDED_COPY_BLOCKING;
    device_loop(c, 1);
    for (int i = 0; i < repeats; i++) {
        double t0 = now_s();
        device_loop(c, n);
        t[i] = (now_s() - t0) / (double)n;
    }
    qsort(t, (size_t)repeats, sizeof t[0], compare_double);
    r->ns = 1e9 * t[repeats / 2];
    r->ns_min = 1e9 * t[0];
    r->calls = n;
}

/* A view of count floats from mr (1-d, contiguous) and, when n > 0, of
 * the same buffer as an n x n layout with the given strides. */
static void device_views(strided_memory_resource *mr, int64_t count, int64_t n,
                         const int64_t *strides, strided_view *flat, strided_view *square)
{
    strided_buffer *b = NULL;
    strided_layout l;
    strided_dtype f32 = {STRIDED_DTYPE_FLOAT, 32, 1};
    if (strided_buffer_alloc(mr, (size_t)count * 4, NULL, &b) != STRIDED_OK)
        die("strided_buffer_alloc");
    if (strided_layout_init(&l, 1, &count, NULL, 4) != STRIDED_OK ||
        strided_view_from_buffer(b, &l, &f32, false, flat) != STRIDED_OK)
        die("strided_view_from_buffer");
    if (n > 0) {
        if (strided_layout_init(&l, 2, (int64_t[]){n, n}, strides, 4) != STRIDED_OK ||
            strided_view_from_buffer(b, &l, &f32, false, square) != STRIDED_OK)
            die("strided_view_from_buffer");
    } else {
        *square = *flat;
        strided_buffer_retain(b);
    }
    strided_buffer_release(b); /* the views hold it */
}

static void blocking_copy(const strided_view *dst, const strided_view *src, const char *what)
{
    if (strided_view_copy(dst, src, NULL, STRIDED_COPY_BLOCKING) != STRIDED_OK)
        die(what);
}

/* Entering and leaving device 0's primary context, as every device copy
 * does: with no context current (a switch and a switch back), and with it
 * current already. */
struct context_ctx {
    const strided__driver *cu;
};

static void context_loop(void *ctx, long n)
{
    const struct context_ctx *c = ctx;
    for (long i = 0; i < n; i++) {
        strided__context_scope scope = {NULL, false};
        if (strided__context_enter("bench", c->cu, 0, &scope) != STRIDED_OK)
            die("strided__context_enter");
        strided__context_leave(c->cu, &scope);
    }
}

static void context_rows(const strided__driver *cu)
{
    struct context_ctx c = {cu};
    for (int current = 0; current < 2; current++) {
        const char *id = current ? "X-ctx-cur" : "X-ctx-none";
        if (!wanted(id))
            continue;
        struct row *r = add_row(id,
                                current ? "context enter+leave, already current"
                                        : "context enter+leave, none current",
                                NULL);
        strided__context_scope outer = {NULL, false};
        if (current && strided__context_enter("bench", cu, 0, &outer) != STRIDED_OK)
            die("strided__context_enter");
        measure(r, context_loop, &c);
        if (current)
            strided__context_leave(cu, &outer);
        print_row(r);
    }
}

/* The driver's own floor under a small device copy, pipelined as the Z
 * rows are (device_calls calls, then a wait for the stream): cuLaunchKernel
 * of a kernel that does nothing (PTX the driver compiles), with no
 * parameter and with one of the size of the copy kernels' argument structs
 * for a few axes and for many, one block of 32 threads; and cuMemcpyAsync of
 * 4 KiB between device buffers. On the legacy default stream and on the
 * per-thread default stream. What a copy costs above these rows is the
 * library's. */
struct floor_ctx {
    const strided__driver *cu;
    CUfunction fn; /* NULL: cuMemcpyAsync */
    void **params;
    CUstream stream;
    CUdeviceptr dst, src;
};

static void floor_loop(void *ctx, long n)
{
    const struct floor_ctx *f = ctx;
    for (long i = 0; i < n; i++) {
        CUresult r = f->fn != NULL ? f->cu->cuLaunchKernel(f->fn, 1, 1, 1, 32, 1, 1, 0, f->stream,
                                                           f->params, NULL)
                                   : f->cu->cuMemcpyAsync(f->dst, f->src, 4096, f->stream);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "bench_copy_overhead: the floor rows' call failed: CUresult %d\n",
                    (int)r);
            exit(1);
        }
    }
}

static void floor_finish(void *ctx)
{
    const struct floor_ctx *f = ctx;
    floor_loop(ctx, 1);
    if (f->cu->cuStreamSynchronize(f->stream) != CUDA_SUCCESS)
        die("cuStreamSynchronize");
}

static void floor_rows(const strided__driver *cu, strided_memory_resource *dev)
{
    static const char *const ids[] = {"X-launch-0", "X-launch-few", "X-launch-many", "X-memcpy"};
    static const struct {
        const char *suffix, *what;
        CUstream stream;
    } streams[] = {{"", "legacy stream", NULL}, {"-pt", "per-thread stream", CU_STREAM_PER_THREAD}};
    const size_t sizes[] = {0, sizeof(strided_copy_args32_8), sizeof(strided_copy_args64_64), 0};
    bool any = false;
    char id[24];
    for (int k = 0; k < 4; k++)
        for (int s = 0; s < 2; s++) {
            snprintf(id, sizeof id, "%s%s", ids[k], streams[s].suffix);
            any = any || wanted(id);
        }
    if (!any || fake_driver)
        return; /* the fake driver has no module to load */
    char ptx[512];
    snprintf(ptx, sizeof ptx,
             ".version 7.0\n.target sm_50\n.address_size 64\n"
             ".visible .entry floor_none()\n{\n\tret;\n}\n"
             ".visible .entry floor_few(.param .align 8 .b8 p[%zu])\n{\n\tret;\n}\n"
             ".visible .entry floor_many(.param .align 8 .b8 p[%zu])\n{\n\tret;\n}\n",
             sizes[1], sizes[2]);
    strided__context_scope scope = {NULL, false};
    if (strided__context_enter("bench", cu, 0, &scope) != STRIDED_OK)
        die("strided__context_enter");
    CUmodule module;
    CUfunction fns[3];
    static const char *const names[] = {"floor_none", "floor_few", "floor_many"};
    if (cu->cuModuleLoadData(&module, ptx) != CUDA_SUCCESS)
        die("cuModuleLoadData (the floor rows' PTX)");
    for (int k = 0; k < 3; k++)
        if (cu->cuModuleGetFunction(&fns[k], module, names[k]) != CUDA_SUCCESS)
            die("cuModuleGetFunction");
    static strided_copy_args64_64 zeros; /* the parameter's bytes */
    void *params[] = {&zeros};
    strided_buffer *a = NULL, *b = NULL;
    if (strided_buffer_alloc(dev, 4096, NULL, &a) != STRIDED_OK ||
        strided_buffer_alloc(dev, 4096, NULL, &b) != STRIDED_OK)
        die("strided_buffer_alloc");
    for (int k = 0; k < 4; k++)
        for (int s = 0; s < 2; s++) {
            snprintf(id, sizeof id, "%s%s", ids[k], streams[s].suffix);
            if (!wanted(id))
                continue;
            struct row *r = add_row(id, "", NULL);
            if (k < 3)
                snprintf(r->what, sizeof r->what, "cuLaunchKernel, empty, %zu B param, %s",
                         sizes[k], streams[s].what);
            else
                snprintf(r->what, sizeof r->what, "cuMemcpyAsync 4 KiB, %s", streams[s].what);
            struct floor_ctx f = {cu,
                                  k < 3 ? fns[k] : NULL,
                                  k == 0 ? NULL : params,
                                  streams[s].stream,
                                  (CUdeviceptr)(uintptr_t)strided_buffer_ptr(a),
                                  (CUdeviceptr)(uintptr_t)strided_buffer_ptr(b)};
            measure_pipelined(r, floor_loop, floor_finish, &f);
            print_row(r);
        }
    strided_buffer_release(a);
    strided_buffer_release(b);
    (void)cu->cuModuleUnload(module);
    strided__context_leave(cu, &scope);
}

static void device_rows(void)
{
    static const struct {
        const char *id, *what;
        int64_t n; /* n x n transpose, or 0: 1024 contiguous floats */
    } cases[] = {{"Z1a", "32x32 fp32 .T -> C", 32},
                 {"Z1b", "256x256 fp32 .T -> C", 256},
                 {"Z1c", "1024x1024 fp32 .T -> C", 1024},
                 {"Z2", "4 KiB contiguous", 0}};
    strided_memory_resource *dev = NULL, *host = NULL;
    strided_status status = strided_device_resource_create(0, &dev);
    if (status != STRIDED_OK) {
        snprintf(no_device, sizeof no_device, "no CUDA device (%s)", strided_last_error());
        static const char *const context_ids[] = {"X-ctx-none", "X-ctx-cur"};
        for (int i = 0; i < 2; i++)
            if (wanted(context_ids[i])) {
                struct row *r = add_row(context_ids[i], "context enter+leave", NULL);
                r->skipped = no_device;
                print_row(r);
            }
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            static const char *const modes[] = {"-pipe", "-pipe-pt", "-pipe-cur", "-run", "-block"};
            for (int m = 0; m < 5; m++) {
                char id[16];
                snprintf(id, sizeof id, "%s%s", cases[k].id, modes[m]);
                if (!wanted(id))
                    continue;
                struct row *r = add_row(id, cases[k].what, NULL);
                r->skipped = no_device;
                print_row(r);
            }
        }
        return;
    }
    if (strided_host_resource_create(64, &host) != STRIDED_OK)
        die("strided_host_resource_create");
    const char *driver = getenv("STRIDED_CUDA_DRIVER");
    fake_driver = driver != NULL && driver[0] != '\0';
    const strided__driver *cu = NULL;
    if (strided__cuda("bench", &cu) != STRIDED_OK)
        die("strided__cuda");
    context_rows(cu);
    floor_rows(cu, dev);
    bool first = true;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char id[16];
        bool any = false;
        static const char *const suffixes[] = {"-first",    "-pipe", "-pipe-pt",
                                               "-pipe-cur", "-run",  "-block"};
        for (int m = 0; m < 6; m++) {
            snprintf(id, sizeof id, "%s%s", cases[k].id, suffixes[m]);
            any = any || wanted(id);
        }
        if (!any)
            continue;
        const int64_t n = cases[k].n, count = n > 0 ? n * n : 1024;
        struct device_copy c;
        memset(&c, 0, sizeof c);
        strided_view dflat, sflat, hin, hout, unused;
        device_views(dev, count, n, NULL, &dflat, &c.dv);
        device_views(dev, count, n, (int64_t[]){1, n}, &sflat, &c.sv);
        device_views(host, count, 0, NULL, &hin, &unused);
        strided_view_release(&unused);
        device_views(host, count, 0, NULL, &hout, &unused);
        strided_view_release(&unused);
        float *in = strided_view_ptr(&hin), *out = strided_view_ptr(&hout);
        /* The source holds i at element i. */
        for (int64_t i = 0; i < count; i++)
            in[i] = (float)i;
        blocking_copy(&sflat, &hin, "host to device");
        strided_copy_plan plan;
        if (strided_copy_plan_make(&c.dv.layout, &c.sv.layout, &plan) != STRIDED_OK)
            die("strided_copy_plan_make");
        const char *kernel = strided_copy_kernel_name(plan.kernel);

        /* The first copy of this pair (of the process, for the first case:
         * the kernels load). */
        snprintf(id, sizeof id, "%s-first", cases[k].id);
        {
            double t0 = now_s();
            c.flags = STRIDED_COPY_BLOCKING;
            device_loop(&c, 1);
            double t = now_s() - t0;
            if (wanted(id)) {
                struct row *r = add_row(id, "", kernel);
                snprintf(r->what, sizeof r->what, "first %s, BLOCKING%s", cases[k].what,
                         first ? " (loads kernels)" : "");
                r->ns = r->ns_min = 1e9 * t;
                r->calls = 1;
                print_row(r);
            }
            first = false;
        }
        c.plan = plan;
        c.dst = strided_view_device_ptr(&c.dv) + (uintptr_t)(plan.dst_offset * 4);
        c.src = strided_view_device_ptr(&c.sv) + (uintptr_t)(plan.src_offset * 4);
        /* -pipe-cur: with device 0's primary context current on this
         * thread (as in a process whose CUDA runtime made it current), so
         * that no copy switches contexts; -run: the device executor
         * alone, pipelined likewise. */
        static const struct {
            const char *suffix, *what;
            bool pipelined, context_current, run_only;
            void *stream;
        } modes[] = {
            {"-pipe", "NONBLOCKING, pipelined", true, false, false, NULL},
            {"-pipe-pt", "same, per-thread stream", true, false, false, CU_STREAM_PER_THREAD},
            {"-pipe-cur", "same, its context current", true, true, false, NULL},
            {"-run", "device_run only, pipelined", true, false, true, NULL},
            {"-block", "BLOCKING each call", false, false, false, NULL}};
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            snprintf(id, sizeof id, "%s%s", cases[k].id, modes[m].suffix);
            if (!wanted(id))
                continue;
            struct row *r = add_row(id, "", kernel);
            snprintf(r->what, sizeof r->what, "%s, %s", cases[k].what, modes[m].what);
            /* Zero the destination first, so that what the check reads
             * is what these copies wrote. */
            memset(out, 0, (size_t)count * 4);
            blocking_copy(&dflat, &hout, "host to device");
            strided__context_scope scope = {NULL, false};
            if (modes[m].context_current &&
                strided__context_enter("bench", cu, 0, &scope) != STRIDED_OK)
                die("strided__context_enter");
            c.run_only = modes[m].run_only;
            c.stream = modes[m].stream;
            if (modes[m].pipelined)
                measure_pipelined(r, enqueue_copies, finish_copies, &c);
            else
                measure_blocking(r, &c);
            c.run_only = false;
            c.stream = NULL;
            if (modes[m].context_current)
                strided__context_leave(cu, &scope);
            if (fake_driver) {
                r->checked = "no (STRIDED_CUDA_DRIVER: a fake runs no kernels)";
            } else {
                blocking_copy(&hout, &dflat, "device to host");
                bool ok = n > 0 ? transposed(out, in, n) : memcmp(out, in, (size_t)count * 4) == 0;
                r->checked = ok ? "yes" : "WRONG";
                wrong = wrong || !ok;
            }
            print_row(r);
        }
        strided_view_release(&c.dv);
        strided_view_release(&c.sv);
        strided_view_release(&dflat);
        strided_view_release(&sflat);
        strided_view_release(&hin);
        strided_view_release(&hout);
    }
    strided_memory_resource_release(dev);
    strided_memory_resource_release(host);
}

static int write_json(const char *path)
{
#ifdef HAVE_CJSON
    cJSON *root = cJSON_CreateObject();
    char method[512];
    const char *driver = getenv("STRIDED_CUDA_DRIVER");

    cJSON_AddStringToObject(root, "benchmark", "copy_overhead");
    snprintf(method, sizeof method,
             "host ns per call: median and minimum of %d timed loops; planning and host "
             "rows: loops of at least %.0f ms; device rows: loops of %ld calls on the "
             "legacy default stream (pipelined: NONBLOCKING, the last call BLOCKING; "
             "enqueue_ns: the NONBLOCKING calls alone)",
             repeats, 1e3 * min_seconds, device_calls);
    cJSON_AddStringToObject(root, "method", method);
    cJSON *machine = cJSON_AddObjectToObject(root, "machine");
    cJSON_AddNumberToObject(machine, "cpus_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
#if defined(__clang__)
    cJSON_AddStringToObject(machine, "compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(machine, "compiler", "gcc " __VERSION__);
#endif
    cJSON_AddStringToObject(machine, "cuda_driver",
                            driver != NULL && driver[0] != '\0' ? driver : "libcuda.so.1");
    cJSON *list = cJSON_AddArrayToObject(root, "results");
    for (int i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", r->id);
        cJSON_AddStringToObject(o, "case", r->what);
        if (r->kernel != NULL)
            cJSON_AddStringToObject(o, "kernel", r->kernel);
        if (r->skipped != NULL) {
            cJSON_AddStringToObject(o, "skipped", r->skipped);
        } else {
            cJSON_AddNumberToObject(o, "ns_per_call", r->ns);
            cJSON_AddNumberToObject(o, "ns_per_call_min", r->ns_min);
            if (r->enqueue_ns > 0)
                cJSON_AddNumberToObject(o, "enqueue_ns_per_call", r->enqueue_ns);
            cJSON_AddNumberToObject(o, "calls_per_loop", (double)r->calls);
            if (r->checked != NULL)
                cJSON_AddStringToObject(o, "checked", r->checked);
        }
        cJSON_AddItemToArray(list, o);
    }
    return bench_json_save(root, path, "bench_copy_overhead");
#else
    fprintf(stderr,
            "bench_copy_overhead: built without cJSON (Debian: libcjson-dev), "
            "cannot write %s\n",
            path);
    return 0;
#endif
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--repeat N] [--min-ms MS] [--calls N] [--only PREFIX] "
            "[--json PATH]\n",
            argv0);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"repeat", required_argument, NULL, 'r'}, {"min-ms", required_argument, NULL, 'm'},
        {"calls", required_argument, NULL, 'c'},  {"only", required_argument, NULL, 'o'},
        {"json", required_argument, NULL, 'j'},   {NULL, 0, NULL, 0},
    };
    const char *json = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'r': repeats = atoi(optarg); break;
        case 'm': min_seconds = atof(optarg) / 1e3; break;
        case 'c': device_calls = atol(optarg); break;
        case 'o': only = optarg; break;
        case 'j': json = optarg; break;
        default: usage(argv[0]); return 2;
        }
    }
    if (optind != argc || repeats < 1 || repeats > MAX_REPEATS || !(min_seconds > 0) ||
        device_calls < 2) {
        usage(argv[0]);
        fprintf(stderr, "  --repeat: 1..%d; --min-ms: > 0; --calls: >= 2\n", MAX_REPEATS);
        return 2;
    }
#ifndef HAVE_CJSON
    if (json != NULL)
        return write_json(json) ? 0 : 2;
#endif
    printf("%-12s %-52s %-10s %10s %10s %10s %8s\n", "id", "case", "kernel", "ns/call", "min",
           "enqueue", "calls");
    planning_rows();
    host_rows();
    device_rows();
    if (json != NULL && !write_json(json))
        return 1;
    if (wrong) {
        fprintf(stderr, "bench_copy_overhead: a copy wrote a wrong result (see the table)\n");
        return 1;
    }
    return 0;
}
