/*
 * fuzz_copy_host.c: host copies (strided_copy_host, and strided_view_copy
 * between wrapped host views) over guard-paged memory.
 *
 * An input is a (dst, src) pair of small layouts (at most FUZZ_ENUM_LIMIT
 * elements of 1 to 16 bytes; src of dst's shape or broadcast to it), how
 * their memory is laid out, and how the copy runs. Each layout's
 * footprint lies in pages of its own, between PROT_NONE pages, flush with
 * one end of them (so a byte past that end faults); the bytes of those
 * pages outside the footprint are poisoned for AddressSanitizer, so
 * touching them is reported too. Sometimes both footprints share one
 * mapping, at decoded positions, and overlap (the copy must then behave
 * as if it read the whole source first).
 *
 * Checked: the copy succeeds exactly when its plan does and no pointer is
 * NULL where there are elements; afterwards every destination element
 * holds the bytes of the source element it is paired with (the source
 * broadcast), every other byte of the mappings is unchanged, and a failed
 * copy writes nothing.
 */
/* mmap's MAP_ANONYMOUS and setenv are POSIX extensions. */
#define _DEFAULT_SOURCE

#include <sanitizer/asan_interface.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "strided/copy.h"

static const fuzz_limits limits = {
    .max_ndim = 5,
    .wide_ndim = false,
    .max_extent = 5,
    .max_long = 96,
    .max_stride = 7,
    .max_itemsize = 16,
    .edges = false,
};

/* Footprints above this are not tried. */
#define MAX_FOOTPRINT (1 << 18)

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* OpenMP threads that spin while idle would eat the fuzzer's time. */
    setenv("OMP_WAIT_POLICY", "passive", 0);
    return 0;
}

/* A mapping with PROT_NONE pages around its rw bytes. */
typedef struct region {
    char *map; /* the whole mapping */
    size_t map_size;
    char *rw; /* the accessible pages */
    size_t rw_size;
} region;

static size_t page_size(void)
{
    static size_t page;
    if (page == 0)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

static void region_make(region *r, size_t bytes)
{
    size_t page = page_size();
    r->rw_size = (bytes + page - 1) / page * page;
    if (r->rw_size == 0)
        r->rw_size = page;
    r->map_size = r->rw_size + 2 * page;
    r->map = mmap(NULL, r->map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FUZZ_REQUIRE(r->map != MAP_FAILED, "mmap of %zu bytes failed", r->map_size);
    r->rw = r->map + page;
    FUZZ_REQUIRE(mprotect(r->rw, r->rw_size, PROT_READ | PROT_WRITE) == 0, "mprotect failed");
}

/* Poison the rw bytes outside [lo, hi) (as far as AddressSanitizer's
 * 8-byte granules allow below lo). */
static void region_poison(region *r, const char *lo, const char *hi)
{
    uintptr_t start = (uintptr_t)r->rw, low = (uintptr_t)lo & ~(uintptr_t)7;
    if (low > start)
        ASAN_POISON_MEMORY_REGION(r->rw, low - start);
    if ((uintptr_t)hi < start + r->rw_size)
        ASAN_POISON_MEMORY_REGION(hi, start + r->rw_size - (uintptr_t)hi);
}

static void region_free(region *r)
{
    if (r->map == NULL)
        return;
    ASAN_UNPOISON_MEMORY_REGION(r->rw, r->rw_size);
    munmap(r->map, r->map_size);
    r->map = NULL;
}

/* The footprint of a layout around its element 0, in bytes: [lo, hi)
 * relative to element 0; false without elements. */
static bool footprint(const strided_layout *l, int64_t *lo, int64_t *hi)
{
    if (strided_layout_volume(l) == 0)
        return false;
    fuzz_i128 a, b;
    fuzz_bounds(l->ndim, l->shape, l->strides, 0, &a, &b);
    *lo = (int64_t)(a * l->itemsize);
    *hi = (int64_t)((b + 1) * l->itemsize);
    return true;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fill(char *p, size_t n, uint64_t seed)
{
    uint64_t s = seed | 1;
    for (size_t k = 0; k < n; k++)
        p[k] = (char)(rng_next(&s) >> 24);
}

/* The byte image the copy must leave: the destination mapping's bytes
 * before, with each destination element overwritten by its source
 * element's bytes as they were before the copy (src_before). */
static void reference(char *ref, const char *ref_base, const strided_layout *dl, const char *d0,
                      const strided_layout *sl, const char *src_before, const char *src_base,
                      const char *s0)
{
    int64_t j[STRIDED_MAX_NDIM] = {0}, q[STRIDED_MAX_NDIM];
    size_t isz = (size_t)dl->itemsize;
    do {
        fuzz_broadcast_index(dl->ndim, j, sl, q);
        int64_t doff = (int64_t)(fuzz_offset(dl, j) - dl->slice_offset) * (int64_t)isz;
        int64_t soff = (int64_t)(fuzz_offset(sl, q) - sl->slice_offset) * (int64_t)isz;
        memcpy(ref + (d0 + doff - ref_base), src_before + (s0 + soff - src_base), isz);
    } while (fuzz_next_index(dl->ndim, dl->shape, j));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = fuzz_input_make(data, size);
    uint8_t mode = fuzz_u8(&in);
    strided_layout dl, sl;
    if (!fuzz_copy_pair(&in, &limits, &dl, &sl))
        return 0;
    int64_t dvol = strided_layout_volume(&dl);
    if (dvol > FUZZ_ENUM_LIMIT || strided_layout_volume(&sl) > FUZZ_ENUM_LIMIT)
        return 0;
    int64_t dlo = 0, dhi = 0, slo = 0, shi = 0;
    bool dhas = footprint(&dl, &dlo, &dhi), shas = footprint(&sl, &slo, &shi);
    if (dhi - dlo > MAX_FOOTPRINT || shi - slo > MAX_FOOTPRINT)
        return 0;

    bool overlap = (mode & 1) != 0;
    static const int threads[] = {1, 1, 0, 2};
    int nthreads = threads[mode >> 1 & 3];
    bool dst_flush_end = (mode & 8) != 0, src_flush_end = (mode & 16) != 0;
    bool views = (mode & 32) != 0;
    uint8_t nulls = fuzz_u8(&in);
    uint8_t lead_d = fuzz_u8(&in) % 64, lead_s = fuzz_u8(&in) % 64;
    uint16_t shift = fuzz_u16(&in);
    uint64_t seed = fuzz_u64(&in);

    /* Place the footprints: in separate mappings flush with the start
     * (after a lead of up to 63 bytes) or the end; or both in one mapping,
     * the source at a decoded distance from the destination. keep_* are
     * the bytes left unpoisoned in each mapping. */
    region rd = {0}, rs = {0};
    char *d0, *s0; /* each layout's element 0 */
    char *keep_dlo, *keep_dhi, *keep_slo = NULL, *keep_shi = NULL;
    size_t dbytes = (size_t)(dhi - dlo), sbytes = (size_t)(shi - slo);
    if (overlap) {
        int64_t span = (int64_t)(dbytes > sbytes ? dbytes : sbytes);
        int64_t at_d = span, at_s = (int64_t)(shift % (uint64_t)(2 * span + 1));
        int64_t first = !shas || (dhas && at_d < at_s) ? at_d : at_s;
        int64_t end_d = at_d + (int64_t)dbytes, end_s = at_s + (int64_t)sbytes;
        int64_t end = !shas || (dhas && end_d > end_s) ? end_d : end_s;
        region_make(&rd, (size_t)(end - first) + lead_d);
        char *origin = dst_flush_end ? rd.rw + rd.rw_size - end : rd.rw + lead_d - first;
        d0 = origin + at_d - dlo;
        s0 = origin + at_s - slo;
        keep_dlo = origin + first;
        keep_dhi = origin + end;
    } else {
        region_make(&rd, dbytes + lead_d);
        region_make(&rs, sbytes + lead_s);
        keep_dlo = dst_flush_end ? rd.rw + rd.rw_size - dbytes : rd.rw + lead_d;
        keep_slo = src_flush_end ? rs.rw + rs.rw_size - sbytes : rs.rw + lead_s;
        keep_dhi = keep_dlo + dbytes;
        keep_shi = keep_slo + sbytes;
        d0 = keep_dlo - dlo;
        s0 = keep_slo - slo;
    }

    /* Fill everything accessible, keep the images before the copy, then
     * poison the margins. */
    fill(rd.rw, rd.rw_size, seed);
    char *d_before = malloc(rd.rw_size), *s_before = NULL;
    memcpy(d_before, rd.rw, rd.rw_size);
    region_poison(&rd, keep_dlo, keep_dhi);
    if (!overlap) {
        fill(rs.rw, rs.rw_size, seed * 3 + 1);
        s_before = malloc(rs.rw_size);
        memcpy(s_before, rs.rw, rs.rw_size);
        region_poison(&rs, keep_slo, keep_shi);
    }

    char *dst = (nulls & 0xF0) == 0xF0 ? NULL : d0;
    char *src = (nulls & 0x0F) == 0x0F ? NULL : s0;
    if (nulls == 0x7F || nulls == 0x80) {
        /* A NULL layout, or a NULL view: refused before anything else. */
        fuzz_mark_error();
        strided_status st = nulls == 0x7F ? strided_copy_host(d0, NULL, s0, &sl, 1)
                                          : strided_view_copy(NULL, NULL, NULL, 0);
        fuzz_check_outcome("copy (NULL layout or view)", st, FUZZ_INVALID, NULL, NULL, 0,
                           "a NULL layout or view");
    }
    fuzz_statuses want = fuzz_plan_expect(&dl, &sl);
    if (!want && dvol > 0 && (dst == NULL || src == NULL))
        want = FUZZ_INVALID;

    char ctx[7000];
    fuzz_text ta, tb;
    snprintf(ctx, sizeof ctx, "%s dst %s at %p, src %s at %p, nthreads %d%s",
             views ? "strided_view_copy" : "strided_copy_host", fuzz_show(&dl, &ta), (void *)dst,
             fuzz_show(&sl, &tb), (void *)src, nthreads, overlap ? ", one mapping" : "");
    strided_status st;
    fuzz_trace(ctx);
    fuzz_mark_error();
    if (views) {
        /* The same copy between views wrapped around the footprints. */
        strided_device cpu = {STRIDED_DEVICE_CPU, 0};
        strided_view vd, vs;
        bool readonly = (nulls & 0x30) == 0x30;
        if (dst == NULL || src == NULL) {
            free(d_before);
            free(s_before);
            region_free(&rd);
            region_free(&rs);
            return 0;
        }
        st = strided_view_wrap(dst, &dl, NULL, readonly, &cpu, NULL, NULL, &vd);
        FUZZ_REQUIRE(st == STRIDED_OK, "wrapping the destination failed: %s", ctx);
        st = strided_view_wrap(src, &sl, NULL, false, &cpu, NULL, NULL, &vs);
        FUZZ_REQUIRE(st == STRIDED_OK, "wrapping the source failed: %s", ctx);
        if (readonly)
            want |= FUZZ_INVALID;
        fuzz_mark_error();
        st = strided_view_copy(&vd, &vs, NULL, (nulls & 0x40) ? STRIDED_COPY_NO_STREAM : 0);
        strided_view_release(&vd);
        strided_view_release(&vs);
    } else {
        st = strided_copy_host(dst, &dl, src, &sl, nthreads);
    }
    fuzz_check_outcome("copy", st, want, NULL, NULL, 0, ctx);

    /* Compare every accessible byte with the reference. */
    ASAN_UNPOISON_MEMORY_REGION(rd.rw, rd.rw_size);
    char *ref = malloc(rd.rw_size);
    memcpy(ref, d_before, rd.rw_size);
    if (st == STRIDED_OK && dvol > 0)
        reference(ref, rd.rw, &dl, d0, &sl, overlap ? d_before : s_before, overlap ? rd.rw : rs.rw,
                  s0);
    for (size_t k = 0; k < rd.rw_size; k++)
        FUZZ_REQUIRE(rd.rw[k] == ref[k],
                     "destination mapping byte %zd (from element 0: %td) is "
                     "0x%02x, want 0x%02x (before: 0x%02x): %s",
                     (ssize_t)k, rd.rw + k - d0, (unsigned char)rd.rw[k], (unsigned char)ref[k],
                     (unsigned char)d_before[k], ctx);
    if (!overlap) {
        ASAN_UNPOISON_MEMORY_REGION(rs.rw, rs.rw_size);
        FUZZ_REQUIRE(memcmp(rs.rw, s_before, rs.rw_size) == 0, "the copy wrote the source: %s",
                     ctx);
    }
    free(ref);
    free(d_before);
    free(s_before);
    region_free(&rd);
    region_free(&rs);
    return 0;
}
