# Every math function of the language, from Python to PTX through
# libdevice's __nv_* functions where LLVM has no native lowering; ptxas
# accepts the result. Without a libdevice, the error names the first function that
# needs one and says where libdevice is looked for.
# RUN: %if libdevice %{ %tidalc %s --kernel everything --sig 'void(float32[::1], float64[::1])' --emit=ptx --arch sm_80 -o %t.ptx %}
# RUN: %if libdevice %{ FileCheck %s --check-prefix=PTX < %t.ptx %}
# RUN: %if ptxas && libdevice %{ %ptxas -arch=sm_80 %t.ptx -o %t.cubin %}
# RUN: env TIDAL_LIBDEVICE=none not %tidalc %s --kernel everything --sig 'void(float32[::1], float64[::1])' --emit=ptx 2>&1 | FileCheck %s --check-prefix=NOLIB
# RUN: env TIDAL_LIBDEVICE=none %tidalc %s --kernel native --sig 'void(float64[::1])' --emit=ptx | FileCheck %s --check-prefix=NATIVE

import math

from tidal import cuda


@cuda.jit
def everything(f, d):
    i = cuda.grid(1)
    x = f[i]
    y = d[i]
    f[i] = (math.sin(x) + math.cos(x) + math.tan(x) + math.asin(x) + math.acos(x)
            + math.atan(x) + math.atan2(x, x) + math.sinh(x) + math.cosh(x)
            + math.tanh(x) + math.asinh(x) + math.acosh(x) + math.atanh(x)
            + math.exp(x) + math.expm1(x) + math.log(x) + math.log2(x)
            + math.log10(x) + math.log1p(x) + math.sqrt(x) + math.pow(x, x)
            + math.fabs(x) + math.floor(x) + math.ceil(x) + math.trunc(x)
            + math.copysign(x, x) + math.fmod(x, x) + math.hypot(x, x)
            + math.erf(x) + math.erfc(x) + math.gamma(x) + math.lgamma(x)
            + math.isnan(x) + math.isinf(x) + math.isfinite(x)
            + math.radians(x) + math.degrees(x) + math.pi + math.e + x ** 2.5)
    d[i] = math.sin(y) + math.exp(y) + math.lgamma(y) + math.log(y, 10.0) + math.inf * 0

# libdevice was linked (and inlined): its internal helpers are left; sqrt
# is LLVM's own instruction.
# PTX-DAG: .func __internal_trig_reduction_slowpathd
# PTX-DAG: __internal_accurate_pow
# PTX-DAG: sqrt.rn.f32

# NOLIB: tidalc: error: lowering for NVPTX failed: tidal: marker 'tidal.math.sin.f32' in function 'everything' at {{.*}}math-libdevice.py:21:13: this math function needs libdevice from a CUDA toolkit, and none was found (set CUDA_HOME, or TIDAL_LIBDEVICE to the libdevice.10.bc file)


@cuda.jit
def native(d):
    i = cuda.grid(1)
    d[i] = math.sqrt(d[i]) + math.fabs(d[i]) + math.floor(d[i]) + math.copysign(1.0, d[i])

# NATIVE: sqrt.rn.f64
# NATIVE: abs.f64
# NATIVE: cvt.rmi.f64.f64
