/*
 * strided/dtype.h: element types. A view's element type is a DLPack data
 * type (strided_dtype of strided/dlpack.h) when it has one; NumPy's type
 * strings (the array interface's typestr) describe the rest. This module is
 * the one table deciding which element types strided takes: only plain
 * data, whose bytes a copy may duplicate without knowing what they mean.
 * It names DLPack types as NumPy and ml_dtypes do, and maps between the two
 * spellings, so that bindings need not.
 *
 * Ownership: nothing is allocated or retained; strings are borrowed for the
 * call, and text is written into caller storage.
 */
#ifndef STRIDED_DTYPE_H
#define STRIDED_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/dlpack.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The size in bytes of one element of dtype, for every type whose elements
 * are whole bytes: int and uint 8/16/32/64, float 16/32/64, bfloat 16,
 * complex 64/128, bool 8, the float8 variants (8), and the sub-byte types
 * in lanes that fill whole bytes (float4_e2m1fn, int4 and uint4 with
 * lanes 2: PyTorch's float4_e2m1fn_x2, one byte holding two values).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out;
 * STRIDED_ERR_UNSUPPORTED with a message naming the type for the packed
 * sub-byte types whose elements are not whole bytes (float4_e2m1fn, int4
 * with lanes 1, float6 with lanes 1 or 2: "float4_e2m1fn is a packed
 * sub-byte type (4 bits an element) and has no whole-byte itemsize: ..."),
 * for lanes other than 1 (but for the sub-byte types, 1 or 2), the
 * float4 and float6 codes with other bits, opaque handles, unknown codes
 * and code/bits pairs that do not exist. */
STRIDED_API strided_status strided_dtype_itemsize(strided_dtype dtype, int *out);

/* Sub-byte element types: int1, int2, int4, uint1, uint2, uint4 (DLPack's
 * int and uint codes with those bits), float4_e2m1fn (bits 4), and
 * float6_e2m3fn and float6_e3m2fn (bits 6), with lanes 1 or 2. They lie in
 * memory in one of two ways (docs/subbyte.md):
 *   packed  (DLPack's default) an element is bits * lanes wide, and
 *           element i of memory D is (D >> (i * bits * lanes)) & mask,
 *           little bit-endian, D read as one little-endian integer; shape
 *           and strides count such elements. Where bits * lanes is a
 *           multiple of 8 (float4_e2m1fn_x2) each element is whole bytes;
 *           otherwise views follow the packed-layout rule of
 *           strided/layout.h (strided_layout_check_packed).
 *   padded  (DLPack's STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED, NumPy
 *           with ml_dtypes) one element of lanes 1 in each byte, its value
 *           in the low bits: a 1-byte element like any other. */

/* True when dtype is one of the sub-byte types above (lanes 1 or 2). */
STRIDED_API bool strided_dtype_is_subbyte(strided_dtype dtype);

/* The bits one element of dtype occupies in memory: the itemsize times 8
 * for the types strided_dtype_itemsize's first list names (padded is then
 * not read); for a sub-byte type, 8 when padded, bits * lanes when packed
 * (4 for float4_e2m1fn, 6 for float6_e3m2fn, 8 for float4_e2m1fn_x2).
 *   padded  whether a sub-byte type is stored one element per byte
 *   out     out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out;
 * STRIDED_ERR_UNSUPPORTED for the types strided_dtype_itemsize refuses that
 * are not sub-byte types (its messages), and for a padded sub-byte type of
 * lanes 2 ("float4_e2m1fn_x2 cannot be padded: ..."). */
STRIDED_API strided_status strided_dtype_element_bits(strided_dtype dtype, bool padded, int *out);

/* The type's name as NumPy and ml_dtypes spell it: "int8", "uint64",
 * "float16", "bfloat16", "complex64", "bool", "float8_e4m3fn", ...; the
 * sub-byte types as ml_dtypes names them ("int4", "float4_e2m1fn"), with
 * "_x2" for lanes 2 as PyTorch does ("float4_e2m1fn_x2"); for any other
 * type strided_dtype_itemsize rejects, a description such as
 * "dtype(code=3, bits=64, lanes=1)". Writes like snprintf (buf may be NULL
 * when size is 0, and only then); returns the length the full text
 * needs. */
STRIDED_API size_t strided_dtype_format(strided_dtype dtype, char *buf, size_t size);

/* True when the two types are the same (code, bits and lanes). */
STRIDED_API bool strided_dtype_equal(strided_dtype a, strided_dtype b);

/* What an array-interface type string says about an element. */
typedef struct strided_typestr {
    char kind;        /* NumPy's kind character: 'b', 'i', 'u', 'f', 'c',
                           'V', 'S', 'U', 'M' or 'm' */
    int32_t itemsize; /* bytes per element, > 0 */
    bool swapped;     /* multi-byte elements in the other byte order */
    bool structured;  /* a structured type (named fields): never a DLPack
                           type, never exported through DLPack */
    bool has_dtype;   /* dtype is set: the type has a DLPack equivalent
                           (never when swapped) */
    strided_dtype dtype;
    bool padded; /* dtype is a sub-byte type stored one element per
                           byte (ml_dtypes' int4, float4_e2m1fn, ...) */
} strided_typestr;

/* Flags of strided_typestr_parse. */
typedef enum strided_typestr_flags {
    /* The caller knows the type holds object references though its string
     * does not say so (NumPy's dtype.hasobject: a structured type with an
     * object field reads "|V16"): refused like 'O'. */
    STRIDED_TYPESTR_HOLDS_REFERENCES = 1,
    /* Refuse elements in the other byte order (imports of the array
     * interfaces: their consumers read native bytes). */
    STRIDED_TYPESTR_NATIVE_ONLY = 2,
    /* The type has named fields (NumPy's dtype.fields is not None): set
     * structured, and no DLPack type. */
    STRIDED_TYPESTR_STRUCTURED = 4
} strided_typestr_flags;

/* Parse a type string of NumPy's array interface (also the CUDA array
 * interface's typestr): a byte-order character, a kind character and a
 * decimal size, as "<f4", "|b1", "|V16", "<U3" (3 characters, 12 bytes),
 * "|O" (objects, without a size) or "<M8[ns]" (a unit in brackets, for
 * datetimes only).
 *
 * This is the one table deciding which element types strided takes: only
 * plain data, whose bytes may be copied blindly. Accepted kinds: 'b' (bool,
 * 1 byte), 'i' and 'u' (1, 2, 4 or 8 bytes), 'f' (1 for ml_dtypes' float8
 * types, 2, 4, 8, or 16 for long double), 'c' (8, 16 or 32), 'V' (raw or
 * structured bytes, any size), 'S' (bytes), 'U' (UCS-4 text), 'M' and 'm'
 * (8 bytes). Refused: 'O' and every type holding Python object references
 * (a copy would duplicate pointers without their reference counts), and
 * any other kind. Byte order: '|' and '=' are native; '>' on a
 * little-endian host (or '<' on a big-endian one) marks multi-byte
 * elements of the ordered kinds (all but 'b', 'V' and 'S') swapped.
 *   typestr  NUL-terminated; borrowed
 *   flags    strided_typestr_flags, or-ed
 *   out      out-parameter (written on success only); has_dtype for
 *            native bool, int and uint of 1-8 bytes, float of 2, 4 and 8
 *            bytes and complex of 8 and 16 bytes, with their DLPack types
 * Returns STRIDED_ERR_INVALID_ARGUMENT for NULL arguments or a malformed
 * string (naming it); STRIDED_ERR_UNSUPPORTED for object types, other
 * kinds, sizes the kind does not have, and swapped elements under
 * STRIDED_TYPESTR_NATIVE_ONLY. */
STRIDED_API strided_status strided_typestr_parse(const char *typestr, unsigned flags,
                                                 strided_typestr *out);

/* The DLPack type NumPy or ml_dtypes call name ("int8", "float32",
 * "bfloat16", "complex64", "bool", "float8_e4m3fn", "int4",
 * "float4_e2m1fn", "float4_e2m1fn_x2", ...): the inverse of
 * strided_dtype_format for every type strided_dtype_itemsize accepts and
 * every sub-byte type.
 *   name  NUL-terminated; borrowed
 *   out   out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for NULL arguments and for a name
 * that names no such type (the message quotes at most its first 32
 * characters). */
STRIDED_API strided_status strided_dtype_parse(const char *name, strided_dtype *out);

/* The array-interface type string of a buffer-protocol format (PEP 3118,
 * the struct module's syntax) that spells a plain element type in one
 * code: '?' (bool), 'b' 'h' 'i' 'l' 'q' (signed), 'B' 'H' 'I' 'L' 'Q'
 * (unsigned), 'e' 'f' 'd' (float), "Zf" "Zd" (complex), alone or after '@',
 * '=' or the machine's own byte-order mark. The size is itemsize (the
 * buffer's), which must be one the kind has (bool 1; integers 1, 2, 4, 8;
 * floats 2, 4, 8; complex 8, 16). "f" of 4 bytes is "<f4" on a
 * little-endian host, "B" of 1 byte "|u1": what NumPy's __array_interface__
 * says of the same array. Every other format (swapped byte order, long
 * double, structures, padding, strings, pointers) gives 0 and buf "": a
 * binding then reads the array interface itself. Writes like snprintf (buf
 * may be NULL when size is 0, and only then); returns the length the full
 * text needs. */
STRIDED_API size_t strided_typestr_from_format(const char *format, int64_t itemsize, char *buf,
                                               size_t size);

/* The array-interface type string NumPy gives a DLPack type: '|' and the
 * kind and size for 1-byte types ("|i1", "|u1", "|b1"), the machine's byte
 * order otherwise ("<f4", "<c16" on a little-endian host); ml_dtypes' types
 * read as raw bytes ("<V2" for bfloat16, "<V1" for the float8 types) except
 * float8_e5m2 ("<f1"), as NumPy shows them. Writes like snprintf (buf may
 * be NULL when size is 0, and only then); returns the length the full text
 * needs, 0 for a type strided_dtype_itemsize rejects and for the sub-byte
 * types, which a type string cannot tell apart (then buf holds ""). */
STRIDED_API size_t strided_dtype_typestr(strided_dtype dtype, char *buf, size_t size);

/* The element type of a NumPy dtype, from the two strings NumPy gives it:
 * its type string (dtype.str) and its name (dtype.name). The type string
 * decides what is accepted (strided_typestr_parse, with flags); the name
 * finds the DLPack type of the types the type string cannot tell apart:
 * ml_dtypes' bfloat16 and float8 types, which read as raw bytes ("<V2",
 * "<V1") or, for float8_e5m2, as a 1-byte float ("<f1"), and its sub-byte
 * types (int1..int4, uint1..uint4, float4_e2m1fn, float6_e2m3fn,
 * float6_e3m2fn: "<V1"), which are padded (padded set, lanes 1).
 *   str    dtype.str; NUL-terminated, borrowed
 *   name   dtype.name; NUL-terminated, borrowed; may be NULL (then only
 *          the type string counts)
 *   flags  strided_typestr_flags: STRIDED_TYPESTR_HOLDS_REFERENCES for
 *          dtype.hasobject, STRIDED_TYPESTR_STRUCTURED when dtype.fields
 *          is not None, STRIDED_TYPESTR_NATIVE_ONLY to refuse the other
 *          byte order
 *   out    out-parameter (written on success only): has_dtype when the
 *          type has a DLPack equivalent (never for structured, swapped,
 *          string, datetime or long double types)
 * Returns what strided_typestr_parse returns. */
STRIDED_API strided_status strided_dtype_from_numpy(const char *str, const char *name,
                                                    unsigned flags, strided_typestr *out);

/* Whether the name of a NumPy dtype whose str is str can change what
 * strided_dtype_from_numpy makes of it: true for the 1- and 2-byte type
 * strings of no DLPack type under which ml_dtypes' types appear (raw bytes
 * "<V1", "|V2", and the 1-byte float "<f1"), false for every other string
 * (float16's "<f2" included: a binding then need not ask the producer for
 * the name).
 *   str  dtype.str; NUL-terminated, borrowed; may be NULL (false)
 * A str strided_typestr_parse refuses gives false, and its reason is the
 * thread's last error, as after that call. */
STRIDED_API bool strided_dtype_name_matters(const char *str);

/* Whether a view of elements of type t may be exported through DLPack:
 * they must have a DLPack type. t is what strided_dtype_from_numpy gave.
 * Returns STRIDED_OK; STRIDED_ERR_INVALID_ARGUMENT for a NULL t;
 * STRIDED_ERR_UNSUPPORTED for a structured type ("Structured dtypes are not
 * supported for DLPack export"), swapped bytes ("Non-native-endian dtypes
 * are not supported for DLPack export") and any other type without a DLPack
 * equivalent ("Unsupported dtype for DLPack export: |S3"). */
STRIDED_API strided_status strided_typestr_check_dlpack_export(const strided_typestr *t);

#ifdef __cplusplus
}
#endif

#endif
