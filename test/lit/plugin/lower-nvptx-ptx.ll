; saxpy in marker IR through tidal-nvptx and llc-19: a PTX .entry reading the
; special registers and accessing the arrays with ld.global/st.global.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %s --check-prefixes=CHECK,SM75
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 | FileCheck %s --check-prefixes=CHECK,SM90

; SM75: .target sm_75
; SM90: .target sm_90
; CHECK: .address_size 64

; The device function is inlined, internalized and gone: only the kernel.
; CHECK-NOT: .func
; CHECK-LABEL: .visible .entry saxpy(
; CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %tid.x;
; CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %ctaid.x;
; CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %ntid.x;
; CHECK:         ld.global.f32
; CHECK:         ld.global.f32
; CHECK:         st.global.f32
; CHECK:         ret;
; CHECK-NOT: .func

declare i32 @tidal.tid.x()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ctaid.x()

; cuda.grid(1)
define i64 @grid_1d() {
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %tid64 = sext i32 %tid to i64
  %bid64 = sext i32 %bid to i64
  %bdim64 = sext i32 %bdim to i64
  %base = mul i64 %bid64, %bdim64
  %i = add i64 %base, %tid64
  ret i64 %i
}

; out[i] = a * x[i] + y[i] for i < out.shape[0] (arrays flattened: data,
; shape, strides in bytes).
define void @saxpy(ptr %out, i64 %out.shape0, i64 %out.stride0, float %a,
                   ptr %x, i64 %x.shape0, i64 %x.stride0,
                   ptr %y, i64 %y.shape0, i64 %y.stride0) {
entry:
  %i = call i64 @grid_1d()
  %inbounds = icmp slt i64 %i, %out.shape0
  br i1 %inbounds, label %body, label %exit
body:
  %xo = mul i64 %i, %x.stride0
  %xp = getelementptr i8, ptr %x, i64 %xo
  %xv = load float, ptr %xp
  %yo = mul i64 %i, %y.stride0
  %yp = getelementptr i8, ptr %y, i64 %yo
  %yv = load float, ptr %yp
  %ax = fmul float %a, %xv
  %r = fadd float %ax, %yv
  %oo = mul i64 %i, %out.stride0
  %op = getelementptr i8, ptr %out, i64 %oo
  store float %r, ptr %op
  br label %exit
exit:
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @saxpy}
