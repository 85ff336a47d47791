// Device functions for tidal-bind.test: bindable ones (Numba's ABI, structs
// by value, a static inline one) and one of each kind tidal-bind refuses.
struct Pair { int a, b; };

extern "C" __device__ int add(float *result, float x, float y) {
  *result = x + y;
  return 0;
}
extern "C" __device__ int scaled(double *result, const double *values, int index,
                                 unsigned long long count, bool flag);
extern "C" __device__ int first(int *result, Pair pair) {
  *result = pair.a;
  return 0;
}
extern "C" __device__ int by_reference(int *result, int &value);
struct Node { Node *next; int value; };
extern "C" __device__ int node_value(int *result, Node node) { *result = node.value; return 0; }
__device__ Pair swapped(Pair pair) { return {pair.b, pair.a}; }
static inline __device__ int square(int x) { return x * x; }
extern "C" __device__ float plain(float x) { return x; }
extern "C" __device__ int no_result(float x) { return 0; }
__device__ int mangled(int *result, int x) { *result = x; return 0; }
template <typename T> __device__ int generic(T *result, T x) { *result = x; return 0; }
extern "C" __global__ void kernel(float *x) {}
