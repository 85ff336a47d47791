; fastmath=True ("tidal.fast-functions"=1, with ftz=1): the float32 math
; functions that libdevice has a fast variant of call it (__nv_fast_cosf,
; ...), as Numba's fastmath does; the PTX then has the approximate
; instructions (sin/cos/lg2/ex2 .approx.ftz.f32). float64 functions and
; float32 ones without a fast variant (asin) keep the precise ones.
; REQUIRES: libdevice
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-lower-math<libdevice=%libdevice>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<libdevice=%libdevice>' %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.ptx -o %t.cubin %}

declare float @tidal.math.sin.f32(float)
declare float @tidal.math.cos.f32(float)
declare float @tidal.math.tan.f32(float)
declare float @tidal.math.exp.f32(float)
declare float @tidal.math.log.f32(float)
declare float @tidal.math.log2.f32(float)
declare float @tidal.math.log10.f32(float)
declare float @tidal.math.pow.f32(float, float)
declare float @tidal.math.asin.f32(float)
declare double @tidal.math.cos.f64(double)

; CHECK-LABEL: define void @fast(
; CHECK:         %sin = call float @__nv_fast_sinf(float %x)
; CHECK:         %cos = call float @__nv_fast_cosf(float %x)
; CHECK:         %tan = call float @__nv_fast_tanf(float %x)
; CHECK:         %exp = call float @__nv_fast_expf(float %x)
; CHECK:         %log = call float @__nv_fast_logf(float %x)
; CHECK:         %log2 = call float @__nv_fast_log2f(float %x)
; CHECK:         %log10 = call float @__nv_fast_log10f(float %x)
; CHECK:         %pow = call float @__nv_fast_powf(float %x, float %x)
; CHECK:         %asin = call float @__nv_asinf(float %x)
; CHECK:         %cosd = call double @__nv_cos(double %y)
; PTX-LABEL: .entry fast(
; PTX-DAG:     sin.approx.ftz.f32
; PTX-DAG:     cos.approx.ftz.f32
; PTX-DAG:     lg2.approx.ftz.f32
; PTX-DAG:     ex2.approx.ftz.f32
define void @fast(ptr %out, float %x, double %y) {
  %sin = call float @tidal.math.sin.f32(float %x)
  %cos = call float @tidal.math.cos.f32(float %x)
  %tan = call float @tidal.math.tan.f32(float %x)
  %exp = call float @tidal.math.exp.f32(float %x)
  %log = call float @tidal.math.log.f32(float %x)
  %log2 = call float @tidal.math.log2.f32(float %x)
  %log10 = call float @tidal.math.log10.f32(float %x)
  %pow = call float @tidal.math.pow.f32(float %x, float %x)
  %asin = call float @tidal.math.asin.f32(float %x)
  %cosd = call double @tidal.math.cos.f64(double %y)
  %a = fadd float %sin, %cos
  %b = fadd float %a, %tan
  %c = fadd float %b, %exp
  %d = fadd float %c, %log
  %e = fadd float %d, %log2
  %f = fadd float %e, %log10
  %g = fadd float %f, %pow
  %h = fadd float %g, %asin
  store float %h, ptr %out
  %p = getelementptr double, ptr %out, i64 1
  store double %cosd, ptr %p
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @fast}
!llvm.module.flags = !{!1, !2, !3, !4}
!1 = !{i32 4, !"tidal.ftz", i32 1}
!2 = !{i32 4, !"tidal.prec-div", i32 0}
!3 = !{i32 4, !"tidal.prec-sqrt", i32 0}
!4 = !{i32 4, !"tidal.fast-functions", i32 1}
