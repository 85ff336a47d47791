// out = transpose(in) for a rows x columns float matrix (row-major), through
// a 32 x 32 tile in shared memory so that both the reads and the writes of a
// warp are consecutive; the tile has one padding column so that a column of
// it spans all 32 banks. Launch with 32 x 8 threads a block and
// (ceil(columns / 32), ceil(rows / 32)) blocks.
#include "tidal_cuda.h"

constexpr unsigned Tile = 32;
constexpr unsigned RowsPerPass = 8;

extern "C" __global__ void transpose(const float *in, float *out, unsigned rows, unsigned columns) {
  __shared__ float tile[Tile][Tile + 1];
  unsigned column = blockIdx.x * Tile + threadIdx.x;
  unsigned row = blockIdx.y * Tile + threadIdx.y;
  for (unsigned pass = 0; pass < Tile; pass += RowsPerPass)
    if (column < columns && row + pass < rows)
      tile[threadIdx.y + pass][threadIdx.x] = in[(row + pass) * columns + column];
  __syncthreads();
  // The block's tile lands at (blockIdx.x, blockIdx.y) swapped.
  unsigned out_column = blockIdx.y * Tile + threadIdx.x;
  unsigned out_row = blockIdx.x * Tile + threadIdx.y;
  for (unsigned pass = 0; pass < Tile; pass += RowsPerPass)
    if (out_column < rows && out_row + pass < columns)
      out[(out_row + pass) * rows + out_column] = tile[threadIdx.x][threadIdx.y + pass];
}
