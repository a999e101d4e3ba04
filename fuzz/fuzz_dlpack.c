/*
 * fuzz_dlpack.c: strided_view_import_dlpack on arbitrary managed tensors.
 *
 * An input is every field of a versioned or legacy managed tensor: the
 * version and flags, ndim (negative and above 64 too), shape and strides
 * (either may be NULL; the arrays hold exactly ndim entries on the heap, or
 * a few when ndim is out of range, so reading past them is caught), the
 * dtype's code, bits and lanes, the device, the data pointer (a real heap
 * buffer covering the tensor's footprint in most cases, else NULL, a small
 * integer or an address near the top of the address space) and
 * byte_offset (aligned or not, huge, past the address space). Its deleter
 * counts its calls through manager_ctx.
 *
 * Checked: the import succeeds exactly when the tensor breaks none of the
 * rules of view.h, else fails with a status one of the broken rules calls
 * for, leaves the output untouched and sets a message; the deleter runs
 * exactly once in total: before the import returns when it fails, and only
 * when the last reference to the view's buffer goes when it succeeds
 * (views derived from the import and tensors exported from it hold
 * references too); with a major version other than 1, no field past the
 * deleter is read (they lie on a PROT_NONE page); on success the view's
 * layout, dtype, device and read-only flag are the tensor's, element
 * (0,...,0) is data + byte_offset and the buffer covers exactly the
 * footprint around it; CPU and CUDA memory are classified without the
 * driver; a re-export of the view describes the same elements and imports
 * back to the same view.
 */
/* mmap's MAP_ANONYMOUS are POSIX extensions. */
#define _DEFAULT_SOURCE

#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "strided/view.h"

static const fuzz_limits limits = {
    .max_ndim = 6,
    .wide_ndim = true,
    .max_extent = 5,
    .max_stride = 16,
    .max_itemsize = 16,
    .edges = true,
};

/* The real buffer is made only for footprints up to this size. */
#define MAX_BUFFER (1 << 20)

/* What the deleter saw. */
typedef struct deleter_log {
    int calls;
    void *self;
} deleter_log;

static void delete_versioned(strided_dl_managed_tensor_versioned *self)
{
    deleter_log *log = self->manager_ctx;
    log->calls++;
    log->self = self;
}

static void delete_legacy(strided_dl_managed_tensor *self)
{
    deleter_log *log = self->manager_ctx;
    log->calls++;
    log->self = self;
}

/* The element size of a dtype by the table of strided_dtype_itemsize's
 * declaration, 0 for a type it rejects. */
static int dtype_size(strided_dtype d)
{
    if (d.lanes != 1)
        return 0;
    switch (d.code) {
    case STRIDED_DTYPE_INT:
    case STRIDED_DTYPE_UINT:
        return d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64 ? d.bits / 8 : 0;
    case STRIDED_DTYPE_FLOAT: return d.bits == 16 || d.bits == 32 || d.bits == 64 ? d.bits / 8 : 0;
    case STRIDED_DTYPE_BFLOAT: return d.bits == 16 ? 2 : 0;
    case STRIDED_DTYPE_COMPLEX: return d.bits == 64 || d.bits == 128 ? d.bits / 8 : 0;
    case STRIDED_DTYPE_BOOL: return d.bits == 8 ? 1 : 0;
    default:
        return d.code >= STRIDED_DTYPE_FLOAT8_E3M4 && d.code <= STRIDED_DTYPE_FLOAT8_E8M0FNU &&
                       d.bits == 8
                   ? 1
                   : 0;
    }
}

static strided_dtype decode_dtype(fuzz_input *in)
{
    strided_dtype d;
    uint8_t c = fuzz_u8(in), b = fuzz_u8(in), l = fuzz_u8(in);
    d.code = c < 216 ? (uint8_t)(c % 18) : c;
    static const uint8_t bits[] = {8, 16, 32, 64, 128, 8, 16, 32, 0, 4, 6, 12, 24, 255};
    d.bits = b < 224 ? bits[b % 14] : b;
    d.lanes = l < 224 ? 1 : l < 248 ? (uint16_t)(l % 4 * 2) : fuzz_u16(in);
    return d;
}

static strided_device decode_device(fuzz_input *in)
{
    strided_device dev;
    uint8_t t = fuzz_u8(in), i = fuzz_u8(in);
    static const int32_t types[] = {STRIDED_DEVICE_CPU,          STRIDED_DEVICE_CPU,
                                    STRIDED_DEVICE_CUDA,         STRIDED_DEVICE_CUDA_HOST,
                                    STRIDED_DEVICE_CUDA_MANAGED, STRIDED_DEVICE_ROCM,
                                    STRIDED_DEVICE_OPENCL,       0};
    dev.device_type = t < 240 ? types[t % 8] : (int32_t)fuzz_u32(in);
    static const int32_t ids[] = {1, -1, 7, INT32_MAX, INT32_MIN, 2};
    dev.device_id = i < 192 ? 0 : i < 248 ? ids[i % 6] : (int32_t)fuzz_u32(in);
    return dev;
}

/* The page-guarded home of versioned tensors with another major version:
 * every field after the deleter lies on a PROT_NONE page. */
static strided_dl_managed_tensor_versioned *guarded_tensor(void)
{
    static char *pages;
    long page = sysconf(_SC_PAGESIZE);
    if (pages == NULL) {
        pages = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
        FUZZ_REQUIRE(pages != MAP_FAILED, "mmap of the guard pages failed");
        FUZZ_REQUIRE(mprotect(pages + page, (size_t)page, PROT_NONE) == 0, "mprotect failed");
    }
    return (strided_dl_managed_tensor_versioned *)(pages + page -
                                                   offsetof(strided_dl_managed_tensor_versioned,
                                                            flags));
}

/* Everything one input decodes to, and the memory behind it. */
typedef struct tensor_case {
    bool versioned;
    bool with_deleter;
    strided_dl_version version;
    uint64_t flags;
    strided_dl_tensor t;
    int shape_entries, strides_entries; /* allocated lengths */
    char *buffer;                       /* the heap buffer data points into, or NULL */
} tensor_case;

/* The bits an element of the case's tensor occupies, by strided/dtype.h:
 * 8 times dtype_size for whole-byte types; for the sub-byte types (int and
 * uint of 1, 2 and 4 bits, float4_e2m1fn of 4, the float6 types of 6, in
 * lanes 1 or 2) 8 when the versioned flag says padded (lanes 1 only), else
 * bits * lanes (packed); 0 for a type the import refuses. */
static int element_bits(const tensor_case *c)
{
    strided_dtype d = c->t.dtype;
    if (dtype_size(d) > 0)
        return dtype_size(d) * 8;
    bool ints = (d.code == STRIDED_DTYPE_INT || d.code == STRIDED_DTYPE_UINT) &&
                (d.bits == 1 || d.bits == 2 || d.bits == 4);
    bool floats = (d.code == STRIDED_DTYPE_FLOAT4_E2M1FN && d.bits == 4) ||
                  ((d.code == STRIDED_DTYPE_FLOAT6_E2M3FN ||
                    d.code == STRIDED_DTYPE_FLOAT6_E3M2FN) &&
                   d.bits == 6);
    if (!(ints || floats) || (d.lanes != 1 && d.lanes != 2))
        return 0;
    if (c->versioned && (c->flags & STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED))
        return d.lanes == 1 ? 8 : 0;
    return d.bits * d.lanes;
}

/* The layout's itemsize for elements of bits bits: bits / 8, or 1 for
 * packed elements that are not whole bytes; 0 for none. */
static int layout_itemsize(int bits)
{
    return bits % 8 == 0 ? bits / 8 : 1;
}

/* The bytes [*lo_b, *hi_b) that element offsets [lo, hi] of bits bits
 * occupy: floor(lo * bits / 8) to ceil((hi + 1) * bits / 8). */
static void bit_span(fuzz_i128 lo, fuzz_i128 hi, int bits, fuzz_i128 *lo_b, fuzz_i128 *hi_b)
{
    fuzz_i128 a = lo * bits, b = (hi + 1) * bits;
    *lo_b = a >= 0 ? a / 8 : -((-a + 7) / 8);
    *hi_b = b >= 0 ? (b + 7) / 8 : -(-b / 8);
}

static int64_t *decode_array(fuzz_input *in, int ndim, bool strides, int *entries)
{
    /* NULL for about one tensor in eight. */
    uint8_t b = fuzz_u8(in);
    if (b >= 224 && ndim != 0)
        return NULL;
    int n = ndim >= 0 && ndim <= STRIDED_MAX_NDIM ? ndim : 2;
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    FUZZ_REQUIRE(v != NULL, "malloc failed");
    for (int i = 0; i < n; i++)
        v[i] = strides ? fuzz_stride(in, &limits) : fuzz_extent(in, &limits);
    *entries = n;
    return v;
}

/* The footprint of the tensor's layout, when the fields make one: element
 * offsets [lo, hi] (exact) and whether it has elements. */
static bool footprint(const tensor_case *c, int itemsize, fuzz_i128 *lo, fuzz_i128 *hi, bool *empty)
{
    const strided_dl_tensor *t = &c->t;
    if (t->ndim < 0 || t->ndim > STRIDED_MAX_NDIM || (t->ndim > 0 && t->shape == NULL))
        return false;
    *empty = false;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return false;
        *empty = *empty || t->shape[i] == 0;
    }
    *lo = 0;
    *hi = -1;
    if (*empty || itemsize == 0)
        return true;
    int64_t strides[STRIDED_MAX_NDIM];
    strided_layout implicit;
    if (t->strides == NULL) {
        if (strided_layout_init(&implicit, t->ndim, t->shape, NULL, itemsize) != STRIDED_OK)
            return false;
        memcpy(strides, implicit.strides, sizeof strides);
    } else {
        memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    }
    fuzz_bounds(t->ndim, t->shape, strides, 0, lo, hi);
    return true;
}

static void decode_case(fuzz_input *in, tensor_case *c)
{
    memset(c, 0, sizeof *c);
    uint8_t head = fuzz_u8(in);
    c->versioned = (head & 1) != 0;
    c->with_deleter = (head & 6) != 6;
    uint8_t v = fuzz_u8(in);
    static const uint32_t majors[] = {0, 2, UINT32_MAX, 1000};
    c->version.major = v < 224 ? 1 : majors[v % 4];
    uint8_t m = fuzz_u8(in);
    c->version.minor = m < 248 ? m % 5 : UINT32_MAX;
    uint8_t f = fuzz_u8(in);
    c->flags = f < 240 ? f % 8 : fuzz_u64(in);

    strided_dl_tensor *t = &c->t;
    uint8_t nd = fuzz_u8(in);
    t->ndim = nd < 248 ? fuzz_ndim(in, &limits) : nd % 2 ? INT32_MIN : INT32_MAX;
    t->shape = decode_array(in, t->ndim, false, &c->shape_entries);
    t->strides = decode_array(in, t->ndim, true, &c->strides_entries);
    t->dtype = decode_dtype(in);
    t->device = decode_device(in);

    int bits = element_bits(c);
    int itemsize = bits > 0 ? layout_itemsize(bits) : 0;
    int unit = bits > 0 ? (bits + 7) / 8 : 1;
    uint8_t bo = fuzz_u8(in);
    switch (bo % 8) {
    case 0:
    case 1:
    case 2: t->byte_offset = 0; break;
    case 3:
    case 4: t->byte_offset = (uint64_t)unit * (bo / 8); break;
    case 5: t->byte_offset = (uint64_t)unit * (bo / 8) + 1 + bo % 3; break;
    case 6: {
        static const uint64_t huge[] = {(uint64_t)INT64_MAX + 1, UINT64_MAX, (uint64_t)INT64_MAX,
                                        (uint64_t)INT64_MAX - 7, UINT64_C(1) << 48};
        t->byte_offset = huge[bo / 8 % 5];
        break;
    }
    default: t->byte_offset = fuzz_u64(in); break;
    }

    /* data: mostly a heap buffer holding exactly the footprint around
     * data + byte_offset. */
    uint8_t d = fuzz_u8(in);
    fuzz_i128 lo = 0, hi = -1;
    bool empty = true;
    bool shaped = footprint(c, itemsize, &lo, &hi, &empty);
    if (d < 176) {
        fuzz_i128 lo_b = 0, hi_b = 0;
        bool small = fuzz_fits64(lo) && fuzz_fits64(hi);
        if (hi >= lo && small)
            bit_span(lo, hi, bits > 0 ? bits : 8, &lo_b, &hi_b);
        fuzz_i128 bytes = hi_b - lo_b;
        bool fits = shaped && small && bytes <= MAX_BUFFER && t->byte_offset <= MAX_BUFFER;
        size_t n = fits && bytes > 0 ? (size_t)bytes : 16;
        c->buffer = malloc(n);
        FUZZ_REQUIRE(c->buffer != NULL, "malloc failed");
        uintptr_t element0 = (uintptr_t)c->buffer + (fits ? (uintptr_t)(int64_t)(-lo_b) : 0);
        t->data = (void *)(fits ? element0 - (uintptr_t)t->byte_offset : (uintptr_t)c->buffer);
    } else if (d < 200) {
        t->data = NULL;
    } else if (d < 224) {
        t->data = (void *)(UINTPTR_MAX - (uintptr_t)(fuzz_u16(in)) * (uintptr_t)unit);
    } else if (d < 240) {
        t->data = (void *)(uintptr_t)(1 + fuzz_u16(in));
    } else {
        t->data = (void *)(uintptr_t)fuzz_u64(in);
    }
}

/* The packed-layout rule of strided/layout.h for the tensor's layout (its
 * strides, or C strides), which has elements: every element starts on a
 * byte boundary but those after the first along the first axis of stride 1
 * and extent above 1. */
static bool packed_rule_holds(const tensor_case *c, int bits)
{
    const strided_dl_tensor *t = &c->t;
    int64_t strides[STRIDED_MAX_NDIM];
    strided_layout implicit;
    if (t->strides == NULL) {
        if (strided_layout_init(&implicit, t->ndim, t->shape, NULL, 1) != STRIDED_OK)
            return true;
        memcpy(strides, implicit.strides, sizeof strides);
    } else {
        memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    }
    int a = bits, b = 8;
    while (b != 0) {
        int r = a % b;
        a = b;
        b = r;
    }
    int64_t g = 8 / a; /* the elements that fill whole bytes */
    int axis = -1;
    for (int k = 0; k < t->ndim && axis < 0; k++)
        if (t->shape[k] > 1 && strides[k] == 1)
            axis = k;
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] > 1 && k != axis && strides[k] % g != 0)
            return false;
    return true;
}

/* The statuses the import must answer for the case, by view.h's list. */
static fuzz_statuses import_expect(const tensor_case *c, bool *maybe)
{
    const strided_dl_tensor *t = &c->t;
    *maybe = false;
    if (c->versioned && c->version.major != STRIDED_DLPACK_MAJOR_VERSION)
        return FUZZ_UNSUPPORTED;
    if (t->ndim < 0 || t->ndim > STRIDED_MAX_NDIM)
        return FUZZ_INVALID;
    if (t->ndim > 0 && t->shape == NULL)
        return FUZZ_INVALID;
    fuzz_statuses bad = 0;
    if (t->ndim > 0 && t->strides == NULL && c->versioned && c->version.minor >= 2)
        bad |= FUZZ_INVALID;
    bool empty = false;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            bad |= FUZZ_INVALID;
        empty = empty || t->shape[i] == 0;
    }
    int bits = element_bits(c);
    int itemsize = bits > 0 ? layout_itemsize(bits) : 0;
    if (itemsize == 0)
        bad |= FUZZ_UNSUPPORTED;
    int32_t type = t->device.device_type;
    if (type != STRIDED_DEVICE_CPU && type != STRIDED_DEVICE_CUDA &&
        type != STRIDED_DEVICE_CUDA_HOST && type != STRIDED_DEVICE_CUDA_MANAGED)
        bad |= FUZZ_UNSUPPORTED;
    if (t->device.device_id < 0 || (type == STRIDED_DEVICE_CPU && t->device.device_id != 0))
        bad |= FUZZ_INVALID;
    if (t->data == NULL && !empty)
        bad |= FUZZ_INVALID;
    uintptr_t data = (uintptr_t)t->data;
    if (t->byte_offset > (uint64_t)INT64_MAX || t->byte_offset > UINTPTR_MAX - data)
        bad |= FUZZ_INVALID;
    if (itemsize == 0)
        return bad;
    if (t->byte_offset % (uint64_t)itemsize != 0)
        bad |= FUZZ_INVALID;
    bad |= fuzz_init_expect(t->ndim, t->shape, t->strides, itemsize, false);
    if (bad)
        return bad;
    /* The footprint must lie in the address space, above address 0 (no
     * memory starts at the null page); a footprint ending exactly at its
     * top may go either way. */
    fuzz_i128 lo, hi;
    bool e;
    footprint(c, itemsize, &lo, &hi, &e);
    if (hi >= lo) {
        /* Packed elements: the packed-layout rule, then their bits in
         * int64. */
        if (bits % 8 != 0 && !packed_rule_holds(c, bits))
            return FUZZ_INVALID;
        if (bits % 8 != 0 && (!fuzz_fits64(lo * bits) || !fuzz_fits64((hi + 1) * bits)))
            return FUZZ_OVERFLOW;
        fuzz_i128 lo_b, hi_b;
        bit_span(lo, hi, bits, &lo_b, &hi_b);
        fuzz_i128 e0 = (fuzz_i128)(data + (uintptr_t)t->byte_offset);
        fuzz_i128 bytes = hi_b - lo_b, start = e0 + lo_b;
        if (!fuzz_fits64(bytes) || !fuzz_fits64(lo_b) || start <= 0 ||
            start + bytes > (fuzz_i128)UINTPTR_MAX + 1)
            return FUZZ_OVERFLOW;
        if (start + bytes == (fuzz_i128)UINTPTR_MAX + 1) {
            /* Ending exactly at the top: its end address is not
             * representable; either answer is fair. */
            *maybe = true;
            bad = FUZZ_OVERFLOW | FUZZ_INVALID;
        }
    }
    /* CUDA host and managed memory are classified by the driver. */
    if (type == STRIDED_DEVICE_CUDA_HOST || type == STRIDED_DEVICE_CUDA_MANAGED) {
        *maybe = true;
        bad |= FUZZ_DRIVER;
    }
    return bad;
}

/* The view an import made describes the tensor. */
static void check_view(const tensor_case *c, const strided_view *v, const char *ctx)
{
    const strided_dl_tensor *t = &c->t;
    int bits = element_bits(c);
    int itemsize = layout_itemsize(bits);
    bool padded = dtype_size(t->dtype) == 0 && c->versioned &&
                  (c->flags & STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED);
    const strided_layout *l = &v->layout;
    fuzz_check_invariant(l, "import_dlpack");
    FUZZ_REQUIRE(v->padded == padded && strided_view_packed_bits(v) == (bits % 8 ? bits : 0),
                 "the view's form (padded %d, packed bits %d) is not the tensor's: %s",
                 (int)v->padded, strided_view_packed_bits(v), ctx);
    FUZZ_REQUIRE(v->buffer != NULL && l->ndim == t->ndim && l->itemsize == itemsize &&
                     l->slice_offset == 0 && l->implicit_strides == (t->strides == NULL),
                 "the view's layout is not the tensor's: %s", ctx);
    for (int i = 0; i < t->ndim; i++)
        FUZZ_REQUIRE(l->shape[i] == t->shape[i] &&
                         (t->strides == NULL || l->strides[i] == t->strides[i]),
                     "the view's axis %d is not the tensor's: %s", i, ctx);
    FUZZ_REQUIRE(v->has_dtype && strided_dtype_equal(v->dtype, t->dtype),
                 "the view's dtype is not the tensor's: %s", ctx);
    FUZZ_REQUIRE(v->device.device_type == t->device.device_type &&
                     v->device.device_id == t->device.device_id,
                 "the view's device is not the tensor's: %s", ctx);
    FUZZ_REQUIRE(v->readonly == (c->versioned && (c->flags & STRIDED_DLPACK_FLAG_READ_ONLY)),
                 "the view's read-only flag is %d: %s", v->readonly, ctx);

    uintptr_t e0 = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
    FUZZ_REQUIRE((uintptr_t)strided_view_ptr(v) == e0,
                 "the view's element 0 is at %p, not at data + byte_offset %p: %s",
                 strided_view_ptr(v), (void *)e0, ctx);
    fuzz_i128 lo, hi;
    bool empty;
    footprint(c, itemsize, &lo, &hi, &empty);
    uintptr_t base = (uintptr_t)strided_buffer_ptr(v->buffer);
    size_t size = strided_buffer_size(v->buffer);
    if (hi >= lo) {
        fuzz_i128 lo_b, hi_b;
        bit_span(lo, hi, bits, &lo_b, &hi_b);
        fuzz_i128 start = (fuzz_i128)e0 + lo_b, bytes = hi_b - lo_b;
        FUZZ_REQUIRE((fuzz_i128)base == start && (fuzz_i128)size == bytes &&
                         (fuzz_i128)v->origin == -lo_b,
                     "the buffer [%p, +%zu) origin %" PRId64 " is not the footprint: %s",
                     (void *)base, size, v->origin, ctx);
    } else {
        FUZZ_REQUIRE(size == 0, "the buffer of an empty tensor has %zu bytes: %s", size, ctx);
    }
    FUZZ_REQUIRE(strided_buffer_use_count(v->buffer) == 1,
                 "a fresh import's buffer has %ld "
                 "references: %s",
                 strided_buffer_use_count(v->buffer), ctx);
    strided_memory_info info = strided_buffer_memory_info(v->buffer);
    if (t->device.device_type == STRIDED_DEVICE_CPU)
        FUZZ_REQUIRE(info.kind == STRIDED_MEMORY_HOST && info.host_accessible &&
                         !info.device_accessible,
                     "CPU memory is not classified as host memory: %s", ctx);
    if (t->device.device_type == STRIDED_DEVICE_CUDA) {
        FUZZ_REQUIRE(info.kind == STRIDED_MEMORY_DEVICE && !info.host_accessible &&
                         info.device_accessible && info.device_id == t->device.device_id &&
                         info.device_address == base,
                     "CUDA memory is not classified as that device's memory: %s", ctx);
        FUZZ_REQUIRE(strided_view_device_ptr(v) == e0,
                     "the device address of element 0 is "
                     "not data + byte_offset: %s",
                     ctx);
    }
}

/* Export the view, check the tensor, import it back and compare. The
 * export holds a reference to the view's buffer until its deleter runs
 * (through the re-import's release, or directly). */
static void check_export(fuzz_input *in, const strided_view *v, const char *ctx)
{
    uint8_t how = fuzz_u8(in);
    bool legacy = how & 1, reimport = how & 2;
    strided_dl_managed_tensor_versioned *mv = NULL;
    strided_dl_managed_tensor *ml = NULL;
    fuzz_mark_error();
    strided_status st = legacy ? strided_view_export_dlpack_legacy(v, &ml)
                               : strided_view_export_dlpack(v, &mv);
    if (legacy && v->padded) {
        /* A legacy tensor has no flag to say padded. */
        FUZZ_REQUIRE(st == STRIDED_ERR_UNSUPPORTED && ml == NULL,
                     "a padded view exported as a legacy tensor (%s): %s", strided_status_name(st),
                     ctx);
        return;
    }
    FUZZ_REQUIRE(st == STRIDED_OK, "export of an imported view failed (%s): %s",
                 strided_status_name(st), ctx);
    const strided_dl_tensor *t = legacy ? &ml->dl_tensor : &mv->dl_tensor;
    const strided_layout *l = &v->layout;
    if (!legacy)
        FUZZ_REQUIRE(mv->version.major == 1 && mv->version.minor == 3 &&
                         ((mv->flags & STRIDED_DLPACK_FLAG_READ_ONLY) != 0) == v->readonly &&
                         ((mv->flags & STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0) ==
                             v->padded,
                     "the export's version or flags are wrong: %s", ctx);
    int64_t volume = strided_layout_volume(l);
    FUZZ_REQUIRE(t->ndim == l->ndim && t->byte_offset == 0 &&
                     t->data == (volume == 0 ? NULL : strided_view_ptr(v)) &&
                     strided_dtype_equal(t->dtype, v->dtype) &&
                     t->device.device_type == v->device.device_type &&
                     t->device.device_id ==
                         (v->device.device_type == STRIDED_DEVICE_CUDA ? v->device.device_id : 0),
                 "the export does not describe the view: %s", ctx);
    FUZZ_REQUIRE(l->ndim == 0 ? t->shape == NULL && t->strides == NULL
                              : t->shape != NULL && t->strides != NULL,
                 "the export's shape and strides pointers are wrong for ndim %d: %s", (int)l->ndim,
                 ctx);
    for (int i = 0; i < l->ndim; i++)
        FUZZ_REQUIRE(t->shape[i] == l->shape[i] && t->strides[i] == l->strides[i],
                     "the export's axis %d is not the view's: %s", i, ctx);
    FUZZ_REQUIRE(strided_buffer_use_count(v->buffer) >= 2, "the export holds no reference: %s",
                 ctx);
    if (!reimport) {
        if (legacy)
            ml->deleter(ml);
        else
            mv->deleter(mv);
        return;
    }
    strided_view back;
    st = strided_view_import_dlpack(legacy ? (void *)ml : (void *)mv, !legacy, &back);
    FUZZ_REQUIRE(st == STRIDED_OK, "re-import of an export failed (%s): %s",
                 strided_status_name(st), ctx);
    FUZZ_REQUIRE(strided_view_ptr(&back) == (volume == 0 ? NULL : strided_view_ptr(v)) &&
                     back.layout.ndim == l->ndim && back.layout.itemsize == l->itemsize,
                 "the re-imported view differs: %s", ctx);
    for (int i = 0; i < l->ndim; i++)
        FUZZ_REQUIRE(back.layout.shape[i] == l->shape[i] && back.layout.strides[i] == l->strides[i],
                     "the re-imported view's axis %d differs: %s", i, ctx);
    strided_view_release(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = fuzz_input_make(data, size);
    tensor_case c;
    decode_case(&in, &c);
    uint8_t mode = fuzz_u8(&in);

    deleter_log log = {0, NULL};
    strided_dl_managed_tensor_versioned mv, *pv = &mv;
    strided_dl_managed_tensor ml;
    void *managed;
    if (c.versioned) {
        if (c.version.major != STRIDED_DLPACK_MAJOR_VERSION)
            pv = guarded_tensor();
        pv->version = c.version;
        pv->manager_ctx = &log;
        pv->deleter = c.with_deleter ? delete_versioned : NULL;
        if (pv == &mv) {
            mv.flags = c.flags;
            mv.dl_tensor = c.t;
        }
        managed = pv;
    } else {
        ml.dl_tensor = c.t;
        ml.manager_ctx = &log;
        ml.deleter = c.with_deleter ? delete_legacy : NULL;
        managed = &ml;
    }

    char ctx[512];
    snprintf(ctx, sizeof ctx,
             "%s tensor v%u.%u flags 0x%" PRIx64 " ndim %d shape %s strides %s dtype (%u,%u,%u) "
             "device (%d,%d) data %p byte_offset %" PRIu64 "%s",
             c.versioned ? "versioned" : "legacy", c.version.major, c.version.minor, c.flags,
             (int)c.t.ndim, c.t.shape ? "given" : "NULL", c.t.strides ? "given" : "NULL",
             c.t.dtype.code, c.t.dtype.bits, c.t.dtype.lanes, (int)c.t.device.device_type,
             (int)c.t.device.device_id, c.t.data, c.t.byte_offset,
             c.with_deleter ? "" : " (no deleter)");

    /* A NULL tensor: nothing to delete. */
    if (mode == 255) {
        strided_view out, before;
        memset(&out, 0xA5, sizeof out);
        memcpy(&before, &out, sizeof out);
        fuzz_mark_error();
        strided_status st = strided_view_import_dlpack(NULL, c.versioned, &out);
        fuzz_check_outcome("import_dlpack(NULL)", st, FUZZ_INVALID, &out, &before, sizeof out, ctx);
    }

    fuzz_trace(ctx);
    int want_calls = c.with_deleter ? 1 : 0;
    if (mode == 254) {
        /* No out: the import fails and the tensor is still deleted, once. */
        fuzz_mark_error();
        strided_status st = strided_view_import_dlpack(managed, c.versioned, NULL);
        fuzz_check_outcome("import_dlpack(out NULL)", st, FUZZ_INVALID, NULL, NULL, 0, ctx);
        FUZZ_REQUIRE(log.calls == want_calls && (!want_calls || log.self == managed),
                     "the deleter ran %d times for a failed import: %s", log.calls, ctx);
    } else {
        bool maybe;
        fuzz_statuses want = import_expect(&c, &maybe);
        strided_view out, before;
        memset(&out, 0xA5, sizeof out);
        memcpy(&before, &out, sizeof out);
        fuzz_mark_error();
        strided_status st = strided_view_import_dlpack(managed, c.versioned, &out);
        fuzz_check_outcome("import_dlpack", st, maybe && st == STRIDED_OK ? 0 : want, &out, &before,
                           sizeof out, ctx);
        if (st != STRIDED_OK) {
            FUZZ_REQUIRE(log.calls == want_calls && (!want_calls || log.self == managed),
                         "the deleter ran %d times for a failed import: %s", log.calls, ctx);
        } else {
            FUZZ_REQUIRE(log.calls == 0, "the deleter ran during a successful import: %s", ctx);
            check_view(&c, &out, ctx);
            /* More holders of the buffer, released in a decoded order; the
             * deleter must wait for the last. */
            strided_view derived = {0};
            bool has_derived = (mode & 1) != 0;
            if (has_derived)
                FUZZ_REQUIRE(strided_view_view(&out, NULL, NULL, &derived) == STRIDED_OK,
                             "a view of the whole import failed: %s", ctx);
            if (mode & 2)
                check_export(&in, &out, ctx);
            FUZZ_REQUIRE(log.calls == 0, "the deleter ran while the view lives: %s", ctx);
            if (has_derived && (mode & 4)) {
                strided_view_release(&derived);
                FUZZ_REQUIRE(log.calls == 0, "the deleter ran while the view lives: %s", ctx);
                strided_view_release(&out);
            } else {
                strided_view_release(&out);
                FUZZ_REQUIRE(log.calls == 0 || !has_derived,
                             "the deleter ran while a derived view lives: %s", ctx);
                strided_view_release(&derived);
            }
            FUZZ_REQUIRE(log.calls == want_calls && (!want_calls || log.self == managed),
                         "the deleter ran %d times after the last release: %s", log.calls, ctx);
            strided_view_release(&out); /* released views may be released again */
        }
    }
    FUZZ_REQUIRE(log.calls == want_calls, "the deleter ran %d times in all: %s", log.calls, ctx);
    free(c.t.shape);
    free(c.t.strides);
    free(c.buffer);
    return 0;
}
