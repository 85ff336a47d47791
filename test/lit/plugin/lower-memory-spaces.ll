; The memory markers get NVPTX address spaces: static shared arrays are
; addrspace(3) globals (one per call site, aligned as asked), dynamic shared
; memory is one extern addrspace(3) [0 x i8] for the module, local arrays are
; entry-block allocas, constant arrays move to addrspace(4); the PTX has .shared,
; .extern .shared, .local and .const, with ld/st of those spaces.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-memory-spaces -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=80>' %s | llc -march=nvptx64 -mcpu=sm_80 -o %t.sm_80.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare ptr @tidal.shared.array(i64, i64)
declare ptr @tidal.shared.dynamic()
declare i64 @tidal.shared.dynamic.bytes()
declare ptr @tidal.local.array(i64, i64)
declare ptr @tidal.const.array(ptr)
declare i32 @tidal.tid.x()

@table = internal constant [4 x float] [float 1.0, float 2.0, float 3.0, float 4.0], align 4

; CHECK-NOT: @tidal.
; CHECK-DAG: @shared_arrays.shared = internal addrspace(3) global [128 x i8] undef, align 8
; CHECK-DAG: @shared_arrays.shared.1 = internal addrspace(3) global [64 x i8] undef, align 16
; CHECK-DAG: @tidal_dynamic_shared = external addrspace(3) global [0 x i8], align 16
; CHECK-DAG: @table.const = internal unnamed_addr addrspace(4) constant [4 x float] [float 1.000000e+00, float 2.000000e+00, float 3.000000e+00, float 4.000000e+00], align 4
; The original constant has no other user and is gone.
; CHECK-NOT: @table =
; PTX-DAG: .extern .shared .align 16 .b8 tidal_dynamic_shared[];
; PTX-DAG: .const .align 4 .b8 table_$_const[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};

; Two static shared arrays: two globals, cast to generic pointers; each
; thread writes a[t], b[t] and reads its neighbour's a[t^1] + b[t^1].
; CHECK-LABEL: define void @shared_arrays(
; CHECK:         %pa = getelementptr float, ptr addrspacecast (ptr addrspace(3) @shared_arrays.shared to ptr), i32 %t
; CHECK:         %pb = getelementptr float, ptr addrspacecast (ptr addrspace(3) @shared_arrays.shared.1 to ptr), i32 %t
; PTX-LABEL: .entry shared_arrays(
; PTX:         .shared .align 8 .b8 shared_arrays_$_shared[128];
; PTX:         .shared .align 16 .b8 shared_arrays_$_shared_$_1[64];
; PTX-DAG:     mov.u64 %rd{{[0-9]+}}, shared_arrays_$_shared;
; PTX-DAG:     mov.u64 %rd{{[0-9]+}}, shared_arrays_$_shared_$_1;
; PTX:         st.shared.f32
; PTX:         st.shared.f32
; PTX:         ld.shared.f32
; PTX:         ld.shared.f32
define void @shared_arrays(ptr %out, float %x) {
  %a = call ptr @tidal.shared.array(i64 128, i64 8)
  %b = call ptr @tidal.shared.array(i64 64, i64 16)
  %t = call i32 @tidal.tid.x()
  %pa = getelementptr float, ptr %a, i32 %t
  %pb = getelementptr float, ptr %b, i32 %t
  store float %x, ptr %pa
  store float %x, ptr %pb
  %u = xor i32 %t, 1
  %qa = getelementptr float, ptr %a, i32 %u
  %qb = getelementptr float, ptr %b, i32 %u
  %va = load float, ptr %qa
  %vb = load float, ptr %qb
  %s = fadd float %va, %vb
  store float %s, ptr %out
  ret void
}

; Dynamic shared memory: both kernels use the one extern array.
; CHECK-LABEL: define void @dynamic_a(
; CHECK:         getelementptr float, ptr addrspacecast (ptr addrspace(3) @tidal_dynamic_shared to ptr), i32 %t
; CHECK-LABEL: define void @dynamic_b(
; CHECK:         load float, ptr addrspacecast (ptr addrspace(3) @tidal_dynamic_shared to ptr)
; PTX-LABEL: .entry dynamic_a(
; PTX:         st.shared.f32 [%rd{{[0-9]+}}], %f{{[0-9]+}};
; PTX-LABEL: .entry dynamic_b(
; PTX:         ld.shared.f32 %f{{[0-9]+}}, [tidal_dynamic_shared];
define void @dynamic_a(float %x) {
  %d = call ptr @tidal.shared.dynamic()
  %t = call i32 @tidal.tid.x()
  %p = getelementptr float, ptr %d, i32 %t
  store float %x, ptr %p
  ret void
}

define void @dynamic_b(ptr %out) {
  %d = call ptr @tidal.shared.dynamic()
  %v = load float, ptr %d
  store float %v, ptr %out
  ret void
}

; The launch's dynamic shared bytes: the %dynamic_smem_size register.
; CHECK-LABEL: define void @dynamic_bytes(
; CHECK-NEXT:    %dynamic_smem_size = call i32 asm "mov.u32 $0, %dynamic_smem_size;", "=r"()
; CHECK-NEXT:    %[[BYTES:.+]] = zext i32 %dynamic_smem_size to i64
; CHECK-NEXT:    store i64 %[[BYTES]], ptr %out
; PTX-LABEL: .entry dynamic_bytes(
; PTX:         mov.u32 %r{{[0-9]+}}, %dynamic_smem_size;
define void @dynamic_bytes(ptr %out) {
  %n = call i64 @tidal.shared.dynamic.bytes()
  store i64 %n, ptr %out
  ret void
}

; A local array declared in a later block still becomes an entry-block
; alloca with the alignment asked for (it is the thread's, not the block's).
; CHECK-LABEL: define void @local_array(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %buffer = alloca [40 x i8], align 8
; CHECK-NEXT:    br label %body
; CHECK:       body:
; CHECK-NEXT:    %slot = getelementptr double, ptr %buffer, i32 %i
; PTX-LABEL: .entry local_array(
; PTX:         .local .align 8 .b8 __local_depot{{[0-9]+}}[40];
; PTX:         st.local.f64
; PTX:         ld.local.f64
define void @local_array(ptr %out, i32 %i, double %x) {
entry:
  br label %body
body:
  %buffer = call ptr @tidal.local.array(i64 40, i64 8)
  %slot = getelementptr double, ptr %buffer, i32 %i
  store double %x, ptr %slot
  %first = getelementptr double, ptr %buffer, i32 0
  %v = load double, ptr %first
  store double %v, ptr %out
  ret void
}

; A constant array: @table copied into the constant space, read with ld.const.
; CHECK-LABEL: define void @const_array(
; CHECK:         getelementptr float, ptr addrspacecast (ptr addrspace(4) @table.const to ptr), i32 %i
; PTX-LABEL: .entry const_array(
; PTX:         ld.const.f32
define void @const_array(ptr %out, i32 %i) {
  %t = call ptr @tidal.const.array(ptr @table)
  %p = getelementptr float, ptr %t, i32 %i
  %v = load float, ptr %p
  store float %v, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3, !4, !5}
!0 = !{ptr @shared_arrays}
!1 = !{ptr @dynamic_a}
!2 = !{ptr @dynamic_b}
!3 = !{ptr @local_array}
!4 = !{ptr @const_array}
!5 = !{ptr @dynamic_bytes}
