// A CUDA C++ kernel for tidal-at.test: clang compiles it with TidalPasses
// loaded as a pass plugin.
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}
