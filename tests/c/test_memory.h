/*
 * test_memory.h: the fixture shared by the buffer and resource tests, a
 * user memory resource that counts its calls.
 *
 * The counting resource allocates with malloc and frees with free. It counts
 * its allocate, deallocate and destroy calls, remembers the arguments of the
 * last ones, and refuses every allocation while fail_with is not STRIDED_OK.
 * Threads of one test may share it: what its callbacks write is atomic.
 */
#ifndef STRIDED_TEST_MEMORY_H
#define STRIDED_TEST_MEMORY_H

#include "test_util.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "memory/memory.h"
#include "strided/buffer.h"
#include "strided/resource.h"

/* Threads of the tests that race on one object. */
#define THREADS 8

/* Two stream handles, only ever compared. */
#define STREAM_A ((void *)0x5a)
#define STREAM_B ((void *)0x5b)

typedef struct counting {
    atomic_int allocates, deallocates, destroys;
    atomic_size_t allocated_size; /* of the last allocate */
    _Atomic(void *) freed_ptr;    /* of the last deallocate */
    atomic_size_t freed_size;     /* of the last deallocate */
    _Atomic(void *) last_stream;  /* of the last allocate or deallocate */
    strided_status fail_with;     /* allocate fails with this when not OK */
} counting;

static inline strided_status counting_allocate(void *self, size_t size, void *stream,
                                               void **out_ptr)
{
    counting *c = self;
    if (c->fail_with != STRIDED_OK)
        return strided__fail(c->fail_with, "counting", "refused %zu bytes", size);
    void *p = malloc(size == 0 ? 1 : size);
    if (p == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, "counting", "malloc");
    atomic_store(&c->allocated_size, size);
    atomic_store(&c->last_stream, stream);
    atomic_fetch_add(&c->allocates, 1);
    *out_ptr = p;
    return STRIDED_OK;
}

static inline void counting_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    counting *c = self;
    atomic_store(&c->freed_ptr, ptr);
    atomic_store(&c->freed_size, size);
    atomic_store(&c->last_stream, stream);
    free(ptr);
    atomic_fetch_add(&c->deallocates, 1);
}

static inline void counting_destroy(void *self)
{
    counting *c = self;
    atomic_fetch_add(&c->destroys, 1);
}

static const strided_memory_resource_ops counting_ops = {
    .allocate = counting_allocate, .deallocate = counting_deallocate, .destroy = counting_destroy};

/* Host memory: host accessible only, no device. */
static const strided_memory_resource_props host_props = {true, false, false, -1, false};

/* Reset the counts; no allocation yet has a size (SIZE_MAX stands for
 * none). */
static inline void counting_init(counting *c)
{
    atomic_init(&c->allocates, 0);
    atomic_init(&c->deallocates, 0);
    atomic_init(&c->destroys, 0);
    atomic_init(&c->allocated_size, SIZE_MAX);
    atomic_init(&c->freed_ptr, NULL);
    atomic_init(&c->freed_size, 0);
    atomic_init(&c->last_stream, NULL);
    c->fail_with = STRIDED_OK;
}

/* A resource over c, which counting_resource resets, with properties p. */
static inline strided_memory_resource *counting_resource(counting *c,
                                                         strided_memory_resource_props p)
{
    strided_memory_resource *mr = NULL;
    counting_init(c);
    assert_ok(strided_memory_resource_create(&counting_ops, c, &p, &mr));
    return mr;
}

/* A buffer of size bytes from a counting resource that claims props p; the
 * resource is released (the buffer holds it). */
static inline strided_buffer *claimed(counting *c, strided_memory_resource_props p, size_t size)
{
    strided_memory_resource *mr = counting_resource(c, p);
    strided_buffer *b = NULL;
    assert_ok(strided_buffer_alloc(mr, size, NULL, &b));
    strided_memory_resource_release(mr);
    return b;
}

#endif
