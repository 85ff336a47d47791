// A 64-bin histogram of bytes: each block counts into its own bins in
// shared memory with shared-memory atomics, then adds them to the global
// bins with one global atomic per bin. Launch with any block size; `bins`
// starts at zero.
#include "tidal_cuda.h"

constexpr unsigned Bins = 64;

extern "C" __global__ void histogram(const unsigned char *data, unsigned count, unsigned *bins) {
  __shared__ unsigned block_bins[Bins];
  for (unsigned bin = threadIdx.x; bin < Bins; bin += blockDim.x)
    block_bins[bin] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    atomicAdd(&block_bins[data[i] % Bins], 1u);
  __syncthreads();
  for (unsigned bin = threadIdx.x; bin < Bins; bin += blockDim.x)
    if (block_bins[bin] != 0)
      atomicAdd(&bins[bin], block_bins[bin]);
}
