// CUDA C++ for foreign-metadata.py: structs by value, one with natural
// alignment and one packed (a field off its alignment).
#include "tidal_cuda.h"

struct Pair {
  int first, second;
};
struct __attribute__((packed)) Tagged {
  char tag;
  int value;
};
__device__ Pair make_pair(int first, int second) { return {first, second}; }
__device__ int first_of(Pair pair) { return pair.first; }
__device__ int value_of(Tagged tagged) { return tagged.value + tagged.tag; }
extern "C" __device__ int scale(int *result, int x) {
  *result = 3 * x;
  return 0;
}
