#!/usr/bin/env python3
"""Write the seed corpora of the fuzz harnesses: fuzz/corpus/<harness>/*.bin.

Each seed is a small hand-made input in the byte format the harnesses
decode with (fuzz/fuzz_input.h and each harness's own decoding), naming a
case worth starting from: dense and transposed layouts, reversed and
broadcast ones, empty and 0-d ones, edge extents; valid and malformed DLPack
tensors; type strings; copies that reach each host kernel. The fuzzer
mutates from there. Run it again after changing a decoder:

    python3 fuzz/make_seeds.py
"""
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"

# The harnesses' fuzz_limits, for the encoders that depend on them.
LIMITS = {
    "layout": dict(max_ndim=8, max_extent=6, max_stride=24, max_itemsize=64),
    "dlpack": dict(max_ndim=6, max_extent=5, max_stride=16, max_itemsize=16),
    "interface": dict(max_ndim=6, max_extent=6, max_stride=16, max_itemsize=32),
    "copy_plan": dict(max_ndim=5, max_extent=4, max_stride=9, max_itemsize=8),
    "copy_host": dict(max_ndim=5, max_extent=5, max_stride=7, max_itemsize=16),
}

EDGES = [2**63 - 1, -2**63, 2**63 - 2, -2**63 + 1, 2**62, -2**62, 2**62 + 1, 2**32,
         -2**32, 2**31 - 1, 2**31, 2**31 + 1, -2**31, 3037000499, 3037000500, 2**32 - 1,
         2**40, 2**21, 65536, 1000003, (2**63 - 1) // 2, (2**63 - 1) // 3, -2**62, -2**40]


def u8(v):
    return bytes([v & 0xFF])


def u16(v):
    return struct.pack("<H", v & 0xFFFF)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


class Enc:
    """Encoders of fuzz_input.h's value decoders for one harness's limits."""

    def __init__(self, harness):
        self.lim = LIMITS[harness]

    def ndim(self, n):
        assert 0 <= n <= self.lim["max_ndim"]
        return u8(n)

    def extent(self, e, long=False):
        if long:
            return u8(0xC0) + u8(e - 1)   # 1..max_long (copy harnesses)
        if 0 <= e <= self.lim["max_extent"]:
            return u8(e)
        if e in EDGES:
            return u8(0xC1) + u8(EDGES.index(e))
        if 0 <= e < 65536:
            return u8(0xC0) + u16(e)
        return u8(0xE0) + u64(e)

    def stride(self, s):
        m = self.lim["max_stride"]
        if -m <= s <= m:
            return u8(0) + u8(s + m)
        unit = [0, 1, -1, 2, -2, 4, -4, 8]
        if s in unit:
            return u8(0xA0 | unit.index(s))
        if s in EDGES:
            return u8(0xC1) + u8(EDGES.index(s))
        return u8(0xE0) + u64(s)

    def itemsize(self, k):
        common = [1, 2, 4, 8, 16, 3, 5, 12]
        if k in common and k <= self.lim["max_itemsize"]:
            return u8(common.index(k))
        for b in range(96, 192):
            if 1 + b % self.lim["max_itemsize"] == k:
                return u8(b)
        raise ValueError(k)

    def layout(self, shape, strides=None, itemsize=1, make=None, order=None):
        """fuzz_layout_decode: make 0 explicit, 1 implicit, 2 byte strides,
        3 dense (order 'C' or 'F')."""
        if make is None:
            make = 1 if strides is None else 0
        out = u8(make) + self.ndim(len(shape)) + self.itemsize(itemsize)
        for i, e in enumerate(shape):
            out += self.extent(e)
            if make in (0, 2):
                out += self.stride(strides[i] // (itemsize if make == 2 else 1))
        if make == 2:
            out += u8(0)   # no skew
        if make == 3:
            out += u8({"C": 0, "F": 1}[order])
        return out

    def index_value(self, v, n):
        span = min(n, 64)
        assert -span - 2 <= v <= span + 1
        return u8(v + span + 2)

    def at(self, v, n):
        return u8(0) + self.index_value(v, n)

    def sl(self, n, start=None, stop=None, step=1):
        steps = [1, -1, 2, -2, 3, -3, 0]
        tag = 1 | (2 if start is not None else 0) | (4 if stop is not None else 0)
        tag |= steps.index(step) << 3
        out = u8(tag)
        if start is not None:
            out += self.index_value(start, n)
        if stop is not None:
            out += self.index_value(stop, n)
        return out

    def pair(self, dst, src_how=0, src_strides=None, reverse_dst=0, reverse_src=0):
        """fuzz_copy_pair: dst is layout() bytes; src of dst's shape with the
        given strides (implicit when None)."""
        how = src_how | (0x0C if src_strides is None else 0)
        out = dst + u8(how)
        for s in src_strides or []:
            out += self.stride(s)
        return out + u8(reverse_dst) + u8(reverse_src)


def layout_seeds():
    e = Enc("layout")
    op = {n: i for i, n in enumerate(
        ["slice", "permute", "reshape", "flatten", "flatten_mask", "squeeze", "unsqueeze",
         "broadcast", "repack", "to_dense", "coalesce", "format", "format_grid", "validate",
         "max_itemsize"])}
    seeds = {}
    # A C-contiguous (3,4) of 4-byte items, sliced backwards, transposed,
    # reshaped, flattened, coalesced and drawn.
    seeds["dense_ops"] = (e.layout([3, 4], itemsize=4)
                          + u8(op["slice"]) + u8(2) + e.sl(3, 1, None) + e.sl(4, step=-1)
                          + u8(op["permute"]) + u8(0) + u8(0)
                          + u8(op["format"]) + u8(40) + u8(op["format_grid"]) + u8(95)
                          + u8(op["flatten"]) + u8(0) + u8(op["coalesce"])
                          + u8(op["reshape"]) + u8(2) + u8(1) + u8(0))
    # Explicit (2,3,4):(12,4,1), transposed in place, then made dense in its
    # own order and squeezed.
    seeds["transpose_keep"] = (e.layout([2, 3, 4], [12, 4, 1], itemsize=8)
                               + u8(op["permute"] | 0x80) + u8(0) + u8(1) + u8(0)
                               + u8(op["to_dense"]) + u8(2) + u8(op["squeeze"])
                               + u8(op["unsqueeze"]) + u8(2) + u8(4) + u8(7))
    # F-order (4,6) repacked along its unit axis and asked for its largest
    # compatible itemsize.
    seeds["fortran_repack"] = (e.layout([4, 6], itemsize=2, make=3, order="F")
                               + u8(op["max_itemsize"]) + u8(7) + u8(0) + u8(192) + u8(1)
                               + u8(op["repack"]) + u8(1) + u8(0) + u8(192 | 1) + u8(1)
                               + u8(op["format"]) + u8(5))
    # (1,3) broadcast to (4,3), then unsqueezed and flattened by mask.
    seeds["broadcast"] = (e.layout([1, 3], [7, 1], itemsize=4)
                          + u8(op["broadcast"]) + u8(1) + u8(4) + u8(4) + u8(0)
                          + u8(op["flatten_mask"]) + u8(0) + u8(op["coalesce"]))
    # Byte strides (5,):(-16,) of 8-byte items, sliced and indexed.
    seeds["byte_strides_negative"] = (e.layout([5], [-16], itemsize=8, make=2)
                                      + u8(op["slice"]) + u8(1) + e.sl(5, 4, 0, -2)
                                      + u8(op["slice"]) + u8(1) + e.at(-1, 2)
                                      + u8(op["format"]) + u8(3))
    # An extent of 2**63-1 with itemsize 1, and one slice of it.
    seeds["huge_extent"] = (e.layout([2**63 - 1], itemsize=1)
                            + u8(op["slice"]) + u8(1) + e.sl(64, -3, None)
                            + u8(op["reshape"]) + u8(170) + u8(0))
    # Empty layouts with odd strides, drawn and coalesced.
    seeds["empty"] = (e.layout([0, 5], [-3, 2**40], itemsize=2)
                      + u8(op["format_grid"]) + u8(10) + u8(op["coalesce"])
                      + u8(op["squeeze"]) + u8(op["reshape"]) + u8(3) + u8(240) + u8(2) + u8(9))
    # A 0-d layout: flatten, unsqueeze, format, grid.
    seeds["zero_d"] = (e.layout([], itemsize=16)
                       + u8(op["flatten"]) + u8(0) + u8(op["format_grid"]) + u8(20)
                       + u8(op["unsqueeze"]) + u8(3) + u8(0) + u8(1) + u8(2) + u8(op["squeeze"]))
    # A stride-0 and an overlapping layout (is_unique must say false).
    seeds["overlap"] = (e.layout([3, 4], [1, 1], itemsize=1)
                        + u8(op["to_dense"]) + u8(1) + u8(op["validate"]) + u8(5) + u8(0) + u8(1))
    # Strides near INT64_MAX on an extent-1 axis, then a hand-filled layout.
    seeds["edge_strides"] = (e.layout([1, 2], [2**62, -2**31], itemsize=1)
                             + u8(op["validate"]) + u8(1) + u8(1) + e.stride(2**62)
                             + u8(op["unsqueeze"]) + u8(1) + u8(0) + u8(op["flatten"]))
    # Eight axes of extent 2, then permuted and reshaped to (256,).
    seeds["eight_axes"] = (e.layout([2] * 8, itemsize=1)
                           + u8(op["permute"]) + bytes(7) + u8(0)
                           + u8(op["reshape"]) + u8(1) + u8(0))
    return seeds


def dlpack_case(e, versioned=True, major=1, minor=3, flags=0, shape=(2, 3), strides=None,
                dtype=(2, 2, 0), device=0, byte_offset=0, data=0, mode=0, tail=b""):
    """decode_case's format. dtype: (code byte, bits index, lanes byte);
    device: index into the CPU/CPU/CUDA/CUDA host/managed/ROCm/OpenCL/0 table;
    byte_offset: the byte_offset selector; data: the data selector."""
    out = u8(1 if versioned else 0)
    out += u8({1: 0, 0: 224, 2: 225}[major]) + u8(minor) + u8(flags)
    out += u8(0) + e.ndim(len(shape)) if shape is not None else u8(0) + u8(2)
    if shape is None:
        out += u8(255)                      # shape NULL
    else:
        out += u8(0) + b"".join(e.extent(x) for x in shape)
    if strides is None:
        out += u8(255)                      # strides NULL
    else:
        out += u8(0) + b"".join(e.stride(x) for x in strides)
    out += u8(dtype[0]) + u8(dtype[1]) + u8(dtype[2])
    out += u8(device) + u8(0)
    out += u8(byte_offset) + u8(data) + u8(mode) + tail
    return out


def dlpack_seeds():
    e = Enc("dlpack")
    return {
        # float32 (2,3), C order, CPU, released through a derived view.
        "cpu_float32": dlpack_case(e, mode=1 | 4),
        # Legacy int16 with explicit negative strides and an aligned
        # byte_offset, exported and imported back.
        "legacy_strided": dlpack_case(e, versioned=False, shape=(3, 2), strides=(-2, 1),
                                      dtype=(0, 1, 0), byte_offset=3 + 8 * 2, minor=0,
                                      mode=2, tail=u8(2)),
        # Read-only CUDA tensor, version 1.1, exported as a legacy tensor.
        "cuda_readonly": dlpack_case(e, minor=1, flags=1, device=2, mode=2, tail=u8(1)),
        # A major version of 2: only version and deleter may be read.
        "major_2": dlpack_case(e, major=2),
        # Version 1.2 without strides: refused.
        "v12_no_strides": dlpack_case(e, minor=2),
        # NULL data with elements, and with none.
        "null_data": dlpack_case(e, data=180),
        "null_data_empty": dlpack_case(e, shape=(0, 4), data=180),
        # A byte_offset above INT64_MAX and one not a multiple of the itemsize.
        "huge_byte_offset": dlpack_case(e, byte_offset=6),
        "misaligned_byte_offset": dlpack_case(e, byte_offset=5 + 8),
        # Data near the top of the address space.
        "top_of_address_space": dlpack_case(e, data=200, tail=b""),
        # Unsupported dtype (lanes 2), bfloat16 on CUDA host, float8.
        "lanes_2": dlpack_case(e, dtype=(2, 2, 241)),
        "bfloat16_cuda_host": dlpack_case(e, dtype=(4, 1, 0), device=3),
        "float8_managed": dlpack_case(e, dtype=(10, 0, 0), device=4, mode=1),
        # A 0-d complex128 tensor and an import with no out.
        "zero_d": dlpack_case(e, shape=(), dtype=(5, 4, 0)),
        "no_out": dlpack_case(e, mode=254),
        "null_tensor": dlpack_case(e, mode=255),
    }


def typestr_seed(text, flags=0):
    return u8(3) + u8(192 + len(text)) + text.encode() + u8(flags)


def interface_seeds():
    e = Enc("interface")
    seeds = {}
    for name, text in [("f4", "<f4"), ("b1", "|b1"), ("i8_swapped", ">i8"), ("object", "|O"),
                       ("void16", "|V16"), ("datetime_ns", "<M8[ns]"), ("unicode3", "<U3"),
                       ("bad_unit", "<m8[n$]"), ("no_size", "<f"), ("long_double", "<f16")]:
        seeds["typestr_" + name] = typestr_seed(text, flags=2 if "swapped" in name else 0)
    # A typestr's itemsize for a byte-strided (3,4) layout over a heap
    # buffer, wrapped with its dtype, a release callback and a derived view.
    seeds["wrap_f4"] = (u8(1) + u8(0) + u8(3) + u8(4) + u8(0) + u8(0)   # "<f4", flags 0
                        + u8(2) + e.ndim(2) + u8(0) + e.extent(3) + e.stride(4)
                        + e.extent(4) + e.stride(1) + u8(0)
                        + u8(0) + u8(16) + e.sl(3, step=-1) + e.sl(4, 1, None))
    # C-order (no strides) over NULL with no elements; then near the top of
    # the address space.
    seeds["wrap_null_empty"] = (u8(0) + e.layout([0, 7], itemsize=8) + u8(170) + u8(0))
    seeds["wrap_top"] = (u8(0) + e.layout([4], [8], itemsize=8, make=2) + u8(190) + u16(2)
                         + u8(0))
    # A transposed layout around a heap buffer, on a CUDA device.
    seeds["wrap_cuda_transposed"] = (u8(0) + e.layout([3, 2], [1, 3], itemsize=2) + u8(0)
                                     + u8(3))
    return seeds


def copy_plan_seeds():
    e = Enc("copy_plan")
    c = lambda shape, strides=None, isz=4: e.layout(shape, strides, itemsize=isz)
    seeds = {}
    seeds["contiguous"] = u8(0) + e.pair(c([3, 4]))
    seeds["transpose"] = u8(0) + e.pair(c([4, 3]), src_strides=[1, 4])
    seeds["reversed"] = u8(0) + e.pair(c([4, 4]), src_strides=[4, 1], reverse_dst=1,
                                       reverse_src=2)
    # src (4,) broadcast to (3,4), implicit strides.
    seeds["broadcast_row"] = u8(0) + c([3, 4]) + u8(0x0E) + u8(1) + u8(0) + u8(0) + u8(0)
    seeds["gapped"] = u8(0) + e.pair(c([2, 3], [9, 2]), src_strides=[3, -1])
    seeds["non_unique_dst"] = u8(0) + e.pair(c([2, 2], [1, 1]))
    seeds["colliding_cache"] = (u8(1) + e.pair(c([2, 3])) + e.pair(c([3, 2]), src_strides=[1, 3])
                                + e.pair(c([2, 3])))
    return seeds


def copy_host_seeds():
    e = Enc("copy_host")
    seeds = {}
    tail = lambda: u8(0) + u8(5) + u8(3) + u16(7) + u64(0x1234567)
    long1 = lambda n, isz: (u8(1) + e.ndim(1) + e.itemsize(isz) + e.extent(n, long=True))
    # Rows long enough for the vector loops: reversed, stride 2, 3 and 4.
    seeds["reverse_rows"] = u8(8) + long1(64, 1) + u8(0x0C) + u8(0) + u8(1) + tail()
    for s in (2, 3, 4):
        seeds["stride%d_rows" % s] = (u8(16) + long1(48, 4) + u8(0) + e.stride(s) + u8(0)
                                      + u8(0) + tail())
    # A transpose of 16-byte items and one of 1-byte items.
    seeds["transpose"] = (u8(0) + e.layout([5, 5], itemsize=16) + u8(0) + e.stride(1)
                          + e.stride(5) + u8(0) + u8(0) + tail())
    seeds["transpose_bytes"] = (u8(2) + e.layout([5, 4], itemsize=1) + u8(0) + e.stride(1)
                                + e.stride(5) + u8(0) + u8(0) + tail())
    # A broadcast source and an overlapping copy in one mapping.
    seeds["broadcast"] = (u8(0) + e.layout([4, 5], itemsize=8) + u8(0x0E) + u8(1) + u8(0)
                          + u8(0) + u8(0) + tail())
    seeds["overlap"] = (u8(1) + e.layout([5, 5], itemsize=4) + u8(0) + e.stride(-5)
                        + e.stride(1) + u8(0) + u8(0) + u8(1) + u8(1) + u16(50)
                        + u64(99))
    # Between views, and with a NULL destination.
    seeds["views"] = u8(32) + e.pair(e.layout([3, 4], itemsize=2)) + tail()
    seeds["null_dst"] = (u8(0) + e.pair(e.layout([2], itemsize=1)) + u8(0xF0) + u8(0) + u8(0)
                         + u16(0) + u64(1))
    return seeds


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    return h


def ipc_buffer(sharing=1, kind=2, device=0, size=64, offset=0, allocation=0, pool_id=None):
    """A buffer descriptor of docs/ipc.md, sealed."""
    d = bytearray(192)
    d[0:8] = b"STRDIPCB"
    d[8:10] = u16(1)
    d[10], d[11] = sharing, kind
    d[12:16] = (device & 0xFFFFFFFF).to_bytes(4, "little")
    d[32:40] = u64(1234)
    d[40:48] = u64(99)
    if pool_id is not None:
        d[48:64] = pool_id
        d[64] = 1
    d[72:80] = u64(size)
    d[80:88] = u64(offset)
    d[88:96] = u64(allocation)
    d[96:160] = bytes(range(64))
    d[184:192] = u64(fnv1a(bytes(d[:184])))
    return bytes(d)


def ipc_seeds():
    seeds = {}
    seeds["pool"] = u8(0) + ipc_buffer(pool_id=bytes(range(16)))
    seeds["pinned_pool"] = u8(0) + ipc_buffer(kind=1, device=-1)
    seeds["legacy"] = u8(0) + ipc_buffer(sharing=2, offset=512, allocation=4096)
    seeds["truncated"] = u8(0) + ipc_buffer()[:100]
    seeds["sealed_body"] = u8(1) + ipc_buffer(sharing=2, offset=8, allocation=64)[:184]
    seeds["opened_body"] = u8(2) + bytes(10) + u8(2) + u8(2) + bytes(60) + u64(16)
    view = bytearray(328 + 32)
    view[0:8] = b"STRDIPCV"
    view[8:10] = u16(1)
    view[10] = 2
    view[12:16] = (2).to_bytes(4, "little")
    view[16:20] = (4).to_bytes(4, "little")
    view[40:44] = bytes([2, 32, 1, 0])
    view[44:48] = (2).to_bytes(4, "little")
    view[56:248] = ipc_buffer(sharing=2, offset=0, allocation=4096)
    view[320:328] = u64(3)
    view[328:336] = u64(4)
    view[336:344] = u64(4)
    view[344:352] = u64(1)
    view[352:360] = u64(fnv1a(bytes(view[:352])))
    seeds["view"] = u8(3) + bytes(view[:352]) + u64(fnv1a(bytes(view[:352])))
    seeds["view_sealed"] = u8(4) + bytes(view[:352])
    return seeds


def main():
    generators = {"layout": layout_seeds, "dlpack": dlpack_seeds,
                  "interface": interface_seeds, "copy_plan": copy_plan_seeds,
                  "copy_host": copy_host_seeds, "ipc": ipc_seeds}
    for name, gen in generators.items():
        d = ROOT / name
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob("*.bin"):
            old.unlink()
        for seed, data in gen().items():
            (d / (seed + ".bin")).write_bytes(data)


if __name__ == "__main__":
    main()
