// A syntax error for tidal-bind.test (included with -include).
extern "C" __device__ int broken(int *r, int x) { return x }
