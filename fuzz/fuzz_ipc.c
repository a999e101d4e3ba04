/*
 * fuzz_ipc.c: the descriptors another process sends (strided/ipc.h and the
 * view descriptors of strided/view.h), which a process must read without
 * trusting them.
 *
 * The first input byte chooses the descriptor, the rest are its bytes:
 *   mode 0  a buffer descriptor, as given
 *   mode 1  a buffer descriptor of 184 body bytes (the input, zero-padded),
 *           sealed with its checksum, so that the field checks are reached
 *   mode 2  a buffer descriptor with a valid opening (magic, version) and a
 *           sealed body, fields from the input
 *   mode 3  a view descriptor, as given, imported
 *   mode 4  a view descriptor with a valid opening, its body from the input,
 *           sealed, imported
 *
 * Checked: strided_buffer_ipc_describe succeeds exactly when the
 * descriptor is one by the format of docs/ipc.md (size, magic, version,
 * checksum, and the fields: sharing, kind and device together, a size in
 * 1..2**63 - 1, reserved bytes zero, a device UUID on device memory only, a
 * pool allocation without an offset, a legacy buffer inside its
 * allocation), computed here independently; a
 * success reports the fields as written; a failure is
 * STRIDED_ERR_INVALID_ARGUMENT with a message and leaves the output
 * untouched. An import (no driver in the fuzzing process, no resource)
 * never succeeds with a descriptor of another process's memory it cannot
 * map: it fails with a status and a message of its own, the view
 * untouched, and nothing is leaked (AddressSanitizer's leak check).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "fuzz_check.h"
#include "strided/ipc.h"
#include "strided/view.h"

#define BUFFER_SIZE STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static bool zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* Whether d (size bytes) is a buffer descriptor by docs/ipc.md. */
static bool valid_buffer_descriptor(const uint8_t *d, size_t size)
{
    if (size != BUFFER_SIZE || memcmp(d, "STRDIPCB", 8) != 0 || le(d + 8, 2) != 1 ||
        le(d + 184, 8) != fnv1a(d, 184))
        return false;
    unsigned sharing = d[10], kind = d[11], has_id = d[64], has_uuid = d[176];
    int32_t device = (int32_t)(uint32_t)le(d + 12, 4);
    uint64_t bytes = le(d + 72, 8), offset = le(d + 80, 8), allocation = le(d + 88, 8);
    if (sharing != 1 && sharing != 2)
        return false;
    if (kind != STRIDED_MEMORY_DEVICE && !(kind == STRIDED_MEMORY_PINNED && sharing == 1))
        return false;
    if (kind == STRIDED_MEMORY_DEVICE ? device < 0 : device != -1)
        return false;
    if (bytes == 0 || bytes > (uint64_t)INT64_MAX)
        return false;
    if (has_id > 1 || !zero(d + 65, 7) || (!has_id && !zero(d + 48, 16)))
        return false;
    /* Bytes 160..175: device memory's device UUID, flagged by byte 176. */
    if (has_uuid > 1 || (has_uuid && kind != STRIDED_MEMORY_DEVICE) || !zero(d + 177, 7) ||
        (!has_uuid && !zero(d + 160, 16)))
        return false;
    if (sharing == 1)
        return offset == 0 && allocation == 0;
    return !has_id && offset <= allocation && bytes <= allocation - offset;
}

static void check_describe(const uint8_t *d, size_t size)
{
    strided_buffer_ipc_info info, before;
    memset(&info, 0xA5, sizeof info);
    before = info;
    bool valid = valid_buffer_descriptor(d, size);
    fuzz_mark_error();
    strided_status s = strided_buffer_ipc_describe(d, size, &info);
    fuzz_check_outcome("ipc_describe", s, valid ? 0 : FUZZ_INVALID, &info, &before, sizeof info,
                       "a buffer descriptor");
    if (s != STRIDED_OK)
        return;
    FUZZ_REQUIRE(info.version == 1 && (unsigned)info.sharing == d[10] &&
                     (unsigned)info.kind == d[11] &&
                     info.device_id == (int32_t)(uint32_t)le(d + 12, 4) &&
                     info.size == le(d + 72, 8) && info.offset == le(d + 80, 8) &&
                     info.has_pool_id == (d[64] == 1) && memcmp(info.pool_id, d + 48, 16) == 0 &&
                     info.has_device_uuid == (d[176] == 1) &&
                     memcmp(info.device_uuid, d + 160, 16) == 0 &&
                     info.exporter_pid == (int64_t)le(d + 32, 8),
                 "ipc_describe reported fields other than those written");
    /* An import without a driver and without a resource cannot map it. */
    strided_buffer *b = (strided_buffer *)(uintptr_t)0x5a5a;
    fuzz_mark_error();
    s = strided_buffer_import_ipc(NULL, d, size, NULL, &b);
    FUZZ_REQUIRE(s != STRIDED_OK, "import_ipc mapped a descriptor without a driver");
    FUZZ_REQUIRE(b == (strided_buffer *)(uintptr_t)0x5a5a, "a failed import_ipc wrote its output");
    const char *msg = strided_last_error();
    FUZZ_REQUIRE(msg[0] != '\0' && strcmp(msg, FUZZ_MARK_TEXT) != 0,
                 "import_ipc failed without a message of its own");
}

static void check_view_import(const uint8_t *d, size_t size)
{
    strided_view v, before;
    memset(&v, 0xA5, sizeof v);
    before = v;
    fuzz_mark_error();
    strided_status s = strided_view_import_ipc(NULL, d, size, NULL, &v);
    FUZZ_REQUIRE(s != STRIDED_OK, "view_import_ipc mapped a descriptor without a driver");
    FUZZ_REQUIRE(memcmp(&v, &before, sizeof v) == 0, "a failed view_import_ipc wrote its output");
    const char *msg = strided_last_error();
    FUZZ_REQUIRE(msg[0] != '\0' && strcmp(msg, FUZZ_MARK_TEXT) != 0,
                 "view_import_ipc failed without a message of its own");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* No CUDA driver: imports stop at the driver, never map. */
    setenv("STRIDED_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned mode = data[0] % 5;
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    uint8_t d[STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(STRIDED_MAX_NDIM + 1)];
    switch (mode) {
    case 0: check_describe(body, n); break;
    case 1:
    case 2:
        memset(d, 0, BUFFER_SIZE);
        memcpy(d, body, n < 184 ? n : 184);
        if (mode == 2) {
            memcpy(d, "STRDIPCB", 8);
            put_le(d + 8, 1, 2);
        }
        put_le(d + 184, fnv1a(d, 184), 8);
        check_describe(d, BUFFER_SIZE);
        break;
    case 3: check_view_import(body, n); break;
    default: {
        /* The size the body's ndim (byte 12, small) calls for, sealed. */
        size_t ndim = n > 12 ? body[12] % (STRIDED_MAX_NDIM + 2) : 0;
        size_t total = STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(ndim);
        memset(d, 0, total);
        memcpy(d, body, n < total - 8 ? n : total - 8);
        memcpy(d, "STRDIPCV", 8);
        put_le(d + 8, 1, 2);
        put_le(d + 12, ndim, 4);
        put_le(d + total - 8, fnv1a(d, total - 8), 8);
        check_view_import(d, total);
        break;
    }
    }
    return 0;
}
