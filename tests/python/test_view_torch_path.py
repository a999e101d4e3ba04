"""The torch fast path of StridedMemoryView.from_dlpack (python/torch_view.c)
against a stand-in `torch` module, so that it runs where PyTorch is not
installed: a tensor class with torch's accessors over a NumPy array, put in
sys.modules of a fresh interpreter before the first import. The real
PyTorch is exercised by tests/python/test_view_gpu.py on a GPU machine.

Checked: views read through the accessors (ptr, shape, strides, dtype,
device -1 for CPU, exporting_obj, no __dlpack__ call), the stream rules,
what falls back to DLPack (sparse layout, conjugate or negative bit,
another device, an unknown dtype, subclasses), lifetimes."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import strided

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(strided.__file__)))

FAKE_TORCH = '''
import json, sys, types, gc, weakref
import numpy as np

torch = types.ModuleType("torch")
torch.strided = object()
torch.sparse_coo = object()

class dtype:
    def __init__(self, name, np_name):
        self.name, self.np = name, np.dtype(np_name)
    def __str__(self):
        return "torch." + self.name

for name, np_name in [("float32", "float32"), ("int64", "int64"), ("bool", "bool"),
                      ("complex64", "complex64"), ("uint8", "uint8"), ("float16", "float16")]:
    setattr(torch, name, dtype(name, np_name))
torch.quint8 = dtype("quint8", "uint8")   # no DLPack code

class Tensor:
    dlpack_calls = 0
    def __init__(self, a, dt, layout=None, conj=False, neg=False, device="cpu"):
        self.a, self.dtype = a, dt
        self.layout = torch.strided if layout is None else layout
        self._conj, self._neg, self._device = conj, neg, device
    @property
    def shape(self):
        return tuple(self.a.shape)
    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)
    def data_ptr(self):
        return self.a.ctypes.data
    @property
    def is_cuda(self):
        return self._device == "cuda"
    @property
    def is_cpu(self):
        return self._device == "cpu"
    def get_device(self):
        return 0 if self._device == "cuda" else -1
    def is_conj(self):
        return self._conj
    def is_neg(self):
        return self._neg
    def __dlpack_device__(self):
        return (1, 0)
    def __dlpack__(self, stream=None, max_version=None):
        Tensor.dlpack_calls += 1
        if self._conj or self._neg or self.layout is not torch.strided:
            raise RuntimeError("torch refuses to export this tensor")
        return self.a.__dlpack__(max_version=max_version)

class Parameter(Tensor):
    pass

class Sub(Tensor):
    pass

torch.Tensor = Tensor
torch.nn = types.SimpleNamespace(Parameter=Parameter)
torch._C = types.SimpleNamespace()
sys.modules["torch"] = torch

from strided import StridedMemoryView as SMV
out = {}

def describe(v):
    return dict(ptr=v.ptr, shape=list(v.shape),
                strides=None if v.strides is None else list(v.strides),
                dtype=v.dtype.str, device_id=v.device_id,
                accessible=v.is_device_accessible, readonly=v.readonly,
                exporter=type(v.exporting_obj).__name__)

def error(fn):
    try:
        fn()
    except BaseException as e:
        return [type(e).__name__, str(e)]
    return None
'''


def run(code):
    script = FAKE_TORCH + textwrap.dedent(code) + "\nprint(json.dumps(out))\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, os.path.dirname(os.path.abspath(__file__)),
                    os.environ.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0, f"snippet failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_plain_tensors_are_read_through_their_accessors():
    out = run("""
        a = np.arange(24, dtype=np.float32).reshape(4, 6)
        cases = {"c": a, "g": a[:, ::2], "t": a.T, "0d": np.array(3, np.int64),
                 "empty": np.empty((0, 3), np.float32)}
        for name, arr in cases.items():
            dt = torch.int64 if arr.dtype == np.int64 else torch.float32
            t = Tensor(arr, dt)
            v = SMV.from_dlpack(t, stream_ptr=-1)
            out[name] = describe(v)
            out[name + "-expected"] = dict(ptr=arr.ctypes.data, shape=list(arr.shape),
                strides=[s // arr.itemsize for s in arr.strides], dtype=arr.dtype.str)
        out["dlpack_calls"] = Tensor.dlpack_calls
        p = Parameter(np.ones(3, np.bool_), torch.bool)
        out["parameter"] = describe(SMV.from_any_interface(p, -1))
        out["dlpack_calls_after_parameter"] = Tensor.dlpack_calls
    """)
    assert out["dlpack_calls"] == 0
    assert out["dlpack_calls_after_parameter"] == 0
    for name in ("c", "g", "t", "0d", "empty"):
        got, exp = out[name], out[name + "-expected"]
        assert got["shape"] == exp["shape"]
        assert got["dtype"] == exp["dtype"]
        if exp["shape"] and 0 not in exp["shape"]:
            assert got["ptr"] == exp["ptr"]
            assert got["strides"] in (exp["strides"], None)
        assert got["device_id"] == -1
        assert got["accessible"] is False
        assert got["readonly"] is False
        assert got["exporter"] == "Tensor"
    assert out["parameter"]["dtype"] == "|b1"
    assert out["parameter"]["exporter"] == "Parameter"


def test_the_type_check_is_remembered_and_tensors_still_take_the_fast_path():
    # Imports of other types before and between tensors: a tensor is still
    # read through its accessors, every other object still by its protocol.
    out = run("""
        a = np.arange(6, dtype=np.float32)
        t = Tensor(np.arange(4, dtype=np.int64), torch.int64)
        views = [SMV.from_dlpack(x, -1) for x in (a, a, t, a, t, t, a)]
        out["calls"] = Tensor.dlpack_calls
        out["ptrs"] = [v.ptr for v in views]
        out["expected"] = [x.ctypes.data for x in (a, a, t.a, a, t.a, t.a, a)]
        out["exporters"] = [type(v.exporting_obj).__name__ for v in views]
    """)
    assert out["calls"] == 0
    assert out["ptrs"] == out["expected"]
    assert out["exporters"] == ["ndarray", "ndarray", "Tensor", "ndarray", "Tensor", "Tensor",
                                "ndarray"]


def test_tensors_with_an_exchange_table_are_described_in_place():
    # A torch with the DLPack C exchange API: plain tensors are described
    # by dltensor_from_py_object_no_sync (no managed tensor, no __dlpack__),
    # and the view keeps the tensor.
    out = run("""
        import exchange_producer as ep
        Tensor.__dlpack_c_exchange_api__ = ep.exchange_capsule()
        Tensor.array = property(lambda self: self.a)
        Tensor.fail = False
        a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
        t = Tensor(a, torch.float32)
        v = SMV.from_dlpack(t, -1)
        out["v"] = describe(v)
        out["expected"] = [a.ctypes.data, list(a.shape), [s // 4 for s in a.strides]]
        out["calls"] = dict(ep.CALLS)
        out["dlpack_calls"] = Tensor.dlpack_calls
        out["parameter"] = describe(SMV.from_dlpack(Parameter(np.ones(3, np.bool_), torch.bool), -1))
        out["calls_after_parameter"] = dict(ep.CALLS)
        ref = weakref.ref(t)
        del t
        gc.collect()
        out["kept"] = ref() is not None
        out["values"] = np.from_dlpack(v).tolist()
        del v
        gc.collect()
        out["released"] = ref() is None
        out["refused"] = error(lambda: SMV.from_dlpack(Tensor(a, torch.float32), None))
    """)
    assert out["calls"] == {"managed": 0, "dltensor": 1, "stream": 0}
    assert out["calls_after_parameter"]["dltensor"] == 2
    assert out["dlpack_calls"] == 0
    assert [out["v"]["ptr"], out["v"]["shape"], out["v"]["strides"]] == out["expected"]
    assert out["v"]["exporter"] == "Tensor"
    assert out["parameter"]["dtype"] == "|b1"
    assert out["kept"] and out["released"]
    assert out["values"] == [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    assert out["refused"][0] == "BufferError"


def test_stream_rules():
    out = run("""
        t = Tensor(np.zeros(3, np.float32), torch.float32)
        out["none"] = error(lambda: SMV.from_dlpack(t))
        out["bad"] = error(lambda: SMV.from_dlpack(t, stream_ptr=-7))
        out["zero"] = describe(SMV.from_dlpack(t, stream_ptr=0))
    """)
    assert out["none"] == ["BufferError",
                           "stream=None is ambiguous with view(); for host memory pass "
                           "stream_ptr=-1"]
    assert out["bad"][0] == "ValueError"
    assert out["zero"]["device_id"] == -1


@pytest.mark.parametrize("kind", ["sparse", "conj", "neg", "unknown-dtype", "subclass",
                                  "cuda-without-raw-stream", "conj-bit-ignored-on-real"])
def test_other_tensors_go_by_dlpack(kind):
    out = run(f"""
        a = np.arange(6, dtype=np.uint8)
        kind = {kind!r}
        if kind == "sparse":
            t = Tensor(a, torch.uint8, layout=torch.sparse_coo)
        elif kind == "conj":
            t = Tensor(a.astype(np.complex64), torch.complex64, conj=True)
        elif kind == "neg":
            t = Tensor(a, torch.uint8, neg=True)
        elif kind == "unknown-dtype":
            t = Tensor(a, torch.quint8)
        elif kind == "subclass":
            t = Sub(a, torch.uint8)
        elif kind == "conj-bit-ignored-on-real":
            # torch sets no conjugate bit on real tensors; the path does not ask.
            t = Tensor(a, torch.uint8, conj=True)
        else:
            t = Tensor(a, torch.uint8, device="cuda")
        out["error"] = error(lambda: SMV.from_dlpack(t, stream_ptr=-1))
        out["dlpack_calls"] = Tensor.dlpack_calls
    """)
    assert out["dlpack_calls"] == (0 if kind == "conj-bit-ignored-on-real" else 1)
    if kind in ("sparse", "conj", "neg"):
        assert out["error"] == ["RuntimeError", "torch refuses to export this tensor"]
    elif kind == "cuda-without-raw-stream":
        # The stand-in's __dlpack_device__ says CPU: the tensor went by DLPack.
        assert out["error"] is None
    else:
        assert out["error"] is None


def test_view_keeps_the_tensor_and_lets_it_go():
    out = run("""
        t = Tensor(np.arange(4, dtype=np.float32), torch.float32)
        base = sys.getrefcount(t)
        v = SMV.from_dlpack(t, stream_ptr=-1)
        w = v.view(v.layout[1:])
        cap = w.__dlpack__(max_version=(1, 0))
        out["held"] = sys.getrefcount(t) > base
        del v, w
        gc.collect()
        out["held_by_capsule"] = sys.getrefcount(t) > base
        del cap
        gc.collect()
        out["back"] = sys.getrefcount(t) == base
        r = weakref.ref(t)
        t.v = SMV.from_dlpack(t, stream_ptr=-1)   # a tensor that keeps its view
        del t
        gc.collect()
        out["cycle_collected"] = r() is None
    """)
    assert out == {"held": True, "held_by_capsule": True, "back": True,
                   "cycle_collected": True}
