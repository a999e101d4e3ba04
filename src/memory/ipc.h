/*
 * memory/ipc.h: the memory layer's IPC internals shared with the view layer
 * and the tests: the identity of this process and boot, random bytes,
 * the checksum and little-endian fields of the descriptor formats, and what
 * a resource's pool says of its sharing. Not installed.
 */
#ifndef STRIDED_MEMORY_IPC_H
#define STRIDED_MEMORY_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "cuda/driver.h"
#include "strided/buffer.h"
#include "strided/ipc.h"
#include "strided/resource.h"

/* Who wrote a descriptor: the machine's boot (Linux's boot_id; all zero
 * where it cannot be read, and then never compared), the process id, and a
 * random number drawn once per process, so that a later process that is
 * given the same id is still another process. */
typedef struct strided__ipc_process {
    unsigned char boot_id[16];
    int64_t pid;
    uint64_t nonce;
} strided__ipc_process;

/* This process's identity. */
void strided__ipc_process_identity(strided__ipc_process *out);

/* For tests: make this process look like another one of the same boot
 * (nonce != 0: that nonce), or of another boot too (boot_id non-NULL: those
 * 16 bytes); nonce 0 and boot_id NULL: be itself again. */
void strided__ipc_pretend_process(uint64_t nonce, const unsigned char *boot_id);

/* Fill buf with n random bytes (getrandom); STRIDED_ERR_UNSUPPORTED when
 * the system has none to give. */
strided_status strided__ipc_random(const char *op, void *buf, size_t n);

/* The checksum of the descriptor formats: 64-bit FNV-1a of n bytes. */
uint64_t strided__ipc_checksum(const void *bytes, size_t n);

/* Little-endian fields of the descriptor formats. */
static inline void strided__put_le(unsigned char *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t strided__get_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Whether the n bytes at p are all zero. */
static inline bool strided__all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* Check the opening of a descriptor of kind what ("buffer", "view"): its
 * 8-byte magic, then its 2-byte version at offset 8, which must be
 * version. STRIDED_ERR_INVALID_ARGUMENT ("not a strided buffer IPC
 * descriptor ...", "buffer descriptor version 2 is not supported; ...").
 * Assumes: the descriptor has at least 10 bytes. */
strided_status strided__ipc_check_header(const char *op, const unsigned char *d, const char *magic,
                                         int version, const char *what);

/* What a built-in pool resource says of its sharing (resource.c). */
typedef struct strided__pool_ipc {
    const strided__driver *cu;
    CUmemoryPool pool;
    int device; /* whose primary context its driver calls run in */
    bool ipc;
    bool mapped;
    bool has_id;
    unsigned char id[STRIDED_IPC_POOL_ID_SIZE];
} strided__pool_ipc;

/* Fill *out for a built-in resource that allocates from a pool; false
 * (out untouched) for every other resource. */
bool strided__resource_pool_ipc(const strided_memory_resource *mr, strided__pool_ipc *out);

/* The context given to strided_buffer_wrap when b was wrapped with the
 * release callback release; NULL otherwise (buffer.c). */
void *strided__buffer_release_context(const strided_buffer *b, strided_release_fn release);

/* The descriptor strided_buffer_export_ipc made of b before, into out;
 * false when there is none (buffer.c). */
bool strided__buffer_ipc_cached(const strided_buffer *b,
                                unsigned char out[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE]);

/* Keep d as b's descriptor for later exports, unless one is kept already
 * (or no memory is left for it). Thread-safe. */
void strided__buffer_ipc_cache(const strided_buffer *b,
                               const unsigned char d[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE]);

#endif
