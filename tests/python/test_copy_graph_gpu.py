"""Copies captured into a CUDA graph (docs/copies.md, "Copies in a CUDA
graph"), with PyTorch's graphs and tensors as the memory and the oracle.

What is checked:

- Device-to-device copies of several layout classes (a transpose, records
  to planes, a gapped gather, a 3-D permutation, a contiguous run) and a
  pinned host source crossing to the device (one DMA, and a transposed one
  crossing as its footprint), all non-blocking on the capturing stream:
  captured once, the graph replayed after the sources change, and every
  destination equal to what PyTorch makes of the new sources, so that the
  replay, not the capture, did the work.
- What a graph cannot hold is refused with a clear error before anything
  is queued, and the capture goes on unharmed (the graph still replays
  correctly): a blocking copy (it would wait for the capturing stream), a
  pageable host source (staged through the host), and a copy between host
  memory (done on the host).

The module skips with "skipped: no CUDA device" where no CUDA device is
usable, and without PyTorch.
"""

import pytest

from gpu_util import cuda_device_count, optional_torch

if cuda_device_count() == 0:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

torch = optional_torch()
if torch is None:
    pytest.skip("needs PyTorch with CUDA", allow_module_level=True)

from strided import StridedMemoryView  # noqa: E402

REFUSED = "cannot be captured into a CUDA graph"


def view(t):
    return StridedMemoryView.from_dlpack(t, stream_ptr=-1)


def cases():
    """(destination, source, expected(source)) of device memory: the
    destination made dense, the source a view PyTorch describes."""
    g = torch.Generator(device="cuda").manual_seed(7)

    def rand(*shape, dtype=torch.float32):
        if dtype.is_floating_point:
            return torch.rand(*shape, device="cuda", generator=g, dtype=dtype)
        return torch.randint(0, 255, shape, device="cuda", generator=g, dtype=dtype)

    return [
        ("transpose", rand(256, 256), lambda s: s.T),
        ("records to planes", rand(4096, 4, dtype=torch.uint8), lambda s: s.T),
        ("gather", rand(300, 200), lambda s: s[:, ::2]),
        ("permutation", rand(16, 32, 24), lambda s: s.permute(2, 0, 1)),
        ("contiguous", rand(1024), lambda s: s),
    ]


def refill(src):
    src.copy_(torch.rand_like(src.float()).mul(200).to(src.dtype))


def test_captured_copies_replay_with_new_sources():
    stream = torch.cuda.Stream()
    plans = []
    for name, src, pick in cases():
        dst = torch.empty_like(pick(src).contiguous())
        plans.append((name, src, pick, dst, view(dst), view(pick(src))))
    host = torch.arange(4096, dtype=torch.float32).pin_memory()
    host_t = torch.rand(40, 60).pin_memory().T
    dev_from_host = torch.empty(4096, device="cuda")
    dev_from_t = torch.empty(60, 40, device="cuda")
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, stream=stream):
        s = torch.cuda.current_stream().cuda_stream
        for _, _, _, _, dv, sv in plans:
            dv.copy_from(sv, stream=s, blocking=False)
        view(dev_from_host).copy_from(view(host), stream=s, blocking=False)
        view(dev_from_t).copy_from(view(host_t), stream=s, blocking=False)
    for _, _, _, dst, _, _ in plans:
        dst.zero_()
    for _, src, _, _, _, _ in plans:
        refill(src)
    host.copy_(torch.rand(4096))
    host_t.copy_(torch.rand(60, 40))
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    for name, src, pick, dst, _, _ in plans:
        assert torch.equal(dst, pick(src).contiguous()), name
    assert torch.equal(dev_from_host.cpu(), host)
    assert torch.equal(dev_from_t.cpu(), host_t.contiguous())


def test_what_a_graph_cannot_hold_is_refused_and_the_capture_goes_on():
    stream = torch.cuda.Stream()
    src = torch.rand(256, 256, device="cuda")
    dst = torch.empty(256, 256, device="cuda")
    dv, sv = view(dst), view(src.T)
    pageable = torch.rand(4096)
    pinned = torch.rand(4096).pin_memory()
    dev = torch.zeros(4096, device="cuda")
    other = torch.zeros(4096)
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, stream=stream):
        s = torch.cuda.current_stream().cuda_stream
        with pytest.raises(ValueError, match=f"a blocking copy {REFUSED}"):
            dv.copy_from(sv, stream=s, blocking=True)
        with pytest.raises(ValueError, match=f"a blocking copy {REFUSED}"):
            view(dev).copy_from(view(pinned), stream=s)  # blocking by default
        with pytest.raises(ValueError, match=f"host staging .* {REFUSED}"):
            view(dev).copy_from(view(pageable), stream=s, blocking=False)
        with pytest.raises(ValueError, match=f"host-accessible memory {REFUSED}"):
            view(other).copy_from(view(pinned), stream=s, blocking=False)
        dv.copy_from(sv, stream=s, blocking=False)
    assert torch.equal(dev.cpu(), torch.zeros(4096)) and torch.equal(other, torch.zeros(4096))
    src.copy_(torch.rand(256, 256, device="cuda"))
    dst.zero_()
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(dst, src.T.contiguous())
    # Outside the capture the refused copies run.
    view(dev).copy_from(view(pageable), stream=stream.cuda_stream, blocking=True)
    assert torch.equal(dev.cpu(), pageable)
