# tidal.cuda.libdevice from Python: the frontend calls libdevice's own
# functions (__nv_*), with stack slots for the outputs of the tuple-valued
# ones; the NVPTX path links them from libdevice and ptxas accepts the
# result; the cpu target links tidal's host definitions and inlines them.
# Without a libdevice, the NVPTX error names the function and the file.
# RUN: %tidalc %s --kernel kernel --sig 'void(float64[::1], int32[::1])' --emit=markers | FileCheck %s --check-prefix=MARKERS
# RUN: %if libdevice %{ %tidalc %s --kernel kernel --sig 'void(float64[::1], int32[::1])' --emit=ptx --arch sm_80 -o %t.ptx %}
# RUN: %if libdevice %{ FileCheck %s --check-prefix=PTX < %t.ptx %}
# RUN: %if ptxas && libdevice %{ %ptxas -arch=sm_80 %t.ptx -o %t.cubin %}
# RUN: %tidalc %s --kernel kernel --sig 'void(float64[::1], int32[::1])' --emit=llvm --target cpu | FileCheck %s --check-prefix=HOST
# RUN: env TIDAL_LIBDEVICE=none not %tidalc %s --kernel kernel --sig 'void(float64[::1], int32[::1])' --emit=ptx 2>&1 | FileCheck %s --check-prefix=NOLIB

from tidal import cuda
from tidal.cuda import libdevice


@cuda.jit
def kernel(d, n):
    i = cuda.grid(1)
    s, c = libdevice.sincos(d[i])
    fraction, exponent = libdevice.frexp(d[i])
    d[i] = s + c + fraction + libdevice.dadd_rz(d[i], 1.0)
    n[i] = exponent + libdevice.sad(n[i], 3, 1)

# MARKERS-LABEL: define {{.*}}@kernel
# MARKERS-DAG: alloca double
# MARKERS-DAG: alloca i32
# MARKERS-DAG: call void @__nv_sincos(double %{{.*}}, ptr %{{.*}}, ptr %{{.*}})
# MARKERS-DAG: call double @__nv_frexp(double %{{.*}}, ptr %{{.*}})
# MARKERS-DAG: call double @__nv_dadd_rz(double %{{.*}}, double 1.000000e+00)
# MARKERS-DAG: call i32 @__nv_sad(i32 %{{.*}}, i32 3, i32 1)
# MARKERS-DAG: declare void @__nv_sincos(double, ptr, ptr)

# libdevice was linked and inlined: no call of it is left; add.rz is the
# rounding-mode variant's own instruction.
# PTX-NOT: __nv_
# PTX: add.rz.f64

# On the cpu target: sad is inlined (no call); dadd_rz keeps its call (it
# sets the rounding mode, strictfp), to an internal definition.
# HOST-NOT: call {{.*}}@__nv_sad
# HOST: define internal {{.*}}double @__nv_dadd_rz(
# HOST-NOT: declare {{.*}}@__nv_

# NOLIB: tidalc: error: lowering for NVPTX failed: tidal: call of libdevice's '__nv_{{[a-z_]+}}' in function 'kernel'{{.*}}: it needs libdevice from a CUDA toolkit, and none was found (set CUDA_HOME, or TIDAL_LIBDEVICE to the libdevice.10.bc file)
