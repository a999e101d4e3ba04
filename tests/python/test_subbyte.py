"""Sub-byte element types (docs/subbyte.md): packed views from DLPack
producers of every sub-byte form, against a reference model written in
NumPy of which bits each element occupies and which layouts the
packed-layout rule refuses; padded views of ml_dtypes arrays; DLPack export
round trips; PyTorch's pairs (float4_e2m1fn_x2) and their conversion to
single elements and into ml_dtypes arrays and back; host copies between
packed layouts, bit-exact against NumPy.

The producer (subbyte_producer.py) hands StridedMemoryView.from_dlpack a
managed tensor over a NumPy byte array the test owns, with the dtype, layout
and flags of the case."""

import gc
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from strided import StridedMemoryView
from subbyte_producer import Producer, import_packed

ml_dtypes = pytest.importorskip("ml_dtypes")

PADDED = 1 << 2
FP4, FP6, INT2, UINT1, FP4X2, FP6X2 = (17, 4, 1), (15, 6, 1), (0, 2, 1), (1, 1, 1), (17, 4, 2), \
    (16, 6, 2)
NAMES = {FP4: "float4_e2m1fn", FP6: "float6_e2m3fn", INT2: "int2", UINT1: "uint1",
         (16, 6, 1): "float6_e3m2fn", (0, 4, 1): "int4", (1, 4, 1): "uint4"}


# The reference model: element offsets by np.indices, bits by np.unpackbits.

def offsets(shape, strides):
    """Every element's index (a column each) and its element offset."""
    idx = np.indices(shape).reshape(len(shape), int(np.prod(shape, dtype=np.int64)))
    return idx, (np.asarray(strides, np.int64).reshape(-1, 1) * idx).sum(0).astype(np.int64)


def splits_a_byte(shape, strides, bits):
    """Whether some element that starts a run starts inside a byte. A run is
    the elements along the first axis of stride 1 and extent above 1; every
    other element starts one."""
    idx, offs = offsets(shape, strides)
    if offs.size == 0:
        return False
    runs = [k for k in range(len(shape)) if shape[k] > 1 and strides[k] == 1]
    starts = idx[runs[0]] == 0 if runs else np.ones(offs.size, bool)
    return bool(np.any((offs[starts] * bits) % 8 != 0))


def values(mem, start_bit, offs, bits):
    """The value of each element of bits bits at element offsets offs, element
    0 at bit start_bit of mem, little bit-endian."""
    b = np.unpackbits(mem, bitorder="little").astype(np.int64)
    at = start_bit + offs[:, None] * bits + np.arange(bits)
    return (b[at] << np.arange(bits)).sum(1)


def pack(vals, bits, nbytes):
    """Bytes holding vals packed at bits each, element 0 at bit 0."""
    b = ((np.asarray(vals, np.int64)[:, None] >> np.arange(bits)) & 1).astype(np.uint8).ravel()
    out = np.zeros(nbytes * 8, np.uint8)
    out[:b.size] = b
    return np.packbits(out, bitorder="little")


def padded_copy(view, dtype):
    """A new ml_dtypes array of the view's shape holding the view's elements
    (copied by strided into a padded view), as its bytes."""
    name = NAMES[dtype]
    a = np.zeros(view.shape, getattr(ml_dtypes, name))
    dst = StridedMemoryView.from_array_interface(a)
    assert dst.padded and dst.element_bits == 8
    dst.copy_from(view)
    return a.view(np.uint8)


def packed_copy(view, dtype, bits):
    """The view's elements as values, copied by strided into new packed
    memory of C order whose rows start on byte boundaries."""
    shape = view.shape
    g = 8 // np.gcd(bits, 8)
    strides, n = [1] * len(shape), -(-shape[-1] // g) * g if shape else 1
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = n
        n *= shape[k]
    mem = np.zeros(n * bits // 8 + 2, np.uint8)
    dst = import_packed(mem, dtype, shape, strides)
    dst.copy_from(view)
    return values(mem, 0, offsets(shape, strides)[1], bits)


TYPES = [FP4, FP6, INT2, UINT1, FP6X2]

layouts = st.integers(0, 3).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 5), min_size=n, max_size=n),
    st.lists(st.integers(-7, 7), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(TYPES), layout=layouts, seed=st.integers(0, 2**32 - 1))
@example(dtype=FP4, layout=([3, 5], [6, 1]), seed=0)
@example(dtype=FP4, layout=([3, 5], [5, 1]), seed=0)
@example(dtype=FP4, layout=([5, 3], [1, 6]), seed=0)
@example(dtype=FP4, layout=([4], [-1]), seed=0)
@example(dtype=FP6, layout=([2, 3], [3, 1]), seed=0)
@example(dtype=FP6, layout=([2, 3], [4, 1]), seed=0)
@example(dtype=FP4, layout=([2, 2], [1, 1]), seed=0)
def test_packed_views_address_the_reference_bits(dtype, layout, seed):
    shape, strides = layout
    width = dtype[1] * dtype[2]
    mem = np.random.default_rng(seed).integers(0, 256, 512, dtype=np.uint8)
    at = 256
    producer = Producer(mem, dtype, shape, strides, at)
    if splits_a_byte(shape, strides, width):
        with pytest.raises(BufferError, match="packed-layout rule"):
            StridedMemoryView.from_dlpack(producer, stream_ptr=-1)
        assert producer.deleted == 1
        return
    v = StridedMemoryView.from_dlpack(producer, stream_ptr=-1)
    assert v.shape == tuple(shape) and v.element_bits == width and not v.padded
    assert v.ptr == mem.ctypes.data + at
    idx, offs = offsets(shape, strides)
    want = values(mem, at * 8, offs, width)
    if dtype[2] == 2:
        # Pairs (12 bits) have no padded form: copied into new packed memory,
        # rows rounded up to whole bytes, and read there.
        got = packed_copy(v, dtype, width)
    else:
        got = padded_copy(v, dtype).ravel()
    np.testing.assert_array_equal(got, want)
    # Exported and imported again: the same memory, layout and type.
    again = StridedMemoryView.from_dlpack(v, stream_ptr=-1)
    assert (again.shape, again.element_bits, again.padded) == (v.shape, v.element_bits, False)
    assert again.strides == v.strides or v.strides == ()  # 0-d: no strides
    assert again.ptr == v.ptr or v.size == 0  # an empty export has no data
    del v, again
    gc.collect()
    assert producer.deleted == 1


def test_slices_that_split_a_byte_are_refused():
    mem = np.zeros(32, np.uint8)
    v = import_packed(mem, FP4, (3, 6), (6, 1))
    assert v.layout.itemsize == 1
    with pytest.raises(ValueError, match=r"element \(0,0\) of \(3,5\):\(6,1\)\+1, at element "
                       r"offset 1, starts inside a byte: by the packed-layout rule"):
        v.view(v.layout[:, 1:])
    assert v.view(v.layout[:, 2:]).ptr == v.ptr + 1
    assert v.view(v.layout[1:]).ptr == v.ptr + 3
    assert v.view(v.layout[::-1]).ptr == v.ptr + 6
    assert v.view(v.layout.permuted((1, 0))).shape == (6, 3)
    with pytest.raises(ValueError, match="packed-layout rule"):
        v.view(v.layout[:, ::-1])
    with pytest.raises(ValueError, match="packed-layout rule"):
        v.view(v.layout[:, ::3])
    assert v.view(v.layout[:, ::2]).strides == (6, 2)


def test_ml_dtypes_arrays_are_padded_views():
    for name in ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int4", "uint4", "int2",
                 "uint2"]:
        dtype = np.dtype(getattr(ml_dtypes, name))
        a = (np.arange(12) % 2).astype(dtype).reshape(3, 4)[:, ::-1]
        v = StridedMemoryView.from_array_interface(a)
        assert v.dtype == dtype and v.padded and v.element_bits == 8
        assert v.shape == (3, 4) and v.strides == (4, -1)
        # NumPy's __dlpack__ refuses them: from_any_interface reads the
        # array interface instead, and still refuses stream_ptr=None.
        w = StridedMemoryView.from_any_interface(a, stream_ptr=-1)
        assert (w.ptr, w.shape, w.strides, w.dtype, w.padded) == (
            v.ptr, v.shape, v.strides, v.dtype, v.padded)
        with pytest.raises(BufferError, match="stream=None is ambiguous"):
            StridedMemoryView.from_any_interface(a, stream_ptr=None)
        np.testing.assert_array_equal(np.asarray(v).view(dtype), a)
        # Exported with the flag and imported again: still padded.
        again = StridedMemoryView.from_dlpack(v, stream_ptr=-1)
        assert again.padded and again.dtype == dtype and again.ptr == v.ptr
        # An unversioned tensor has no flags to say so.
        with pytest.raises(BufferError, match="needs a versioned DLPack tensor"):
            v.__dlpack__()
        assert v.__dlpack__(max_version=(1, 3)) is not None


def test_from_buffer_and_view_with_ml_dtypes_are_padded():
    a = np.zeros(15, np.uint8)
    fp4 = np.dtype(ml_dtypes.float4_e2m1fn)
    v = StridedMemoryView.from_array_interface(a).view(dtype=fp4)
    assert v.padded and v.element_bits == 8 and v.dtype == fp4
    w = v.view(v.layout.reshaped((3, 5)))
    assert w.padded and w.strides == (5, 1)


def test_padded_flag_and_legacy_tensors():
    mem = np.arange(16, dtype=np.uint8)
    v = import_packed(mem, FP4, (3, 5), (5, 1), flags=PADDED)
    assert v.padded and v.element_bits == 8 and v.dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    assert np.asarray(v).view(np.uint8).tolist() == mem[:15].reshape(3, 5).tolist()
    with pytest.raises(BufferError, match="packed-layout rule"):
        import_packed(mem, FP4, (3, 5), (5, 1), versioned=False)
    v = import_packed(mem, FP4, (3, 5), (6, 1), versioned=False)
    assert not v.padded and v.element_bits == 4
    with pytest.raises(BufferError, match="cannot be padded"):
        import_packed(mem, FP4X2, (4,), (1,), flags=PADDED)


def test_packed_views_dtype_and_interfaces():
    mem = np.zeros(16, np.uint8)
    v = import_packed(mem, FP4, (8,), (1,))
    assert v.dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    assert import_packed(mem, FP6, (4,), (1,)).dtype == np.dtype(ml_dtypes.float6_e2m3fn)
    with pytest.raises(BufferError, match=r"packed float4_e2m1fn elements \(4 bits each\) has no "
                       "array interface"):
        v.__array_interface__
    pairs = import_packed(mem, FP4X2, (4,), (1,))
    assert pairs.element_bits == 8 and not pairs.padded
    with pytest.raises(NotImplementedError, match=r"float4_e2m1fn_x2 \(pairs of 4-bit values\) "
                       r"has no numpy dtype: see it as single elements with relaned\(1\)"):
        pairs.dtype
    assert pairs.relaned(1).dtype == np.dtype(ml_dtypes.float4_e2m1fn)


def test_dtype_without_ml_dtypes_says_what_the_type_is():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import numpy as np, subbyte_producer as p\n"
        "v = p.import_packed(np.zeros(8, np.uint8), (17, 4, 1), (8,), (1,))\n"
        "try:\n"
        "    v.dtype\n"
        "except NotImplementedError as e:\n"
        "    print(e)\n")
    here = __file__.rsplit("/", 1)[0]
    out = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True)
    assert out.stdout.strip() == ("float4_e2m1fn (a 4-bit type) has a numpy dtype only through "
                                  "ml_dtypes, which is not installed"), out.stderr


def test_relaned_converts_pytorch_pairs_exactly():
    rng = np.random.default_rng(5)
    mem = rng.integers(0, 256, 12, dtype=np.uint8)
    pairs = import_packed(mem, FP4X2, (4, 3), (3, 1))
    single = pairs.relaned(1)
    assert (single.shape, single.strides, single.element_bits) == ((4, 6), (6, 1), 4)
    assert single.ptr == pairs.ptr
    back = single.relaned(2)
    assert (back.shape, back.strides, back.element_bits) == ((4, 3), (3, 1), 8)
    t = import_packed(mem, FP4X2, (3, 4), (1, 3))
    assert (t.relaned(1).shape, t.relaned(1).strides) == ((3, 4, 2), (2, 6, 1))
    with pytest.raises(ValueError, match=r"\(3,5\):\(6,1\) cannot be seen as pairs"):
        import_packed(mem, FP4, (3, 5), (6, 1)).relaned(2)
    with pytest.raises(ValueError, match="lanes must be 1 or 2, got 4"):
        pairs.relaned(4)
    with pytest.raises(TypeError, match="lanes must be an int, not bool"):
        pairs.relaned(True)
    a = np.zeros(4, ml_dtypes.float4_e2m1fn)
    with pytest.raises(ValueError, match="only a view of a packed sub-byte type"):
        StridedMemoryView.from_array_interface(a).relaned(2)


def test_torch_pairs_into_ml_dtypes_and_back_bit_exact():
    # float4_e2m1fn_x2 weights as PyTorch exchanges them: (4, 3) pairs.
    rng = np.random.default_rng(7)
    weights = rng.integers(0, 256, 12, dtype=np.uint8)
    pairs = import_packed(weights, FP4X2, (4, 3), (3, 1))
    a = np.zeros((4, 6), ml_dtypes.float4_e2m1fn)
    StridedMemoryView.from_array_interface(a).copy_from(pairs.relaned(1))
    nibbles = np.stack([weights & 15, weights >> 4], -1).reshape(4, 6)
    np.testing.assert_array_equal(a.view(np.uint8), nibbles)
    # And back into new packed memory.
    out = np.zeros(12, np.uint8)
    import_packed(out, FP4X2, (4, 3), (3, 1)).relaned(1).copy_from(
        StridedMemoryView.from_array_interface(a))
    np.testing.assert_array_equal(out, weights)


@pytest.mark.parametrize("dtype", [FP4, FP6, INT2])
@pytest.mark.parametrize("m, n", [(4, 8), (8, 12), (32, 48)])
def test_packed_transpose_into_row_major(dtype, m, n):
    bits = dtype[1]
    g = 8 // np.gcd(bits, 8)
    rng = np.random.default_rng(m * n)
    vals = rng.integers(0, 2**bits, (m, n))
    src_mem = pack(vals.ravel(), bits, m * n * bits // 8 + 1)
    src = import_packed(src_mem, dtype, (m, n), (n, 1))
    t = src.view(src.layout.permuted((1, 0)))
    assert t.strides == (1, n)
    dst_mem = np.zeros(m * n * bits // 8 + 1, np.uint8)
    dst = import_packed(dst_mem, dtype, (n, m), (m, 1))
    assert m % g == 0
    dst.copy_from(t)
    np.testing.assert_array_equal(dst_mem, pack(vals.T.ravel(), bits, dst_mem.size))


def test_packed_copy_keeps_the_other_bits_of_its_bytes():
    src_mem = np.full(16, 0x11, np.uint8)
    dst_mem = np.full(16, 0xEE, np.uint8)
    src = import_packed(src_mem, FP4, (3, 5), (6, 1))
    dst = import_packed(dst_mem, FP4, (3, 5), (6, 1))
    dst.copy_from(src)
    # Each row: 5 nibbles of 1 in 3 bytes, the 6th nibble (high, byte 2) kept.
    assert dst_mem[:9].tolist() == [0x11, 0x11, 0xE1] * 3
    assert dst_mem[9:].tolist() == [0xEE] * 7


def test_dlpack_export_by_copy_of_packed_and_padded_views():
    rng = np.random.default_rng(3)
    mem = rng.integers(0, 256, 8, dtype=np.uint8)
    v = import_packed(mem, FP4, (16,), (1,))
    c = StridedMemoryView.from_dlpack(
        type("Copy", (), {"__dlpack__": lambda self, **kw: v.__dlpack__(copy=True, **kw),
                          "__dlpack_device__": lambda self: (1, 0)})(), stream_ptr=-1)
    assert c.ptr != v.ptr and c.element_bits == 4 and not c.padded
    np.testing.assert_array_equal(padded_copy(c, FP4), padded_copy(v, FP4))
    # C order with rows rounded up to whole bytes: rows of 5 fp4 take 3.
    rows = import_packed(rng.integers(0, 256, 9, dtype=np.uint8), FP4, (3, 5), (6, 1))
    rc = StridedMemoryView.from_dlpack(
        type("Copy", (), {"__dlpack__": lambda self, **kw: rows.__dlpack__(copy=True, **kw),
                          "__dlpack_device__": lambda self: (1, 0)})(), stream_ptr=-1)
    assert rc.strides == (6, 1) and rc.ptr != rows.ptr
    np.testing.assert_array_equal(padded_copy(rc, FP4), padded_copy(rows, FP4))
    rows6 = import_packed(np.zeros(16, np.uint8), FP6, (2, 5), (8, 1))
    assert rows6.__dlpack__(max_version=(1, 3), copy=True) is not None
    # A padded view's copy is padded too.
    a = (np.arange(6) % 4).astype(ml_dtypes.int2)
    p = StridedMemoryView.from_array_interface(a)
    again = StridedMemoryView.from_dlpack(
        type("Copy", (), {"__dlpack__": lambda self, **kw: p.__dlpack__(copy=True, **kw),
                          "__dlpack_device__": lambda self: (1, 0)})(), stream_ptr=-1)
    assert again.padded and again.ptr != p.ptr
    np.testing.assert_array_equal(np.asarray(again).view(np.uint8), a.view(np.uint8))


def test_view_as_pairs_by_name_then_single_elements():
    # Any bytes become PyTorch's pairs by name, then DLPack's packed fp4.
    rng = np.random.default_rng(11)
    raw = rng.integers(0, 256, (4, 3), dtype=np.uint8)
    pairs = StridedMemoryView.from_array_interface(raw).view(dtype="float4_e2m1fn_x2")
    assert (pairs.shape, pairs.element_bits, pairs.padded) == ((4, 3), 8, False)
    with pytest.raises(NotImplementedError, match="has no numpy dtype"):
        pairs.dtype
    single = pairs.relaned(1)
    a = np.zeros((4, 6), ml_dtypes.float4_e2m1fn)
    StridedMemoryView.from_array_interface(a).copy_from(single)
    np.testing.assert_array_equal(a.view(np.uint8),
                                  np.stack([raw & 15, raw >> 4], -1).reshape(4, 6))
    # They export as pairs (bits 4, lanes 2), as PyTorch takes them.
    again = StridedMemoryView.from_dlpack(pairs, stream_ptr=-1)
    assert (again.shape, again.element_bits, again.ptr) == ((4, 3), 8, pairs.ptr)
    assert again.relaned(1).element_bits == 4
    # Names NumPy knows keep NumPy's meaning; others NumPy's error.
    with pytest.raises(TypeError):
        StridedMemoryView.from_array_interface(raw).view(dtype="float32_x2")
