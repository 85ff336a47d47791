// CUDA's math API for tidal's prelude (tidal_cuda.h includes it): each
// function as CUDA names it (sinf, sin, and the float overload sin(float)),
// the intrinsics (__expf, __fdividef, __saturatef, ...), and the integer
// bit functions (__popc, __clz, ...), each a call of the libdevice function
// that computes it. tidal-raise-nvvm raises the __nv_* calls that have a
// math marker and leaves the others for tidal-link-host-libdevice (cpu
// target) or libdevice (NVPTX); docs/cpp.md, "Math".
#ifndef TIDAL_CUDA_MATH_H
#define TIDAL_CUDA_MATH_H

#include <__clang_cuda_libdevice_declares.h>

// One argument.
TIDAL_DEVICE float acosf(float x) { return __nv_acosf(x); }
TIDAL_DEVICE double acos(double x) { return __nv_acos(x); }
TIDAL_DEVICE float acos(float x) { return __nv_acosf(x); }
TIDAL_DEVICE float acoshf(float x) { return __nv_acoshf(x); }
TIDAL_DEVICE double acosh(double x) { return __nv_acosh(x); }
TIDAL_DEVICE float acosh(float x) { return __nv_acoshf(x); }
TIDAL_DEVICE float asinf(float x) { return __nv_asinf(x); }
TIDAL_DEVICE double asin(double x) { return __nv_asin(x); }
TIDAL_DEVICE float asin(float x) { return __nv_asinf(x); }
TIDAL_DEVICE float asinhf(float x) { return __nv_asinhf(x); }
TIDAL_DEVICE double asinh(double x) { return __nv_asinh(x); }
TIDAL_DEVICE float asinh(float x) { return __nv_asinhf(x); }
TIDAL_DEVICE float atanf(float x) { return __nv_atanf(x); }
TIDAL_DEVICE double atan(double x) { return __nv_atan(x); }
TIDAL_DEVICE float atan(float x) { return __nv_atanf(x); }
TIDAL_DEVICE float atanhf(float x) { return __nv_atanhf(x); }
TIDAL_DEVICE double atanh(double x) { return __nv_atanh(x); }
TIDAL_DEVICE float atanh(float x) { return __nv_atanhf(x); }
TIDAL_DEVICE float cbrtf(float x) { return __nv_cbrtf(x); }
TIDAL_DEVICE double cbrt(double x) { return __nv_cbrt(x); }
TIDAL_DEVICE float cbrt(float x) { return __nv_cbrtf(x); }
TIDAL_DEVICE float ceilf(float x) { return __nv_ceilf(x); }
TIDAL_DEVICE double ceil(double x) { return __nv_ceil(x); }
TIDAL_DEVICE float ceil(float x) { return __nv_ceilf(x); }
TIDAL_DEVICE float cosf(float x) { return __nv_cosf(x); }
TIDAL_DEVICE double cos(double x) { return __nv_cos(x); }
TIDAL_DEVICE float cos(float x) { return __nv_cosf(x); }
TIDAL_DEVICE float coshf(float x) { return __nv_coshf(x); }
TIDAL_DEVICE double cosh(double x) { return __nv_cosh(x); }
TIDAL_DEVICE float cosh(float x) { return __nv_coshf(x); }
TIDAL_DEVICE float cospif(float x) { return __nv_cospif(x); }
TIDAL_DEVICE double cospi(double x) { return __nv_cospi(x); }
TIDAL_DEVICE float cospi(float x) { return __nv_cospif(x); }
TIDAL_DEVICE float erff(float x) { return __nv_erff(x); }
TIDAL_DEVICE double erf(double x) { return __nv_erf(x); }
TIDAL_DEVICE float erf(float x) { return __nv_erff(x); }
TIDAL_DEVICE float erfcf(float x) { return __nv_erfcf(x); }
TIDAL_DEVICE double erfc(double x) { return __nv_erfc(x); }
TIDAL_DEVICE float erfc(float x) { return __nv_erfcf(x); }
TIDAL_DEVICE float erfcinvf(float x) { return __nv_erfcinvf(x); }
TIDAL_DEVICE double erfcinv(double x) { return __nv_erfcinv(x); }
TIDAL_DEVICE float erfcinv(float x) { return __nv_erfcinvf(x); }
TIDAL_DEVICE float erfcxf(float x) { return __nv_erfcxf(x); }
TIDAL_DEVICE double erfcx(double x) { return __nv_erfcx(x); }
TIDAL_DEVICE float erfcx(float x) { return __nv_erfcxf(x); }
TIDAL_DEVICE float erfinvf(float x) { return __nv_erfinvf(x); }
TIDAL_DEVICE double erfinv(double x) { return __nv_erfinv(x); }
TIDAL_DEVICE float erfinv(float x) { return __nv_erfinvf(x); }
TIDAL_DEVICE float expf(float x) { return __nv_expf(x); }
TIDAL_DEVICE double exp(double x) { return __nv_exp(x); }
TIDAL_DEVICE float exp(float x) { return __nv_expf(x); }
TIDAL_DEVICE float exp10f(float x) { return __nv_exp10f(x); }
TIDAL_DEVICE double exp10(double x) { return __nv_exp10(x); }
TIDAL_DEVICE float exp10(float x) { return __nv_exp10f(x); }
TIDAL_DEVICE float exp2f(float x) { return __nv_exp2f(x); }
TIDAL_DEVICE double exp2(double x) { return __nv_exp2(x); }
TIDAL_DEVICE float exp2(float x) { return __nv_exp2f(x); }
TIDAL_DEVICE float expm1f(float x) { return __nv_expm1f(x); }
TIDAL_DEVICE double expm1(double x) { return __nv_expm1(x); }
TIDAL_DEVICE float expm1(float x) { return __nv_expm1f(x); }
TIDAL_DEVICE float fabsf(float x) { return __nv_fabsf(x); }
TIDAL_DEVICE double fabs(double x) { return __nv_fabs(x); }
TIDAL_DEVICE float fabs(float x) { return __nv_fabsf(x); }
TIDAL_DEVICE float floorf(float x) { return __nv_floorf(x); }
TIDAL_DEVICE double floor(double x) { return __nv_floor(x); }
TIDAL_DEVICE float floor(float x) { return __nv_floorf(x); }
TIDAL_DEVICE float j0f(float x) { return __nv_j0f(x); }
TIDAL_DEVICE double j0(double x) { return __nv_j0(x); }
TIDAL_DEVICE float j0(float x) { return __nv_j0f(x); }
TIDAL_DEVICE float j1f(float x) { return __nv_j1f(x); }
TIDAL_DEVICE double j1(double x) { return __nv_j1(x); }
TIDAL_DEVICE float j1(float x) { return __nv_j1f(x); }
TIDAL_DEVICE float lgammaf(float x) { return __nv_lgammaf(x); }
TIDAL_DEVICE double lgamma(double x) { return __nv_lgamma(x); }
TIDAL_DEVICE float lgamma(float x) { return __nv_lgammaf(x); }
TIDAL_DEVICE float logf(float x) { return __nv_logf(x); }
TIDAL_DEVICE double log(double x) { return __nv_log(x); }
TIDAL_DEVICE float log(float x) { return __nv_logf(x); }
TIDAL_DEVICE float log10f(float x) { return __nv_log10f(x); }
TIDAL_DEVICE double log10(double x) { return __nv_log10(x); }
TIDAL_DEVICE float log10(float x) { return __nv_log10f(x); }
TIDAL_DEVICE float log1pf(float x) { return __nv_log1pf(x); }
TIDAL_DEVICE double log1p(double x) { return __nv_log1p(x); }
TIDAL_DEVICE float log1p(float x) { return __nv_log1pf(x); }
TIDAL_DEVICE float log2f(float x) { return __nv_log2f(x); }
TIDAL_DEVICE double log2(double x) { return __nv_log2(x); }
TIDAL_DEVICE float log2(float x) { return __nv_log2f(x); }
TIDAL_DEVICE float logbf(float x) { return __nv_logbf(x); }
TIDAL_DEVICE double logb(double x) { return __nv_logb(x); }
TIDAL_DEVICE float logb(float x) { return __nv_logbf(x); }
TIDAL_DEVICE float nearbyintf(float x) { return __nv_nearbyintf(x); }
TIDAL_DEVICE double nearbyint(double x) { return __nv_nearbyint(x); }
TIDAL_DEVICE float nearbyint(float x) { return __nv_nearbyintf(x); }
TIDAL_DEVICE float normcdff(float x) { return __nv_normcdff(x); }
TIDAL_DEVICE double normcdf(double x) { return __nv_normcdf(x); }
TIDAL_DEVICE float normcdf(float x) { return __nv_normcdff(x); }
TIDAL_DEVICE float normcdfinvf(float x) { return __nv_normcdfinvf(x); }
TIDAL_DEVICE double normcdfinv(double x) { return __nv_normcdfinv(x); }
TIDAL_DEVICE float normcdfinv(float x) { return __nv_normcdfinvf(x); }
TIDAL_DEVICE float rcbrtf(float x) { return __nv_rcbrtf(x); }
TIDAL_DEVICE double rcbrt(double x) { return __nv_rcbrt(x); }
TIDAL_DEVICE float rcbrt(float x) { return __nv_rcbrtf(x); }
TIDAL_DEVICE float rintf(float x) { return __nv_rintf(x); }
TIDAL_DEVICE double rint(double x) { return __nv_rint(x); }
TIDAL_DEVICE float rint(float x) { return __nv_rintf(x); }
TIDAL_DEVICE float roundf(float x) { return __nv_roundf(x); }
TIDAL_DEVICE double round(double x) { return __nv_round(x); }
TIDAL_DEVICE float round(float x) { return __nv_roundf(x); }
TIDAL_DEVICE float rsqrtf(float x) { return __nv_rsqrtf(x); }
TIDAL_DEVICE double rsqrt(double x) { return __nv_rsqrt(x); }
TIDAL_DEVICE float rsqrt(float x) { return __nv_rsqrtf(x); }
TIDAL_DEVICE float sinf(float x) { return __nv_sinf(x); }
TIDAL_DEVICE double sin(double x) { return __nv_sin(x); }
TIDAL_DEVICE float sin(float x) { return __nv_sinf(x); }
TIDAL_DEVICE float sinhf(float x) { return __nv_sinhf(x); }
TIDAL_DEVICE double sinh(double x) { return __nv_sinh(x); }
TIDAL_DEVICE float sinh(float x) { return __nv_sinhf(x); }
TIDAL_DEVICE float sinpif(float x) { return __nv_sinpif(x); }
TIDAL_DEVICE double sinpi(double x) { return __nv_sinpi(x); }
TIDAL_DEVICE float sinpi(float x) { return __nv_sinpif(x); }
TIDAL_DEVICE float sqrtf(float x) { return __nv_sqrtf(x); }
TIDAL_DEVICE double sqrt(double x) { return __nv_sqrt(x); }
TIDAL_DEVICE float sqrt(float x) { return __nv_sqrtf(x); }
TIDAL_DEVICE float tanf(float x) { return __nv_tanf(x); }
TIDAL_DEVICE double tan(double x) { return __nv_tan(x); }
TIDAL_DEVICE float tan(float x) { return __nv_tanf(x); }
TIDAL_DEVICE float tanhf(float x) { return __nv_tanhf(x); }
TIDAL_DEVICE double tanh(double x) { return __nv_tanh(x); }
TIDAL_DEVICE float tanh(float x) { return __nv_tanhf(x); }
TIDAL_DEVICE float tgammaf(float x) { return __nv_tgammaf(x); }
TIDAL_DEVICE double tgamma(double x) { return __nv_tgamma(x); }
TIDAL_DEVICE float tgamma(float x) { return __nv_tgammaf(x); }
TIDAL_DEVICE float truncf(float x) { return __nv_truncf(x); }
TIDAL_DEVICE double trunc(double x) { return __nv_trunc(x); }
TIDAL_DEVICE float trunc(float x) { return __nv_truncf(x); }
TIDAL_DEVICE float y0f(float x) { return __nv_y0f(x); }
TIDAL_DEVICE double y0(double x) { return __nv_y0(x); }
TIDAL_DEVICE float y0(float x) { return __nv_y0f(x); }
TIDAL_DEVICE float y1f(float x) { return __nv_y1f(x); }
TIDAL_DEVICE double y1(double x) { return __nv_y1(x); }
TIDAL_DEVICE float y1(float x) { return __nv_y1f(x); }
// Two arguments.
TIDAL_DEVICE float atan2f(float x, float y) { return __nv_atan2f(x, y); }
TIDAL_DEVICE double atan2(double x, double y) { return __nv_atan2(x, y); }
TIDAL_DEVICE float atan2(float x, float y) { return __nv_atan2f(x, y); }
TIDAL_DEVICE float copysignf(float x, float y) { return __nv_copysignf(x, y); }
TIDAL_DEVICE double copysign(double x, double y) { return __nv_copysign(x, y); }
TIDAL_DEVICE float copysign(float x, float y) { return __nv_copysignf(x, y); }
TIDAL_DEVICE float fdimf(float x, float y) { return __nv_fdimf(x, y); }
TIDAL_DEVICE double fdim(double x, double y) { return __nv_fdim(x, y); }
TIDAL_DEVICE float fdim(float x, float y) { return __nv_fdimf(x, y); }
TIDAL_DEVICE float fmaxf(float x, float y) { return __nv_fmaxf(x, y); }
TIDAL_DEVICE double fmax(double x, double y) { return __nv_fmax(x, y); }
TIDAL_DEVICE float fmax(float x, float y) { return __nv_fmaxf(x, y); }
TIDAL_DEVICE float fminf(float x, float y) { return __nv_fminf(x, y); }
TIDAL_DEVICE double fmin(double x, double y) { return __nv_fmin(x, y); }
TIDAL_DEVICE float fmin(float x, float y) { return __nv_fminf(x, y); }
TIDAL_DEVICE float fmodf(float x, float y) { return __nv_fmodf(x, y); }
TIDAL_DEVICE double fmod(double x, double y) { return __nv_fmod(x, y); }
TIDAL_DEVICE float fmod(float x, float y) { return __nv_fmodf(x, y); }
TIDAL_DEVICE float hypotf(float x, float y) { return __nv_hypotf(x, y); }
TIDAL_DEVICE double hypot(double x, double y) { return __nv_hypot(x, y); }
TIDAL_DEVICE float hypot(float x, float y) { return __nv_hypotf(x, y); }
TIDAL_DEVICE float nextafterf(float x, float y) { return __nv_nextafterf(x, y); }
TIDAL_DEVICE double nextafter(double x, double y) { return __nv_nextafter(x, y); }
TIDAL_DEVICE float nextafter(float x, float y) { return __nv_nextafterf(x, y); }
TIDAL_DEVICE float powf(float x, float y) { return __nv_powf(x, y); }
TIDAL_DEVICE double pow(double x, double y) { return __nv_pow(x, y); }
TIDAL_DEVICE float pow(float x, float y) { return __nv_powf(x, y); }
TIDAL_DEVICE float remainderf(float x, float y) { return __nv_remainderf(x, y); }
TIDAL_DEVICE double remainder(double x, double y) { return __nv_remainder(x, y); }
TIDAL_DEVICE float remainder(float x, float y) { return __nv_remainderf(x, y); }
// Three arguments, and results through pointers.
TIDAL_DEVICE float fmaf(float x, float y, float z) { return __nv_fmaf(x, y, z); }
TIDAL_DEVICE double fma(double x, double y, double z) { return __nv_fma(x, y, z); }
TIDAL_DEVICE float fma(float x, float y, float z) { return __nv_fmaf(x, y, z); }
TIDAL_DEVICE void sincosf(float x, float *s, float *c) { __nv_sincosf(x, s, c); }
TIDAL_DEVICE void sincos(double x, double *s, double *c) { __nv_sincos(x, s, c); }
TIDAL_DEVICE void sincospif(float x, float *s, float *c) { __nv_sincospif(x, s, c); }
TIDAL_DEVICE void sincospi(double x, double *s, double *c) { __nv_sincospi(x, s, c); }
TIDAL_DEVICE float ldexpf(float x, int e) { return __nv_ldexpf(x, e); }
TIDAL_DEVICE double ldexp(double x, int e) { return __nv_ldexp(x, e); }
TIDAL_DEVICE float frexpf(float x, int *e) { return __nv_frexpf(x, e); }
TIDAL_DEVICE double frexp(double x, int *e) { return __nv_frexp(x, e); }
TIDAL_DEVICE float modff(float x, float *i) { return __nv_modff(x, i); }
TIDAL_DEVICE double modf(double x, double *i) { return __nv_modf(x, i); }
TIDAL_DEVICE int ilogbf(float x) { return __nv_ilogbf(x); }
TIDAL_DEVICE int ilogb(double x) { return __nv_ilogb(x); }
TIDAL_DEVICE int isnan(float x) { return __nv_isnanf(x); }
TIDAL_DEVICE int isnan(double x) { return __nv_isnand(x); }
TIDAL_DEVICE int isinf(float x) { return __nv_isinff(x); }
TIDAL_DEVICE int isinf(double x) { return __nv_isinfd(x); }
TIDAL_DEVICE int isfinite(float x) { return __nv_finitef(x); }
TIDAL_DEVICE int isfinite(double x) { return __nv_isfinited(x); }
TIDAL_DEVICE int signbit(float x) { return __nv_signbitf(x); }
TIDAL_DEVICE int signbit(double x) { return __nv_signbitd(x); }

// The fast intrinsics.
TIDAL_DEVICE float __expf(float x) { return __nv_fast_expf(x); }
TIDAL_DEVICE float __exp10f(float x) { return __nv_fast_exp10f(x); }
TIDAL_DEVICE float __logf(float x) { return __nv_fast_logf(x); }
TIDAL_DEVICE float __log2f(float x) { return __nv_fast_log2f(x); }
TIDAL_DEVICE float __log10f(float x) { return __nv_fast_log10f(x); }
TIDAL_DEVICE float __sinf(float x) { return __nv_fast_sinf(x); }
TIDAL_DEVICE float __cosf(float x) { return __nv_fast_cosf(x); }
TIDAL_DEVICE float __tanf(float x) { return __nv_fast_tanf(x); }
TIDAL_DEVICE float __powf(float x, float y) { return __nv_fast_powf(x, y); }
TIDAL_DEVICE float __fdividef(float x, float y) { return __nv_fast_fdividef(x, y); }
TIDAL_DEVICE void __sincosf(float x, float *s, float *c) { __nv_fast_sincosf(x, s, c); }
TIDAL_DEVICE float __saturatef(float x) { return __nv_saturatef(x); }
TIDAL_DEVICE float __fmaf_rn(float x, float y, float z) { return __nv_fmaf_rn(x, y, z); }
TIDAL_DEVICE double __fma_rn(double x, double y, double z) { return __nv_fma_rn(x, y, z); }

// Integers.
TIDAL_DEVICE int __popc(unsigned x) { return __nv_popc(static_cast<int>(x)); }
TIDAL_DEVICE int __popcll(unsigned long long x) { return __nv_popcll(static_cast<long long>(x)); }
TIDAL_DEVICE int __clz(int x) { return __nv_clz(x); }
TIDAL_DEVICE int __clzll(long long x) { return __nv_clzll(x); }
TIDAL_DEVICE int __ffs(int x) { return __nv_ffs(x); }
TIDAL_DEVICE int __ffsll(long long x) { return __nv_ffsll(x); }
TIDAL_DEVICE unsigned __brev(unsigned x) { return __nv_brev(x); }
TIDAL_DEVICE unsigned long long __brevll(unsigned long long x) { return __nv_brevll(x); }
TIDAL_DEVICE int min(int x, int y) { return __nv_min(x, y); }
TIDAL_DEVICE int max(int x, int y) { return __nv_max(x, y); }
TIDAL_DEVICE unsigned min(unsigned x, unsigned y) { return __nv_umin(x, y); }
TIDAL_DEVICE unsigned max(unsigned x, unsigned y) { return __nv_umax(x, y); }
TIDAL_DEVICE long long min(long long x, long long y) { return __nv_llmin(x, y); }
TIDAL_DEVICE long long max(long long x, long long y) { return __nv_llmax(x, y); }
TIDAL_DEVICE float min(float x, float y) { return __nv_fminf(x, y); }
TIDAL_DEVICE float max(float x, float y) { return __nv_fmaxf(x, y); }
TIDAL_DEVICE double min(double x, double y) { return __nv_fmin(x, y); }
TIDAL_DEVICE double max(double x, double y) { return __nv_fmax(x, y); }
TIDAL_DEVICE int abs(int x) { return __nv_abs(x); }
TIDAL_DEVICE long long llabs(long long x) { return __nv_llabs(x); }

#endif
