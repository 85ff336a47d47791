# cuda.grid(2), cuda.gridsize(2) and the index registers as markers, and the
# C-order address of a 2-D element.
# RUN: %tidalc %s --kernel fill --sig 'void(float32[:, ::1])' --emit=markers | FileCheck %s
# RUN: %tidalc %s --kernel fill --sig 'void(float32[:, ::1])' --emit=llvm | FileCheck %s --check-prefix=NVPTX

from tidal import cuda


@cuda.jit
def fill(out):
    x, y = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    if x < out.shape[0] and y < out.shape[1]:
        out[x, y] = sx * sy + cuda.threadIdx.z + cuda.blockIdx.z + cuda.blockDim.z + cuda.gridDim.z

# CHECK-LABEL: define void @fill(ptr %out, i64 %out.shape.0, i64 %out.shape.1, i64 %out.stride.0, i64 %out.stride.1)
# CHECK-DAG: call i32 @tidal.tid.x()
# CHECK-DAG: call i32 @tidal.tid.y()
# CHECK-DAG: call i32 @tidal.ctaid.y()
# CHECK-DAG: call i32 @tidal.ntid.y()
# CHECK-DAG: call i32 @tidal.nctaid.x()
# CHECK-DAG: call i32 @tidal.nctaid.y()
# CHECK-DAG: call i32 @tidal.tid.z()
# CHECK-DAG: call i32 @tidal.ctaid.z()
# CHECK-DAG: call i32 @tidal.ntid.z()
# CHECK-DAG: call i32 @tidal.nctaid.z()
# Row-major: (x * shape1 + y) elements from the data pointer.
# CHECK: %[[ROW:[0-9]+]] = mul i64 %{{[0-9]+}}, %out.shape.1
# CHECK: add i64 %[[ROW]]
# CHECK: getelementptr inbounds float, ptr %out

# NVPTX-DAG: @llvm.nvvm.read.ptx.sreg.tid.y()
# NVPTX-DAG: @llvm.nvvm.read.ptx.sreg.nctaid.z()
# NVPTX-NOT: @tidal.
