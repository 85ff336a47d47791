; The PTX of tidal-nvptx + llc-19 is accepted by ptxas for every SM we
; target (CUDA 13's ptxas starts at sm_75).
; REQUIRES: ptxas
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=75>' %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: %ptxas -v -arch=sm_75 %t.sm_75.ptx -o %t.sm_75.cubin 2>&1 | FileCheck %s --check-prefix=SM75
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=80>' %s | llc -march=nvptx64 -mcpu=sm_80 -o %t.sm_80.ptx
; RUN: %ptxas -v -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 | FileCheck %s --check-prefix=SM80
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %ptxas -v -arch=sm_90 %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 | FileCheck %s --check-prefix=SM90

; SM75: Compiling entry function 'saxpy' for 'sm_75'
; SM80: Compiling entry function 'saxpy' for 'sm_80'
; SM90: Compiling entry function 'saxpy' for 'sm_90'

declare i32 @tidal.tid.x()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ctaid.x()

; out[i] = a * x[i] + y[i] for i < out.shape[0]
define void @saxpy(ptr %out, i64 %out.shape0, i64 %out.stride0, float %a,
                   ptr %x, i64 %x.shape0, i64 %x.stride0,
                   ptr %y, i64 %y.shape0, i64 %y.stride0) {
entry:
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %tid64 = sext i32 %tid to i64
  %bid64 = sext i32 %bid to i64
  %bdim64 = sext i32 %bdim to i64
  %base = mul i64 %bid64, %bdim64
  %i = add i64 %base, %tid64
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
