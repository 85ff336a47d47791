; saxpy through tidal-host for an AVX2 host: after inlining K.thread into the
; block entry, O3 vectorises the inner (x) thread loop; the `i < n` guard
; bounds the loop (tidal-bound-thread-loops), so its loads and stores need no
; mask.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s

; CHECK-NOT: @saxpy.thread
; CHECK-LABEL: define void @__tidal_block_saxpy(
; CHECK-NOT:     @llvm.masked.
; CHECK:         load <8 x float>
; CHECK:         load <8 x float>
; CHECK:         fmul <8 x float>
; CHECK:         fadd <8 x float>
; CHECK:         store <8 x float>
; CHECK-NOT:     @llvm.masked.
; CHECK-NOT: @saxpy.thread
; CHECK-NOT: @tidal.

declare i32 @tidal.tid.x()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ctaid.x()

; out[i] = a * x[i] + y[i] for i < out.shape[0], on C-contiguous arrays: the
; element GEP (rather than i * stride bytes) is what lets the loads be
; consecutive across threads.
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
  %xp = getelementptr float, ptr %x, i64 %i
  %xv = load float, ptr %xp
  %yp = getelementptr float, ptr %y, i64 %i
  %yv = load float, ptr %yp
  %ax = fmul float %a, %xv
  %r = fadd float %ax, %yv
  %op = getelementptr float, ptr %out, i64 %i
  store float %r, ptr %op
  br label %exit
exit:
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @saxpy}
