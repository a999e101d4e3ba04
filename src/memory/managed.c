/*
 * memory/managed.c: managed memory's advice (cuMemAdvise), what the driver
 * says of it (cuMemRangeGetAttribute), and moving its pages: prefetches
 * (cuMemPrefetchAsync) and discards (cuMemDiscardBatchAsync,
 * cuMemDiscardAndPrefetchBatchAsync); and the locations these take, which
 * copies and pools use too.
 *
 * The driver's entry points for these come in two generations: those of
 * CUDA 8.0, which take a device ordinal (CU_DEVICE_CPU for the host), and
 * those of CUDA 12.2, which take a CUmemLocation and so reach host NUMA
 * nodes. The newer ones are used where the driver has them; the older
 * ones serve the locations they can name on older drivers.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda/driver.h"
#include "memory/memory.h"
#include "strided/buffer.h"

static const strided_memory_location NONE_LOCATION = {STRIDED_LOCATION_NONE, -1};

/* The names of the location types, as cuda.core names its location kinds. */
static const char *location_name(strided_memory_location_type type)
{
    switch (type) {
    case STRIDED_LOCATION_DEVICE: return "device";
    case STRIDED_LOCATION_HOST: return "host";
    case STRIDED_LOCATION_HOST_NUMA: return "host_numa";
    case STRIDED_LOCATION_HOST_NUMA_CURRENT: return "host_numa_current";
    default: return "none";
    }
}

strided_status strided__check_location(const char *op, const char *what,
                                       strided_memory_location loc, unsigned allowed)
{
    if ((unsigned)loc.type > STRIDED_LOCATION_HOST_NUMA_CURRENT)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "unknown location type %d",
                             (int)loc.type);
    if (loc.type == STRIDED_LOCATION_NONE) {
        if (allowed & (1u << STRIDED_LOCATION_NONE))
            return STRIDED_OK;
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "location is required");
    }
    if (!(allowed & (1u << loc.type)))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s does not support location_type='%s'", what,
                             location_name(loc.type));
    if (loc.type == STRIDED_LOCATION_DEVICE && loc.id < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a device location needs a device ordinal (>= 0), got %d", loc.id);
    if (loc.type == STRIDED_LOCATION_HOST_NUMA && loc.id < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a host_numa location needs a NUMA node (>= 0), got %d", loc.id);
    return STRIDED_OK;
}

CUmemLocation strided__cu_location(strided_memory_location loc)
{
    CUmemLocation out;
    memset(&out, 0, sizeof out);
    switch (loc.type) {
    case STRIDED_LOCATION_DEVICE: out.type = CU_MEM_LOCATION_TYPE_DEVICE; break;
    case STRIDED_LOCATION_HOST: out.type = CU_MEM_LOCATION_TYPE_HOST; break;
    case STRIDED_LOCATION_HOST_NUMA: out.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; break;
    case STRIDED_LOCATION_HOST_NUMA_CURRENT:
        out.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
        break;
    default: out.type = CU_MEM_LOCATION_TYPE_INVALID; break;
    }
    /* The host and the calling thread's node have no id to give. */
    if (loc.type == STRIDED_LOCATION_DEVICE || loc.type == STRIDED_LOCATION_HOST_NUMA)
        out.id = loc.id;
    return out;
}

strided_status strided__check_device(const char *op, const strided__driver *cu, int device,
                                     int *out_count)
{
    int count = 0;
    strided_status status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetCount(&count));
    if (status != STRIDED_OK)
        return status;
    if (device < 0 || device >= count)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "device %d does not exist; there are %d CUDA devices", device, count);
    if (out_count != NULL)
        *out_count = count;
    return STRIDED_OK;
}

/* The checks every operation on managed memory opens with
 * (strided/buffer.h), up to the driver: the memory is managed, the location
 * is one of allowed (what names the operation in that message), the driver
 * is there and the location's device exists. The driver goes to *cu. */
static strided_status check_managed(const char *op, const char *what, const strided_buffer *b,
                                    strided_memory_location loc, unsigned allowed,
                                    const strided__driver **cu)
{
    if (!strided_buffer_memory_info(b).managed)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s requires a managed-memory allocation", op);
    strided_status status = strided__check_location(op, what, loc, allowed);
    if (status == STRIDED_OK)
        status = strided__cuda(op, cu);
    if (status == STRIDED_OK && loc.type == STRIDED_LOCATION_DEVICE)
        status = strided__check_device(op, *cu, loc.id, NULL);
    return status;
}

/* The ordinal the CUDA 8.0 entry points take for loc, which must be a
 * device or the host: older drivers cannot name the others. name is the
 * entry point, for the message. */
static strided_status legacy_device(const char *op, const strided__driver *cu, const char *name,
                                    strided_memory_location loc, CUdevice *out)
{
    if (loc.type == STRIDED_LOCATION_DEVICE || loc.type == STRIDED_LOCATION_HOST ||
        loc.type == STRIDED_LOCATION_NONE) {
        *out = loc.type == STRIDED_LOCATION_DEVICE ? loc.id : CU_DEVICE_CPU;
        return STRIDED_OK;
    }
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                         "a %s location needs a driver for CUDA 12.2 or later (%s with a "
                         "CUmemLocation); this driver supports CUDA %d.%d",
                         location_name(loc.type), name, cu->version / 1000,
                         cu->version % 1000 / 10);
}

/* The driver has none of the entry points an operation needs. */
static strided_status lacks(const char *op, const strided__driver *cu, const char *name,
                            const char *since)
{
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                         "%s needs a driver for CUDA %s or later (%s); this driver supports "
                         "CUDA %d.%d",
                         op, since, name, cu->version / 1000, cu->version % 1000 / 10);
}

/* The driver's address of b's memory. */
static CUdeviceptr address(const strided_buffer *b)
{
    return (CUdeviceptr)(uintptr_t)strided_buffer_ptr(b);
}

/* One cuMemAdvise of b's memory. Assumes: the checks are made, the
 * memory's device's context is current, b is not empty. */
static strided_status advise_here(const char *op, const strided__driver *cu,
                                  const strided_buffer *b, strided_memory_advice advice,
                                  strided_memory_location loc)
{
    CUdeviceptr p = address(b);
    size_t n = strided_buffer_size(b);
    if (cu->cuMemAdvise_v2 != NULL) {
        /* Advice that takes no location still has one checked by the
         * driver: the host stands in. */
        CUmemLocation l = strided__cu_location(loc);
        if (l.type == CU_MEM_LOCATION_TYPE_INVALID)
            l.type = CU_MEM_LOCATION_TYPE_HOST;
        return STRIDED_CUDA_CHECK(op, cu->cuMemAdvise_v2(p, n, (CUmem_advise)advice, l));
    }
    if (cu->cuMemAdvise == NULL)
        return lacks(op, cu, "cuMemAdvise", "8.0");
    CUdevice device = CU_DEVICE_CPU;
    strided_status status = legacy_device(op, cu, "cuMemAdvise", loc, &device);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuMemAdvise(p, n, (CUmem_advise)advice, device));
    return status;
}

/* The locations each advice takes: SET_PREFERRED_LOCATION any, the
 * ACCESSED_BY pair a device or the host, the others none (anything,
 * ignored). */
static unsigned advice_locations(strided_memory_advice advice)
{
    switch (advice) {
    case STRIDED_ADVISE_SET_PREFERRED_LOCATION: return STRIDED__ANY_LOCATION;
    case STRIDED_ADVISE_SET_ACCESSED_BY:
    case STRIDED_ADVISE_UNSET_ACCESSED_BY:
        return (1u << STRIDED_LOCATION_DEVICE) | (1u << STRIDED_LOCATION_HOST);
    default: return ~0u;
    }
}

static const char *const advice_names[] = {
    [STRIDED_ADVISE_SET_READ_MOSTLY] = "CU_MEM_ADVISE_SET_READ_MOSTLY",
    [STRIDED_ADVISE_UNSET_READ_MOSTLY] = "CU_MEM_ADVISE_UNSET_READ_MOSTLY",
    [STRIDED_ADVISE_SET_PREFERRED_LOCATION] = "CU_MEM_ADVISE_SET_PREFERRED_LOCATION",
    [STRIDED_ADVISE_UNSET_PREFERRED_LOCATION] = "CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION",
    [STRIDED_ADVISE_SET_ACCESSED_BY] = "CU_MEM_ADVISE_SET_ACCESSED_BY",
    [STRIDED_ADVISE_UNSET_ACCESSED_BY] = "CU_MEM_ADVISE_UNSET_ACCESSED_BY",
};

/* "advise CU_MEM_ADVISE_SET_ACCESSED_BY", as cuda.core names an advice in
 * its messages. */
static void advice_text(strided_memory_advice advice, char *buf, size_t size)
{
    snprintf(buf, size, "advise %s", advice_names[advice]);
}

/* Run fn on b with the memory's device's context current: the driver
 * calls of an operation whose checks are made. */
typedef strided_status (*managed_fn)(const char *op, const strided__driver *cu,
                                     const strided_buffer *b, void *arg);

static strided_status in_context(const char *op, const strided__driver *cu, const strided_buffer *b,
                                 managed_fn fn, void *arg)
{
    strided_memory_info info = strided_buffer_memory_info(b);
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, cu, strided__memory_device(&info), &scope);
    if (status != STRIDED_OK)
        return status;
    status = fn(op, cu, b, arg);
    strided__context_leave(cu, &scope);
    return status;
}

/* What a change to managed memory is given: advice and its location, a
 * location and stream to move the pages on (location NONE: a plain
 * discard), the locations to keep a mapping. */
typedef struct change {
    strided_memory_advice advice;
    strided_memory_location location;
    CUstream stream;
    const strided_memory_location *locations;
    size_t count;
} change;

static strided_status advise_fn(const char *op, const strided__driver *cu, const strided_buffer *b,
                                void *arg)
{
    const change *a = arg;
    return advise_here(op, cu, b, a->advice, a->location);
}

strided_status strided_buffer_advise(strided_buffer *b, strided_memory_advice advice,
                                     strided_memory_location location)
{
    const char *op = "advise";
    if (b == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the buffer is required");
    if (advice < STRIDED_ADVISE_SET_READ_MOSTLY || advice > STRIDED_ADVISE_UNSET_ACCESSED_BY)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "unknown advice %d (the advice is a strided_memory_advice)",
                             (int)advice);
    char what[64];
    advice_text(advice, what, sizeof what);
    unsigned allowed = advice_locations(advice);
    /* Advice that takes no location ignores the one given. */
    if (allowed == ~0u)
        location = NONE_LOCATION;
    const strided__driver *cu = NULL;
    strided_status status = check_managed(op, what, b, location, allowed, &cu);
    if (status != STRIDED_OK || strided_buffer_size(b) == 0)
        return status;
    change a = {.advice = advice, .location = location};
    return in_context(op, cu, b, advise_fn, &a);
}

/* One int attribute of b's memory. */
static strided_status range_int(const char *op, const strided__driver *cu, const strided_buffer *b,
                                CUmem_range_attribute attribute, int *out)
{
    int v = 0;
    strided_status status = STRIDED_CUDA_CHECK(
        op,
        cu->cuMemRangeGetAttribute(&v, sizeof v, attribute, address(b), strided_buffer_size(b)));
    if (status == STRIDED_OK)
        *out = v;
    return status;
}

static strided_status read_mostly_fn(const char *op, const strided__driver *cu,
                                     const strided_buffer *b, void *arg)
{
    int v = 0;
    strided_status status = range_int(op, cu, b, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, &v);
    if (status == STRIDED_OK)
        *(bool *)arg = v != 0;
    return status;
}

/* The checks of a query, which takes no location; out_name names its
 * out-parameter. */
static strided_status check_query(const char *op, const strided_buffer *b, const void *out,
                                  const char *out_name, const strided__driver **cu)
{
    if (b == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the buffer and %s are required",
                             out_name);
    return check_managed(op, op, b, NONE_LOCATION, 1u << STRIDED_LOCATION_NONE, cu);
}

strided_status strided_buffer_read_mostly(const strided_buffer *b, bool *out)
{
    const char *op = "read_mostly";
    const strided__driver *cu = NULL;
    strided_status status = check_query(op, b, out, "out", &cu);
    if (status != STRIDED_OK)
        return status;
    bool v = false;
    if (strided_buffer_size(b) > 0 &&
        (status = in_context(op, cu, b, read_mostly_fn, &v)) != STRIDED_OK)
        return status;
    *out = v;
    return STRIDED_OK;
}

/* The preferred location: by its type and id where the driver tells them
 * (CUDA 12.2), else by the device ordinal of the older attribute. */
static strided_status preferred_fn(const char *op, const strided__driver *cu,
                                   const strided_buffer *b, void *arg)
{
    strided_memory_location *out = arg;
    strided_memory_location loc = {STRIDED_LOCATION_NONE, -1};
    int type = 0, id = 0;
    strided_status status;
    if (cu->version >= STRIDED_CUDA_MEM_LOCATION_VERSION) {
        status = range_int(op, cu, b, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, &type);
        if (status == STRIDED_OK)
            status = range_int(op, cu, b, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, &id);
        if (status != STRIDED_OK)
            return status;
        switch (type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
            loc = (strided_memory_location){STRIDED_LOCATION_DEVICE, id};
            break;
        case CU_MEM_LOCATION_TYPE_HOST: loc.type = STRIDED_LOCATION_HOST; break;
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
            loc = (strided_memory_location){STRIDED_LOCATION_HOST_NUMA, id};
            break;
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
            loc.type = STRIDED_LOCATION_HOST_NUMA_CURRENT;
            break;
        default: break;
        }
    } else {
        status = range_int(op, cu, b, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, &id);
        if (status != STRIDED_OK)
            return status;
        if (id == CU_DEVICE_CPU)
            loc.type = STRIDED_LOCATION_HOST;
        else if (id >= 0)
            loc = (strided_memory_location){STRIDED_LOCATION_DEVICE, id};
    }
    *out = loc;
    return STRIDED_OK;
}

strided_status strided_buffer_preferred_location(const strided_buffer *b,
                                                 strided_memory_location *out)
{
    const char *op = "preferred_location";
    const strided__driver *cu = NULL;
    strided_status status = check_query(op, b, out, "out", &cu);
    if (status != STRIDED_OK)
        return status;
    strided_memory_location loc = {STRIDED_LOCATION_NONE, -1};
    if (strided_buffer_size(b) > 0 &&
        (status = in_context(op, cu, b, preferred_fn, &loc)) != STRIDED_OK)
        return status;
    *out = loc;
    return STRIDED_OK;
}

/* The locations advised to keep a mapping, as the driver lists them. */
typedef struct location_list {
    strided_memory_location *items; /* strided__malloc'ed */
    size_t count;
} location_list;

/* Read the ACCESSED_BY list of b's memory into *out: the driver writes
 * one int per location, as many as fit, and pads with CU_DEVICE_INVALID;
 * room for every device and the host holds them all. Devices come in
 * ascending order, then the host. */
static strided_status accessed_by_fn(const char *op, const strided__driver *cu,
                                     const strided_buffer *b, void *arg)
{
    location_list *out = arg;
    int count = 0;
    strided_status status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetCount(&count));
    if (status != STRIDED_OK)
        return status;
    size_t n = (size_t)count + 1;
    if (n > SIZE_MAX / sizeof(int) / 2)
        return strided__fail(STRIDED_ERR_OVERFLOW, op, "%d devices are too many to list", count);
    int *ids = strided__malloc(n * sizeof *ids);
    strided_memory_location *items = strided__malloc(n * sizeof *items);
    if (ids == NULL || items == NULL) {
        strided__free(ids);
        strided__free(items);
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a list of %zu", n);
    }
    status = STRIDED_CUDA_CHECK(op, cu->cuMemRangeGetAttribute(ids, n * sizeof *ids,
                                                               CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                                                               address(b), strided_buffer_size(b)));
    size_t found = 0;
    bool host = false;
    for (size_t i = 0; status == STRIDED_OK && i < n; i++) {
        if (ids[i] >= 0)
            items[found++] = (strided_memory_location){STRIDED_LOCATION_DEVICE, ids[i]};
        else if (ids[i] == CU_DEVICE_CPU)
            host = true;
    }
    strided__free(ids);
    if (status != STRIDED_OK) {
        strided__free(items);
        return status;
    }
    /* Devices in ascending order (the driver keeps the order of the
     * advice), then the host. */
    for (size_t i = 1; i < found; i++) {
        strided_memory_location x = items[i];
        size_t j = i;
        for (; j > 0 && items[j - 1].id > x.id; j--)
            items[j] = items[j - 1];
        items[j] = x;
    }
    if (host)
        items[found++] = (strided_memory_location){STRIDED_LOCATION_HOST, -1};
    out->items = items;
    out->count = found;
    return STRIDED_OK;
}

strided_status strided_buffer_accessed_by(const strided_buffer *b, strided_memory_location *out,
                                          size_t capacity, size_t *out_count)
{
    const char *op = "accessed_by";
    const strided__driver *cu = NULL;
    if (out == NULL && capacity > 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "out is required for a capacity of %zu", capacity);
    strided_status status = check_query(op, b, out_count, "out_count", &cu);
    if (status != STRIDED_OK)
        return status;
    location_list list = {NULL, 0};
    if (strided_buffer_size(b) > 0 &&
        (status = in_context(op, cu, b, accessed_by_fn, &list)) != STRIDED_OK)
        return status;
    if (list.count > capacity) {
        strided__free(list.items);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%zu locations are advised, room for %zu", list.count, capacity);
    }
    if (list.count > 0)
        memcpy(out, list.items, list.count * sizeof *out);
    strided__free(list.items);
    *out_count = list.count;
    return STRIDED_OK;
}

static bool same_location(strided_memory_location a, strided_memory_location b)
{
    return a.type == b.type && (a.type != STRIDED_LOCATION_DEVICE || a.id == b.id);
}

static bool listed(const strided_memory_location *list, size_t n, strided_memory_location loc)
{
    for (size_t i = 0; i < n; i++)
        if (same_location(list[i], loc))
            return true;
    return false;
}

/* Unset what is advised and not listed, then set what is listed and not
 * advised. */
static strided_status set_accessed_by_fn(const char *op, const strided__driver *cu,
                                         const strided_buffer *b, void *arg)
{
    const change *a = arg;
    location_list now = {NULL, 0};
    strided_status status = accessed_by_fn(op, cu, b, &now);
    for (size_t i = 0; status == STRIDED_OK && i < now.count; i++)
        if (!listed(a->locations, a->count, now.items[i]))
            status = advise_here(op, cu, b, STRIDED_ADVISE_UNSET_ACCESSED_BY, now.items[i]);
    for (size_t i = 0; status == STRIDED_OK && i < a->count; i++)
        if (!listed(now.items, now.count, a->locations[i]) &&
            !listed(a->locations, i, a->locations[i]))
            status = advise_here(op, cu, b, STRIDED_ADVISE_SET_ACCESSED_BY, a->locations[i]);
    strided__free(now.items);
    return status;
}

strided_status strided_buffer_set_accessed_by(strided_buffer *b,
                                              const strided_memory_location *locations,
                                              size_t count)
{
    const char *op = "accessed_by";
    if (b == NULL || (locations == NULL && count > 0))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the buffer and, for %zu locations, the locations are required",
                             count);
    if (!strided_buffer_memory_info(b).managed)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "advise requires a managed-memory allocation");
    char what[64];
    advice_text(STRIDED_ADVISE_SET_ACCESSED_BY, what, sizeof what);
    unsigned allowed = advice_locations(STRIDED_ADVISE_SET_ACCESSED_BY);
    strided_status status = STRIDED_OK;
    for (size_t i = 0; i < count && status == STRIDED_OK; i++)
        status = strided__check_location(op, what, locations[i], allowed);
    const strided__driver *cu = NULL;
    if (status == STRIDED_OK)
        status = strided__cuda(op, &cu);
    for (size_t i = 0; i < count && status == STRIDED_OK; i++)
        if (locations[i].type == STRIDED_LOCATION_DEVICE)
            status = strided__check_device(op, cu, locations[i].id, NULL);
    if (status != STRIDED_OK || strided_buffer_size(b) == 0)
        return status;
    change a = {.locations = locations, .count = count};
    return in_context(op, cu, b, set_accessed_by_fn, &a);
}

static strided_status prefetch_fn(const char *op, const strided__driver *cu,
                                  const strided_buffer *b, void *arg)
{
    const change *a = arg;
    CUdeviceptr p = address(b);
    size_t n = strided_buffer_size(b);
    if (cu->cuMemPrefetchAsync_v2 != NULL)
        return STRIDED_CUDA_CHECK(
            op, cu->cuMemPrefetchAsync_v2(p, n, strided__cu_location(a->location), 0, a->stream));
    if (cu->cuMemPrefetchAsync == NULL)
        return lacks(op, cu, "cuMemPrefetchAsync", "8.0");
    CUdevice device = CU_DEVICE_CPU;
    strided_status status = legacy_device(op, cu, "cuMemPrefetchAsync", a->location, &device);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuMemPrefetchAsync(p, n, device, a->stream));
    return status;
}

/* The discards: one range, and with a location its prefetch there. */
static strided_status discard_fn(const char *op, const strided__driver *cu, const strided_buffer *b,
                                 void *arg)
{
    const change *a = arg;
    CUdeviceptr p = address(b);
    size_t n = strided_buffer_size(b);
    if (a->location.type == STRIDED_LOCATION_NONE)
        return STRIDED_CUDA_CHECK(op, cu->cuMemDiscardBatchAsync(&p, &n, 1, 0, a->stream));
    CUmemLocation l = strided__cu_location(a->location);
    size_t index = 0;
    return STRIDED_CUDA_CHECK(op, cu->cuMemDiscardAndPrefetchBatchAsync(&p, &n, 1, &l, &index, 1, 0,
                                                                        a->stream));
}

/* The checks of a prefetch or discard (strided/buffer.h), with the
 * location types allowed. */
static strided_status check_move(const char *op, const strided_buffer *b,
                                 strided_memory_location location, unsigned allowed,
                                 const strided__driver **cu)
{
    if (b == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the buffer is required");
    return check_managed(op, op, b, location, allowed, cu);
}

strided_status strided_buffer_prefetch(strided_buffer *b, strided_memory_location location,
                                       void *stream)
{
    const char *op = "prefetch";
    const strided__driver *cu = NULL;
    strided_status status = check_move(op, b, location, STRIDED__ANY_LOCATION, &cu);
    if (status != STRIDED_OK || strided_buffer_size(b) == 0)
        return status;
    change a = {.location = location, .stream = (CUstream)stream};
    return in_context(op, cu, b, prefetch_fn, &a);
}

strided_status strided_buffer_discard(strided_buffer *b, void *stream)
{
    const char *op = "discard";
    const strided__driver *cu = NULL;
    strided_status status = check_move(op, b, NONE_LOCATION, 1u << STRIDED_LOCATION_NONE, &cu);
    if (status == STRIDED_OK && cu->cuMemDiscardBatchAsync == NULL)
        status = lacks(op, cu, "cuMemDiscardBatchAsync", "13.0");
    if (status != STRIDED_OK || strided_buffer_size(b) == 0)
        return status;
    change a = {.location = NONE_LOCATION, .stream = (CUstream)stream};
    return in_context(op, cu, b, discard_fn, &a);
}

strided_status strided_buffer_discard_prefetch(strided_buffer *b, strided_memory_location location,
                                               void *stream)
{
    const char *op = "discard_prefetch";
    const strided__driver *cu = NULL;
    strided_status status = check_move(op, b, location, STRIDED__ANY_LOCATION, &cu);
    if (status == STRIDED_OK && cu->cuMemDiscardAndPrefetchBatchAsync == NULL)
        status = lacks(op, cu, "cuMemDiscardAndPrefetchBatchAsync", "13.0");
    if (status != STRIDED_OK || strided_buffer_size(b) == 0)
        return status;
    change a = {.location = location, .stream = (CUstream)stream};
    return in_context(op, cu, b, discard_fn, &a);
}
