/*
 * kernel_mdspan.cu: a CUDA kernel that takes a view as a cuda::std::mdspan
 * (strided::to_cuda_mdspan), the way docs/cpp.md shows it. scripts/check-cpp
 * compiles it with nvcc (compile only: it is never launched there), to check
 * that strided.hpp builds in nvcc's host pass and that the mdspan type
 * crosses into device code.
 */
#include <cuda_runtime.h>

#include "strided.hpp"

#if !STRIDED_HPP_HAS_CUDA_MDSPAN
#error "nvcc should find <cuda/std/mdspan>"
#endif

/* Multiply every element of a 2-d view by factor: one block per row. */
__global__ void scale(strided::cuda_mdspan<float, 2> m, float factor)
{
    size_t i = blockIdx.x;
    for (size_t j = threadIdx.x; j < m.extent(1); j += blockDim.x)
        m(i, j) *= factor;
}

/* Queue scale on stream for a view of device-accessible memory. */
strided::status scale_view(const strided::view &v, float factor, cudaStream_t stream)
{
    strided::result<strided::cuda_mdspan<float, 2>> m = strided::to_cuda_mdspan<float, 2>(v);
    if (!m)
        return m.error();
    if (m->extent(0) == 0 || m->extent(1) == 0)
        return strided::status();
    scale<<<static_cast<unsigned>(m->extent(0)), 128, 0, stream>>>(*m, factor);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return strided::status(STRIDED_ERR_CUDA, std::string("scale: ") + cudaGetErrorString(e));
    return strided::status();
}
