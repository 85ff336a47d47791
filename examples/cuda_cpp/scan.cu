// Inclusive prefix sum of each block's slice of an int array: every warp
// scans its 32 values with up-shuffles, warp 0 scans the warps' totals the
// same way, and each thread adds the totals of the warps before its own.
// Launch with up to 1024 threads a block (a multiple of 32); out[i] is the
// sum of in[block start .. i]. `block_totals[block]` gets the block's sum,
// so a second pass can add them (not done here).
#include "tidal_cuda.h"

__device__ int warp_inclusive_scan(int value, unsigned lane) {
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    int below = __shfl_up_sync(0xffffffffu, value, offset);
    if (lane >= offset)
      value += below;
  }
  return value;
}

extern "C" __global__ void block_scan(const int *in, int *out, int *block_totals, unsigned count) {
  __shared__ int warp_totals[32];
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane = threadIdx.x % 32;
  unsigned warp = threadIdx.x / 32;
  int value = index < count ? in[index] : 0;
  value = warp_inclusive_scan(value, lane);
  if (lane == 31)
    warp_totals[warp] = value;
  __syncthreads();
  if (warp == 0) {
    unsigned warps = blockDim.x / 32;
    int total = lane < warps ? warp_totals[lane] : 0;
    warp_totals[lane] = warp_inclusive_scan(total, lane);
  }
  __syncthreads();
  if (warp > 0)
    value += warp_totals[warp - 1];
  if (index < count)
    out[index] = value;
  if (threadIdx.x == blockDim.x - 1)
    block_totals[blockIdx.x] = value;
}
