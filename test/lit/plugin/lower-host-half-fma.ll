; tidal-lower-host makes llvm.fma.f16 (cuda.fp16.hfma; fma.rn.f16 on NVPTX)
; one float64 fma rounded once to half, in kernels and device functions alike:
; x86 without AVX512-FP16 would compute it in float and round twice.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare half @llvm.fma.f16(half, half, half)

; A device function that no kernel inlines keeps its call: expanded too.
define half @device_fma(half %a, half %b, half %c) {
  %r = call half @llvm.fma.f16(half %a, half %b, half %c)
  ret half %r
}

; CHECK-LABEL: define half @device_fma(
; CHECK: [[A:%.*]] = fpext half %a to double
; CHECK: [[B:%.*]] = fpext half %b to double
; CHECK: [[C:%.*]] = fpext half %c to double
; CHECK: [[WIDE:%.*]] = call double @llvm.fma.f64(double [[A]], double [[B]], double [[C]])
; CHECK: fptrunc double [[WIDE]] to half
; CHECK-NOT: @llvm.fma.f16(
