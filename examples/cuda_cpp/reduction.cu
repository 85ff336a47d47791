// Sum of a float array: each block adds up its slice in shared memory down
// to one warp, the warp finishes with shuffles, and lane 0 of warp 0 adds the
// block's total to *total with one atomic. Launch with 256 threads a block
// and *total set to 0.
#include "tidal_cuda.h"

constexpr unsigned BlockSize = 256;

__device__ float warp_sum(float value) {
  for (unsigned offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

extern "C" __global__ void __launch_bounds__(BlockSize)
sum_reduce(const float *values, unsigned count, float *total) {
  __shared__ float partial[BlockSize];
  unsigned thread = threadIdx.x;
  // Each thread first adds the elements a grid-sized stride apart.
  float own = 0.0f;
  for (unsigned i = blockIdx.x * BlockSize + thread; i < count; i += gridDim.x * BlockSize)
    own += values[i];
  partial[thread] = own;
  __syncthreads();
  for (unsigned half = BlockSize / 2; half >= 32; half /= 2) {
    if (thread < half)
      partial[thread] += partial[thread + half];
    __syncthreads();
  }
  if (thread < 32) {
    float block_total = warp_sum(partial[thread]);
    if (thread == 0)
      atomicAdd(total, block_total);
  }
}
