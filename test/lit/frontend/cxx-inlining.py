# Cross-language inlining: a Python kernel calling CUDA C++ device
# functions (Numba's declare_device and tidal's cuda.include) gets the C++
# linked into its module before O3 (python/src/ForeignLinking.cpp), so the
# lowered IR holds the C++ bodies inlined, not calls: the fmul of mul_f32,
# the sqrt of geometry::norm(double, double), and no function of the .cu.
# RUN: env PYTHONPATH=%pythonpath TIDAL_TARGET=cpu %python %s %S/../../../examples/cuda_cpp/functions.cu | FileCheck %s

import sys

import numpy as np

from tidal import cuda

FUNCTIONS = sys.argv[1]
mul = cuda.declare_device("mul_f32", "float32(float32, float32)", link=[FUNCTIONS])
lib = cuda.include(FUNCTIONS)


@cuda.jit
def calls_cxx(x, y, out, out64):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = mul(x[i], y[i])
        out64[i] = lib.geometry.norm(np.float64(x[i]), np.float64(y[i]))


calls_cxx.compile("void(float32[::1], float32[::1], float32[::1], float64[::1])")
print(calls_cxx.inspect_llvm("void(float32[::1], float32[::1], float32[::1], float64[::1])"))

# CHECK-LABEL: define {{.*}}void @calls_cxx(
# CHECK-NOT:   call {{.*}}@mul_f32
# CHECK-NOT:   call {{.*}}@_ZN8geometry4normEdd
# CHECK:       fmul {{.*}}float
# CHECK:       call {{.*}}double @llvm.sqrt.f64(
# CHECK:       ret void
# CHECK-NOT:   define {{.*}}@mul_f32
# CHECK-NOT:   define {{.*}}@_ZN8geometry4normEdd
