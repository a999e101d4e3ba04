"""StridedMemoryView.as_tensor_map, TensorMapDescriptor, TensorMapDescriptorOptions
and the TensorMap* enumerations (include/strided/tensor_map.h has the rules).

The forms and types of the arguments (cuda.core's TypeErrors) are checked in
this process on host views, which every as_tensor_map refuses before it needs
a driver. Everything else runs against the fake CUDA driver of the C tests
(tests/c/fake_cuda.c) in fresh interpreters, as test_view_fake_cuda.py does:
valid views of several layouts and every argument form reach
cuTensorMapEncodeTiled with the arguments the fake records, the descriptor's
bytes are the ones the fake wrote, every refused view is refused with its
message before any encoding, and replace_address and the descriptor's
lifetime behave.
"""

import re
import sys
import textwrap
import weakref

import numpy as np
import pytest

import strided
from strided import (
    StridedMemoryView,
    TensorMapDataType,
    TensorMapDescriptor,
    TensorMapDescriptorOptions,
    TensorMapInterleave,
    TensorMapL2Promotion,
    TensorMapOOBFill,
    TensorMapSwizzle,
)
from test_view_fake_cuda import DEV0, DEV1, PINNED, needs_fake, run_fake

SUPPORTED = ("supported dtypes: [dtype('uint8'), dtype('uint16'), dtype('uint32'), "
             "dtype('int32'), dtype('uint64'), dtype('int64'), dtype('float16'), "
             "dtype('float32'), dtype('float64'), dtype(bfloat16)].")


def host_view(shape=(4, 64), dtype=np.float32):
    return StridedMemoryView.from_dlpack(np.zeros(shape, dtype), stream_ptr=-1)


def test_enumerations_have_the_drivers_values():
    assert [(m.name, int(m)) for m in TensorMapDataType] == [
        ("UINT8", 0), ("UINT16", 1), ("UINT32", 2), ("INT32", 3), ("UINT64", 4), ("INT64", 5),
        ("FLOAT16", 6), ("FLOAT32", 7), ("FLOAT64", 8), ("BFLOAT16", 9), ("FLOAT32_FTZ", 10),
        ("TFLOAT32", 11), ("TFLOAT32_FTZ", 12)]
    assert [(m.name, int(m)) for m in TensorMapInterleave] == [
        ("NONE", 0), ("INTERLEAVE_16B", 1), ("INTERLEAVE_32B", 2)]
    assert [(m.name, int(m)) for m in TensorMapSwizzle] == [
        ("NONE", 0), ("SWIZZLE_32B", 1), ("SWIZZLE_64B", 2), ("SWIZZLE_128B", 3)]
    assert [(m.name, int(m)) for m in TensorMapL2Promotion] == [
        ("NONE", 0), ("L2_64B", 1), ("L2_128B", 2), ("L2_256B", 3)]
    assert [(m.name, int(m)) for m in TensorMapOOBFill] == [
        ("NONE", 0), ("NAN_REQUEST_ZERO_FMA", 1)]


def test_exported_from_the_package():
    for name in ("TensorMapDataType", "TensorMapDescriptor", "TensorMapDescriptorOptions",
                 "TensorMapInterleave", "TensorMapL2Promotion", "TensorMapOOBFill",
                 "TensorMapSwizzle"):
        assert name in strided.__all__
        assert getattr(strided, name) is getattr(strided._tensor_map, name)


def test_options_defaults_and_normalisation():
    o = TensorMapDescriptorOptions(box_dim=[32, 16])
    assert o.box_dim == (32, 16)
    assert o.element_strides is None and o.data_type is None
    assert o.interleave is TensorMapInterleave.NONE
    assert o.swizzle is TensorMapSwizzle.NONE
    assert o.l2_promotion is TensorMapL2Promotion.NONE
    assert o.oob_fill is TensorMapOOBFill.NONE
    o = TensorMapDescriptorOptions((8,), element_strides=[2], data_type=np.float32)
    assert o.element_strides == (2,)
    assert o.data_type == np.dtype(np.float32)
    assert TensorMapDescriptorOptions((8,), data_type="float16").data_type == np.dtype("float16")
    assert TensorMapDescriptorOptions((8,), data_type="bfloat16").data_type.name == "bfloat16"
    assert (TensorMapDescriptorOptions((8,), data_type=TensorMapDataType.TFLOAT32).data_type
            is TensorMapDataType.TFLOAT32)
    # Values are checked when a map is made, not here.
    assert TensorMapDescriptorOptions((0, 300), element_strides=(0,)).box_dim == (0, 300)


@pytest.mark.parametrize("kwargs, message", [
    (dict(box_dim=5), "box_dim must be a tuple of ints, got <class 'int'>"),
    (dict(box_dim=(1.5,)), "box_dim[0] must be an int, got <class 'float'>"),
    (dict(box_dim=(8,), element_strides=3), "element_strides must be a tuple of ints, got "
                                            "<class 'int'>"),
    (dict(box_dim=(8,), element_strides=(1, "2")),
     "element_strides[1] must be an int, got <class 'str'>"),
    (dict(box_dim=(8,), data_type=42),
     "data_type must be a TensorMapDataType or a numpy/ml_dtypes dtype, got <class 'int'>"),
    (dict(box_dim=(8,), data_type="nonsense"),
     "data_type must be a TensorMapDataType or a numpy/ml_dtypes dtype, got <class 'str'>"),
    (dict(box_dim=(8,), interleave=0),
     "interleave must be a TensorMapInterleave, got <class 'int'>"),
    (dict(box_dim=(8,), swizzle=1), "swizzle must be a TensorMapSwizzle, got <class 'int'>"),
    (dict(box_dim=(8,), swizzle=TensorMapInterleave.NONE),
     "swizzle must be a TensorMapSwizzle, got <enum 'TensorMapInterleave'>"),
    (dict(box_dim=(8,), l2_promotion=2),
     "l2_promotion must be a TensorMapL2Promotion, got <class 'int'>"),
    (dict(box_dim=(8,), oob_fill=True), "oob_fill must be a TensorMapOOBFill, got <class 'bool'>"),
])
def test_options_refuse_wrong_types(kwargs, message):
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        TensorMapDescriptorOptions(**kwargs)
    # as_tensor_map takes the same arguments, with the same errors.
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        host_view().as_tensor_map(**kwargs)


def test_options_need_box_dim():
    with pytest.raises(TypeError, match="box_dim"):
        TensorMapDescriptorOptions()


OPTIONS_TYPE = ("The Tensor map descriptor options must be provided as an object of type "
                "TensorMapDescriptorOptions or as a dict with valid Tensor map descriptor "
                "options. The provided object is '{}'.")


@pytest.mark.parametrize("args, kwargs, exc, message", [
    ((), {}, TypeError, "box_dim is required unless options is provided"),
    ((), dict(element_strides=(1,)), TypeError, "box_dim is required unless options is provided"),
    (((16,),), dict(options=TensorMapDescriptorOptions((16,))), TypeError,
     "Specify either options or the individual tensor map arguments, not both"),
    ((), dict(options={"box_dim": (16,)}, element_strides=(1,)), TypeError,
     "Specify either options or the individual tensor map arguments, not both"),
    ((), dict(options={"box_dim": (16,)}, data_type=np.float32), TypeError,
     "Specify either options or the individual tensor map arguments, not both"),
    ((), dict(options={"box_dim": (16,)}, swizzle=TensorMapSwizzle.SWIZZLE_32B), TypeError,
     "Specify either options or the individual tensor map arguments, not both"),
    ((), dict(options={"box_dim": (16,)}, oob_fill=TensorMapOOBFill.NAN_REQUEST_ZERO_FMA),
     TypeError, "Specify either options or the individual tensor map arguments, not both"),
    ((), dict(options=3), TypeError, OPTIONS_TYPE.format(3)),
    ((), dict(options=[(16,)]), TypeError, OPTIONS_TYPE.format([(16,)])),
    ((), dict(options={"box_dim": 16}), TypeError, "box_dim must be a tuple of ints, got "
                                                   "<class 'int'>"),
    (((16,), None), {}, TypeError, "as_tensor_map() takes at most 1 positional argument "
                                   "(2 given)"),
    (((16,),), dict(shape=(16,)), TypeError,
     "as_tensor_map() got an unexpected keyword argument 'shape'"),
])
def test_argument_forms_refused(args, kwargs, exc, message):
    with pytest.raises(exc, match="^" + re.escape(message) + "$"):
        host_view((64,)).as_tensor_map(*args, **kwargs)


def test_options_dict_with_an_unknown_key():
    with pytest.raises(TypeError, match="unexpected keyword argument 'box'"):
        host_view((64,)).as_tensor_map(options={"box": (16,)})


@pytest.mark.parametrize("args, kwargs", [
    (((16,),), {}),
    (([16],), {}),
    ((), dict(box_dim=(16,), swizzle=None, interleave=None)),
    ((), dict(options=TensorMapDescriptorOptions((16,)))),
    ((), dict(options={"box_dim": (16,)})),
    # An enumeration given as its default alongside options is not "given".
    ((), dict(options={"box_dim": (16,)}, swizzle=TensorMapSwizzle.NONE,
              interleave=TensorMapInterleave.NONE)),
])
def test_accepted_forms_reach_the_rules(args, kwargs):
    """Every accepted form gets as far as libstrided's first rule, which a host view breaks."""
    with pytest.raises(ValueError, match="^The tensor must be device-accessible$"):
        host_view((64,)).as_tensor_map(*args, **kwargs)


def test_descriptor_cannot_be_instantiated():
    with pytest.raises(RuntimeError, match=re.escape(
            "TensorMapDescriptor cannot be instantiated directly. Use "
            "StridedMemoryView.as_tensor_map() instead.")):
        TensorMapDescriptor()


def test_host_memory_is_refused_before_any_other_rule():
    v = host_view((2,) * 6, np.int8)  # rank 6, int8: both refused later
    with pytest.raises(ValueError, match="^The tensor must be device-accessible$"):
        v.as_tensor_map(box_dim=(300,))


# ---- against the fake driver ----------------------------------------------------------

# What every snippet adds: the fake's record of its last encoding.
RECORD = """
import ml_dtypes
from strided import (TensorMapDataType, TensorMapDescriptor, TensorMapDescriptorOptions,
                     TensorMapInterleave, TensorMapL2Promotion, TensorMapOOBFill,
                     TensorMapSwizzle, Buffer)


class Record(ctypes.Structure):
    _fields_ = [
        ("address", ctypes.c_uint64),
        ("global_dim", ctypes.c_uint64 * 5),
        ("global_strides", ctypes.c_uint64 * 4),
        ("box_dim", ctypes.c_uint32 * 5),
        ("element_strides", ctypes.c_uint32 * 5),
        ("data_type", ctypes.c_int), ("rank", ctypes.c_int), ("interleave", ctypes.c_int),
        ("swizzle", ctypes.c_int), ("l2_promotion", ctypes.c_int), ("oob_fill", ctypes.c_int),
        ("device", ctypes.c_int),
        ("bytes", ctypes.c_ubyte * 128),
    ]


fake.fake_cuda_last_tensor_map.argtypes = [ctypes.POINTER(Record)]
fake.fake_cuda_last_tensor_map.restype = ctypes.c_int


def last_encoding():
    r = Record()
    if not fake.fake_cuda_last_tensor_map(ctypes.byref(r)):
        return None
    n = r.rank
    return dict(address=r.address, rank=n, global_dim=list(r.global_dim[:n]),
                global_strides=list(r.global_strides[:n - 1]), box_dim=list(r.box_dim[:n]),
                element_strides=list(r.element_strides[:n]), data_type=r.data_type,
                interleave=r.interleave, swizzle=r.swizzle, l2_promotion=r.l2_promotion,
                oob_fill=r.oob_fill, device=r.device, bytes=bytes(r.bytes).hex())


def described(d):
    return dict(repr=repr(d), rank=d.rank, data_type=d.data_type.name,
                swizzle=d.swizzle.name, interleave=d.interleave.name,
                l2_promotion=d.l2_promotion.name, oob_fill=d.oob_fill.name,
                device=d.device, device_is_int=type(d.device) is int,
                global_address=d.global_address, global_dim=list(d.global_dim),
                global_strides=list(d.global_strides), box_dim=list(d.box_dim),
                element_strides=list(d.element_strides), bytes=bytes(d).hex(),
                at_handle=ctypes.string_at(d.handle, 128).hex(),
                handle_aligned=d.handle % 64 == 0,
                is_descriptor=isinstance(d, TensorMapDescriptor),
                encoding=last_encoding())


def view(ptr, shape, typestr="<f4", strides=None):
    return StridedMemoryView.from_cuda_array_interface(cai(ptr, shape, typestr, strides), -1)
"""


def run_maps(code):
    return run_fake(RECORD + textwrap.dedent(code))


@pytest.fixture(scope="module")
def made():
    return run_maps("""
        f4 = view(DEV0, (64, 48))
        cases = {
            "c-2d": lambda: f4.as_tensor_map((32, 16)),
            "list": lambda: f4.as_tensor_map([32, 16]),
            "keywords": lambda: f4.as_tensor_map(
                box_dim=(32, 16), element_strides=(1, 2), data_type=TensorMapDataType.FLOAT32,
                swizzle=TensorMapSwizzle.SWIZZLE_64B, l2_promotion=TensorMapL2Promotion.L2_128B,
                oob_fill=TensorMapOOBFill.NAN_REQUEST_ZERO_FMA),
            "options": lambda: f4.as_tensor_map(options=TensorMapDescriptorOptions(
                box_dim=(32, 16), swizzle=TensorMapSwizzle.SWIZZLE_64B)),
            "options-dict": lambda: f4.as_tensor_map(
                options={"box_dim": (32, 16), "data_type": np.float32,
                         "element_strides": (1, 1)}),
            "gapped": lambda: view(DEV0, (8, 16), "<f2", (64, 2)).as_tensor_map((4, 8)),
            "permuted": lambda: view(DEV0, (5, 6, 16), "|u1", (16, 80, 1)).as_tensor_map(
                (1, 2, 16)),
            "5-d": lambda: view(DEV0, (2, 1, 3, 4, 8)).as_tensor_map((1, 1, 2, 2, 8)),
            "extent-1": lambda: view(DEV0, (1, 3), "<f4", (12, 4)).as_tensor_map((1, 4)),
            "offset": lambda: view(DEV0 + 4096, (4, 64), "<i4").as_tensor_map((2, 16)),
            "numpy-data-type": lambda: view(DEV0, (16, 64), "<u2").as_tensor_map(
                (8, 64), data_type=np.float16, swizzle=TensorMapSwizzle.SWIZZLE_128B),
            "str-data-type": lambda: view(DEV0, (16, 64), "<u2").as_tensor_map(
                (8, 64), data_type="float16"),
            "tfloat32": lambda: f4.as_tensor_map((8, 8), data_type=TensorMapDataType.TFLOAT32),
            "bfloat16": lambda: StridedMemoryView.from_buffer(
                Buffer.from_handle(DEV0, 4096), (8, 32),
                dtype=np.dtype(ml_dtypes.bfloat16)).as_tensor_map((8, 32)),
            "int64-interleave": lambda: view(DEV0 + 32, (3, 4, 64), "<i8").as_tensor_map(
                (1, 2, 4), interleave=TensorMapInterleave.INTERLEAVE_32B,
                swizzle=TensorMapSwizzle.SWIZZLE_32B),
            "pinned": lambda: view(PINNED, (16, 16)).as_tensor_map((2, 16)),
        }
        for name, make in cases.items():
            out[name] = described(make())
        fake.fake_cuda_set_current_device(1)
        out["device-1"] = described(view(DEV1, (64,)).as_tensor_map((16,)))
        out["device-1"]["context_kept"] = current_context() != 0
        fake.fake_cuda_set_current_device(-1)
        out["encodings"] = calls("cuTensorMapEncodeTiled")
    """)


# name: data type, driver's dims, strides, box, element strides, address, swizzle,
# interleave, l2 promotion, oob fill
MADE = {
    "c-2d": ("FLOAT32", [48, 64], [192], [16, 32], [1, 1], DEV0),
    "list": ("FLOAT32", [48, 64], [192], [16, 32], [1, 1], DEV0),
    "keywords": ("FLOAT32", [48, 64], [192], [16, 32], [2, 1], DEV0, "SWIZZLE_64B", "NONE",
                 "L2_128B", "NAN_REQUEST_ZERO_FMA"),
    "options": ("FLOAT32", [48, 64], [192], [16, 32], [1, 1], DEV0, "SWIZZLE_64B"),
    "options-dict": ("FLOAT32", [48, 64], [192], [16, 32], [1, 1], DEV0),
    "gapped": ("FLOAT16", [16, 8], [64], [8, 4], [1, 1], DEV0),
    "permuted": ("UINT8", [16, 6, 5], [80, 16], [16, 2, 1], [1, 1, 1], DEV0),
    "5-d": ("FLOAT32", [8, 4, 3, 1, 2], [32, 128, 384, 384], [8, 2, 2, 1, 1], [1] * 5, DEV0),
    "extent-1": ("FLOAT32", [3, 1], [16], [4, 1], [1, 1], DEV0),
    "offset": ("INT32", [64, 4], [256], [16, 2], [1, 1], DEV0 + 4096),
    "numpy-data-type": ("FLOAT16", [64, 16], [128], [64, 8], [1, 1], DEV0, "SWIZZLE_128B"),
    "str-data-type": ("FLOAT16", [64, 16], [128], [64, 8], [1, 1], DEV0),
    "tfloat32": ("TFLOAT32", [48, 64], [192], [8, 8], [1, 1], DEV0),
    "bfloat16": ("BFLOAT16", [32, 8], [64], [32, 8], [1, 1], DEV0),
    "int64-interleave": ("INT64", [64, 4, 3], [512, 2048], [4, 2, 1], [1, 1, 1], DEV0 + 32,
                         "SWIZZLE_32B", "INTERLEAVE_32B"),
    "pinned": ("FLOAT32", [16, 16], [64], [16, 2], [1, 1], PINNED),
    "device-1": ("FLOAT32", [64], [], [16], [1], DEV1),
}


@needs_fake
@pytest.mark.parametrize("name", sorted(MADE))
def test_made_maps_reach_the_driver(made, name):
    data_type, dims, strides, box, steps, address, *rest = MADE[name]
    swizzle, interleave, l2, oob = rest + ["NONE"] * (4 - len(rest))
    d = made[name]
    device = 1 if name == "device-1" else 0
    assert d["repr"] == (f"TensorMapDescriptor(tiled, rank={len(dims)}, dtype={data_type}, "
                         f"swizzle={swizzle})")
    expected = dict(rank=len(dims), data_type=data_type, swizzle=swizzle,
                    interleave=interleave, l2_promotion=l2, oob_fill=oob, device=device,
                    global_address=address, global_dim=dims, global_strides=strides,
                    box_dim=box, element_strides=steps)
    assert {k: d[k] for k in expected} == expected
    assert d["device_is_int"] and d["is_descriptor"] and d["handle_aligned"]
    e = d["encoding"]
    assert e == dict(address=address, rank=len(dims), global_dim=dims, global_strides=strides,
                     box_dim=box, element_strides=steps,
                     data_type=int(TensorMapDataType[data_type]),
                     interleave=int(TensorMapInterleave[interleave]),
                     swizzle=int(TensorMapSwizzle[swizzle]),
                     l2_promotion=int(TensorMapL2Promotion[l2]),
                     oob_fill=int(TensorMapOOBFill[oob]), device=device, bytes=e["bytes"])
    # The descriptor is the driver's bytes, at its handle too.
    assert d["bytes"] == e["bytes"] == d["at_handle"]


@needs_fake
def test_one_encoding_per_map(made):
    assert made["encodings"] == len(MADE)
    assert made["device-1"]["context_kept"]


def supported(name):
    return f"Unsupported dtype {name} for TMA; {SUPPORTED}"


@pytest.fixture(scope="module")
def refused():
    return run_maps("""
        buf = Buffer.from_handle(DEV0, 4096)
        cases = {
            "misaligned": lambda: view(DEV0 + 8, (64,)).as_tensor_map((16,)),
            "0-d": lambda: view(DEV0, ()).as_tensor_map(()),
            "6-d": lambda: view(DEV0, (2,) * 6).as_tensor_map((2,) * 6),
            "box-rank": lambda: view(DEV0, (64,)).as_tensor_map((32, 32)),
            "box-range": lambda: view(DEV0, (64,)).as_tensor_map((300,)),
            "box-zero": lambda: view(DEV0, (4, 64)).as_tensor_map((0, 16)),
            "box-negative": lambda: view(DEV0, (4, 64)).as_tensor_map((4, -16)),
            "box-huge": lambda: view(DEV0, (64,)).as_tensor_map((2 ** 70,)),
            "steps-rank": lambda: view(DEV0, (64,)).as_tensor_map((16,), element_strides=(1, 1)),
            "steps-zero": lambda: view(DEV0, (64,)).as_tensor_map((16,), element_strides=(0,)),
            "steps-nine": lambda: view(DEV0, (4, 64)).as_tensor_map(
                (4, 16), element_strides=(9, 1)),
            "int8": lambda: view(DEV0, (64,), "|i1").as_tensor_map((16,)),
            "void": lambda: view(DEV0, (64,), "|V2").as_tensor_map((16,)),
            "no-dtype": lambda: StridedMemoryView.from_buffer(buf, (64,), itemsize=4)
                .as_tensor_map((16,)),
            "data-type-int8": lambda: view(DEV0, (64,), "|u1").as_tensor_map(
                (16,), data_type=np.int8),
            "data-type-size": lambda: view(DEV0, (64,), "<f2").as_tensor_map(
                (16,), data_type=TensorMapDataType.FLOAT32),
            "negative": lambda: view(DEV0 + 192, (4, 16), "<f4", (-64, 4)).as_tensor_map((1, 16)),
            "broadcast": lambda: view(DEV0, (4, 16), "<f4", (0, 4)).as_tensor_map((1, 16)),
            "last-stride": lambda: view(DEV0, (4, 16), "<f4", (128, 8)).as_tensor_map((1, 16)),
            "stride-16": lambda: view(DEV0, (4, 3)).as_tensor_map((1, 4)),
            "inner-box": lambda: view(DEV0, (4, 64)).as_tensor_map((2, 3)),
            "swizzle-span": lambda: view(DEV0, (4, 64)).as_tensor_map(
                (2, 32), swizzle=TensorMapSwizzle.SWIZZLE_32B),
            "interleave-rank": lambda: view(DEV0, (4, 64)).as_tensor_map(
                (2, 16), interleave=TensorMapInterleave.INTERLEAVE_16B),
            "oob-int": lambda: view(DEV0, (4, 64), "<i4").as_tensor_map(
                (2, 16), oob_fill=TensorMapOOBFill.NAN_REQUEST_ZERO_FMA),
            "other-device": lambda: view(DEV1, (64,)).as_tensor_map((16,)),
        }
        for name, make in cases.items():
            out[name] = error(make)
        out["encodings"] = calls("cuTensorMapEncodeTiled")
        fake.fake_cuda_fail_next(b"cuTensorMapEncodeTiled", 1)
        out["driver-fails"] = error(lambda: view(DEV0, (64,)).as_tensor_map((16,)))
    """)


REFUSED = {
    "misaligned": ("ValueError",
                   f"Global memory address must be 16-byte aligned, got address {DEV0 + 8:#x}"),
    "0-d": ("ValueError", "Tensor rank must be between 1 and 5, got 0"),
    "6-d": ("ValueError", "Tensor rank must be between 1 and 5, got 6"),
    "box-rank": ("ValueError", "box_dim must have 1 elements (same as tensor rank), got 2"),
    "box-range": ("ValueError", "box_dim[0] must be in [1, 256], got 300"),
    "box-zero": ("ValueError", "box_dim[0] must be in [1, 256], got 0"),
    "box-negative": ("ValueError", "box_dim[1] must be in [1, 256], got -16"),
    "box-huge": ("OverflowError", None),
    "steps-rank": ("ValueError", "element_strides must have 1 elements, got 2"),
    "steps-zero": ("ValueError", "element_strides[0] must be positive, got 0"),
    "steps-nine": ("ValueError", "element_strides[0] must be at most 8, got 9"),
    "int8": ("ValueError", supported("int8") + " You may also specify data_type explicitly."),
    "void": ("ValueError", supported("|V2") + " You may also specify data_type explicitly."),
    "no-dtype": ("ValueError",
                 "Cannot infer TMA data type from the tensor; please specify data_type "
                 "explicitly"),
    "data-type-int8": ("ValueError", supported("int8")),
    "data-type-size": ("ValueError",
                       "data_type FLOAT32 has 4-byte elements, but the view's itemsize is 2"),
    "negative": ("ValueError",
                 "axis 0 has a negative stride (-16); a tensor map steps forwards along every "
                 "axis"),
    "broadcast": ("ValueError",
                  "axis 0 is broadcast (stride 0, extent 4); a tensor map cannot repeat "
                  "elements"),
    "last-stride": ("ValueError",
                    "the last axis must have stride 1 (its elements next to each other), got 2"),
    "stride-16": ("ValueError",
                  "axis 0 has a stride of 12 bytes (3 elements of 4 bytes); a tensor map needs "
                  "a multiple of 16 bytes"),
    "inner-box": ("ValueError",
                  "box_dim[1] * itemsize must be a multiple of 16 bytes, "
                  "got 3 * 4 = 12 bytes"),
    "swizzle-span": ("ValueError",
                     "box_dim[1] * itemsize must be at most 32 bytes with SWIZZLE_32B, got "
                     "32 * 4 = 128 bytes"),
    "interleave-rank": ("ValueError",
                        "interleave INTERLEAVE_16B needs a tensor of rank 3 or more, got rank 2"),
    "oob-int": ("ValueError",
                "oob_fill NAN_REQUEST_ZERO_FMA needs a floating-point data_type, got INT32"),
    "other-device": ("ValueError",
                     "TensorMapDescriptor._from_tiled expects tensor on device 0, got 1"),
}


@needs_fake
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_the_rule(refused, name):
    exc, message = REFUSED[name]
    assert refused[name][0] == exc
    if message is not None:
        assert refused[name][1] == message


@needs_fake
def test_refused_before_any_encoding(refused):
    assert refused["encodings"] == 0


@needs_fake
def test_driver_failure_is_a_runtime_error(refused):
    exc, message = refused["driver-fails"]
    assert exc == "RuntimeError"
    assert message.startswith("cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE")


@pytest.fixture(scope="module")
def replaced():
    return run_maps("""
        v = view(DEV0, (8, 16), "<f2", (64, 2))
        d = v.as_tensor_map((4, 8), swizzle=TensorMapSwizzle.SWIZZLE_32B)
        handle = d.handle
        out["before"] = described(d)
        w = view(DEV0 + 4096, (100,), "|u1")
        d.replace_address(w)
        out["view"] = described(d)
        out["handle_kept"] = d.handle == handle
        d.replace_address(cai(DEV0 + 8192, (3,)))  # any object from_any_interface takes
        out["object"] = described(d)
        kept = d.global_address, bytes(d)
        out["host"] = error(lambda: d.replace_address(np.zeros(64, np.float16)))
        out["other-device"] = error(lambda: d.replace_address(view(DEV1, (64,))))
        out["misaligned"] = error(lambda: d.replace_address(view(DEV0 + 8, (64,))))
        out["not-a-tensor"] = error(lambda: d.replace_address(3))
        fake.fake_cuda_fail_next(b"cuTensorMapEncodeTiled", 1)
        out["driver-fails"] = error(lambda: d.replace_address(w))
        out["unchanged"] = (d.global_address, bytes(d)) == kept
        # In the map's device, with no context current and another device's
        # context current.
        fake.fake_cuda_set_current_device(1)
        d1 = view(DEV1, (64,)).as_tensor_map((16,))
        fake.fake_cuda_set_current_device(0)
        context_0 = current_context()
        d1.replace_address(view(DEV1 + 256, (64,)))
        out["device-1"] = described(d1)
        out["context_kept"] = current_context() == context_0
        fake.fake_cuda_set_current_device(-1)
    """)


@needs_fake
def test_replace_address_keeps_the_rest(replaced):
    before = replaced["before"]
    for name, address in (("view", DEV0 + 4096), ("object", DEV0 + 8192)):
        after = replaced[name]
        assert after["global_address"] == after["encoding"]["address"] == address
        assert after["bytes"] == after["encoding"]["bytes"] == after["at_handle"]
        assert after["bytes"] != before["bytes"]
        for key in ("repr", "rank", "global_dim", "global_strides", "box_dim",
                    "element_strides", "swizzle", "data_type", "device"):
            assert after[key] == before[key]
    assert replaced["handle_kept"]
    d1 = replaced["device-1"]
    assert d1["device"] == d1["encoding"]["device"] == 1
    assert d1["global_address"] == DEV1 + 256
    assert replaced["context_kept"]


@needs_fake
@pytest.mark.parametrize("name, exc, message", [
    ("host", "ValueError", "The tensor must be device-accessible"),
    ("other-device", "ValueError", "replace_address expects tensor on device 0, got 1"),
    ("misaligned", "ValueError",
     f"Global memory address must be 16-byte aligned, got address {DEV0 + 8:#x}"),
    ("not-a-tensor", "BufferError", None),
    ("driver-fails", "RuntimeError", "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE"),
])
def test_replace_address_refused(replaced, name, exc, message):
    assert replaced[name][0] == exc
    if message is not None:
        assert replaced[name][1].startswith(message)
    assert replaced["unchanged"]


@needs_fake
def test_descriptor_keeps_its_view_alive():
    out = run_maps("""
        v = view(DEV0, (64,))
        ref = weakref.ref(v)
        d = v.as_tensor_map((16,))
        del v
        gc.collect()
        out["kept"] = ref() is not None
        w = view(DEV0 + 256, (64,))
        d.replace_address(w)
        del w
        gc.collect()
        out["old_released"] = ref() is None
        del d
        gc.collect()
        # A descriptor in a cycle with its view's exporter is collected.
        class Owner:
            pass
        owner = Owner()
        owner.view = StridedMemoryView.from_cuda_array_interface(
            cai(DEV0, (64,)), -1)
        owner.desc = owner.view.as_tensor_map((16,))
        ref = weakref.ref(owner)
        del owner
        gc.collect()
        out["cycle_collected"] = ref() is None
        if sys.version_info >= (3, 12):
            m = memoryview(view(DEV0, (64,)).as_tensor_map((16,)))
            out["memoryview"] = [m.readonly, m.nbytes, m.format]
    """)
    assert out["kept"] and out["old_released"] and out["cycle_collected"]
    if "memoryview" in out:
        assert out["memoryview"] == [True, 128, "B"]


def test_descriptor_of_a_host_view_is_never_made():
    v = host_view((64,))
    ref = weakref.ref(v)
    with pytest.raises(ValueError):
        v.as_tensor_map((16,))
    del v
    assert ref() is None
