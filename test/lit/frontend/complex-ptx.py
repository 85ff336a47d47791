# Complex numbers through NVPTX: a complex128 scalar parameter is a 16-byte
# aligned .param, complex64 arrays load both floats of an element, cmath calls
# its device function of tidal/cuda/_cmath.py (in double precision: the
# complex64 argument is widened), which uses the math markers (libdevice), and
# ptxas accepts the result.
# REQUIRES: ptxas, libdevice
# RUN: %tidalc %s --kernel k --sig 'void(complex128, complex64[::1], complex128[::1])' --emit=markers | FileCheck %s --check-prefix=MARKERS
# RUN: %tidalc %s --kernel k --sig 'void(complex128, complex64[::1], complex128[::1])' --emit=ptx --arch sm_80 -o %t.ptx
# RUN: FileCheck %s --check-prefix=PTX < %t.ptx
# RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin

import cmath

from tidal import cuda


@cuda.jit
def k(c, z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.exp(z[i]) / c + abs(z[i])

# MARKERS-LABEL: define internal { double, double } @exp.c128({ double, double } %z)
# MARKERS-DAG: call double @tidal.math.exp.f64(double
# MARKERS-DAG: call double @tidal.math.cos.f64(double
# MARKERS-DAG: call double @tidal.math.sin.f64(double
# MARKERS-LABEL: define void @k({ double, double } %c, ptr %z,
# MARKERS: load { float, float }, ptr %{{.*}}, align 4
# MARKERS: fpext float
# MARKERS: call { double, double } @exp.c128({ double, double }
# MARKERS: call float @tidal.math.hypot.f32(float
# MARKERS: store { double, double }

# PTX: .param .align 8 .b8 k_param_0[16]
# PTX: ld.global.f32 %f{{[0-9]+}}, [%rd[[Z:[0-9]+]]];
# PTX-NEXT: ld.global.f32 %f{{[0-9]+}}, [%rd[[Z]]+4];
