# saxpy from Python to PTX in-process (tidal-nvptx, then the NVPTX backend),
# and the IR in between.
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=ptx | FileCheck %s --check-prefixes=PTX,SM75
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=ptx --arch sm_90 | FileCheck %s --check-prefixes=PTX,SM90
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=llvm | FileCheck %s --check-prefix=LLVM

from tidal import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

# SM75: .target sm_75
# SM90: .target sm_90
# PTX: .address_size 64
# PTX: .visible .entry saxpy(
# PTX-DAG: mov.u32 %r{{[0-9]+}}, %tid.x;
# PTX-DAG: mov.u32 %r{{[0-9]+}}, %ctaid.x;
# PTX-DAG: mov.u32 %r{{[0-9]+}}, %ntid.x;
# PTX: ld.global.f32
# PTX: ld.global.f32
# PTX: st.global.f32
# PTX: ret;

# LLVM: target triple = "nvptx64-nvidia-cuda"
# LLVM-LABEL: define void @saxpy(
# LLVM-DAG: call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.tid.x()
# LLVM-DAG: call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
# LLVM-DAG: call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
# LLVM: load float, ptr addrspace(1)
# LLVM: store float {{.*}}, ptr addrspace(1)
# LLVM-NOT: @tidal.
# LLVM: !nvvm.annotations = !{![[A:[0-9]+]]}
# LLVM: ![[A]] = !{ptr @saxpy, !"kernel", i32 1}
