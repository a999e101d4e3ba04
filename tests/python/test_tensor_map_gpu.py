"""StridedMemoryView.as_tensor_map on a GPU, against the real CUDA driver
(include/strided/tensor_map.h has the rules).

What is checked:

- strided and the driver agree, case by case, over a few hundred generated
  views (1 to 6 dimensions; C order, gapped rows, swapped outer axes,
  offsets, axes of extent 1 with any stride, misaligned starts, negative
  and broadcast axes; every data type's size) and encodings (boxes, element
  strides, swizzles, interleaves, out-of-bounds fills): where strided makes
  a map, cuTensorMapEncodeTiled called directly with the arguments the
  descriptor reports succeeds and writes the same 128 bytes; where strided
  refuses a view by one of the driver's rules, the driver refuses the
  arguments such a view gives it (its dimensions and byte strides as they
  are). Refusals that are strided's own (INTERLEAVE_32B without SWIZZLE_32B,
  which CUDA documents and its driver does not check; negative and broadcast axes, a last
  axis that is not contiguous, counts, element types, the element stride of
  the last axis, which the driver ignores without interleave) are not
  compared.
- Kernels that use the descriptor (compute capability 9.0 and later): a
  TMA load (cp.async.bulk.tensor into shared memory) of boxes of several
  views reads exactly the elements NumPy finds at the same place, zeros
  past the edges, in the 128-byte swizzle's order with SWIZZLE_128B; a TMA
  store into a gapped view writes the box's elements and nothing else (the
  gaps and what lies past the edges keep their bytes); after
  replace_address the same descriptor reads the other memory.

The module skips with "skipped: no CUDA device" where no CUDA device is
usable; the kernel tests skip on devices before compute capability 9.0.
The kernels are PTX written here and compiled by the driver.
"""

import ctypes
import random
import re

import numpy as np
import pytest

from gpu_util import cuda_device_count

if cuda_device_count() == 0:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

from strided import (  # noqa: E402
    StridedMemoryView,
    TensorMapInterleave,
    TensorMapOOBFill,
    TensorMapSwizzle,
)

CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
ARENA = 64 << 20  # one device allocation that every view lies in
CENTRE = 32 << 20  # where the generated views' element (0,...,0) is, near
SPAN = 24 << 20  # and how far from it their elements reach at most


class Driver:
    """The few driver entry points the tests call themselves, through ctypes."""

    def __init__(self):
        lib = self.lib = ctypes.CDLL("libcuda.so.1")
        u64, u32, vp, sz = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t
        sigs = {
            "cuInit": [ctypes.c_uint],
            "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
            "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
            "cuDeviceGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), ctypes.c_int],
            "cuCtxSetCurrent": [vp],
            "cuCtxSynchronize": [],
            "cuMemAlloc_v2": [ctypes.POINTER(u64), sz],
            "cuMemFree_v2": [u64],
            "cuMemcpyHtoD_v2": [u64, vp, sz],
            "cuMemcpyDtoH_v2": [vp, u64, sz],
            "cuModuleLoadData": [ctypes.POINTER(vp), ctypes.c_char_p],
            "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
            "cuLaunchKernel": [vp, u32, u32, u32, u32, u32, u32, u32, vp,
                               ctypes.POINTER(vp), vp],
            "cuTensorMapEncodeTiled": [vp, ctypes.c_int, u32, vp, ctypes.POINTER(u64),
                                       ctypes.POINTER(u64), ctypes.POINTER(u32),
                                       ctypes.POINTER(u32), ctypes.c_int, ctypes.c_int,
                                       ctypes.c_int, ctypes.c_int],
        }
        for name, args in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int

    def check(self, rc, what):
        if rc != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"{what} failed: {name.value} ({rc})")

    def __getattr__(self, name):
        fn = getattr(self.lib, name)

        def call(*args):
            self.check(fn(*args), name)
        return call


@pytest.fixture(scope="module")
def cu():
    d = Driver()
    d.cuInit(0)
    dev = ctypes.c_int()
    d.cuDeviceGet(ctypes.byref(dev), 0)
    ctx = ctypes.c_void_p()
    d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    # The tests' own calls need a context; strided makes maps for the
    # current device, 0.
    d.cuCtxSetCurrent(ctx)
    major = ctypes.c_int()
    d.cuDeviceGetAttribute(ctypes.byref(major), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           dev)
    d.major = major.value
    yield d
    d.cuCtxSetCurrent(None)


@pytest.fixture(scope="module")
def arena(cu):
    ptr = ctypes.c_uint64()
    cu.cuMemAlloc_v2(ctypes.byref(ptr), ARENA)
    yield ptr.value
    cu.cuMemFree_v2(ptr.value)


class DeviceArray:
    """Device memory described by the CUDA Array Interface (byte strides)."""

    def __init__(self, ptr, shape, dtype, strides=None):
        self.__cuda_array_interface__ = dict(
            version=3, data=(ptr, False), shape=tuple(shape), typestr=np.dtype(dtype).str,
            strides=None if strides is None else tuple(strides))


def view_of(ptr, shape, dtype, strides_elements=None):
    """A view of device memory at ptr: shape and strides in elements."""
    itemsize = np.dtype(dtype).itemsize
    strides = None if strides_elements is None else [s * itemsize for s in strides_elements]
    return StridedMemoryView.from_cuda_array_interface(
        DeviceArray(ptr, shape, dtype, strides), -1)


def aligned_buffer(size=128, alignment=128):
    raw = (ctypes.c_ubyte * (size + alignment))()
    at = (ctypes.addressof(raw) + alignment - 1) // alignment * alignment
    return raw, at


def encode(cu, data_type, address, dims, strides, box, steps, interleave=0, swizzle=0, l2=0,
           oob=0):
    """cuTensorMapEncodeTiled called directly: (result, the 128 bytes)."""
    raw, at = aligned_buffer()
    rank = len(dims)
    u64s = (ctypes.c_uint64 * max(rank, 1))(*dims)
    strides_arr = (ctypes.c_uint64 * max(rank - 1, 1))(*strides)
    box_arr = (ctypes.c_uint32 * max(rank, 1))(*box)
    steps_arr = (ctypes.c_uint32 * max(rank, 1))(*steps)
    rc = cu.lib.cuTensorMapEncodeTiled(at, int(data_type), rank, address, u64s, strides_arr,
                                       box_arr, steps_arr, int(interleave), int(swizzle), l2,
                                       int(oob))
    return rc, ctypes.string_at(at, 128)


# The data types of the element types the cases use, by NumPy name.
TMA_TYPES = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5,
             "float16": 6, "float32": 7, "float64": 8}

# Refusals by a rule of the driver's, by the start of strided's message; the
# others are strided's own.
DRIVER_RULES = re.compile(
    r"^(Global memory address must be|the global address must be 32-byte|Tensor rank must be"
    r"|box_dim\[\d+\] (must be in|\* itemsize)"
    r"|element_strides\[\d+\] must be|axis \d+ has extent|axis \d+ has a stride of"
    r"|oob_fill NAN_REQUEST_ZERO_FMA needs)")


def footprint(shape, strides, itemsize):
    """The bytes below and above element (0,...,0) that a view's elements reach."""
    if not shape:
        return 0, itemsize
    strides = strides or [0] * len(shape)
    low = sum((e - 1) * s for e, s in zip(shape, strides) if s < 0) * itemsize
    high = sum((e - 1) * s for e, s in zip(shape, strides) if s > 0) * itemsize + itemsize
    return -low, high


def generated_cases(count=400, seed=20260509):
    """(name, offset, shape, strides in elements, dtype, options) of views in
    the arena: element (0,...,0) at CENTRE + offset, every element within
    CENTRE - 24 MiB and CENTRE + 24 MiB."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        n = len(cases)
        dtype = rng.choice(["uint8", "float16", "int32", "float32", "float64", "uint64"])
        itemsize = np.dtype(dtype).itemsize
        rank = rng.choice([1, 2, 2, 3, 3, 4, 5, 6]) if n % 40 else rng.choice([0, 6])
        shape = [rng.choice([1, 2, 3, 5, 8, 16, 33]) for _ in range(rank)]
        if rank:
            shape[-1] = rng.choice([16, 24, 32, 64, 3, 1])
        kind = rng.choice(["c", "c", "gapped", "swapped", "extent-1", "negative", "broadcast",
                           "inner"])
        strides = None
        if rank:
            strides = [0] * rank
            step = 1
            pitch_pad = rng.choice([0, 0, 16 // itemsize or 1, 1])
            for k in range(rank - 1, -1, -1):
                strides[k] = step
                step *= shape[k] + (pitch_pad if k == rank - 1 and kind == "gapped" else 0)
            if kind == "swapped" and rank >= 3:
                strides[0], strides[1] = strides[1], strides[0]
                shape[0], shape[1] = shape[1], shape[0]
            if kind == "extent-1" and rank >= 2:
                k = rng.randrange(rank - 1)
                shape[k] = 1
                strides[k] = rng.choice([3, 7, 0, 1000])
            if kind == "negative" and rank >= 2:
                strides[0] = -strides[0]
            if kind == "broadcast" and rank >= 2 and shape[0] > 1:
                strides[0] = 0
            if kind == "inner" and shape[-1] > 1:
                strides[-1] = 2
        below, above = footprint(shape, strides if strides is not None else [
            int(np.prod(shape[k + 1:])) for k in range(rank)], itemsize)
        if below > SPAN or above > SPAN:
            continue
        offset = rng.choice([0, 0, 0, 0, 0, 16, 32, 64, itemsize, 8]) // itemsize * itemsize
        box = [rng.choice([1, 2, 4, 8]) for _ in range(rank)]
        if rank:
            inner = rng.choice([16, 32, 64, 128, 12, 256]) // itemsize or 1
            box[-1] = min(inner, 256) if rng.random() < 0.9 else 300
        options = dict(box_dim=tuple(box))
        if rng.random() < 0.25 and rank:
            options["element_strides"] = tuple(rng.choice([1, 1, 2, 3, 8, 9]) for _ in box)
        if rng.random() < 0.4:
            options["swizzle"] = rng.choice(list(TensorMapSwizzle))
        if rng.random() < 0.15:
            options["interleave"] = rng.choice(list(TensorMapInterleave))
            if options["interleave"] is TensorMapInterleave.INTERLEAVE_32B and rng.random() < 0.7:
                options["swizzle"] = TensorMapSwizzle.SWIZZLE_32B
        if rng.random() < 0.15:
            options["oob_fill"] = TensorMapOOBFill.NAN_REQUEST_ZERO_FMA
        cases.append((f"{n}-{kind}-{dtype}-{rank}d", offset, shape, strides, dtype, options))
    return cases


def naive_arguments(v, dtype, options, rank):
    """The driver's arguments for view v as it is: its dimensions and byte
    strides, innermost first, with nothing adjusted."""
    itemsize = np.dtype(dtype).itemsize
    shape = list(v.shape)
    strides = list(v.strides) if v.strides is not None else None
    if strides is None:
        strides, step = [0] * rank, 1
        for k in range(rank - 1, -1, -1):
            strides[k] = step
            step *= shape[k]
    steps = options.get("element_strides") or (1,) * rank
    return dict(dims=shape[::-1], strides=[s * itemsize for s in strides[:-1]][::-1],
                box=list(options["box_dim"])[::-1], steps=list(steps)[::-1])


def test_strided_and_the_driver_agree(cu, arena):
    made = refused_by_driver = strided_only = 0
    disagreements = []
    for name, offset, shape, strides, dtype, options in generated_cases():
        rank = len(shape)
        address = arena + CENTRE + offset
        try:
            v = view_of(address, shape, dtype, strides)
        except (ValueError, BufferError) as e:
            pytest.fail(f"{name}: the view cannot be made: {e}")
        try:
            d = v.as_tensor_map(**options)
        except RuntimeError as e:
            # strided's rules passed the view and the driver refused it.
            args = naive_arguments(v, dtype, options, rank)
            disagreements.append(f"{name}: strided passed {args} {options} at offset {offset} "
                                 f"to the driver, which refused: {e}")
            continue
        except ValueError as e:
            message = str(e)
            if not DRIVER_RULES.match(message) or (
                    message.startswith(f"element_strides[{rank - 1}]")
                    and options.get("interleave", 0) == 0):
                strided_only += 1
                continue
            args = naive_arguments(v, dtype, options, rank)
            if any(x < 0 for x in args["strides"]) or any(x < 0 for x in args["box"]):
                strided_only += 1
                continue
            rc, _ = encode(cu, TMA_TYPES[dtype], address, args["dims"], args["strides"],
                           [min(b, 2 ** 32 - 1) for b in args["box"]], args["steps"],
                           options.get("interleave", 0), options.get("swizzle", 0), 0,
                           options.get("oob_fill", 0))
            refused_by_driver += 1
            if rc == 0:
                disagreements.append(f"{name}: strided refused ({message}) but the driver "
                                     f"took {args} {options}")
            continue
        made += 1
        rc, descriptor = encode(cu, d.data_type, d.global_address, d.global_dim,
                                d.global_strides, d.box_dim, d.element_strides, d.interleave,
                                d.swizzle, d.l2_promotion, d.oob_fill)
        if rc != 0:
            disagreements.append(f"{name}: strided made {d!r} {options} but the driver "
                                 f"refused its arguments ({rc}): dims {d.global_dim} strides "
                                 f"{d.global_strides} box {d.box_dim} steps {d.element_strides}")
        elif descriptor != bytes(d):
            disagreements.append(f"{name}: the driver encodes {d!r} into other bytes")
    assert not disagreements, "\n".join(disagreements)
    # The generator reaches all three outcomes, many times each.
    assert made > 50 and refused_by_driver > 50 and strided_only > 20, (
        made, refused_by_driver, strided_only)


# ---- kernels ---------------------------------------------------------------------------


def kernel_source():
    """PTX of tma_load_<r>d(map, out, c0..c4, bytes): one CTA loads the box at
    (c0, ..., c<r-1>) (the driver's order, innermost first) into shared
    memory and copies its bytes to out; and tma_store_<r>d(map, in, c0..c4,
    bytes): one CTA copies in to shared memory and stores it as the box
    there."""
    parts = [".version 8.0", ".target sm_90", ".address_size 64", ""]
    for rank in range(1, 6):
        coords = ", ".join(f"%r{10 + i}" for i in range(rank))
        load = f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
        for kind in ("load", "store"):
            p = f"{kind}{rank}"
            params = ",\n".join(
                [f"    .param .align 128 .b8 {p}_map[128]", f"    .param .u64 {p}_ptr"]
                + [f"    .param .u32 {p}_c{i}" for i in range(5)]
                + [f"    .param .u32 {p}_bytes"])
            coord_loads = "\n".join(f"    ld.param.u32 %r{10 + i}, [{p}_c{i}];"
                                    for i in range(rank))
            head = f""".visible .entry tma_{kind}_{rank}d(
{params}
)
{{
    .reg .pred %p<4>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 {p}_smem[16384];
    .shared .align 8 .u64 {p}_bar;
    mov.b64 %rd1, {p}_map;
    ld.param.u64 %rd2, [{p}_ptr];
    ld.param.u32 %r1, [{p}_bytes];
{coord_loads}
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, {p}_bar;
    mov.u32 %r4, {p}_smem;
    mov.u32 %r5, %ntid.x;
    setp.ne.u32 %p1, %r2, 0;
"""
            if kind == "load":
                body = f"""    @%p1 bra WAIT;
    mbarrier.init.shared::cta.b64 [%r3], 1;
    fence.proxy.async.shared::cta;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r1;
    cvta.param.u64 %rd3, %rd1;
    {load} [%r4], [%rd3, {{{coords}}}], [%r3];
WAIT:
    bar.sync 0;
SPIN:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra SPIN;
COPY:
    setp.ge.u32 %p3, %r2, %r1;
    @%p3 bra DONE;
    add.u32 %r6, %r4, %r2;
    ld.shared.u8 %rs1, [%r6];
    cvt.u64.u32 %rd4, %r2;
    add.u64 %rd5, %rd2, %rd4;
    st.global.u8 [%rd5], %rs1;
    add.u32 %r2, %r2, %r5;
    bra COPY;
DONE:
    ret;
}}
"""
            else:
                body = f"""    mov.u32 %r7, %r2;
FILL:
    setp.ge.u32 %p3, %r7, %r1;
    @%p3 bra FILLED;
    cvt.u64.u32 %rd4, %r7;
    add.u64 %rd5, %rd2, %rd4;
    ld.global.u8 %rs1, [%rd5];
    add.u32 %r6, %r4, %r7;
    st.shared.u8 [%r6], %rs1;
    add.u32 %r7, %r7, %r5;
    bra FILL;
FILLED:
    fence.proxy.async.shared::cta;
    bar.sync 0;
    @%p1 bra DONE;
    cvta.param.u64 %rd3, %rd1;
    cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group [%rd3, {{{coords}}}], [%r4];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
DONE:
    ret;
}}
"""
            parts.append(head + body)
    return "\n".join(parts)


@pytest.fixture(scope="module")
def kernels(cu):
    if cu.major < 9:
        pytest.skip(f"TMA needs compute capability 9.0; device 0 has {cu.major}.x")
    module = ctypes.c_void_p()
    cu.cuModuleLoadData(ctypes.byref(module), kernel_source().encode() + b"\0")
    functions = {}
    for kind in ("load", "store"):
        for rank in range(1, 6):
            fn = ctypes.c_void_p()
            cu.cuModuleGetFunction(ctypes.byref(fn), module, f"tma_{kind}_{rank}d".encode())
            functions[kind, rank] = fn
    return functions


def launch(cu, kernels, kind, desc, ptr, coords, nbytes):
    """Run tma_<kind>_<rank>d on one CTA and wait for it."""
    assert nbytes <= 16384
    values = [ctypes.c_uint64(ptr)] + [ctypes.c_int32(c) for c in
                                       list(coords) + [0] * (5 - len(coords))]
    values.append(ctypes.c_uint32(nbytes))
    params = (ctypes.c_void_p * 8)(desc.handle, *[ctypes.addressof(v) for v in values])
    cu.cuLaunchKernel(kernels[kind, desc.rank], 1, 1, 1, 128, 1, 1, 0, None, params, None)
    cu.cuCtxSynchronize()


def upload(cu, ptr, data):
    data = np.ascontiguousarray(data)
    cu.cuMemcpyHtoD_v2(ptr, data.ctypes.data, data.nbytes)


def download(cu, ptr, nbytes):
    out = np.empty(nbytes, np.uint8)
    cu.cuMemcpyDtoH_v2(out.ctypes.data, ptr, nbytes)
    return out


def host_mirror(base, offset, shape, dtype, strides_elements):
    """What the view sees, as NumPy reads it from a host copy of the arena."""
    itemsize = np.dtype(dtype).itemsize
    if strides_elements is None:
        strides_elements = np.empty(shape, dtype).strides
        strides_elements = [s // itemsize for s in strides_elements]
    return np.lib.stride_tricks.as_strided(
        base[offset:].view(dtype), shape, [s * itemsize for s in strides_elements])


def expected_box(t, start, box):
    """The box of t at start (the view's order): t's elements, zeros past its edges."""
    out = np.zeros(box, t.dtype)
    region = t[tuple(slice(s, s + b) for s, b in zip(start, box))]
    out[tuple(slice(0, n) for n in region.shape)] = region
    return out


def swizzled_128(data, row_bytes=128):
    """Bytes as SWIZZLE_128B lays them out in shared memory: 16-byte chunk j of
    128-byte row r goes to chunk j ^ (r % 8)."""
    rows = data.reshape(-1, row_bytes // 16, 16)
    out = np.empty_like(rows)
    for r in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            out[r, j ^ (r % 8)] = rows[r, j]
    return out.reshape(-1)


# A box's start along the innermost axis is a multiple of 16 bytes: the TMA
# unit faults on any other (CUDA_ERROR_ILLEGAL_INSTRUCTION; docs/views.md).
LOADS = [
    # name, shape, strides in elements (None: C order), dtype, box, starts (view order)
    ("c-2d", (64, 48), None, "float32", (8, 16), [(0, 0), (8, 32), (60, 40)]),
    ("gapped-f16", (16, 20), (32, 1), "float16", (4, 8), [(0, 0), (3, 8), (14, 16)]),
    ("swapped-3d", (6, 5, 16), (16, 96, 1), "uint8", (2, 3, 16), [(0, 0, 0), (4, 3, 0)]),
    ("5d-extent-1", (2, 1, 3, 4, 8), None, "float32", (1, 1, 2, 2, 8),
     [(0, 0, 0, 0, 0), (1, 0, 2, 3, 0)]),
    ("extent-1-odd-stride", (1, 3), (3, 1), "float32", (1, 4), [(0, 0)]),
    ("1d-f64", (100,), None, "float64", (32,), [(0,), (80,)]),
]


@pytest.mark.parametrize("name, shape, strides, dtype, box, starts", LOADS,
                         ids=[row[0] for row in LOADS])
def test_tma_load_reads_the_views_elements(cu, arena, kernels, name, shape, strides, dtype,
                                           box, starts):
    offset = 1 << 20
    pattern = (np.arange(1 << 20, dtype=np.uint32) * 2654435761 >> 13).astype(np.uint8)
    upload(cu, arena + offset, pattern)
    base = np.zeros(offset + pattern.size, np.uint8)
    base[offset:] = pattern
    v = view_of(arena + offset, shape, dtype, strides)
    d = v.as_tensor_map(box)
    t = host_mirror(base, offset, shape, dtype, strides)
    out = arena + (8 << 20)
    for start in starts:
        want = expected_box(t, start, box)
        launch(cu, kernels, "load", d, out, start[::-1], want.nbytes)
        got = download(cu, out, want.nbytes)
        assert np.array_equal(got, want.view(np.uint8).reshape(-1)), (name, start)


def test_tma_load_with_swizzle_128b(cu, arena, kernels):
    offset = 2 << 20
    data = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    upload(cu, arena + offset, data)
    d = view_of(arena + offset, (64, 32), "float32").as_tensor_map(
        (8, 32), swizzle=TensorMapSwizzle.SWIZZLE_128B)
    out = arena + (8 << 20)
    launch(cu, kernels, "load", d, out, (0, 16), 8 * 32 * 4)
    want = swizzled_128(data[16:24].view(np.uint8).reshape(-1))
    assert np.array_equal(download(cu, out, want.size), want)


def test_tma_store_writes_the_box_and_nothing_else(cu, arena, kernels):
    offset = 3 << 20
    rows, cols, pitch = 16, 24, 32  # float32 rows of 24 in a pitch of 32
    nbytes = rows * pitch * 4
    sentinel = np.full(nbytes + 4096, 0xA5, np.uint8)
    upload(cu, arena + offset, sentinel)
    d = view_of(arena + offset, (rows, cols), "float32", (pitch, 1)).as_tensor_map((4, 8))
    source = arena + (9 << 20)
    want = sentinel.copy()
    t = host_mirror(want, 0, (rows, cols), "float32", (pitch, 1))
    for n, (y, x) in enumerate([(4, 8), (14, 20), (0, 0)]):
        box = (np.arange(32, dtype=np.float32) + 100 * n).reshape(4, 8)
        upload(cu, source, box)
        launch(cu, kernels, "store", d, source, (x, y), box.nbytes)
        # Only the elements inside the view are written.
        region = t[y:y + 4, x:x + 8]
        region[...] = box[:region.shape[0], :region.shape[1]]
    got = download(cu, arena + offset, want.size)
    assert np.array_equal(got, want)


def test_replace_address_reads_the_other_memory(cu, arena, kernels):
    first, second = arena + (4 << 20), arena + (5 << 20)
    a = np.arange(256, dtype=np.int32).reshape(4, 64)
    upload(cu, first, a)
    upload(cu, second, a + 1000)
    d = view_of(first, (4, 64), "int32").as_tensor_map((4, 16))
    handle = d.handle
    out = arena + (8 << 20)
    launch(cu, kernels, "load", d, out, (16, 0), 4 * 16 * 4)
    assert np.array_equal(download(cu, out, 256).view(np.int32).reshape(4, 16), a[:, 16:32])
    d.replace_address(view_of(second, (4, 64), "int32"))
    assert d.handle == handle and d.global_address == second
    launch(cu, kernels, "load", d, out, (16, 0), 4 * 16 * 4)
    assert np.array_equal(download(cu, out, 256).view(np.int32).reshape(4, 16),
                          a[:, 16:32] + 1000)


def test_views_of_another_device_are_refused(cu):
    if cuda_device_count() < 2:
        pytest.skip("needs two devices")
    import strided
    mr = strided.DeviceMemoryResource(1)
    buf = mr.allocate(4096, stream=None)
    v = StridedMemoryView.from_buffer(buf, (1024,), dtype=np.float32)
    with pytest.raises(ValueError, match=r"^TensorMapDescriptor\._from_tiled expects tensor on "
                                         r"device 0, got 1$"):
        v.as_tensor_map((16,))
    buf.close()
