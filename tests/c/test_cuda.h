/*
 * test_cuda.h: choosing the CUDA driver of a test process, and reaching the
 * fake driver's control functions (fake_cuda.h).
 *
 * libstrided loads its driver once per process, so each test executable
 * picks one before its first test: use_no_driver() points libstrided at a
 * path that does not exist (the state of a machine without libcuda.so.1,
 * made explicit so that the tests mean the same on a GPU machine), and
 * use_fake_driver() at the fake built beside the tests (FAKE_CUDA_PATH),
 * opening it here too so that the test and libstrided share one instance.
 */
#ifndef STRIDED_TEST_CUDA_H
#define STRIDED_TEST_CUDA_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

#define NO_DRIVER_PATH "/nonexistent/libcuda.so.1"

/* The fake's control functions. */
typedef struct fake_cuda_api {
    fake_cuda_reset_fn reset;
    fake_cuda_add_range_fn add_range;
    fake_cuda_remove_range_fn remove_range;
    fake_cuda_fail_next_fn fail_next;
    fake_cuda_calls_fn calls;
    fake_cuda_current_context_fn current_context;
    fake_cuda_set_current_device_fn set_current_device;
    fake_cuda_live_bytes_fn live_bytes;
    fake_cuda_last_stream_fn last_stream;
    fake_cuda_live_events_fn live_events;
    fake_cuda_fail_after_fn fail_after;
    fake_cuda_move_bytes_fn move_bytes;
    fake_cuda_last_memop_fn last_memop;
    fake_cuda_pool_access_fn pool_access;
    fake_cuda_set_capturing_fn set_capturing;
    fake_cuda_set_device_uuid_fn set_device_uuid;
    fake_cuda_managed_info_fn managed_info;
    fake_cuda_last_managed_op_fn last_managed_op;
    fake_cuda_last_copy_attributes_fn last_copy_attributes;
    fake_cuda_mappings_fn mappings;
    fake_cuda_set_ipc_handle_types_fn set_ipc_handle_types;
} fake_cuda_api;

static fake_cuda_api fake __attribute__((unused));

static inline void use_no_driver(void)
{
    setenv("STRIDED_CUDA_DRIVER", NO_DRIVER_PATH, 1);
}

/* Look up one control function; a missing one ends the test process. */
static inline void fake_symbol_(void *lib, const char *name, void *slot)
{
    void *sym = dlsym(lib, name);
    if (sym == NULL) {
        fprintf(stderr, "fake CUDA driver: no %s: %s\n", name, dlerror());
        exit(1);
    }
    memcpy(slot, &sym, sizeof sym);
}

/* Point libstrided at the fake at path, open it, and reset it to
 * device_count devices, no pageable memory access, with memory pools. */
static inline void use_fake_driver(const char *path, int device_count)
{
    void *lib;

    setenv("STRIDED_CUDA_DRIVER", path, 1);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        exit(1);
    }
    fake_symbol_(lib, "fake_cuda_reset", &fake.reset);
    fake_symbol_(lib, "fake_cuda_add_range", &fake.add_range);
    fake_symbol_(lib, "fake_cuda_remove_range", &fake.remove_range);
    fake_symbol_(lib, "fake_cuda_fail_next", &fake.fail_next);
    fake_symbol_(lib, "fake_cuda_calls", &fake.calls);
    fake_symbol_(lib, "fake_cuda_current_context", &fake.current_context);
    fake_symbol_(lib, "fake_cuda_set_current_device", &fake.set_current_device);
    fake_symbol_(lib, "fake_cuda_live_bytes", &fake.live_bytes);
    fake_symbol_(lib, "fake_cuda_last_stream", &fake.last_stream);
    fake_symbol_(lib, "fake_cuda_live_events", &fake.live_events);
    fake_symbol_(lib, "fake_cuda_fail_after", &fake.fail_after);
    fake_symbol_(lib, "fake_cuda_move_bytes", &fake.move_bytes);
    fake_symbol_(lib, "fake_cuda_last_memop", &fake.last_memop);
    fake_symbol_(lib, "fake_cuda_pool_access", &fake.pool_access);
    fake_symbol_(lib, "fake_cuda_set_capturing", &fake.set_capturing);
    fake_symbol_(lib, "fake_cuda_set_device_uuid", &fake.set_device_uuid);
    fake_symbol_(lib, "fake_cuda_managed_info", &fake.managed_info);
    fake_symbol_(lib, "fake_cuda_last_managed_op", &fake.last_managed_op);
    fake_symbol_(lib, "fake_cuda_last_copy_attributes", &fake.last_copy_attributes);
    fake_symbol_(lib, "fake_cuda_mappings", &fake.mappings);
    fake_symbol_(lib, "fake_cuda_set_ipc_handle_types", &fake.set_ipc_handle_types);
    /* The handle stays open for the life of the process, like libstrided's. */
    fake.reset(device_count, 0, 1);
}

/* Describe size bytes at p to the fake as device memory of device, as
 * cuMemAlloc gives it (no pool); fake.remove_range forgets it. */
static inline void fake_device_range(void *p, size_t size, int device)
{
    fake_cuda_range r = {(uintptr_t)p, size, 2 /* CU_MEMORYTYPE_DEVICE */, 0, device,
                         (uintptr_t)p, NULL};
    fake.add_range(&r);
}

/* Run fn(arg) on a new thread and wait for it. */
static inline void run_on_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(1);
    }
    pthread_join(t, NULL);
}

#endif
