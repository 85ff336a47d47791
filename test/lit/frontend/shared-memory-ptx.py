# The 16x16-tiled matmul and the shared-memory reduction from Python to PTX:
# shared arrays in .shared, bar.sync, global loads; ptxas -v reports no
# spills and no stack frame.
# RUN: %tidalc %S/Inputs/shared_kernels.py --kernel matmul --sig 'void(float32[:, ::1], float32[:, ::1], float32[:, ::1])' --emit=ptx --arch sm_80 | FileCheck %s --check-prefix=MATMUL
# RUN: %tidalc %S/Inputs/shared_kernels.py --kernel reduce --sig 'void(float32[::1], float32[::1])' --emit=ptx --arch sm_80 | FileCheck %s --check-prefix=REDUCE
# RUN: %if ptxas %{ %tidalc %S/Inputs/shared_kernels.py --kernel matmul --sig 'void(float32[:, ::1], float32[:, ::1], float32[:, ::1])' --emit=ptx --arch sm_80 -o %t.matmul.ptx %}
# RUN: %if ptxas %{ %ptxas -v -arch=sm_80 %t.matmul.ptx -o %t.matmul.cubin 2>&1 | FileCheck %s --check-prefix=RESOURCES %}
# RUN: %if ptxas %{ %tidalc %S/Inputs/shared_kernels.py --kernel reduce --sig 'void(float32[::1], float32[::1])' --emit=ptx --arch sm_90 -o %t.reduce.ptx %}
# RUN: %if ptxas %{ %ptxas -v -arch=sm_90 %t.reduce.ptx -o %t.reduce.cubin 2>&1 | FileCheck %s --check-prefix=RESOURCES %}

# One .shared array per cuda.shared.array call site (LLVM demotes them into
# the kernel that uses them).
# MATMUL: .visible .entry matmul(
# MATMUL-DAG: .shared .align 4 .b8 matmul{{.*}}shared[1024];
# MATMUL-DAG: .shared .align 4 .b8 matmul{{.*}}shared{{[0-9]+}}[1024];
# MATMUL-DAG: ld.global.f32
# MATMUL-DAG: st.shared.f32
# MATMUL-DAG: bar.sync 0;
# MATMUL-DAG: ld.shared.f32
# MATMUL: st.global.f32

# REDUCE: .visible .entry reduce(
# REDUCE-DAG: .shared .align 4 .b8 reduce{{.*}}shared[1024];
# REDUCE-DAG: ld.global.f32
# REDUCE-DAG: st.shared.f32
# REDUCE-DAG: bar.sync 0;
# REDUCE-DAG: ld.shared.f32
# REDUCE: st.global.f32

# RESOURCES: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
