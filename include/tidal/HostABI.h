// The calling convention between host-lowered kernels (tidal-lower-host) and
// the cpu runtime. Plain C so that hand-written IR and C++ agree on it; the
// plugin builds the same struct type in IR (see docs/cpu-target.md).
#ifndef TIDAL_HOSTABI_H
#define TIDAL_HOSTABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// One per block being run; the runtime fills it before calling the block
// function. Field order is part of the ABI: the IR reads fields by index.
//   field 0: blockDim  (x, y, z)   -> tidal.ntid.*
//   field 1: gridDim   (x, y, z)   -> tidal.nctaid.*
//   field 2: blockIdx  (x, y, z)   -> tidal.ctaid.*
//   field 3: reserved (padding, zero)
//   field 4: dynamic shared memory of this block (sized at launch)
//   field 5: its size in bytes
typedef struct TidalBlockContext {
  uint32_t block_dim[3];
  uint32_t grid_dim[3];
  uint32_t block_idx[3];
  uint32_t reserved;
  void *dynamic_shared;
  uint64_t dynamic_shared_bytes;
} TidalBlockContext;

// The entry that tidal-lower-host creates for each kernel K, named
// TIDAL_BLOCK_PREFIX "K". It runs every thread of one block.
// `params` is laid out as cuLaunchKernel's kernelParams: params[i] points at
// the value of the i-th (flattened) kernel parameter.
typedef void (*TidalBlockFunction)(void **params, TidalBlockContext *ctx);

#define TIDAL_BLOCK_PREFIX "__tidal_block_"

// CUDA's launch limits, which the cpu runtime enforces as a GPU would, so
// that the host lowering may tell LLVM the ranges of the context fields.
#define TIDAL_MAX_THREADS_PER_BLOCK 1024u
#define TIDAL_MAX_BLOCK_DIM_X 1024u
#define TIDAL_MAX_BLOCK_DIM_Y 1024u
#define TIDAL_MAX_BLOCK_DIM_Z 64u
#define TIDAL_MAX_GRID_DIM_X 2147483647u
#define TIDAL_MAX_GRID_DIM_Y 65535u
#define TIDAL_MAX_GRID_DIM_Z 65535u

#ifdef __cplusplus
}
#endif

#endif
