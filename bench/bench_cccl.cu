// An anchor for the copy suite: NVIDIA CCCL's cuda::experimental::copy (cudax,
// <cuda/experimental/copy.cuh>) timed on the same layouts as bench/bench_copy.py's
// device-to-device rows. A standalone program built from CCCL's headers only; strided
// itself does not use CCCL (scripts/build-cccl-bench builds it, bench/README.md says how
// it is used).
//
// Usage: bench_cccl CASES [REPS]   (REPS: timed copies per case, default 20)
//
// CASES has one copy per line (blank lines and lines starting with '#' are skipped):
//   id itemsize ndim shape[ndim] src_strides[ndim] dst_strides[ndim]
// with strides in elements; source strides may be negative or zero (a broadcast). For
// each case the program allocates both sides (element 0 placed so that negative strides
// stay inside the allocation), fills the source with hashed bits, runs CCCL's copy once
// (the warm-up, whose output is checked byte for byte against an element-by-element
// reference kernel on the same layouts), then times REPS copies with a pair of CUDA events
// around each, on one stream, and prints one line:
//   id ms_per_copy ok|BAD|unsupported:<reason>|error:<reason>
// after a first line "# CCCL <version>, commit <commit>" (the commit when the build
// defined BENCH_CCCL_COMMIT, as scripts/build-cccl-bench does, else "unknown").
// ms_per_copy is the median of the REPS copies ("-" when not timed). unsupported: CCCL's
// copy refused the case (it threw, or the rank or itemsize has no instantiation here);
// error: the harness itself failed (allocation, a CUDA error). A CUDA error that sticks to
// the context makes every later case an error too.

#include <cuda/experimental/copy.cuh>
#include <cuda/mdspan>
#include <cuda/std/array>
#include <cuda/stream_ref>
#include <cuda/version>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef BENCH_CCCL_COMMIT
#define BENCH_CCCL_COMMIT "unknown"
#endif

namespace {

constexpr int kMaxRank = 8;

// The 16-byte element: CCCL's copy only needs a trivially copyable type.
struct alignas(16) Bytes16 {
    std::uint64_t lo, hi;
};

struct Case {
    std::string id;
    int itemsize = 0;
    int ndim = 0;
    std::int64_t shape[kMaxRank]{};
    std::int64_t src[kMaxRank]{};
    std::int64_t dst[kMaxRank]{};
};

// One side's layout as the reference kernel reads it (passed by value).
struct Layout {
    int ndim;
    std::int64_t shape[kMaxRank];
    std::int64_t stride[kMaxRank];
};

// A failure of the harness (not of CCCL's copy): the case prints error:<what>.
struct HarnessError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        throw HarnessError(std::string(what) + ": " + cudaGetErrorString(e));
    }
}

// Elements spanned by a layout, and the offset of element 0 from the lowest one
// (the sum of the negative strides' reach), so that a buffer of span elements
// holds every element of the view with element 0 at buffer + offset.
void span_of(const Case &c, const std::int64_t *strides, std::int64_t &offset, std::int64_t &span)
{
    std::int64_t lo = 0, hi = 0;
    for (int a = 0; a < c.ndim; ++a) {
        const std::int64_t reach = (c.shape[a] - 1) * strides[a];
        (reach < 0 ? lo : hi) += reach;
    }
    offset = -lo;
    span = hi - lo + 1;
}

// Distinct-looking bits in every 32-bit word of a buffer (a multiplicative hash of the
// word's index), so that a misplaced element shows.
__global__ void fill_words(std::uint32_t *p, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        p[i] = std::uint32_t(i) * 2654435761u ^ std::uint32_t(i >> 32);
    }
}

// The reference: one element per work item, its source and destination offsets from its
// C-order index over the shape.
template <class T>
__global__ void reference_copy(const T *src0, T *dst0, Layout s, Layout d, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        std::int64_t rest = i, so = 0, dof = 0;
        for (int a = s.ndim - 1; a >= 0; --a) {
            const std::int64_t k = rest % s.shape[a];
            rest /= s.shape[a];
            so += k * s.stride[a];
            dof += k * d.stride[a];
        }
        dst0[dof] = src0[so];
    }
}

// Counts the 64-bit words where two buffers differ.
__global__ void count_differences(const std::uint64_t *a, const std::uint64_t *b, std::int64_t n,
                                  unsigned long long *count)
{
    unsigned long long mine = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        mine += a[i] != b[i];
    }
    if (mine) {
        atomicAdd(count, mine);
    }
}

constexpr int kBlock = 256;

unsigned grid_for(std::int64_t n)
{
    return unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>((n + kBlock - 1) / kBlock,
                                                                     65536)));
}

// A device buffer freed when it goes out of scope.
struct DeviceBuffer {
    void *p = nullptr;
    explicit DeviceBuffer(std::size_t bytes)
    {
        check(cudaMalloc(&p, bytes), "cudaMalloc");
    }
    ~DeviceBuffer()
    {
        if (p) {
            cudaFree(p);
        }
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

// CUDA events destroyed when they go out of scope (a timed copy may throw).
struct Events : std::vector<cudaEvent_t> {
    explicit Events(std::size_t n)
    {
        reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            cudaEvent_t e;
            check(cudaEventCreate(&e), "cudaEventCreate");
            push_back(e);
        }
    }
    ~Events()
    {
        for (cudaEvent_t e : *this) {
            cudaEventDestroy(e);
        }
    }
    Events(const Events &) = delete;
    Events &operator=(const Events &) = delete;
};

struct Outcome {
    double ms = -1; // median ms per copy, < 0 when not timed
    std::string status;
};

// The CCCL copy of one case at compile-time rank R: layout_stride_relaxed mdspans (the
// mapping that admits negative and zero strides, with element 0 at an offset from the
// data handle) over the two buffers.
template <class T, std::size_t R> struct CcclCopy {
    using extents_t = cuda::std::dextents<std::int64_t, R>;
    using strides_t = cuda::dstrides<std::int64_t, R>;
    using mapping_t = cuda::layout_stride_relaxed::mapping<extents_t, strides_t>;
    using src_t = cuda::device_mdspan<const T, extents_t, cuda::layout_stride_relaxed>;
    using dst_t = cuda::device_mdspan<T, extents_t, cuda::layout_stride_relaxed>;

    src_t src;
    dst_t dst;

    static mapping_t mapping(const Case &c, const std::int64_t *strides, std::int64_t offset)
    {
        cuda::std::array<std::int64_t, R> shape{}, st{};
        for (std::size_t a = 0; a < R; ++a) {
            shape[a] = c.shape[a];
            st[a] = strides[a];
        }
        return mapping_t(extents_t(shape), strides_t(st), offset);
    }

    CcclCopy(const Case &c, const void *src_base, std::int64_t src_off, void *dst_base,
             std::int64_t dst_off)
        : src(static_cast<const T *>(src_base), mapping(c, c.src, src_off)),
          dst(static_cast<T *>(dst_base), mapping(c, c.dst, dst_off))
    {
    }

    void operator()(cudaStream_t stream) const
    {
        cuda::experimental::copy(src, dst, cuda::stream_ref{stream});
    }
};

// Everything for one case once T and R are known.
template <class T, std::size_t R> Outcome run_case(const Case &c, int reps, cudaStream_t stream)
{
    Outcome out;
    std::int64_t n = 1;
    for (int a = 0; a < c.ndim; ++a) {
        n *= c.shape[a];
    }
    if (n == 0) {
        out.status = "unsupported:empty copy";
        return out;
    }
    std::int64_t soff, sspan, doff, dspan;
    span_of(c, c.src, soff, sspan);
    span_of(c, c.dst, doff, dspan);
    // Whole 16-byte units, so that the fill and the comparison run on whole words.
    const std::size_t sbytes = (std::size_t(sspan) * sizeof(T) + 15) / 16 * 16;
    const std::size_t dbytes = (std::size_t(dspan) * sizeof(T) + 15) / 16 * 16;
    DeviceBuffer src(sbytes), dst(dbytes), ref(dbytes), count(sizeof(unsigned long long));

    fill_words<<<grid_for(std::int64_t(sbytes / 4)), kBlock, 0, stream>>>(
        static_cast<std::uint32_t *>(src.p), std::int64_t(sbytes / 4));
    // Both destinations start with the same bytes: what neither copy writes compares equal.
    check(cudaMemsetAsync(dst.p, 0xA5, dbytes, stream), "cudaMemsetAsync");
    check(cudaMemsetAsync(ref.p, 0xA5, dbytes, stream), "cudaMemsetAsync");
    check(cudaGetLastError(), "fill");

    const CcclCopy<T, R> copy(c, src.p, soff, dst.p, doff);
    try {
        copy(stream); // the warm-up, and the copy that is checked
    } catch (const std::exception &e) {
        cudaGetLastError(); // a launch error that was thrown is not the next case's
        out.status = std::string("unsupported:") + e.what();
        return out;
    }
    check(cudaStreamSynchronize(stream), "the first CCCL copy");

    Layout ls{c.ndim, {}, {}}, ld{c.ndim, {}, {}};
    for (int a = 0; a < c.ndim; ++a) {
        ls.shape[a] = ld.shape[a] = c.shape[a];
        ls.stride[a] = c.src[a];
        ld.stride[a] = c.dst[a];
    }
    reference_copy<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T *>(src.p) + soff,
                                                          static_cast<T *>(ref.p) + doff, ls, ld,
                                                          n);
    check(cudaMemsetAsync(count.p, 0, sizeof(unsigned long long), stream), "cudaMemsetAsync");
    count_differences<<<grid_for(std::int64_t(dbytes / 8)), kBlock, 0, stream>>>(
        static_cast<const std::uint64_t *>(dst.p), static_cast<const std::uint64_t *>(ref.p),
        std::int64_t(dbytes / 8), static_cast<unsigned long long *>(count.p));
    check(cudaGetLastError(), "the reference copy");
    unsigned long long differ = 0;
    check(cudaMemcpyAsync(&differ, count.p, sizeof differ, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "the reference copy");

    Events ev(2 * std::size_t(reps));
    for (int r = 0; r < reps; ++r) {
        check(cudaEventRecord(ev[2 * r], stream), "cudaEventRecord");
        copy(stream);
        check(cudaEventRecord(ev[2 * r + 1], stream), "cudaEventRecord");
    }
    check(cudaStreamSynchronize(stream), "the timed CCCL copies");
    std::vector<float> ms(reps);
    for (int r = 0; r < reps; ++r) {
        check(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]), "cudaEventElapsedTime");
    }
    std::sort(ms.begin(), ms.end());
    out.ms = reps % 2 ? ms[reps / 2] : 0.5 * (double(ms[reps / 2 - 1]) + ms[reps / 2]);
    out.status = differ ? "BAD" : "ok";
    return out;
}

template <class T> Outcome run_rank(const Case &c, int reps, cudaStream_t stream)
{
    switch (c.ndim) {
    case 1: return run_case<T, 1>(c, reps, stream);
    case 2: return run_case<T, 2>(c, reps, stream);
    case 3: return run_case<T, 3>(c, reps, stream);
    case 4: return run_case<T, 4>(c, reps, stream);
    case 5: return run_case<T, 5>(c, reps, stream);
    case 6: return run_case<T, 6>(c, reps, stream);
    case 7: return run_case<T, 7>(c, reps, stream);
    case 8: return run_case<T, 8>(c, reps, stream);
    default: {
        Outcome out;
        out.status = "unsupported:rank " + std::to_string(c.ndim) +
                     " (this program instantiates ranks 1-" + std::to_string(kMaxRank) + ")";
        return out;
    }
    }
}

Outcome run_one(const Case &c, int reps, cudaStream_t stream)
{
    switch (c.itemsize) {
    case 1: return run_rank<std::uint8_t>(c, reps, stream);
    case 2: return run_rank<std::uint16_t>(c, reps, stream);
    case 4: return run_rank<std::uint32_t>(c, reps, stream);
    case 8: return run_rank<std::uint64_t>(c, reps, stream);
    case 16: return run_rank<Bytes16>(c, reps, stream);
    default: {
        Outcome out;
        out.status = "unsupported:itemsize " + std::to_string(c.itemsize);
        return out;
    }
    }
}

// Parses one line of the case file: false for a blank or comment line; error says what is
// wrong with a malformed one (printed as the case's status). Shapes of rank
// above kMaxRank are read (to report them) but not stored.
bool parse(const std::string &line, Case &c, std::string &error)
{
    std::istringstream in(line);
    if (!(in >> c.id)) {
        return false; // blank
    }
    if (c.id[0] == '#') {
        return false;
    }
    if (!(in >> c.itemsize >> c.ndim) || c.ndim < 0) {
        error = "error:malformed line";
        return true;
    }
    std::vector<std::int64_t> v;
    std::int64_t x;
    while (in >> x) {
        v.push_back(x);
    }
    if (v.size() != 3 * std::size_t(c.ndim) || !in.eof()) {
        error = "error:expected " + std::to_string(3 * c.ndim) + " integers after ndim";
        return true;
    }
    for (int a = 0; a < c.ndim && a < kMaxRank; ++a) {
        c.shape[a] = v[a];
        c.src[a] = v[c.ndim + a];
        c.dst[a] = v[2 * c.ndim + a];
        if (c.shape[a] < 0) {
            error = "error:negative extent";
        }
    }
    return true;
}

std::string one_line(std::string s)
{
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s CASES [REPS]\n", argv[0]);
        return 2;
    }
    const int reps = argc == 3 ? std::atoi(argv[2]) : 20;
    if (reps < 1) {
        std::fprintf(stderr, "bench_cccl: REPS must be at least 1\n");
        return 2;
    }
    std::ifstream file(argv[1]);
    if (!file) {
        std::fprintf(stderr, "bench_cccl: cannot read %s\n", argv[1]);
        return 2;
    }
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        std::fprintf(stderr, "bench_cccl: no CUDA stream: %s\n",
                     cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    std::printf("# CCCL %d.%d.%d, commit %s\n", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION,
                CCCL_PATCH_VERSION, BENCH_CCCL_COMMIT);
    std::string line;
    while (std::getline(file, line)) {
        Case c;
        std::string error;
        if (!parse(line, c, error)) {
            continue;
        }
        Outcome o;
        if (!error.empty()) {
            o.status = error;
        } else {
            try {
                o = c.ndim > kMaxRank ? run_rank<std::uint8_t>(c, reps, stream)
                                      : run_one(c, reps, stream);
            } catch (const HarnessError &e) {
                o.status = std::string("error:") + e.what();
            } catch (const std::exception &e) // a CCCL error thrown by a timed copy
            {
                o.status = std::string("unsupported:") + e.what();
            }
        }
        if (o.ms >= 0) {
            std::printf("%s %.6f %s\n", c.id.c_str(), o.ms, one_line(o.status).c_str());
        } else {
            std::printf("%s - %s\n", c.id.c_str(), one_line(o.status).c_str());
        }
        std::fflush(stdout);
    }
    cudaStreamDestroy(stream);
    return 0;
}
