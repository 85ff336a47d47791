// CUDA's math API from tidal's prelude (cxx/include/tidal_cuda_math.h):
// functions with a math marker (sinf, sqrt), libdevice functions without
// one (__saturatef, erfinvf, cospi, normcdf, __popc, min), 64-bit atomics
// and __syncthreads_count. raise-nvvm-libdevice*.test compile it.
extern "C" __global__ void k(float *f, double *d, unsigned long long *u, int *c) {
  int i = threadIdx.x;
  f[i] = sinf(f[i]) + sqrt(f[i]) + __saturatef(f[i]) + erfinvf(0.5f) + __expf(1.0f);
  d[i] = sqrt(d[i]) + cospi(d[i]) + normcdf(d[i]);
  atomicAdd(u, 1ull);
  atomicAdd(d, 1.0);
  atomicMax(u + 1, (unsigned long long)i);
  c[0] = __syncthreads_count(i & 1);
  c[1] = __popc(i) + min(i, 3);
}
