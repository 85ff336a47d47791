"""numba-cuda's numba.cuda.np package, as far as kernels use it: numpy_support's
carray and farray."""
