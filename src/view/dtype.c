/*
 * view/dtype.c: element types. The DLPack types strided takes (their
 * sizes and names), the type strings of NumPy's array interface, and the
 * one table of element types strided accepts from them (strided/dtype.h).
 *
 * Only plain data is accepted: elements whose bytes a copy may duplicate
 * without knowing what they mean. Python object references ('O', or a
 * structured type holding one) are not plain data. Bytes in the other byte
 * order are plain data, but the interface imports refuse them, since every
 * consumer of the view would read them wrongly.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "strided/dtype.h"

/* The NumPy / ml_dtypes names of the float8 codes 7..14, in code order. */
static const char *const float8_names[] = {
    "float8_e3m4",     "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",    "float8_e8m0fnu",
};

/* The prefix of a code's name, for the codes whose name is the prefix
 * followed by the bits ("int", "uint", ...), or NULL. */
static const char *bits_prefix(int code)
{
    switch (code) {
    case STRIDED_DTYPE_INT: return "int";
    case STRIDED_DTYPE_UINT: return "uint";
    case STRIDED_DTYPE_FLOAT: return "float";
    case STRIDED_DTYPE_BFLOAT: return "bfloat";
    case STRIDED_DTYPE_COMPLEX: return "complex";
    default: return NULL;
    }
}

/* The element size of a supported type, or 0 for any other. Sets no
 * error, so that strided_dtype_format can use it. */
static int supported_itemsize(strided_dtype d)
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
    case STRIDED_DTYPE_FLOAT8_E3M4:
    case STRIDED_DTYPE_FLOAT8_E4M3:
    case STRIDED_DTYPE_FLOAT8_E4M3B11FNUZ:
    case STRIDED_DTYPE_FLOAT8_E4M3FN:
    case STRIDED_DTYPE_FLOAT8_E4M3FNUZ:
    case STRIDED_DTYPE_FLOAT8_E5M2:
    case STRIDED_DTYPE_FLOAT8_E5M2FNUZ:
    case STRIDED_DTYPE_FLOAT8_E8M0FNU: return d.bits == 8 ? 1 : 0;
    default: return 0;
    }
}

/* The name of a sub-byte type's lane (code and bits: int1, int2, int4,
 * their unsigned forms, float4_e2m1fn and the two float6 types, the bits
 * DLPack and ml_dtypes give them), or NULL for any other code and bits.
 * Lanes are not looked at. */
static const char *subbyte_name(strided_dtype d)
{
    switch (d.code) {
    case STRIDED_DTYPE_INT:
        return d.bits == 1 ? "int1" : d.bits == 2 ? "int2" : d.bits == 4 ? "int4" : NULL;
    case STRIDED_DTYPE_UINT:
        return d.bits == 1 ? "uint1" : d.bits == 2 ? "uint2" : d.bits == 4 ? "uint4" : NULL;
    case STRIDED_DTYPE_FLOAT4_E2M1FN: return d.bits == 4 ? "float4_e2m1fn" : NULL;
    case STRIDED_DTYPE_FLOAT6_E2M3FN: return d.bits == 6 ? "float6_e2m3fn" : NULL;
    case STRIDED_DTYPE_FLOAT6_E3M2FN: return d.bits == 6 ? "float6_e3m2fn" : NULL;
    default: return NULL;
    }
}

bool strided_dtype_is_subbyte(strided_dtype dtype)
{
    return subbyte_name(dtype) != NULL && (dtype.lanes == 1 || dtype.lanes == 2);
}

/* Say why dtype is not a type strided takes, most specific reason first,
 * under op. Assumes: it is not (supported_itemsize is 0, and it is not a
 * sub-byte type). */
static strided_status refuse(const char *op, strided_dtype dtype)
{
    if (dtype.lanes != 1)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "vector dtypes (lanes=%u) are not supported", (unsigned)dtype.lanes);
    switch (dtype.code) {
    case STRIDED_DTYPE_FLOAT6_E2M3FN:
    case STRIDED_DTYPE_FLOAT6_E3M2FN:
    case STRIDED_DTYPE_FLOAT4_E2M1FN:
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%s has %u bits, DLPack gives it %d: padded or packed, an element "
                             "is declared with its own bits",
                             dtype.code == STRIDED_DTYPE_FLOAT6_E2M3FN   ? "float6_e2m3fn"
                             : dtype.code == STRIDED_DTYPE_FLOAT6_E3M2FN ? "float6_e3m2fn"
                                                                         : "float4_e2m1fn",
                             (unsigned)dtype.bits,
                             dtype.code == STRIDED_DTYPE_FLOAT4_E2M1FN ? 4 : 6);
    case STRIDED_DTYPE_OPAQUE_HANDLE:
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "opaque handles (dtype code 3, bits=%u) are not "
                             "supported",
                             (unsigned)dtype.bits);
    default: break;
    }
    if (dtype.code > STRIDED_DTYPE_FLOAT4_E2M1FN)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "unknown dtype code %u (bits=%u, lanes=%u)", (unsigned)dtype.code,
                             (unsigned)dtype.bits, (unsigned)dtype.lanes);
    if (dtype.bits % 8 != 0)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "dtype(code=%u, bits=%u, lanes=1) is not "
                             "byte-addressable: bits must be a multiple of 8",
                             (unsigned)dtype.code, (unsigned)dtype.bits);
    const char *prefix = bits_prefix(dtype.code);
    if (prefix != NULL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "%s%u is not supported", prefix,
                             (unsigned)dtype.bits);
    if (dtype.code == STRIDED_DTYPE_BOOL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "%u-bit bool is not supported",
                             (unsigned)dtype.bits);
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "%s with %u bits is not supported",
                         float8_names[dtype.code - STRIDED_DTYPE_FLOAT8_E3M4],
                         (unsigned)dtype.bits);
}

strided_status strided_dtype_itemsize(strided_dtype dtype, int *out)
{
    const char *op = "dtype_itemsize";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    int size = supported_itemsize(dtype);
    if (size == 0 && strided_dtype_is_subbyte(dtype)) {
        /* Packed lanes that fill whole bytes (PyTorch's float4_e2m1fn_x2:
         * two 4-bit lanes, one byte) are byte elements like any other. */
        int bits = dtype.bits * dtype.lanes;
        if (bits % 8 == 0) {
            *out = bits / 8;
            return STRIDED_OK;
        }
        char name[32];
        strided_dtype_format(dtype, name, sizeof name);
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%s is a packed sub-byte type (%d bits an element) and has no "
                             "whole-byte itemsize: its views follow the packed-layout rule",
                             name, bits);
    }
    if (size == 0)
        return refuse(op, dtype);
    *out = size;
    return STRIDED_OK;
}

strided_status strided_dtype_element_bits(strided_dtype dtype, bool padded, int *out)
{
    const char *op = "dtype_element_bits";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    int size = supported_itemsize(dtype);
    if (size > 0) {
        *out = size * 8;
        return STRIDED_OK;
    }
    if (!strided_dtype_is_subbyte(dtype))
        return refuse(op, dtype);
    if (padded && dtype.lanes != 1) {
        char name[32];
        strided_dtype_format(dtype, name, sizeof name);
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%s cannot be padded: a padded sub-byte type has one element, of "
                             "lanes 1, in each byte",
                             name);
    }
    *out = padded ? 8 : dtype.bits * dtype.lanes;
    return STRIDED_OK;
}

size_t strided_dtype_format(strided_dtype dtype, char *buf, size_t size)
{
    strided__text t = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    if (strided_dtype_is_subbyte(dtype)) {
        strided__text_append(&t, "%s%s", subbyte_name(dtype), dtype.lanes == 2 ? "_x2" : "");
        return t.len;
    }
    if (supported_itemsize(dtype) == 0) {
        strided__text_append(&t, "dtype(code=%u, bits=%u, lanes=%u)", (unsigned)dtype.code,
                             (unsigned)dtype.bits, (unsigned)dtype.lanes);
        return t.len;
    }
    const char *prefix = bits_prefix(dtype.code);
    if (prefix != NULL)
        strided__text_append(&t, "%s%u", prefix, (unsigned)dtype.bits);
    else if (dtype.code == STRIDED_DTYPE_BOOL)
        strided__text_append(&t, "bool");
    else
        strided__text_append(&t, "%s", float8_names[dtype.code - STRIDED_DTYPE_FLOAT8_E3M4]);
    return t.len;
}

bool strided_dtype_equal(strided_dtype a, strided_dtype b)
{
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FOREIGN_ORDER '<'
#else
#define FOREIGN_ORDER '>'
#endif

/* One row per accepted kind: the sizes it comes in (a bit per size in
 * bytes for the fixed-size kinds; any size where sizes is 0), whether byte
 * order applies to it, and its DLPack code where it has one. */
typedef struct kind_row {
    char kind;
    const char *name;
    uint64_t sizes;    /* bit n: n bytes; 0: any size */
    bool ordered;      /* byte order matters for multi-byte elements */
    int code;          /* DLPack code, or -1 */
    uint64_t dl_sizes; /* the sizes that have the DLPack type */
} kind_row;

static const kind_row kinds[] = {
    {'b', "bool", UINT64_C(1) << 1, false, STRIDED_DTYPE_BOOL, UINT64_C(1) << 1},
    {'i', "signed integer",
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8), true,
     STRIDED_DTYPE_INT,
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8)},
    {'u', "unsigned integer",
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8), true,
     STRIDED_DTYPE_UINT,
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8)},
    /* A 16-byte float is C's long double (x87 extended precision on x86),
     * which DLPack cannot name; 1-byte floats are ml_dtypes' float8 types
     * (float8_e5m2 reads "<f1"), named by the caller. */
    {'f', "floating point",
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8) |
         (UINT64_C(1) << 16),
     true, STRIDED_DTYPE_FLOAT, (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8)},
    {'c', "complex floating point", (UINT64_C(1) << 8) | (UINT64_C(1) << 16) | (UINT64_C(1) << 32),
     true, STRIDED_DTYPE_COMPLEX, (UINT64_C(1) << 8) | (UINT64_C(1) << 16)},
    {'V', "raw bytes", 0, false, -1, 0},
    {'S', "byte string", 0, false, -1, 0},
    {'U', "UCS-4 string", 0, true, -1, 0},
    {'M', "datetime", UINT64_C(1) << 8, true, -1, 0},
    {'m', "timedelta", UINT64_C(1) << 8, true, -1, 0},
};

static strided_status malformed(const char *typestr, const char *why)
{
    /* Show at most the first 32 characters of whatever was given. */
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                         "%.32s%s is not an array-interface type string: %s", typestr,
                         strlen(typestr) > 32 ? "..." : "", why);
}

strided_status strided_typestr_parse(const char *typestr, unsigned flags, strided_typestr *out)
{
    const char *op = "typestr";
    if (typestr == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "typestr and out are required");
    char order = typestr[0];
    if (order == '\0' || strchr("<>|=", order) == NULL)
        return malformed(typestr, "it must start with a byte order, '<', '>', '|' or '='");
    char kind = typestr[1];
    if (kind == '\0')
        return malformed(typestr, "a kind character must follow the byte order");
    /* NumPy writes object types as "|O", without a size. */
    if (kind == 'O' || (flags & STRIDED_TYPESTR_HOLDS_REFERENCES))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s holds Python object references, which are not plain "
                             "data: strided copies and exports element bytes only",
                             typestr);
    const char *p = typestr + 2;
    if (*p < '0' || *p > '9')
        return malformed(typestr, "a decimal size must follow the kind");
    int64_t n = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (*p - '0');
        if (n > INT32_MAX)
            return malformed(typestr, "the size exceeds 2**31 - 1");
    }
    if (*p == '[') {
        if (kind != 'M' && kind != 'm')
            return malformed(typestr, "only datetimes ('M', 'm') take a unit in brackets");
        const char *unit = ++p;
        while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
            p++;
        if (p == unit || *p != ']' || p - unit > 16)
            return malformed(typestr, "the unit must be letters and digits closed by ']'");
        p++;
    }
    if (*p != '\0')
        return malformed(typestr, "unexpected characters after the size");

    const kind_row *row = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == kind)
            row = &kinds[i];
    if (row == NULL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s: element kind '%c' is not supported (plain data only: "
                             "b, i, u, f, c, V, S, U, M, m)",
                             typestr, kind);
    int64_t itemsize = kind == 'U' ? n * 4 : n;
    if (itemsize == 0 || itemsize > INT32_MAX)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s: an element of %lld bytes is not supported (1 to "
                             "2**31 - 1)",
                             typestr, (long long)itemsize);
    if (row->sizes != 0 && (itemsize >= 64 || !(row->sizes >> itemsize & 1)))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "%.32s: %s has no %lld-byte type",
                             typestr, row->name, (long long)itemsize);
    bool swapped = order == FOREIGN_ORDER && row->ordered && itemsize > 1;
    if (swapped && (flags & STRIDED_TYPESTR_NATIVE_ONLY))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s is not in the machine's byte order; convert it first "
                             "(numpy: a.astype(a.dtype.newbyteorder('=')))",
                             typestr);
    strided_typestr t = {
        .kind = kind, .itemsize = (int32_t)itemsize, .swapped = swapped, .dtype = {0, 0, 1}};
    if (!swapped && row->code >= 0 && itemsize < 64 && (row->dl_sizes >> itemsize & 1)) {
        t.has_dtype = true;
        t.dtype.code = (uint8_t)row->code;
        t.dtype.bits = (uint8_t)(itemsize * 8);
    }
    *out = t;
    return STRIDED_OK;
}

/* The codes that NumPy knows only through ml_dtypes, whose type strings do
 * not tell them apart: bfloat16 and the float8 types. */
static bool named_only(int code)
{
    return code == STRIDED_DTYPE_BFLOAT ||
           (code >= STRIDED_DTYPE_FLOAT8_E3M4 && code <= STRIDED_DTYPE_FLOAT8_E8M0FNU);
}

/* The DLPack type named name, as strided_dtype_format names it; false for
 * any other name. Sets no error. */
static bool lookup_name(const char *name, strided_dtype *out)
{
    strided_dtype d = {0, 0, 1};
    /* The sub-byte types: "int4", "float4_e2m1fn", and with "_x2" their
     * two-lane form (PyTorch's float4_e2m1fn_x2). */
    static const strided_dtype subbyte[] = {
        {STRIDED_DTYPE_INT, 1, 1},           {STRIDED_DTYPE_INT, 2, 1},
        {STRIDED_DTYPE_INT, 4, 1},           {STRIDED_DTYPE_UINT, 1, 1},
        {STRIDED_DTYPE_UINT, 2, 1},          {STRIDED_DTYPE_UINT, 4, 1},
        {STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1}, {STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 1},
        {STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 1},
    };
    for (size_t i = 0; i < sizeof subbyte / sizeof subbyte[0]; i++) {
        const char *lane = subbyte_name(subbyte[i]);
        size_t n = strlen(lane);
        if (strncmp(name, lane, n) == 0 && (name[n] == '\0' || strcmp(name + n, "_x2") == 0)) {
            d = subbyte[i];
            d.lanes = name[n] == '\0' ? 1 : 2;
            *out = d;
            return true;
        }
    }
    if (strcmp(name, "bool") == 0) {
        d.code = STRIDED_DTYPE_BOOL;
        d.bits = 8;
        *out = d;
        return true;
    }
    for (int code = STRIDED_DTYPE_FLOAT8_E3M4; code <= STRIDED_DTYPE_FLOAT8_E8M0FNU; code++)
        if (strcmp(name, float8_names[code - STRIDED_DTYPE_FLOAT8_E3M4]) == 0) {
            d.code = (uint8_t)code;
            d.bits = 8;
            *out = d;
            return true;
        }
    /* "<prefix><bits>": the prefix, then 1 to 3 digits and nothing else. */
    for (int code = STRIDED_DTYPE_INT; code <= STRIDED_DTYPE_COMPLEX; code++) {
        const char *prefix = bits_prefix(code);
        size_t n = prefix != NULL ? strlen(prefix) : 0;
        if (prefix == NULL || strncmp(name, prefix, n) != 0)
            continue;
        const char *p = name + n;
        unsigned bits = 0;
        int digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
            bits = bits * 10 + (unsigned)(*p - '0');
        d.code = (uint8_t)code;
        d.bits = (uint8_t)bits;
        if (*p == '\0' && digits > 0 && digits < 4 && bits < 256 && supported_itemsize(d) > 0) {
            *out = d;
            return true;
        }
    }
    return false;
}

strided_status strided_dtype_parse(const char *name, strided_dtype *out)
{
    const char *op = "dtype_parse";
    if (name == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "name and out are required");
    if (lookup_name(name, out))
        return STRIDED_OK;
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "%.32s%s names no element type strided knows (int8..int64, "
                         "uint8..uint64, float16..float64, bfloat16, complex64, complex128, "
                         "bool, float8_*, int1..int4, uint1..uint4, float4_e2m1fn, float6_*, "
                         "and _x2 for two lanes)",
                         name, strlen(name) > 32 ? "..." : "");
}

/* Append a type string: its byte-order mark, kind and size in bytes (at
 * most 16), as "<f4" or "|u1". Built by hand: imports make one a call, and
 * printf costs more than the rest of such an import. */
static size_t put_typestr(strided__text *t, char order, char kind, int itemsize)
{
    assert(itemsize > 0 && itemsize < 100);
    char s[4] = {order, kind};
    size_t n = 2;
    if (itemsize >= 10)
        s[n++] = (char)('0' + itemsize / 10);
    s[n++] = (char)('0' + itemsize % 10);
    strided__text_put(t, s, n);
    return t->len;
}

size_t strided_dtype_typestr(strided_dtype dtype, char *buf, size_t size)
{
    strided__text t = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    int itemsize = supported_itemsize(dtype);
    if (itemsize == 0)
        return 0;
    char order = itemsize == 1 ? '|' : FOREIGN_ORDER == '>' ? '<' : '>';
    char kind;
    switch (dtype.code) {
    case STRIDED_DTYPE_INT: kind = 'i'; break;
    case STRIDED_DTYPE_UINT: kind = 'u'; break;
    case STRIDED_DTYPE_FLOAT: kind = 'f'; break;
    case STRIDED_DTYPE_COMPLEX: kind = 'c'; break;
    case STRIDED_DTYPE_BOOL: kind = 'b'; break;
    default:
        /* ml_dtypes' types: raw bytes in NumPy's eyes, except float8_e5m2,
         * which it registers as a 1-byte float; their strings carry the
         * machine's byte order even for one byte. */
        kind = dtype.code == STRIDED_DTYPE_FLOAT8_E5M2 ? 'f' : 'V';
        order = FOREIGN_ORDER == '>' ? '<' : '>';
        break;
    }
    return put_typestr(&t, order, kind, itemsize);
}

size_t strided_typestr_from_format(const char *format, int64_t itemsize, char *buf, size_t size)
{
    strided__text t = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    if (format == NULL)
        return 0;
    const char native = FOREIGN_ORDER == '>' ? '<' : '>';
    if (*format == '@' || *format == '=' || *format == native)
        format++;
    char kind;
    bool size_ok;
    if (format[0] == 'Z' && (format[1] == 'f' || format[1] == 'd') && format[2] == '\0') {
        kind = 'c';
        size_ok = itemsize == 8 || itemsize == 16;
    } else if (format[0] != '\0' && format[1] == '\0' && strchr("?bhilqBHILQefd", format[0])) {
        char c = format[0];
        kind = c == '?' ? 'b' : strchr("bhilq", c) ? 'i' : strchr("BHILQ", c) ? 'u' : 'f';
        size_ok = kind == 'b'   ? itemsize == 1
                  : kind == 'f' ? itemsize == 2 || itemsize == 4 || itemsize == 8
                                : itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
    } else {
        return 0;
    }
    if (!size_ok)
        return 0;
    return put_typestr(&t, itemsize == 1 ? '|' : native, kind, (int)itemsize);
}

/* Whether a dtype's name can say more than its type string t: ml_dtypes'
 * types read as raw bytes or 1- and 2-byte floats of no DLPack type. */
static bool name_decides(const strided_typestr *t)
{
    return !t->has_dtype && !t->swapped && (t->kind == 'V' || t->kind == 'f') && t->itemsize <= 2;
}

bool strided_dtype_name_matters(const char *str)
{
    /* The parse puts the kind at str[1]: any kind but raw bytes and floats
     * needs none (an import asks this of every type string). */
    if (str == NULL || str[0] == '\0' || (str[1] != 'V' && str[1] != 'f'))
        return false;
    strided_typestr t;
    return strided_typestr_parse(str, 0, &t) == STRIDED_OK && name_decides(&t);
}

strided_status strided_dtype_from_numpy(const char *str, const char *name, unsigned flags,
                                        strided_typestr *out)
{
    if (out == NULL || str == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                             "typestr and out are required");
    strided_typestr t;
    strided_status status = strided_typestr_parse(str, flags, &t);
    if (status != STRIDED_OK)
        return status;
    if (flags & STRIDED_TYPESTR_STRUCTURED) {
        t.structured = true;
        t.has_dtype = false;
    } else if (name_decides(&t) && name != NULL) {
        /* ml_dtypes' bfloat16 reads "<V2", its float8 types "<V1" (and
         * float8_e5m2 "<f1"): the name says which. Its sub-byte types
         * ("int4", "float4_e2m1fn", ...) read "<V1" too: one element per
         * byte, padded, as NumPy has no other way to store them. */
        strided_dtype d;
        if (lookup_name(name, &d) && named_only(d.code) && supported_itemsize(d) == t.itemsize) {
            t.has_dtype = true;
            t.dtype = d;
        } else if (t.kind == 'V' && t.itemsize == 1 && lookup_name(name, &d) &&
                   strided_dtype_is_subbyte(d) && d.lanes == 1) {
            t.has_dtype = true;
            t.padded = true;
            t.dtype = d;
        }
    }
    *out = t;
    return STRIDED_OK;
}

strided_status strided_typestr_check_dlpack_export(const strided_typestr *t)
{
    const char *op = "__dlpack__";
    if (t == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the type is required");
    if (t->structured)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "Structured dtypes are not supported for DLPack export");
    if (t->swapped)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "Non-native-endian dtypes are not supported for DLPack export");
    if (!t->has_dtype)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "Unsupported dtype for DLPack export: |%c%d", t->kind,
                             (int)(t->kind == 'U' ? t->itemsize / 4 : t->itemsize));
    return STRIDED_OK;
}
