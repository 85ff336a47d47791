# The frontend's IR for saxpy: target-neutral, CUDA only through tidal.* markers,
# arrays flattened (data pointer, shape, byte strides).
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=markers | FileCheck %s
# RUN: %tidalc %s --kernel saxpy --sig 'void(float64, float64[:], float64[:], float64[:])' --emit=markers | FileCheck %s --check-prefix=STRIDED

from tidal import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

# CHECK-LABEL: define void @saxpy(float %a, ptr %x, i64 %x.shape.0, i64 %x.stride.0, ptr %y, i64 %y.shape.0, i64 %y.stride.0, ptr %out, i64 %out.shape.0, i64 %out.stride.0)
# cuda.grid(1) is ctaid.x * ntid.x + tid.x in int64.
# CHECK-DAG: %tid.x = call i32 @tidal.tid.x()
# CHECK-DAG: %ctaid.x = call i32 @tidal.ctaid.x()
# CHECK-DAG: %ntid.x = call i32 @tidal.ntid.x()
# CHECK: %grid.x = add i64
# CHECK: icmp slt i64 %grid.x, %x.shape.0
# C layout: the element address is a typed GEP, so the stride is known.
# CHECK: getelementptr inbounds float, ptr %x
# CHECK: fmul float %a
# CHECK: fadd float
# CHECK: store float
# CHECK-NOT: llvm.nvvm
# CHECK: declare i32 @tidal.tid.x()
# CHECK: !tidal.kernels = !{![[K:[0-9]+]]}
# CHECK: ![[K]] = !{ptr @saxpy}

# Layout A: the address comes from the byte strides.
# STRIDED-LABEL: define void @saxpy(double %a, ptr %x, i64 %x.shape.0, i64 %x.stride.0,
# STRIDED: mul i64 {{.*}}%x.stride.0
# STRIDED: getelementptr i8, ptr %x
# STRIDED: load double
