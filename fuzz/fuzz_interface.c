/*
 * fuzz_interface.c: the array-interface and CUDA-array-interface path as it
 * lives in C: a type string parsed by strided_typestr_parse, a shape with
 * byte strides (or none, for C order) made into a layout by
 * strided_layout_init_byte_strides, and the memory at an element-0 address
 * wrapped by strided_view_wrap.
 *
 * Checked: the type string parser accepts exactly the strings its
 * declaration describes (byte order, kind, decimal size, a unit for
 * datetimes), with the kind's sizes, and reports an itemsize in 1..2**31-1
 * and the DLPack type the declaration names; the byte-stride constructor
 * answers what its rules call for and keeps the layout invariant; the wrap
 * succeeds exactly when the layout's footprint around element0 lies in the
 * address space (element0 may be NULL only without elements), and then
 * its buffer covers exactly that footprint, element (0,...,0) is at
 * element0, nothing wraps around the top of the address space, the release
 * callback runs once with the footprint after the last release and never
 * on failure; views derived from the wrapped one are accepted inside the
 * footprint and refused one element outside it.
 *
 * The whole import of a described array (strided_view_import_interface,
 * both interfaces, no driver: CUDA data is then host memory no device
 * reaches): its rules in their order decide the status exactly up to the
 * memory step, the release callback runs exactly once (before the call
 * returns on failure, at the view's release otherwise), a failure leaves
 * the view untouched, and a success is the view strided_view_wrap makes of
 * the same pieces.
 */
#include <ctype.h>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "strided/interface.h"
#include "strided/view.h"

static const fuzz_limits limits = {
    .max_ndim = 6,
    .wide_ndim = true,
    .max_extent = 6,
    .max_stride = 16,
    .max_itemsize = 32,
    .edges = true,
};

#define MAX_BUFFER (1 << 20)

/* A type string: built from a byte order, a kind, a size and sometimes a
 * unit (tag < 192), or the input's raw bytes. */
static void decode_typestr(fuzz_input *in, char *buf, size_t cap)
{
    uint8_t tag = fuzz_u8(in);
    if (tag >= 192) {
        fuzz_string(in, buf, (size_t)(tag - 192) % (cap - 1));
        return;
    }
    static const char orders[] = "<>|=<|x";
    static const char kinds[] = "biufcVSUMmOqtx?";
    static const uint64_t sizes[] = {0,           1,         2,         3,           4,  8,
                                     12,          16,        32,        64,          10, 2147483647,
                                     2147483648u, 536870912, 536870911, 10000000000u};
    static const char *const units[] = {
        "",          "[ns]", "[25us]",  "[]", "[D]", "[n$]", "[", "x", "[ABCDEFGHIJKLMNOPQ]",
        "[generic]", " ",    "[s]extra"};
    uint8_t k = fuzz_u8(in), z = fuzz_u8(in), u = fuzz_u8(in);
    char size[32];
    if (z < 240)
        snprintf(size, sizeof size, "%" PRIu64, sizes[z % 16]);
    else if (z < 248)
        snprintf(size, sizeof size, "0%u", (unsigned)(z % 9));
    else
        snprintf(size, sizeof size, "%s", z % 2 ? "" : "+4");
    snprintf(buf, cap, "%c%c%s%s", orders[tag % 7], kinds[k % 15], size,
             u < 128 ? "" : units[u % 12]);
}

/* What strided_typestr_parse must answer for s under flags, by its
 * declaration; on success the kind, itemsize and byte order it must
 * report. maybe: the string has a unit the declaration leaves open
 * (letters and digits are what datetimes use; others may go either way),
 * so the statuses in the result are possible, not certain. */
static fuzz_statuses typestr_expect(const char *s, unsigned flags, char *kind_out,
                                    int64_t *size_out, bool *swapped_out, bool *maybe)
{
    *maybe = false;
    if (s[0] == '\0' || strchr("<>|=", s[0]) == NULL || s[1] == '\0')
        return FUZZ_INVALID;
    char order = s[0], kind = s[1];
    fuzz_statuses bad = 0, open = 0;
    if (kind == 'O' || (flags & STRIDED_TYPESTR_HOLDS_REFERENCES))
        bad |= FUZZ_UNSUPPORTED;
    if (kind == 'O' && s[2] == '\0')
        return bad; /* "|O": objects, written without a size */
    const char *p = s + 2;
    if (!isdigit((unsigned char)*p))
        return bad | FUZZ_INVALID;
    fuzz_i128 n = 0;
    for (; isdigit((unsigned char)*p); p++)
        n = fuzz_clamp(n * 10 + (*p - '0'));
    if (*p == '[') {
        const char *unit = ++p, *close = strchr(p, ']');
        if ((kind != 'M' && kind != 'm') || close == NULL)
            return bad | FUZZ_INVALID;
        while (isalnum((unsigned char)*p))
            p++;
        if (p != close || p == unit || p - unit > 16)
            open |= FUZZ_INVALID;
        p = close + 1;
    }
    if (*p != '\0')
        return bad | FUZZ_INVALID;
    if (n > INT32_MAX)
        return bad | open | FUZZ_INVALID | FUZZ_UNSUPPORTED;
    fuzz_i128 itemsize = kind == 'U' ? n * 4 : n;
    static const struct {
        char kind;
        const char *sizes; /* accepted sizes as ",n," entries; NULL: any size */
        bool ordered;
    } table[] = {
        {'b', ",1,", false},         {'i', ",1,2,4,8,", true}, {'u', ",1,2,4,8,", true},
        {'f', ",1,2,4,8,16,", true}, {'c', ",8,16,32,", true}, {'V', NULL, false},
        {'S', NULL, false},          {'U', NULL, true},        {'M', ",8,", true},
        {'m', ",8,", true},
    };
    int row = -1;
    for (int i = 0; i < (int)(sizeof table / sizeof table[0]); i++)
        if (table[i].kind == kind)
            row = i;
    char key[32];
    snprintf(key, sizeof key, ",%d,", (int)itemsize);
    if (row < 0 || itemsize <= 0 || itemsize > INT32_MAX ||
        (table[row].sizes != NULL && strstr(table[row].sizes, key) == NULL))
        bad |= FUZZ_UNSUPPORTED;
    bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    bool swapped = row >= 0 && table[row].ordered && itemsize > 1 && order == (little ? '>' : '<');
    if (swapped && (flags & STRIDED_TYPESTR_NATIVE_ONLY))
        bad |= FUZZ_UNSUPPORTED;
    if (bad)
        return bad | open;
    *maybe = open != 0;
    *kind_out = kind;
    *size_out = (int64_t)itemsize;
    *swapped_out = swapped;
    return open;
}

/* Parse a type string and check the answer; returns the itemsize and the
 * dtype (has_dtype) on success, 0 otherwise. */
static int check_typestr(fuzz_input *in, strided_dtype *dtype, bool *has_dtype)
{
    char s[48];
    decode_typestr(in, s, sizeof s);
    unsigned flags = fuzz_u8(in) % 4;
    char kind = 0;
    int64_t size = 0;
    bool swapped = false, maybe;
    fuzz_statuses want = typestr_expect(s, flags, &kind, &size, &swapped, &maybe);
    strided_typestr out, before;
    memset(&out, 0xA5, sizeof out);
    memcpy(&before, &out, sizeof out);
    char ctx[160];
    snprintf(ctx, sizeof ctx, "typestr \"%.60s\" flags %u", s, flags);
    fuzz_trace(ctx);
    fuzz_mark_error();
    strided_status st = strided_typestr_parse(s, flags, &out);
    fuzz_check_outcome("typestr_parse", st, maybe && st == STRIDED_OK ? 0 : want, &out, &before,
                       sizeof out, ctx);
    if (st != STRIDED_OK)
        return 0;
    FUZZ_REQUIRE(out.itemsize > 0 && out.itemsize <= INT32_MAX && out.itemsize == size &&
                     out.kind == kind && out.swapped == swapped,
                 "typestr_parse gave kind '%c' itemsize %d swapped %d: %s", out.kind,
                 (int)out.itemsize, out.swapped, ctx);
    bool dl = !swapped &&
              ((kind == 'b' && size == 1) || ((kind == 'i' || kind == 'u') && size <= 8) ||
               (kind == 'f' && size >= 2 && size <= 8) || (kind == 'c' && size <= 16));
    FUZZ_REQUIRE(out.has_dtype == dl, "typestr_parse: has_dtype is %d: %s", out.has_dtype, ctx);
    if (dl) {
        int code = kind == 'b'   ? STRIDED_DTYPE_BOOL
                   : kind == 'i' ? STRIDED_DTYPE_INT
                   : kind == 'u' ? STRIDED_DTYPE_UINT
                   : kind == 'f' ? STRIDED_DTYPE_FLOAT
                                 : STRIDED_DTYPE_COMPLEX;
        FUZZ_REQUIRE(out.dtype.code == code && out.dtype.bits == size * 8 && out.dtype.lanes == 1,
                     "typestr_parse: dtype (%u,%u,%u): %s", out.dtype.code, out.dtype.bits,
                     out.dtype.lanes, ctx);
        int dsize = 0;
        FUZZ_REQUIRE(strided_dtype_itemsize(out.dtype, &dsize) == STRIDED_OK && dsize == size,
                     "typestr_parse's dtype has another size: %s", ctx);
    }
    *dtype = out.dtype;
    *has_dtype = out.has_dtype;
    return (int)out.itemsize;
}

typedef struct release_log {
    int calls;
    void *context, *ptr;
    size_t size;
} release_log;

static void release(void *context, void *ptr, size_t size)
{
    release_log *log = context;
    log->calls++;
    log->context = context;
    log->ptr = ptr;
    log->size = size;
}

/* The element-0 address: mostly inside a heap buffer holding exactly the
 * footprint, else NULL, or an address near either end of the address
 * space or anywhere. */
static uintptr_t decode_element0(fuzz_input *in, const strided_layout *l, char **buffer)
{
    uint8_t m = fuzz_u8(in);
    *buffer = NULL;
    int64_t isz = l->itemsize;
    if (m < 160) {
        fuzz_i128 lo = 0, hi = -1;
        if (fuzz_volume(l->ndim, l->shape, NULL) > 0)
            fuzz_bounds(l->ndim, l->shape, l->strides, 0, &lo, &hi);
        fuzz_i128 bytes = (hi - lo + 1) * isz;
        bool fits = bytes <= MAX_BUFFER;
        *buffer = malloc(fits && bytes > 0 ? (size_t)bytes : 16);
        FUZZ_REQUIRE(*buffer != NULL, "malloc failed");
        return (uintptr_t)*buffer + (fits ? (uintptr_t)(int64_t)(-lo * isz) : 0);
    }
    if (m < 176)
        return 0;
    if (m < 200)
        return UINTPTR_MAX - (uintptr_t)fuzz_u16(in) * (uintptr_t)(1 + m % 8);
    if (m < 216)
        return 1 + (uintptr_t)fuzz_u16(in);
    if (m < 232)
        return ((uintptr_t)1 << 63) + (uintptr_t)(int64_t)(int16_t)fuzz_u16(in);
    return (uintptr_t)fuzz_u64(in);
}

/* The bytes [start, start + bytes) the elements occupy around element0,
 * exact; false for a layout without elements. */
static bool wrap_footprint(const strided_layout *l, uintptr_t e0, fuzz_i128 *start,
                           fuzz_i128 *bytes)
{
    if (fuzz_volume(l->ndim, l->shape, NULL) == 0)
        return false;
    fuzz_i128 lo, hi;
    fuzz_bounds(l->ndim, l->shape, l->strides, 0, &lo, &hi); /* from element 0 */
    *start = (fuzz_i128)e0 + lo * l->itemsize;
    *bytes = (hi - lo + 1) * l->itemsize;
    return true;
}

/* A view of the 0-d layout with slice offset k (a 1-d layout of stride 1,
 * or -1 for a negative k, indexed at |k|): inside the footprint it must be
 * accepted, outside refused. */
static void check_offset_view(const strided_view *v, int64_t k, bool inside, const char *ctx)
{
    if (k <= -(1 << 20) || k >= (1 << 20))
        return;
    int64_t n = (k < 0 ? -k : k) + 1, step = k < 0 ? -1 : 1;
    strided_layout line, point;
    if (strided_layout_init(&line, 1, &n, &step, v->layout.itemsize) != STRIDED_OK)
        return;
    strided_index at = strided_index_at(k < 0 ? -k : k);
    FUZZ_REQUIRE(strided_layout_slice(&line, 1, &at, &point) == STRIDED_OK,
                 "slicing (%" PRId64 ",) at %" PRId64 " failed", n, k);
    strided_view d, before;
    memset(&d, 0xA5, sizeof d);
    memcpy(&before, &d, sizeof d);
    fuzz_mark_error();
    strided_status st = strided_view_view(v, &point, NULL, &d);
    char c[3500];
    snprintf(c, sizeof c, "view of element offset %" PRId64 " (%s the footprint) of %s", k,
             inside ? "inside" : "outside", ctx);
    fuzz_check_outcome("view", st, inside ? 0 : FUZZ_INVALID | FUZZ_OVERFLOW, &d, &before, sizeof d,
                       c);
    if (st == STRIDED_OK)
        strided_view_release(&d);
}

static void check_wrap(fuzz_input *in, const strided_layout *l, const strided_dtype *ts_dtype,
                       bool ts_has_dtype)
{
    char *buffer;
    uintptr_t e0 = decode_element0(in, l, &buffer);
    uint8_t opts = fuzz_u8(in);
    strided_device cpu = {STRIDED_DEVICE_CPU, 0}, cuda = {STRIDED_DEVICE_CUDA, opts >> 6};
    const strided_device *device = (opts & 3) == 3 ? &cuda : (opts & 3) == 2 ? NULL : &cpu;
    bool readonly = (opts & 4) != 0, with_release = (opts & 8) == 0;
    strided_dtype dtype = *ts_dtype;
    const strided_dtype *dt = ts_has_dtype && (opts & 16) ? &dtype : NULL;
    if (opts & 32) {
        /* A dtype of another size, or one no size has. */
        static const strided_dtype odd[] = {{STRIDED_DTYPE_UINT, 8, 1},
                                            {STRIDED_DTYPE_FLOAT, 64, 1},
                                            {STRIDED_DTYPE_FLOAT, 32, 2},
                                            {99, 8, 1}};
        dtype = odd[opts >> 6];
        dt = &dtype;
    }

    /* The rules of strided_view_wrap. */
    fuzz_statuses want = 0;
    bool maybe = false;
    int dsize = 0;
    if (dt != NULL) {
        int d = 0;
        if (strided_dtype_itemsize(*dt, &d) != STRIDED_OK)
            want |= FUZZ_UNSUPPORTED;
        dsize = d;
        if (d != 0 && d != l->itemsize)
            want |= FUZZ_INVALID;
    }
    bool empty = fuzz_volume(l->ndim, l->shape, NULL) == 0;
    if (e0 == 0 && !empty)
        want |= FUZZ_INVALID;
    fuzz_i128 start = e0, bytes = 0;
    if (wrap_footprint(l, e0, &start, &bytes) && !want) {
        /* In the address space, above address 0 (the null page). */
        fuzz_i128 top = (fuzz_i128)UINTPTR_MAX + 1;
        if (!fuzz_fits64(bytes) || start <= 0 || start + bytes > top)
            want |= FUZZ_OVERFLOW;
        else if (start + bytes == top)
            maybe = true, want |= FUZZ_OVERFLOW | FUZZ_INVALID; /* no end address */
    }

    /* Memory of no stated device is classified by the driver. */
    if (device == NULL && (maybe || !want)) {
        maybe = true;
        want |= FUZZ_DRIVER;
    }

    char ctx[3600];
    fuzz_text t;
    snprintf(ctx, sizeof ctx, "wrap(element0 %p, %s, dtype %s(%d bytes), device %s, %s%s)",
             (void *)e0, fuzz_show(l, &t), dt ? "given" : "none", dsize,
             device == &cpu ? "CPU"
             : device       ? "CUDA"
                            : "NULL",
             readonly ? "read-only" : "writable", with_release ? ", release" : "");
    fuzz_trace(ctx);
    release_log log = {0};
    strided_view v, before;
    memset(&v, 0xA5, sizeof v);
    memcpy(&before, &v, sizeof v);
    fuzz_mark_error();
    strided_status st = strided_view_wrap((void *)e0, l, dt, readonly, device,
                                          with_release ? release : NULL, &log, &v);
    fuzz_check_outcome("wrap", st, maybe && st == STRIDED_OK ? 0 : want, &v, &before, sizeof v,
                       ctx);
    FUZZ_REQUIRE(log.calls == 0,
                 "wrap ran the release callback %d times before the view's "
                 "release: %s",
                 log.calls, ctx);
    if (st != STRIDED_OK) {
        free(buffer);
        return;
    }

    uintptr_t base = (uintptr_t)strided_buffer_ptr(v.buffer);
    size_t size = strided_buffer_size(v.buffer);
    uintptr_t at = (uintptr_t)strided_view_ptr(&v);
    FUZZ_REQUIRE(at == e0, "the wrapped view's element 0 is at %p: %s", (void *)at, ctx);
    if (!empty) {
        FUZZ_REQUIRE((fuzz_i128)base == start && (fuzz_i128)size == bytes,
                     "the buffer [%p, +%zu) is not the footprint: %s", (void *)base, size, ctx);
        FUZZ_REQUIRE(base <= e0 && e0 - base < size && size <= UINTPTR_MAX - base,
                     "element 0 or the buffer's end wraps around the footprint: %s", ctx);
    } else {
        FUZZ_REQUIRE(size == 0, "an empty layout's buffer has %zu bytes: %s", size, ctx);
    }
    FUZZ_REQUIRE(strided_layout_equal(&v.layout, l) && v.readonly == readonly &&
                     v.has_dtype == (dt != NULL),
                 "the wrapped view does not keep its layout, dtype or flag: %s", ctx);
    if (device != NULL)
        FUZZ_REQUIRE(v.device.device_type == device->device_type &&
                         v.device.device_id == device->device_id,
                     "the wrapped view's device is not the one given: %s", ctx);
    strided_memory_info info = strided_buffer_memory_info(v.buffer);
    if (device == &cpu)
        FUZZ_REQUIRE(info.kind == STRIDED_MEMORY_HOST && info.host_accessible &&
                         !info.device_accessible,
                     "CPU memory is not classified as host memory: %s", ctx);
    else if (device == &cuda)
        FUZZ_REQUIRE(info.kind == STRIDED_MEMORY_DEVICE && info.device_accessible &&
                         info.device_id == cuda.device_id,
                     "CUDA memory is not classified as that device's memory: %s", ctx);

    /* Derived views: a slicing of the layout stays inside; one element
     * past either end of the footprint does not. */
    if (!empty) {
        strided_index idx[STRIDED_MAX_NDIM];
        for (int i = 0; i < l->ndim; i++)
            idx[i] = fuzz_index(in, l->shape[i]);
        strided_layout sub;
        if (strided_layout_slice(l, l->ndim, idx, &sub) == STRIDED_OK) {
            strided_view d;
            fuzz_mark_error();
            st = strided_view_view(&v, &sub, NULL, &d);
            FUZZ_REQUIRE(st == STRIDED_OK,
                         "a view of a slicing of the wrapped layout was "
                         "refused (%s): %s",
                         strided_status_name(st), ctx);
            uintptr_t want_at = e0 + (uintptr_t)((sub.slice_offset - l->slice_offset) *
                                                 (int64_t)l->itemsize);
            FUZZ_REQUIRE(strided_layout_volume(&sub) == 0 ||
                             (uintptr_t)strided_view_ptr(&d) == want_at,
                         "a derived view's element 0 moved: %s", ctx);
            strided_view_release(&d);
        }
        fuzz_i128 lo, hi;
        fuzz_bounds(l->ndim, l->shape, l->strides, l->slice_offset, &lo, &hi);
        if (fuzz_fits64(hi + 1) && fuzz_fits64(lo - 1)) {
            check_offset_view(&v, (int64_t)hi, true, ctx);
            check_offset_view(&v, (int64_t)lo, true, ctx);
            check_offset_view(&v, (int64_t)(hi + 1), false, ctx);
            check_offset_view(&v, (int64_t)(lo - 1), false, ctx);
        }
    }

    strided_view_release(&v);
    FUZZ_REQUIRE(log.calls == (with_release ? 1 : 0), "the release callback ran %d times: %s",
                 log.calls, ctx);
    if (with_release)
        FUZZ_REQUIRE(log.context == &log && (uintptr_t)log.ptr == base && log.size == size,
                     "the release callback got (%p, %p, %zu), not the footprint: %s", log.context,
                     log.ptr, log.size, ctx);
    free(buffer);
}

/* The import of an interface dict made of a type string, the decoded
 * layout arguments (byte strides, or none) and decoded header, stream and
 * memory fields. */
static void check_import(fuzz_input *in, const char *typestr, const fuzz_layout_args *a)
{
    static const int64_t versions[] = {3, 3, 3, 4, 2, 0, INT64_MIN, INT64_MAX};
    static const int64_t streams[] = {1, 2, 0x1000, 0, -3, INT64_MIN};
    uint8_t h = fuzz_u8(in), m = fuzz_u8(in);
    strided_interface_desc d = {0};
    d.kind = (h & 1) ? STRIDED_INTERFACE_CUDA : STRIDED_INTERFACE_ARRAY;
    d.version = versions[(h >> 1) % 8];
    d.has_mask = (h >> 4) == 15;
    d.ndim = a->ndim;
    d.shape = a->shape;
    bool with_strides = a->make == FUZZ_MAKE_BYTES;
    d.nstrides = with_strides ? a->ndim + ((m & 7) == 7 ? 1 : (m & 7) == 6 ? -1 : 0) : -1;
    if (d.nstrides < 0)
        d.nstrides = with_strides ? 0 : -1;
    d.strides = a->strides;
    d.typestr = typestr;
    d.typestr_flags = (m & 8) && (m & 16) ? STRIDED_TYPESTR_HOLDS_REFERENCES : 0;
    d.readonly = (m & 32) != 0;
    d.has_stream = (m & 64) != 0;
    d.stream = streams[fuzz_u8(in) % 6];
    strided_consumer_stream consumer = {(m & 128) == 0, (void *)0x2000};
    bool with_consumer = d.kind == STRIDED_INTERFACE_CUDA && fuzz_u8(in) < 224;

    /* The rules, in their order: the first broken one decides. */
    char kind = 0;
    int64_t itemsize = 0;
    bool swapped = false, maybe = false;
    fuzz_statuses parse = typestr_expect(typestr, d.typestr_flags | STRIDED_TYPESTR_NATIVE_ONLY,
                                         &kind, &itemsize, &swapped, &maybe);
    if ((m & 8) && !(m & 16))
        d.descr_itemsize = itemsize + 1 + (m >> 6);
    fuzz_statuses want = 0;
    bool exact = true;
    if (d.version < 3 || d.has_mask)
        want = FUZZ_UNSUPPORTED;
    else if (d.kind == STRIDED_INTERFACE_CUDA && !with_consumer)
        want = FUZZ_UNSUPPORTED;
    else if (d.kind == STRIDED_INTERFACE_CUDA && consumer.sync && d.has_stream && d.stream <= 0)
        want = FUZZ_BIT(STRIDED_ERR_PROTOCOL);
    else if (d.ndim < 0 || d.ndim > STRIDED_MAX_NDIM)
        want = FUZZ_INVALID;
    else if (d.nstrides >= 0 && d.nstrides != d.ndim)
        want = FUZZ_INVALID;
    else if (maybe)
        return; /* a unit the declaration leaves open: the parser's harness */
    else if (parse != 0)
        want = FUZZ_UNSUPPORTED;
    else if (d.descr_itemsize != 0)
        want = FUZZ_UNSUPPORTED;
    else if ((want = fuzz_init_expect(d.ndim, d.shape, with_strides ? d.strides : NULL,
                                      (int)itemsize, true)) == 0)
        exact = false; /* the memory step: wrap's rules, or the driver's word */

    /* The memory: a heap buffer holding the footprint, or an edge. */
    strided_layout l;
    char *buffer = NULL;
    uintptr_t e0 = 0;
    bool described = want == 0 && strided_layout_init_byte_strides(&l, d.ndim, d.shape,
                                                                   with_strides ? d.strides : NULL,
                                                                   (int)itemsize) == STRIDED_OK;
    if (described)
        e0 = decode_element0(in, &l, &buffer);
    d.data = (void *)e0;
    if (!exact)
        want |= FUZZ_INVALID | FUZZ_OVERFLOW | FUZZ_UNSUPPORTED | FUZZ_DRIVER;

    char ctx[400];
    snprintf(ctx, sizeof ctx,
             "import_interface(%s v%lld%s, typestr \"%.40s\" flags %u descr %lld, ndim %d, "
             "nstrides %d, data %p, %s, stream %s%lld)",
             d.kind == STRIDED_INTERFACE_CUDA ? "CUDA" : "array", (long long)d.version,
             d.has_mask ? " mask" : "", typestr, d.typestr_flags, (long long)d.descr_itemsize,
             d.ndim, d.nstrides, d.data,
             !with_consumer  ? "no consumer"
             : consumer.sync ? "consumer syncs"
                             : "consumer -1",
             d.has_stream ? "" : "none ", (long long)d.stream);
    fuzz_trace(ctx);
    release_log log = {0};
    strided_view v, before;
    strided_typestr t;
    memset(&v, 0xA5, sizeof v);
    memcpy(&before, &v, sizeof v);
    fuzz_mark_error();
    strided_status st = strided_view_import_interface(&d, with_consumer ? &consumer : NULL, release,
                                                      &log, &v, &t);
    fuzz_check_outcome("import_interface", st, !exact && st == STRIDED_OK ? 0 : want, &v, &before,
                       sizeof v, ctx);
    if (st != STRIDED_OK) {
        FUZZ_REQUIRE(log.calls == 1 && log.context == &log,
                     "a failed import ran the release callback %d times: %s", log.calls, ctx);
        free(buffer);
        return;
    }
    FUZZ_REQUIRE(described && log.calls == 0,
                 "the import succeeded where the rules refuse, or "
                 "released early (%d calls): %s",
                 log.calls, ctx);
    /* The same pieces wrapped by hand give the same view. */
    strided_view w;
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    FUZZ_REQUIRE(strided_view_wrap(d.data, &l, t.has_dtype ? &t.dtype : NULL, d.readonly,
                                   d.kind == STRIDED_INTERFACE_ARRAY ? &cpu : NULL, NULL, NULL,
                                   &w) == STRIDED_OK,
                 "wrapping the imported pieces failed: %s", ctx);
    FUZZ_REQUIRE(strided_layout_equal(&v.layout, &w.layout) && v.origin == w.origin &&
                     strided_view_ptr(&v) == strided_view_ptr(&w) &&
                     strided_buffer_size(v.buffer) == strided_buffer_size(w.buffer) &&
                     v.has_dtype == w.has_dtype && v.readonly == d.readonly &&
                     t.itemsize == itemsize && t.kind == kind,
                 "the import differs from the wrap of its pieces: %s", ctx);
    FUZZ_REQUIRE(d.kind == STRIDED_INTERFACE_ARRAY && v.home_device == -1 && !v.device_accessible,
                 "host memory reports device %d (accessible %d): %s", (int)v.home_device,
                 v.device_accessible, ctx);
    strided_view_release(&w);
    strided_view_release(&v);
    FUZZ_REQUIRE(log.calls == 1, "the release callback ran %d times: %s", log.calls, ctx);
    free(buffer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = fuzz_input_make(data, size);
    uint8_t mode = fuzz_u8(&in);
    if ((mode & 24) == 24) {
        /* The whole import: a type string, then the layout it describes. */
        char typestr[48];
        decode_typestr(&in, typestr, sizeof typestr);
        strided_typestr t;
        int isz = strided_typestr_parse(typestr, 0, &t) == STRIDED_OK ? (int)t.itemsize : 8;
        fuzz_layout_args a;
        fuzz_layout_decode_itemsize(&in, &limits, isz, &a);
        if (a.make == FUZZ_MAKE_STRIDES) {
            for (int i = 0; i < a.ndim && i < STRIDED_MAX_NDIM; i++)
                a.strides[i] = (int64_t)((uint64_t)a.strides[i] * (uint64_t)(int64_t)isz);
            a.make = FUZZ_MAKE_BYTES;
        } else if (a.make != FUZZ_MAKE_BYTES) {
            a.make = FUZZ_MAKE_IMPLICIT;
        }
        check_import(&in, typestr, &a);
        return 0;
    }
    strided_dtype dtype = {0, 0, 1};
    bool has_dtype = false;
    int itemsize = 0;
    if (mode & 1) {
        itemsize = check_typestr(&in, &dtype, &has_dtype);
        if (mode & 2)
            return 0; /* the type string alone */
    }

    /* The layout as an interface gives it: byte strides, or none. */
    fuzz_layout_args a;
    fuzz_layout_decode_itemsize(&in, &limits, itemsize, &a);
    if (a.make == FUZZ_MAKE_STRIDES) {
        for (int i = 0; i < a.ndim && i < STRIDED_MAX_NDIM; i++)
            a.strides[i] = (int64_t)((uint64_t)a.strides[i] * (uint64_t)(int64_t)a.itemsize);
        a.make = FUZZ_MAKE_BYTES;
    } else if (a.make == FUZZ_MAKE_DENSE) {
        a.make = FUZZ_MAKE_IMPLICIT;
    }
    const int64_t *strides = a.make == FUZZ_MAKE_BYTES ? a.strides : NULL;
    fuzz_statuses want = fuzz_init_expect(a.ndim, a.shape, strides, a.itemsize, true);
    strided_layout l, before;
    memset(&l, 0xA5, sizeof l);
    memcpy(&before, &l, sizeof l);
    strided_layout shown = {.ndim = a.ndim, .itemsize = a.itemsize};
    memcpy(shown.shape, a.shape, sizeof a.shape);
    memcpy(shown.strides, a.strides, sizeof a.strides);
    fuzz_text t;
    char ctx[3400];
    snprintf(ctx, sizeof ctx, "init_byte_strides of %s (byte strides%s)", fuzz_show(&shown, &t),
             strides ? "" : " NULL");
    fuzz_mark_error();
    strided_status st = strided_layout_init_byte_strides(&l, a.ndim, a.shape, strides, a.itemsize);
    fuzz_check_outcome("init_byte_strides", st, want, &l, &before, sizeof l, ctx);
    if (st != STRIDED_OK)
        return 0;
    fuzz_check_invariant(&l, ctx);
    FUZZ_REQUIRE(l.ndim == a.ndim && l.itemsize == a.itemsize && l.slice_offset == 0 &&
                     l.implicit_strides == (strides == NULL),
                 "init_byte_strides made another layout: %s", ctx);
    for (int i = 0; strides && i < a.ndim; i++)
        FUZZ_REQUIRE(l.shape[i] == a.shape[i] && l.strides[i] == a.strides[i] / a.itemsize,
                     "init_byte_strides: axis %d: %s", i, ctx);
    /* Sometimes reverse axes: a layout whose slice offset is not 0. */
    if (mode & 4)
        fuzz_reverse_axes(&in, &l);
    check_wrap(&in, &l, &dtype, has_dtype);
    return 0;
}
