// Device functions that Python kernels call (examples/cuda_cpp/call_functions.py,
// docs/cpp.md, "Calling CUDA C++ from Python kernels"), both ways:
// Numba's cuda.declare_device with a signature, and tidal's cuda.include,
// which binds them from their C++ types. `tidal-bind functions.cu` prints
// the declarations of each.
#include "tidal_cuda.h"

// Numba's ABI: extern "C", an int status, the result through the first
// parameter.
extern "C" __device__ int mul_f32(float *result, float x, float y) {
  *result = x * y;
  return 0;
}

// The C ABI: a plain function (declare_device(..., abi='c')).
extern "C" __device__ float axpy(float a, float x, float y) { return a * x + y; }

// C++ functions: overloads, chosen by the argument types at the call, in a
// namespace (lib.geometry.norm in Python).
namespace geometry {
__device__ float norm(float x, float y) { return sqrtf(x * x + y * y); }
__device__ double norm(double x, double y) { return sqrt(x * x + y * y); }

// Pointers take arrays: the address of their first element.
__device__ float dot(const float *a, const float *b, int count) {
  float sum = 0.0f;
  for (int i = 0; i < count; ++i)
    sum += a[i] * b[i];
  return sum;
}
} // namespace geometry

// Writes through a pointer; no result.
__device__ void clamp(float *values, int count, float low, float high) {
  for (int i = 0; i < count; ++i)
    values[i] = fminf(fmaxf(values[i], low), high);
}

// Structs by value take and give records of the same layout (copies).
struct Pair {
  int first, second;
};
__device__ int first_of(Pair pair) { return pair.first; }
__device__ Pair make_pair(int first, int second) { return {first, second}; }

// A reference: tidal cannot bind it, and says so when it is called.
__device__ void swap_ints(int &a, int &b) {
  int t = a;
  a = b;
  b = t;
}

// A pointer to a struct of numbers takes a record (or a record array) of
// the same layout: NumPy's dtype([('x', 'f4'), ('y', 'f4'), ('id', 'i4')]).
struct Particle {
  float x, y;
  int id;
};
__device__ void move(Particle *particle, float dx, float dy) {
  particle->x += dx;
  particle->y += dy;
}
__device__ Particle moved(Particle particle, float dx, float dy) {
  particle.x += dx;
  particle.y += dy;
  return particle;
}
__device__ int largest_id(const Particle *particles, int count) {
  int largest = particles[0].id;
  for (int i = 1; i < count; ++i)
    largest = max(largest, particles[i].id);
  return largest;
}
