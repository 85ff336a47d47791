; tidal-lower-host makes llvm.fma.bf16 (cuda.bf16.hfma; fma.rn.bf16 on NVPTX)
; round once on the host: the exact product in float64, the sum made
; round-to-odd from its two-sum error, then one rounding to bfloat16. (A
; float64 fma would round twice where the addend is far below the product.)
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare bfloat @llvm.fma.bf16(bfloat, bfloat, bfloat)

; A device function that no kernel inlines keeps its call: expanded too.
define bfloat @device_fma(bfloat %a, bfloat %b, bfloat %c) {
  %r = call bfloat @llvm.fma.bf16(bfloat %a, bfloat %b, bfloat %c)
  ret bfloat %r
}

; CHECK-LABEL: define bfloat @device_fma(
; CHECK: [[A:%.*]] = fpext bfloat %a to double
; CHECK: [[B:%.*]] = fpext bfloat %b to double
; CHECK: [[P:%.*]] = fmul double [[A]], [[B]]
; CHECK: [[C:%.*]] = fpext bfloat %c to double
; CHECK: [[S:%.*]] = fadd double [[P]], [[C]]
; CHECK: [[PART:%.*]] = fsub double [[S]], [[P]]
; CHECK: [[BITS:%.*]] = bitcast double [[S]] to i64
; CHECK: [[STEP:%.*]] = select i1 {{.*}}, i64 {{.*}}, i64
; CHECK: [[ODD:%.*]] = select i1 {{.*}}, i64 [[STEP]], i64 [[BITS]]
; CHECK: [[D:%.*]] = bitcast i64 [[ODD]] to double
; CHECK: fptrunc double [[D]] to bfloat
; CHECK-NOT: @llvm.fma.bf16(
