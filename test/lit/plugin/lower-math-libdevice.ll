; A kernel using every math function, for f32 and f64, compiled with
; libdevice: __nv_<fn>f / __nv_<fn> linked (only what is used), internal,
; __nvvm_reflect resolved, and ptxas accepts the PTX for sm_75/80/90. The
; functions NVPTX has instructions for stay LLVM intrinsics.
; REQUIRES: libdevice
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-lower-math<libdevice=%libdevice>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<libdevice=%libdevice>' %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=80>' %s | llc -march=nvptx64 -mcpu=sm_80 -o %t.sm_80.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90;ftz>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare float @tidal.math.sin.f32(float)
declare float @tidal.math.cos.f32(float)
declare float @tidal.math.tan.f32(float)
declare float @tidal.math.asin.f32(float)
declare float @tidal.math.acos.f32(float)
declare float @tidal.math.atan.f32(float)
declare float @tidal.math.sinh.f32(float)
declare float @tidal.math.cosh.f32(float)
declare float @tidal.math.tanh.f32(float)
declare float @tidal.math.asinh.f32(float)
declare float @tidal.math.acosh.f32(float)
declare float @tidal.math.atanh.f32(float)
declare float @tidal.math.exp.f32(float)
declare float @tidal.math.exp2.f32(float)
declare float @tidal.math.expm1.f32(float)
declare float @tidal.math.log.f32(float)
declare float @tidal.math.log2.f32(float)
declare float @tidal.math.log10.f32(float)
declare float @tidal.math.log1p.f32(float)
declare float @tidal.math.sqrt.f32(float)
declare float @tidal.math.rsqrt.f32(float)
declare float @tidal.math.cbrt.f32(float)
declare float @tidal.math.fabs.f32(float)
declare float @tidal.math.floor.f32(float)
declare float @tidal.math.ceil.f32(float)
declare float @tidal.math.trunc.f32(float)
declare float @tidal.math.round.f32(float)
declare float @tidal.math.erf.f32(float)
declare float @tidal.math.erfc.f32(float)
declare float @tidal.math.tgamma.f32(float)
declare float @tidal.math.lgamma.f32(float)
declare float @tidal.math.atan2.f32(float, float)
declare float @tidal.math.pow.f32(float, float)
declare float @tidal.math.copysign.f32(float, float)
declare float @tidal.math.fmod.f32(float, float)
declare float @tidal.math.hypot.f32(float, float)
declare float @tidal.math.fmin.f32(float, float)
declare float @tidal.math.fmax.f32(float, float)
declare double @tidal.math.sin.f64(double)
declare double @tidal.math.cos.f64(double)
declare double @tidal.math.tan.f64(double)
declare double @tidal.math.asin.f64(double)
declare double @tidal.math.acos.f64(double)
declare double @tidal.math.atan.f64(double)
declare double @tidal.math.sinh.f64(double)
declare double @tidal.math.cosh.f64(double)
declare double @tidal.math.tanh.f64(double)
declare double @tidal.math.asinh.f64(double)
declare double @tidal.math.acosh.f64(double)
declare double @tidal.math.atanh.f64(double)
declare double @tidal.math.exp.f64(double)
declare double @tidal.math.exp2.f64(double)
declare double @tidal.math.expm1.f64(double)
declare double @tidal.math.log.f64(double)
declare double @tidal.math.log2.f64(double)
declare double @tidal.math.log10.f64(double)
declare double @tidal.math.log1p.f64(double)
declare double @tidal.math.sqrt.f64(double)
declare double @tidal.math.rsqrt.f64(double)
declare double @tidal.math.cbrt.f64(double)
declare double @tidal.math.fabs.f64(double)
declare double @tidal.math.floor.f64(double)
declare double @tidal.math.ceil.f64(double)
declare double @tidal.math.trunc.f64(double)
declare double @tidal.math.round.f64(double)
declare double @tidal.math.erf.f64(double)
declare double @tidal.math.erfc.f64(double)
declare double @tidal.math.tgamma.f64(double)
declare double @tidal.math.lgamma.f64(double)
declare double @tidal.math.atan2.f64(double, double)
declare double @tidal.math.pow.f64(double, double)
declare double @tidal.math.copysign.f64(double, double)
declare double @tidal.math.fmod.f64(double, double)
declare double @tidal.math.hypot.f64(double, double)
declare double @tidal.math.fmin.f64(double, double)
declare double @tidal.math.fmax.f64(double, double)

; Every function of contract v2 on float, summed into out[0].
; CHECK-LABEL: define void @every_f32(
; CHECK:         %sin = call float @__nv_sinf(float %x)
; CHECK:         %cos = call float @__nv_cosf(float %x)
; CHECK:         %tan = call float @__nv_tanf(float %x)
; CHECK:         %asin = call float @__nv_asinf(float %x)
; CHECK:         %acos = call float @__nv_acosf(float %x)
; CHECK:         %atan = call float @__nv_atanf(float %x)
; CHECK:         %sinh = call float @__nv_sinhf(float %x)
; CHECK:         %cosh = call float @__nv_coshf(float %x)
; CHECK:         %tanh = call float @__nv_tanhf(float %x)
; CHECK:         %asinh = call float @__nv_asinhf(float %x)
; CHECK:         %acosh = call float @__nv_acoshf(float %x)
; CHECK:         %atanh = call float @__nv_atanhf(float %x)
; CHECK:         %exp = call float @__nv_expf(float %x)
; CHECK:         %exp2 = call float @__nv_exp2f(float %x)
; CHECK:         %expm1 = call float @__nv_expm1f(float %x)
; CHECK:         %log = call float @__nv_logf(float %x)
; CHECK:         %log2 = call float @__nv_log2f(float %x)
; CHECK:         %log10 = call float @__nv_log10f(float %x)
; CHECK:         %log1p = call float @__nv_log1pf(float %x)
; CHECK:         %sqrt = call float @llvm.sqrt.f32(float %x)
; CHECK:         %rsqrt = call float @__nv_rsqrtf(float %x)
; CHECK:         %cbrt = call float @__nv_cbrtf(float %x)
; CHECK:         %fabs = call float @llvm.fabs.f32(float %x)
; CHECK:         %floor = call float @llvm.floor.f32(float %x)
; CHECK:         %ceil = call float @llvm.ceil.f32(float %x)
; CHECK:         %trunc = call float @llvm.trunc.f32(float %x)
; CHECK:         %round = call float @llvm.round.f32(float %x)
; CHECK:         %erf = call float @__nv_erff(float %x)
; CHECK:         %erfc = call float @__nv_erfcf(float %x)
; CHECK:         %tgamma = call float @__nv_tgammaf(float %x)
; CHECK:         %lgamma = call float @__nv_lgammaf(float %x)
; CHECK:         %atan2 = call float @__nv_atan2f(float %x, float %y)
; CHECK:         %pow = call float @__nv_powf(float %x, float %y)
; CHECK:         %copysign = call float @llvm.copysign.f32(float %x, float %y)
; CHECK:         %fmod = call float @__nv_fmodf(float %x, float %y)
; CHECK:         %hypot = call float @__nv_hypotf(float %x, float %y)
; CHECK:         %fmin = call float @llvm.minnum.f32(float %x, float %y)
; CHECK:         %fmax = call float @llvm.maxnum.f32(float %x, float %y)
; PTX-NOT: .extern
; PTX-LABEL: .entry every_f32(
; PTX:         ret;
define void @every_f32(ptr %out, float %x, float %y) {
  %sin = call float @tidal.math.sin.f32(float %x)
  %s0 = fadd float %x, %sin
  %cos = call float @tidal.math.cos.f32(float %x)
  %s1 = fadd float %s0, %cos
  %tan = call float @tidal.math.tan.f32(float %x)
  %s2 = fadd float %s1, %tan
  %asin = call float @tidal.math.asin.f32(float %x)
  %s3 = fadd float %s2, %asin
  %acos = call float @tidal.math.acos.f32(float %x)
  %s4 = fadd float %s3, %acos
  %atan = call float @tidal.math.atan.f32(float %x)
  %s5 = fadd float %s4, %atan
  %sinh = call float @tidal.math.sinh.f32(float %x)
  %s6 = fadd float %s5, %sinh
  %cosh = call float @tidal.math.cosh.f32(float %x)
  %s7 = fadd float %s6, %cosh
  %tanh = call float @tidal.math.tanh.f32(float %x)
  %s8 = fadd float %s7, %tanh
  %asinh = call float @tidal.math.asinh.f32(float %x)
  %s9 = fadd float %s8, %asinh
  %acosh = call float @tidal.math.acosh.f32(float %x)
  %s10 = fadd float %s9, %acosh
  %atanh = call float @tidal.math.atanh.f32(float %x)
  %s11 = fadd float %s10, %atanh
  %exp = call float @tidal.math.exp.f32(float %x)
  %s12 = fadd float %s11, %exp
  %exp2 = call float @tidal.math.exp2.f32(float %x)
  %s13 = fadd float %s12, %exp2
  %expm1 = call float @tidal.math.expm1.f32(float %x)
  %s14 = fadd float %s13, %expm1
  %log = call float @tidal.math.log.f32(float %x)
  %s15 = fadd float %s14, %log
  %log2 = call float @tidal.math.log2.f32(float %x)
  %s16 = fadd float %s15, %log2
  %log10 = call float @tidal.math.log10.f32(float %x)
  %s17 = fadd float %s16, %log10
  %log1p = call float @tidal.math.log1p.f32(float %x)
  %s18 = fadd float %s17, %log1p
  %sqrt = call float @tidal.math.sqrt.f32(float %x)
  %s19 = fadd float %s18, %sqrt
  %rsqrt = call float @tidal.math.rsqrt.f32(float %x)
  %s20 = fadd float %s19, %rsqrt
  %cbrt = call float @tidal.math.cbrt.f32(float %x)
  %s21 = fadd float %s20, %cbrt
  %fabs = call float @tidal.math.fabs.f32(float %x)
  %s22 = fadd float %s21, %fabs
  %floor = call float @tidal.math.floor.f32(float %x)
  %s23 = fadd float %s22, %floor
  %ceil = call float @tidal.math.ceil.f32(float %x)
  %s24 = fadd float %s23, %ceil
  %trunc = call float @tidal.math.trunc.f32(float %x)
  %s25 = fadd float %s24, %trunc
  %round = call float @tidal.math.round.f32(float %x)
  %s26 = fadd float %s25, %round
  %erf = call float @tidal.math.erf.f32(float %x)
  %s27 = fadd float %s26, %erf
  %erfc = call float @tidal.math.erfc.f32(float %x)
  %s28 = fadd float %s27, %erfc
  %tgamma = call float @tidal.math.tgamma.f32(float %x)
  %s29 = fadd float %s28, %tgamma
  %lgamma = call float @tidal.math.lgamma.f32(float %x)
  %s30 = fadd float %s29, %lgamma
  %atan2 = call float @tidal.math.atan2.f32(float %x, float %y)
  %s31 = fadd float %s30, %atan2
  %pow = call float @tidal.math.pow.f32(float %x, float %y)
  %s32 = fadd float %s31, %pow
  %copysign = call float @tidal.math.copysign.f32(float %x, float %y)
  %s33 = fadd float %s32, %copysign
  %fmod = call float @tidal.math.fmod.f32(float %x, float %y)
  %s34 = fadd float %s33, %fmod
  %hypot = call float @tidal.math.hypot.f32(float %x, float %y)
  %s35 = fadd float %s34, %hypot
  %fmin = call float @tidal.math.fmin.f32(float %x, float %y)
  %s36 = fadd float %s35, %fmin
  %fmax = call float @tidal.math.fmax.f32(float %x, float %y)
  %s37 = fadd float %s36, %fmax
  store float %s37, ptr %out
  ret void
}

; Every function of contract v2 on double, summed into out[0].
; CHECK-LABEL: define void @every_f64(
; CHECK:         %sin = call double @__nv_sin(double %x)
; CHECK:         %cos = call double @__nv_cos(double %x)
; CHECK:         %tan = call double @__nv_tan(double %x)
; CHECK:         %asin = call double @__nv_asin(double %x)
; CHECK:         %acos = call double @__nv_acos(double %x)
; CHECK:         %atan = call double @__nv_atan(double %x)
; CHECK:         %sinh = call double @__nv_sinh(double %x)
; CHECK:         %cosh = call double @__nv_cosh(double %x)
; CHECK:         %tanh = call double @__nv_tanh(double %x)
; CHECK:         %asinh = call double @__nv_asinh(double %x)
; CHECK:         %acosh = call double @__nv_acosh(double %x)
; CHECK:         %atanh = call double @__nv_atanh(double %x)
; CHECK:         %exp = call double @__nv_exp(double %x)
; CHECK:         %exp2 = call double @__nv_exp2(double %x)
; CHECK:         %expm1 = call double @__nv_expm1(double %x)
; CHECK:         %log = call double @__nv_log(double %x)
; CHECK:         %log2 = call double @__nv_log2(double %x)
; CHECK:         %log10 = call double @__nv_log10(double %x)
; CHECK:         %log1p = call double @__nv_log1p(double %x)
; CHECK:         %sqrt = call double @llvm.sqrt.f64(double %x)
; CHECK:         %rsqrt = call double @__nv_rsqrt(double %x)
; CHECK:         %cbrt = call double @__nv_cbrt(double %x)
; CHECK:         %fabs = call double @llvm.fabs.f64(double %x)
; CHECK:         %floor = call double @llvm.floor.f64(double %x)
; CHECK:         %ceil = call double @llvm.ceil.f64(double %x)
; CHECK:         %trunc = call double @llvm.trunc.f64(double %x)
; CHECK:         %round = call double @llvm.round.f64(double %x)
; CHECK:         %erf = call double @__nv_erf(double %x)
; CHECK:         %erfc = call double @__nv_erfc(double %x)
; CHECK:         %tgamma = call double @__nv_tgamma(double %x)
; CHECK:         %lgamma = call double @__nv_lgamma(double %x)
; CHECK:         %atan2 = call double @__nv_atan2(double %x, double %y)
; CHECK:         %pow = call double @__nv_pow(double %x, double %y)
; CHECK:         %copysign = call double @llvm.copysign.f64(double %x, double %y)
; CHECK:         %fmod = call double @__nv_fmod(double %x, double %y)
; CHECK:         %hypot = call double @__nv_hypot(double %x, double %y)
; CHECK:         %fmin = call double @llvm.minnum.f64(double %x, double %y)
; CHECK:         %fmax = call double @llvm.maxnum.f64(double %x, double %y)
; PTX-LABEL: .entry every_f64(
; PTX:         ret;
define void @every_f64(ptr %out, double %x, double %y) {
  %sin = call double @tidal.math.sin.f64(double %x)
  %s0 = fadd double %x, %sin
  %cos = call double @tidal.math.cos.f64(double %x)
  %s1 = fadd double %s0, %cos
  %tan = call double @tidal.math.tan.f64(double %x)
  %s2 = fadd double %s1, %tan
  %asin = call double @tidal.math.asin.f64(double %x)
  %s3 = fadd double %s2, %asin
  %acos = call double @tidal.math.acos.f64(double %x)
  %s4 = fadd double %s3, %acos
  %atan = call double @tidal.math.atan.f64(double %x)
  %s5 = fadd double %s4, %atan
  %sinh = call double @tidal.math.sinh.f64(double %x)
  %s6 = fadd double %s5, %sinh
  %cosh = call double @tidal.math.cosh.f64(double %x)
  %s7 = fadd double %s6, %cosh
  %tanh = call double @tidal.math.tanh.f64(double %x)
  %s8 = fadd double %s7, %tanh
  %asinh = call double @tidal.math.asinh.f64(double %x)
  %s9 = fadd double %s8, %asinh
  %acosh = call double @tidal.math.acosh.f64(double %x)
  %s10 = fadd double %s9, %acosh
  %atanh = call double @tidal.math.atanh.f64(double %x)
  %s11 = fadd double %s10, %atanh
  %exp = call double @tidal.math.exp.f64(double %x)
  %s12 = fadd double %s11, %exp
  %exp2 = call double @tidal.math.exp2.f64(double %x)
  %s13 = fadd double %s12, %exp2
  %expm1 = call double @tidal.math.expm1.f64(double %x)
  %s14 = fadd double %s13, %expm1
  %log = call double @tidal.math.log.f64(double %x)
  %s15 = fadd double %s14, %log
  %log2 = call double @tidal.math.log2.f64(double %x)
  %s16 = fadd double %s15, %log2
  %log10 = call double @tidal.math.log10.f64(double %x)
  %s17 = fadd double %s16, %log10
  %log1p = call double @tidal.math.log1p.f64(double %x)
  %s18 = fadd double %s17, %log1p
  %sqrt = call double @tidal.math.sqrt.f64(double %x)
  %s19 = fadd double %s18, %sqrt
  %rsqrt = call double @tidal.math.rsqrt.f64(double %x)
  %s20 = fadd double %s19, %rsqrt
  %cbrt = call double @tidal.math.cbrt.f64(double %x)
  %s21 = fadd double %s20, %cbrt
  %fabs = call double @tidal.math.fabs.f64(double %x)
  %s22 = fadd double %s21, %fabs
  %floor = call double @tidal.math.floor.f64(double %x)
  %s23 = fadd double %s22, %floor
  %ceil = call double @tidal.math.ceil.f64(double %x)
  %s24 = fadd double %s23, %ceil
  %trunc = call double @tidal.math.trunc.f64(double %x)
  %s25 = fadd double %s24, %trunc
  %round = call double @tidal.math.round.f64(double %x)
  %s26 = fadd double %s25, %round
  %erf = call double @tidal.math.erf.f64(double %x)
  %s27 = fadd double %s26, %erf
  %erfc = call double @tidal.math.erfc.f64(double %x)
  %s28 = fadd double %s27, %erfc
  %tgamma = call double @tidal.math.tgamma.f64(double %x)
  %s29 = fadd double %s28, %tgamma
  %lgamma = call double @tidal.math.lgamma.f64(double %x)
  %s30 = fadd double %s29, %lgamma
  %atan2 = call double @tidal.math.atan2.f64(double %x, double %y)
  %s31 = fadd double %s30, %atan2
  %pow = call double @tidal.math.pow.f64(double %x, double %y)
  %s32 = fadd double %s31, %pow
  %copysign = call double @tidal.math.copysign.f64(double %x, double %y)
  %s33 = fadd double %s32, %copysign
  %fmod = call double @tidal.math.fmod.f64(double %x, double %y)
  %s34 = fadd double %s33, %fmod
  %hypot = call double @tidal.math.hypot.f64(double %x, double %y)
  %s35 = fadd double %s34, %hypot
  %fmin = call double @tidal.math.fmin.f64(double %x, double %y)
  %s36 = fadd double %s35, %fmin
  %fmax = call double @tidal.math.fmax.f64(double %x, double %y)
  %s37 = fadd double %s36, %fmax
  store double %s37, ptr %out
  ret void
}

; Libdevice's functions are internal definitions, reflection is resolved.
; CHECK-NOT: @tidal.
; CHECK-NOT: __nvvm_reflect
; CHECK-DAG: define internal float @__nv_sinf(float
; CHECK-DAG: define internal double @__nv_lgamma(double
; Nothing is left for the driver to resolve: no .extern function.
; PTX-NOT: .extern

!tidal.kernels = !{!0, !1}
!0 = !{ptr @every_f32}
!1 = !{ptr @every_f64}
