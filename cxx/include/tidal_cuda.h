// tidal's prelude for CUDA C++: what kernels expect from cuda_runtime.h,
// for clang without a CUDA toolkit (-nocudainc): the execution-space
// keywords as clang's attributes, the built-in variables (clang's own
// __clang_cuda_builtin_vars.h, in clang's resource directory), and device
// functions written on clang's NVVM builtins. The in-process compiler
// (cxx/CudaCompiler.cpp) includes it first; with plain clang, pass
// `-I cxx/include` and include it. tidal-raise-nvvm raises what these
// become (docs/cpp.md).
#ifndef TIDAL_CUDA_H
#define TIDAL_CUDA_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#include <__clang_cuda_builtin_vars.h>

// The standard typedefs that CUDA C++ (nvcc, NVRTC) has without an
// include, as the compiler's own types (the same as <stdint.h>'s and
// <stddef.h>'s, which may still be included).
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;

#define TIDAL_DEVICE static inline __attribute__((device, always_inline))

// Barriers (__syncthreads is a clang builtin already).
TIDAL_DEVICE void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
TIDAL_DEVICE void __threadfence() { __nvvm_membar_gl(); }
// Barriers that also count, or and, or or a predicate over the block.
TIDAL_DEVICE int __syncthreads_count(int predicate) { return __nvvm_bar0_popc(predicate); }
TIDAL_DEVICE int __syncthreads_and(int predicate) { return __nvvm_bar0_and(predicate); }
TIDAL_DEVICE int __syncthreads_or(int predicate) { return __nvvm_bar0_or(predicate); }

// Atomics: each returns the old value.
TIDAL_DEVICE int atomicAdd(int *address, int value) { return __nvvm_atom_add_gen_i(address, value); }
TIDAL_DEVICE unsigned atomicAdd(unsigned *address, unsigned value) {
  return __nvvm_atom_add_gen_i(reinterpret_cast<int *>(address), static_cast<int>(value));
}
TIDAL_DEVICE float atomicAdd(float *address, float value) { return __nvvm_atom_add_gen_f(address, value); }
TIDAL_DEVICE int atomicMax(int *address, int value) { return __nvvm_atom_max_gen_i(address, value); }
TIDAL_DEVICE unsigned atomicInc(unsigned *address, unsigned limit) {
  return __nvvm_atom_inc_gen_ui(address, limit);
}
TIDAL_DEVICE int atomicCAS(int *address, int compare, int value) {
  return __nvvm_atom_cas_gen_i(address, compare, value);
}
// 64-bit atomics.
TIDAL_DEVICE unsigned long long atomicAdd(unsigned long long *address, unsigned long long value) {
  return __nvvm_atom_add_gen_ll(reinterpret_cast<long long *>(address), static_cast<long long>(value));
}
#if __CUDA_ARCH__ >= 600 // the double add is sm_60's
TIDAL_DEVICE double atomicAdd(double *address, double value) { return __nvvm_atom_add_gen_d(address, value); }
#endif
TIDAL_DEVICE long long atomicMax(long long *address, long long value) {
  return __nvvm_atom_max_gen_ll(address, value);
}
TIDAL_DEVICE unsigned long long atomicMax(unsigned long long *address, unsigned long long value) {
  return __nvvm_atom_max_gen_ull(address, value);
}
TIDAL_DEVICE long long atomicMin(long long *address, long long value) {
  return __nvvm_atom_min_gen_ll(address, value);
}
TIDAL_DEVICE unsigned long long atomicMin(unsigned long long *address, unsigned long long value) {
  return __nvvm_atom_min_gen_ull(address, value);
}
TIDAL_DEVICE unsigned long long atomicExch(unsigned long long *address, unsigned long long value) {
  return __nvvm_atom_xchg_gen_ll(reinterpret_cast<long long *>(address), static_cast<long long>(value));
}
TIDAL_DEVICE unsigned long long atomicCAS(unsigned long long *address, unsigned long long compare,
                                          unsigned long long value) {
  return __nvvm_atom_cas_gen_ll(reinterpret_cast<long long *>(address), static_cast<long long>(compare),
                                static_cast<long long>(value));
}

// Whole-warp shuffles (width 32): the clamp operand is 31, or 0 for up.
TIDAL_DEVICE int __shfl_sync(unsigned mask, int value, int lane) {
  return __nvvm_shfl_sync_idx_i32(mask, value, lane, 31);
}
TIDAL_DEVICE float __shfl_sync(unsigned mask, float value, int lane) {
  return __nvvm_shfl_sync_idx_f32(mask, value, lane, 31);
}
TIDAL_DEVICE int __shfl_up_sync(unsigned mask, int value, unsigned delta) {
  return __nvvm_shfl_sync_up_i32(mask, value, delta, 0);
}
TIDAL_DEVICE float __shfl_up_sync(unsigned mask, float value, unsigned delta) {
  return __nvvm_shfl_sync_up_f32(mask, value, delta, 0);
}
TIDAL_DEVICE int __shfl_down_sync(unsigned mask, int value, unsigned delta) {
  return __nvvm_shfl_sync_down_i32(mask, value, delta, 31);
}
TIDAL_DEVICE float __shfl_down_sync(unsigned mask, float value, unsigned delta) {
  return __nvvm_shfl_sync_down_f32(mask, value, delta, 31);
}
TIDAL_DEVICE int __shfl_xor_sync(unsigned mask, int value, int lane_mask) {
  return __nvvm_shfl_sync_bfly_i32(mask, value, lane_mask, 31);
}
TIDAL_DEVICE float __shfl_xor_sync(unsigned mask, float value, int lane_mask) {
  return __nvvm_shfl_sync_bfly_f32(mask, value, lane_mask, 31);
}
TIDAL_DEVICE unsigned __ballot_sync(unsigned mask, int predicate) {
  return __nvvm_vote_ballot_sync(mask, predicate != 0);
}

#include "tidal_cuda_math.h"

extern "C" __device__ int printf(const char *format, ...);

#endif
