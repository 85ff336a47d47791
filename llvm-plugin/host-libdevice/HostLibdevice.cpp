// libdevice on the host: a C++ definition of every __nv_* function that
// clang's __clang_cuda_libdevice_declares.h declares, for the cpu target.
// The build compiles this file with clang-19 -O2 -emit-llvm into bitcode
// (never into a native object), and tidal-link-host-libdevice
// (llvm-plugin/LinkHostLibdevice.cpp) links the functions a module calls
// before the host pipeline's O3, so that they inline into kernels.
//
// The entry point for any producer of __nv_* calls (tidal.cuda.libdevice,
// clang's CUDA output): run tidal-link-host-libdevice on the module.
//
// Accuracy (docs/libdevice.md):
// - float functions are computed in double and rounded once, so they are
//   within 1 ulp (libdevice allows 1 to 9 ulp);
// - double functions are glibc's libm (within 1 to 2 ulp of libdevice's
//   bounds), or, where libm has none (erfinv, erfcinv, erfcx, normcdf,
//   normcdfinv, cyl_bessel_i0/i1, sinpi/cospi, rsqrt, rcbrt), the
//   algorithms named beside them; cbrt is libm's corrected by a Newton
//   step (cubeRoot: exact cubes give exact roots);
// - integer and bit functions, bit casts, and the float-to-integer
//   conversions (saturating, NaN to 0, as PTX's cvt) are exact;
// - the rounding-mode variants (_rn _rz _ru _rd of add, sub, mul, div,
//   fma, rcp, sqrt and of the conversions) run the one IEEE operation with
//   the host's rounding mode set by fesetround for that operation, under
//   FENV_ACCESS, so they are exact.
#include <__clang_cuda_libdevice_declares.h>

#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace {

template <typename To, typename From> To bitCast(From Value) {
  static_assert(sizeof(To) == sizeof(From));
  To Out;
  std::memcpy(&Out, &Value, sizeof(To));
  return Out;
}

// --- float-to-integer conversions, as PTX's cvt.<mode>i: rounded, then
// saturated to the integer's range; NaN gives 0.
template <typename Integer> Integer saturate(double Rounded) {
  if (std::isnan(Rounded))
    return 0;
  // The range ends as doubles: -2^(n-1) (or 0) is exact, and 2^(n-1) (or
  // 2^n) is the first value past the top.
  constexpr double Low = static_cast<double>(std::numeric_limits<Integer>::min());
  constexpr double PastTop =
      std::numeric_limits<Integer>::is_signed
          ? -Low
          : 2.0 * static_cast<double>(Integer(1) << (sizeof(Integer) * 8 - 1));
  if (Rounded < Low)
    return std::numeric_limits<Integer>::min();
  if (Rounded >= PastTop)
    return std::numeric_limits<Integer>::max();
  return static_cast<Integer>(Rounded);
}
double roundNearestEven(double X) { return __builtin_roundeven(X); }

// --- half precision by bits (IEEE binary16, round to nearest even).
unsigned short floatToHalfBits(float Value) {
  uint32_t Bits = bitCast<uint32_t>(Value);
  uint32_t Sign = (Bits >> 16) & 0x8000u;
  uint32_t Magnitude = Bits & 0x7fffffffu;
  if (Magnitude > 0x7f800000u) // NaN: quiet, keep the top payload bits
    return static_cast<unsigned short>(Sign | 0x7e00u | ((Magnitude >> 13) & 0x3ffu));
  if (Magnitude >= 0x477ff000u) // rounds past 65504: infinity
    return static_cast<unsigned short>(Sign | 0x7c00u);
  if (Magnitude < 0x38800000u) { // below 2^-14: a subnormal half (or 0)
    if (Magnitude < 0x33000000u) // below half of the smallest subnormal
      return static_cast<unsigned short>(Sign);
    uint32_t Exponent = Magnitude >> 23;
    uint32_t Mantissa = (Magnitude & 0x7fffffu) | 0x800000u;
    uint32_t Shift = 126 - Exponent; // 14..24
    uint32_t Kept = Mantissa >> Shift;
    uint32_t Rest = Mantissa & ((1u << Shift) - 1);
    uint32_t Half = 1u << (Shift - 1);
    if (Rest > Half || (Rest == Half && (Kept & 1)))
      ++Kept;
    return static_cast<unsigned short>(Sign | Kept);
  }
  uint32_t Rebased = Magnitude - 0x38000000u; // exponent bias 127 -> 15
  uint32_t Kept = Rebased >> 13;
  uint32_t Rest = Rebased & 0x1fffu;
  if (Rest > 0x1000u || (Rest == 0x1000u && (Kept & 1)))
    ++Kept;
  return static_cast<unsigned short>(Sign | Kept);
}

float halfBitsToFloat(unsigned short Half) {
  uint32_t Sign = (uint32_t(Half) & 0x8000u) << 16;
  uint32_t Exponent = (Half >> 10) & 0x1fu;
  uint32_t Mantissa = Half & 0x3ffu;
  if (Exponent == 0x1f)
    return bitCast<float>(Sign | 0x7f800000u | (Mantissa << 13));
  if (Exponent == 0) {
    float Magnitude = std::ldexp(static_cast<float>(Mantissa), -24);
    return Sign ? -Magnitude : Magnitude;
  }
  return bitCast<float>(Sign | ((Exponent + 112) << 23) | (Mantissa << 13));
}

// --- functions libm lacks -------------------------------------------------

// sin(pi x) and cos(pi x) with the argument reduced exactly (remainder by 2
// is exact), so that large x and integers give exact zeros and ones.
// The cube root, rounded correctly but for rare near-ties: glibc's cbrt
// (within 1 ulp: cbrt(-27.0) is -3.0000000000000004), then one Newton step
// on its residual y^3 - x, computed in two doubles with fma (y^2 and y^2*y
// split exactly); exact cubes give their exact roots. Arguments far from 1
// are scaled by 2^(3k) so that y^3 neither overflows nor loses bits to
// subnormals.
double cubeRoot(double X) {
  if (X == 0 || !std::isfinite(X))
    return std::cbrt(X); // +-0, +-inf, nan as they are
  double Scale = 1;
  if (std::fabs(X) < 0x1p-600) {
    X *= 0x1p600;
    Scale = 0x1p-200;
  } else if (std::fabs(X) > 0x1p600) {
    X *= 0x1p-600;
    Scale = 0x1p200;
  }
  double Y = std::cbrt(X);
  double Square = Y * Y;
  double SquareError = std::fma(Y, Y, -Square);
  double Cube = Square * Y;
  double CubeError = std::fma(Square, Y, -Cube);
  // Y^3 - X: Cube is within an ulp or two of X, so Cube - X is exact.
  double Residual = (Cube - X) + (CubeError + SquareError * Y);
  return (Y - Residual / (3 * Square)) * Scale;
}

double sinPi(double X) {
  if (!std::isfinite(X))
    return std::numeric_limits<double>::quiet_NaN();
  double Reduced = std::remainder(X, 2.0); // in [-1, 1], exact
  double Magnitude = std::fabs(Reduced);
  double Result;
  if (Magnitude <= 0.25)
    Result = std::sin(M_PI * Magnitude);
  else if (Magnitude <= 0.75)
    Result = std::cos(M_PI * (Magnitude - 0.5));
  else
    Result = std::sin(M_PI * (1.0 - Magnitude));
  if (Result == 0)
    return std::copysign(0.0, X);
  return Reduced < 0 ? -Result : Result;
}

double cosPi(double X) {
  if (!std::isfinite(X))
    return std::numeric_limits<double>::quiet_NaN();
  double Magnitude = std::fabs(std::remainder(X, 2.0));
  if (Magnitude <= 0.25)
    return std::cos(M_PI * Magnitude);
  if (Magnitude <= 0.75)
    return std::sin(M_PI * (0.5 - Magnitude)) + 0.0; // +0 at half-integers
  return -std::cos(M_PI * (1.0 - Magnitude));
}

// 1/sqrt(2) as a sum of two doubles, for the arguments of normcdf.
constexpr double RootHalfHigh = 0.70710678118654757;
constexpr double RootHalfLow = -4.8336466567264567e-17;

// The standard normal distribution: 0.5 erfc(-x/sqrt(2)), with the
// rounding error of -x/sqrt(2) put back by erfc's derivative.
double normalCdf(double X) {
  double Argument = -X * RootHalfHigh;
  double Error = std::fma(-X, RootHalfHigh, -Argument) + (-X) * RootHalfLow;
  double Value = std::erfc(Argument);
  if (std::isfinite(Argument))
    Value -= M_2_SQRTPI * std::exp(-Argument * Argument) * Error;
  return 0.5 * Value;
}

// Newton's method on erf from the series' first terms: erf's inverse where
// |x| < 0.5, with x's relative precision kept.
double erfInverseNearZero(double X) {
  if (X == 0)
    return X;
  double Y = X * (1 / M_2_SQRTPI) * (1 + M_PI * X * X / 12);
  for (int Step = 0; Step < 3; ++Step)
    Y -= (std::erf(Y) - X) / (M_2_SQRTPI * std::exp(-Y * Y));
  return Y;
}

// The lower tail of the normal distribution's inverse, p <= 0.25:
// P. J. Acklam's rational approximation (relative error 1.2e-9), then two
// Halley steps on normalCdf, which is accurate in relative terms there.
double normalCdfInverseLowerTail(double P) {
  if (P == 0)
    return -std::numeric_limits<double>::infinity();
  static const double A[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double B[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double C[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00, 2.938163982698783e+00};
  static const double D[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  double X;
  if (P < 0.02425) {
    double Q = std::sqrt(-2 * std::log(P));
    X = (((((C[0] * Q + C[1]) * Q + C[2]) * Q + C[3]) * Q + C[4]) * Q + C[5]) /
        ((((D[0] * Q + D[1]) * Q + D[2]) * Q + D[3]) * Q + 1);
  } else {
    double Q = P - 0.5, R = Q * Q;
    X = (((((A[0] * R + A[1]) * R + A[2]) * R + A[3]) * R + A[4]) * R + A[5]) * Q /
        (((((B[0] * R + B[1]) * R + B[2]) * R + B[3]) * R + B[4]) * R + 1);
  }
  for (int Step = 0; Step < 2; ++Step) {
    // Halley: the error in probability over the density, corrected for
    // the density's slope.
    double U = (normalCdf(X) - P) * std::sqrt(2 * M_PI) * std::exp(X * X / 2);
    X = X - U / (1 + X * U / 2);
  }
  return X;
}

// The normal distribution's inverse: the tails above, the middle (where
// the result is small) through erf, 2p - 1 being exact there.
double normalCdfInverse(double P) {
  if (std::isnan(P) || P < 0 || P > 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (P > 0.25 && P < 0.75)
    return M_SQRT2 * erfInverseNearZero(2 * P - 1);
  return P < 0.5 ? normalCdfInverseLowerTail(P) : -normalCdfInverseLowerTail(1 - P);
}

// erfcinv(y) = -normcdfinv(y/2)/sqrt(2) in the tails; erfinv(1 - y), which
// is exact, in the middle; odd about y = 1.
double erfcInverse(double Y) {
  if (std::isnan(Y) || Y < 0 || Y > 2)
    return std::numeric_limits<double>::quiet_NaN();
  if (Y > 0.5 && Y < 1.5)
    return erfInverseNearZero(1 - Y);
  if (Y >= 1.5)
    return -erfcInverse(2 - Y);
  return -normalCdfInverseLowerTail(Y / 2) * M_SQRT1_2;
}

double erfInverse(double X) {
  if (std::isnan(X) || std::fabs(X) > 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(X) >= 0.5)
    return std::copysign(erfcInverse(1 - std::fabs(X)), X);
  return erfInverseNearZero(X);
}

// exp(x^2) erfc(x): directly while exp(x^2) is finite, with x^2 split into
// two doubles; the asymptotic series beyond.
double scaledErfc(double X) {
  if (std::isnan(X))
    return X;
  if (X < 26) {
    if (X < -26.7)
      return std::numeric_limits<double>::infinity();
    double Square = X * X;
    double SquareError = std::fma(X, X, -Square);
    return std::exp(Square) * (1 + SquareError) * std::erfc(X);
  }
  // 1/(x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2x^2)^k
  double Term = 1, Sum = 1, InverseTwiceSquare = 1 / (2 * X * X);
  for (int K = 1; K < 12; ++K) {
    Term *= -(2 * K - 1) * InverseTwiceSquare;
    Sum += Term;
  }
  return Sum / (X * std::sqrt(M_PI));
}

// The modified Bessel functions I0 and I1: their power series up to 30,
// their asymptotic series beyond.
double besselI(int Order, double X) {
  // In long double (64-bit mantissa on x86-64): the series' rounding errors
  // stay far below a double's ulp.
  using Wide = long double;
  Wide Magnitude = std::fabs(X);
  Wide Result;
  if (std::isnan(X))
    return X;
  if (Magnitude <= 30) {
    Wide QuarterSquare = Magnitude * Magnitude / 4;
    Wide Term = Order == 0 ? 1 : Magnitude / 2;
    Wide Sum = Term;
    for (int K = 1; K < 200 && Term > Sum * Wide(1e-21); ++K) {
      Term *= QuarterSquare / (Wide(K) * Wide(K + Order));
      Sum += Term;
    }
    Result = Sum;
  } else {
    Wide Mu = 4.0L * Order * Order;
    Wide Term = 1, Sum = 1;
    for (int K = 1; K < 60; ++K) {
      Wide Odd = 2.0L * K - 1;
      Term *= -(Mu - Odd * Odd) / (K * 8 * Magnitude);
      Sum += Term;
      if (std::fabs(Term) < Wide(1e-21) * std::fabs(Sum))
        break;
    }
    // e^x in long double reaches past double's range: no overflow before
    // the result's.
    Result = std::exp(Magnitude) / std::sqrt(2 * Wide(M_PI) * Magnitude) * Sum;
  }
  double Narrow = static_cast<double>(Result);
  return Order == 1 && X < 0 ? -Narrow : Narrow;
}

double normOf(int Count, const double *Values) {
  double Sum = 0;
  for (int I = 0; I < Count; ++I)
    Sum = std::hypot(Sum, Values[I]);
  return Sum;
}

// 1/x from the upper 32 bits of x, the result's lower 32 bits cleared (the
// precision of PTX's rcp.approx.ftz.f64).
double reciprocalOfHighWord(double X) {
  double High = bitCast<double>(bitCast<uint64_t>(X) & 0xffffffff00000000ull);
  return bitCast<double>(bitCast<uint64_t>(1 / High) & 0xffffffff00000000ull);
}

} // namespace

extern "C" {

// --- integer and bit functions -----------------------------------------------
int __nv_abs(int X) { return X < 0 ? static_cast<int>(0u - static_cast<unsigned>(X)) : X; }
long long __nv_llabs(long long X) {
  return X < 0 ? static_cast<long long>(0ull - static_cast<unsigned long long>(X)) : X;
}
int __nv_brev(int X) { return static_cast<int>(__builtin_bitreverse32(static_cast<uint32_t>(X))); }
long long __nv_brevll(long long X) {
  return static_cast<long long>(__builtin_bitreverse64(static_cast<uint64_t>(X)));
}
int __nv_byte_perm(int X, int Y, int Selector) {
  uint64_t Bytes = (uint64_t(uint32_t(Y)) << 32) | uint32_t(X);
  uint32_t Result = 0;
  for (int I = 0; I < 4; ++I) {
    unsigned Pick = (uint32_t(Selector) >> (4 * I)) & 7;
    Result |= uint32_t((Bytes >> (8 * Pick)) & 0xff) << (8 * I);
  }
  return static_cast<int>(Result);
}
int __nv_clz(int X) { return X == 0 ? 32 : __builtin_clz(static_cast<unsigned>(X)); }
int __nv_clzll(long long X) { return X == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(X)); }
int __nv_ffs(int X) { return __builtin_ffs(X); }
int __nv_ffsll(long long X) { return __builtin_ffsll(X); }
int __nv_popc(unsigned X) { return __builtin_popcount(X); }
int __nv_popcll(unsigned long long X) { return __builtin_popcountll(X); }
int __nv_hadd(int X, int Y) { return static_cast<int>((int64_t(X) + Y) >> 1); }
int __nv_rhadd(int X, int Y) { return static_cast<int>((int64_t(X) + Y + 1) >> 1); }
int __nv_uhadd(unsigned X, unsigned Y) { return static_cast<int>((uint64_t(X) + Y) >> 1); }
unsigned __nv_urhadd(unsigned X, unsigned Y) {
  return static_cast<unsigned>((uint64_t(X) + Y + 1) >> 1);
}
int __nv_max(int X, int Y) { return X > Y ? X : Y; }
int __nv_min(int X, int Y) { return X < Y ? X : Y; }
long long __nv_llmax(long long X, long long Y) { return X > Y ? X : Y; }
long long __nv_llmin(long long X, long long Y) { return X < Y ? X : Y; }
unsigned __nv_umax(unsigned X, unsigned Y) { return X > Y ? X : Y; }
unsigned __nv_umin(unsigned X, unsigned Y) { return X < Y ? X : Y; }
unsigned long long __nv_ullmax(unsigned long long X, unsigned long long Y) { return X > Y ? X : Y; }
unsigned long long __nv_ullmin(unsigned long long X, unsigned long long Y) { return X < Y ? X : Y; }
// The low 24 bits of each (sign-extended for mul24), the low 32 of the product.
int __nv_mul24(int X, int Y) {
  int64_t A = int32_t(uint32_t(X) << 8) >> 8, B = int32_t(uint32_t(Y) << 8) >> 8;
  return static_cast<int>(static_cast<uint32_t>(A * B));
}
unsigned __nv_umul24(unsigned X, unsigned Y) {
  return static_cast<unsigned>(uint64_t(X & 0xffffffu) * (Y & 0xffffffu));
}
int __nv_mulhi(int X, int Y) { return static_cast<int>((int64_t(X) * Y) >> 32); }
unsigned __nv_umulhi(unsigned X, unsigned Y) { return static_cast<unsigned>((uint64_t(X) * Y) >> 32); }
long long __nv_mul64hi(long long X, long long Y) {
  return static_cast<long long>((__int128(X) * Y) >> 64);
}
unsigned long long __nv_umul64hi(unsigned long long X, unsigned long long Y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(X) * Y) >> 64);
}
// |x - y| + z, the difference taken without overflow.
int __nv_sad(int X, int Y, int Z) {
  uint32_t Difference = X > Y ? uint32_t(X) - uint32_t(Y) : uint32_t(Y) - uint32_t(X);
  return static_cast<int>(Difference + uint32_t(Z));
}
unsigned __nv_usad(unsigned X, unsigned Y, unsigned Z) { return (X > Y ? X - Y : Y - X) + Z; }

// --- bit casts and words ---------------------------------------------------------
int __nv_float_as_int(float X) { return bitCast<int>(X); }
unsigned __nv_float_as_uint(float X) { return bitCast<unsigned>(X); }
float __nv_int_as_float(int X) { return bitCast<float>(X); }
float __nv_uint_as_float(unsigned X) { return bitCast<float>(X); }
unsigned long long __nv_double_as_longlong(double X) { return bitCast<unsigned long long>(X); }
double __nv_longlong_as_double(long long X) { return bitCast<double>(X); }
int __nv_double2hiint(double X) { return static_cast<int>(bitCast<uint64_t>(X) >> 32); }
int __nv_double2loint(double X) { return static_cast<int>(bitCast<uint64_t>(X)); }
double __nv_hiloint2double(int High, int Low) {
  return bitCast<double>((uint64_t(uint32_t(High)) << 32) | uint32_t(Low));
}
unsigned short __nv_float2half_rn(float X) { return floatToHalfBits(X); }
float __nv_half2float(unsigned short X) { return halfBitsToFloat(X); }

// --- float to integer: rounded as named, saturated, NaN to 0 -------------------------
#define TIDAL_TO_INTEGER(Stem, Float, Integer, Result)                                         \
  Result __nv_##Stem##_rn(Float X) { return saturate<Integer>(roundNearestEven(X)); }          \
  Result __nv_##Stem##_rz(Float X) { return saturate<Integer>(std::trunc(double(X))); }        \
  Result __nv_##Stem##_ru(Float X) { return saturate<Integer>(std::ceil(double(X))); }         \
  Result __nv_##Stem##_rd(Float X) { return saturate<Integer>(std::floor(double(X))); }
TIDAL_TO_INTEGER(double2int, double, int32_t, int)
TIDAL_TO_INTEGER(double2uint, double, uint32_t, unsigned)
TIDAL_TO_INTEGER(double2ll, double, int64_t, long long)
TIDAL_TO_INTEGER(double2ull, double, uint64_t, unsigned long long)
TIDAL_TO_INTEGER(float2int, float, int32_t, int)
TIDAL_TO_INTEGER(float2uint, float, uint32_t, unsigned)
TIDAL_TO_INTEGER(float2ll, float, int64_t, long long)
TIDAL_TO_INTEGER(float2ull, float, uint64_t, unsigned long long)
#undef TIDAL_TO_INTEGER
long long __nv_llrint(double X) { return saturate<int64_t>(roundNearestEven(X)); }
long long __nv_llrintf(float X) { return saturate<int64_t>(roundNearestEven(X)); }
long long __nv_llround(double X) { return saturate<int64_t>(std::round(X)); }
long long __nv_llroundf(float X) { return saturate<int64_t>(std::round(double(X))); }

// --- classification (1 or 0) ----------------------------------------------------------
int __nv_finitef(float X) { return std::isfinite(X); }
int __nv_isfinited(double X) { return std::isfinite(X); }
int __nv_isinfd(double X) { return std::isinf(X); }
int __nv_isinff(float X) { return std::isinf(X); }
int __nv_isnand(double X) { return std::isnan(X); }
int __nv_isnanf(float X) { return std::isnan(X); }
int __nv_signbitd(double X) { return std::signbit(X); }
int __nv_signbitf(float X) { return std::signbit(X); }

// --- double math -------------------------------------------------------------------
#define TIDAL_UNARY(Name, Expression)                                                          \
  double __nv_##Name(double X) { return Expression; }                                          \
  float __nv_##Name##f(float Single) {                                                         \
    double X = Single;                                                                         \
    return static_cast<float>(Expression);                                                     \
  }
#define TIDAL_BINARY(Name, Expression)                                                         \
  double __nv_##Name(double X, double Y) { return Expression; }                                \
  float __nv_##Name##f(float SingleX, float SingleY) {                                         \
    double X = SingleX, Y = SingleY;                                                           \
    return static_cast<float>(Expression);                                                     \
  }
TIDAL_UNARY(acos, std::acos(X))
TIDAL_UNARY(acosh, std::acosh(X))
TIDAL_UNARY(asin, std::asin(X))
TIDAL_UNARY(asinh, std::asinh(X))
TIDAL_UNARY(atan, std::atan(X))
TIDAL_UNARY(atanh, std::atanh(X))
TIDAL_UNARY(cbrt, cubeRoot(X))
TIDAL_UNARY(ceil, std::ceil(X))
TIDAL_UNARY(cos, std::cos(X))
TIDAL_UNARY(cosh, std::cosh(X))
TIDAL_UNARY(cospi, cosPi(X))
TIDAL_UNARY(cyl_bessel_i0, besselI(0, X))
TIDAL_UNARY(cyl_bessel_i1, besselI(1, X))
TIDAL_UNARY(erf, std::erf(X))
TIDAL_UNARY(erfc, std::erfc(X))
TIDAL_UNARY(erfcinv, erfcInverse(X))
TIDAL_UNARY(erfcx, scaledErfc(X))
TIDAL_UNARY(erfinv, erfInverse(X))
TIDAL_UNARY(exp, std::exp(X))
TIDAL_UNARY(exp10, ::exp10(X))
TIDAL_UNARY(exp2, std::exp2(X))
TIDAL_UNARY(expm1, std::expm1(X))
TIDAL_UNARY(fabs, std::fabs(X))
TIDAL_UNARY(floor, std::floor(X))
TIDAL_UNARY(j0, ::j0(X))
TIDAL_UNARY(j1, ::j1(X))
TIDAL_UNARY(lgamma, [&] { int Sign; return ::lgamma_r(X, &Sign); }())
TIDAL_UNARY(log, std::log(X))
TIDAL_UNARY(log10, std::log10(X))
TIDAL_UNARY(log1p, std::log1p(X))
TIDAL_UNARY(log2, std::log2(X))
TIDAL_UNARY(logb, std::logb(X))
TIDAL_UNARY(nearbyint, roundNearestEven(X))
TIDAL_UNARY(normcdf, normalCdf(X))
TIDAL_UNARY(normcdfinv, normalCdfInverse(X))
TIDAL_UNARY(rcbrt, 1 / cubeRoot(X))
TIDAL_UNARY(rint, roundNearestEven(X))
TIDAL_UNARY(round, std::round(X))
TIDAL_UNARY(rsqrt, 1 / std::sqrt(X))
TIDAL_UNARY(sin, std::sin(X))
TIDAL_UNARY(sinh, std::sinh(X))
TIDAL_UNARY(sinpi, sinPi(X))
TIDAL_UNARY(sqrt, std::sqrt(X))
TIDAL_UNARY(tan, std::tan(X))
TIDAL_UNARY(tanh, std::tanh(X))
TIDAL_UNARY(tgamma, std::tgamma(X))
TIDAL_UNARY(trunc, std::trunc(X))
TIDAL_UNARY(y0, ::y0(X))
TIDAL_UNARY(y1, ::y1(X))
TIDAL_BINARY(atan2, std::atan2(X, Y))
TIDAL_BINARY(copysign, std::copysign(X, Y))
TIDAL_BINARY(fdim, std::fdim(X, Y))
TIDAL_BINARY(fmax, std::fmax(X, Y))
TIDAL_BINARY(fmin, std::fmin(X, Y))
TIDAL_BINARY(fmod, std::fmod(X, Y))
TIDAL_BINARY(hypot, std::hypot(X, Y))
TIDAL_BINARY(pow, std::pow(X, Y))
TIDAL_BINARY(remainder, std::remainder(X, Y))
TIDAL_BINARY(rhypot, 1 / std::hypot(X, Y))
#undef TIDAL_UNARY
#undef TIDAL_BINARY

// expf is the float name of exp: the macro above gives __nv_expf.
float __nv_saturatef(float X) { return X >= 1 ? 1.0f : X > 0 ? X : 0.0f; } // NaN: 0
double __nv_nextafter(double X, double Y) { return std::nextafter(X, Y); }
float __nv_nextafterf(float X, float Y) { return std::nextafter(X, Y); }
int __nv_ilogb(double X) { return std::ilogb(X); }
int __nv_ilogbf(float X) { return std::ilogb(X); }
double __nv_ldexp(double X, int Exponent) { return std::ldexp(X, Exponent); }
float __nv_ldexpf(float X, int Exponent) { return std::ldexp(X, Exponent); }
double __nv_scalbn(double X, int Exponent) { return std::scalbn(X, Exponent); }
float __nv_scalbnf(float X, int Exponent) { return std::scalbn(X, Exponent); }
double __nv_powi(double X, int Exponent) { return std::pow(X, double(Exponent)); }
float __nv_powif(float X, int Exponent) {
  return static_cast<float>(std::pow(double(X), double(Exponent)));
}
double __nv_jn(int Order, double X) { return ::jn(Order, X); }
float __nv_jnf(int Order, float X) { return static_cast<float>(::jn(Order, double(X))); }
double __nv_yn(int Order, double X) { return ::yn(Order, X); }
float __nv_ynf(int Order, float X) { return static_cast<float>(::yn(Order, double(X))); }
double __nv_frexp(double X, int *Exponent) { return std::frexp(X, Exponent); }
float __nv_frexpf(float X, int *Exponent) { return std::frexp(X, Exponent); }
double __nv_modf(double X, double *Whole) { return std::modf(X, Whole); }
float __nv_modff(float X, float *Whole) { return std::modf(X, Whole); }
double __nv_remquo(double X, double Y, int *Quotient) { return std::remquo(X, Y, Quotient); }
float __nv_remquof(float X, float Y, int *Quotient) { return std::remquo(X, Y, Quotient); }
void __nv_sincos(double X, double *Sine, double *Cosine) {
  *Sine = std::sin(X);
  *Cosine = std::cos(X);
}
void __nv_sincosf(float X, float *Sine, float *Cosine) {
  *Sine = static_cast<float>(std::sin(double(X)));
  *Cosine = static_cast<float>(std::cos(double(X)));
}
void __nv_sincospi(double X, double *Sine, double *Cosine) {
  *Sine = sinPi(X);
  *Cosine = cosPi(X);
}
void __nv_sincospif(float X, float *Sine, float *Cosine) {
  *Sine = static_cast<float>(sinPi(X));
  *Cosine = static_cast<float>(cosPi(X));
}
double __nv_fma(double X, double Y, double Z) { return std::fma(X, Y, Z); }
float __nv_fmaf(float X, float Y, float Z) { return std::fma(X, Y, Z); }
double __nv_norm3d(double A, double B, double C) { return std::hypot(std::hypot(A, B), C); }
float __nv_norm3df(float A, float B, float C) { return static_cast<float>(__nv_norm3d(A, B, C)); }
double __nv_norm4d(double A, double B, double C, double D) {
  return std::hypot(std::hypot(A, B), std::hypot(C, D));
}
float __nv_norm4df(float A, float B, float C, float D) {
  return static_cast<float>(__nv_norm4d(A, B, C, D));
}
double __nv_rnorm3d(double A, double B, double C) { return 1 / __nv_norm3d(A, B, C); }
float __nv_rnorm3df(float A, float B, float C) { return static_cast<float>(1 / __nv_norm3d(A, B, C)); }
double __nv_rnorm4d(double A, double B, double C, double D) { return 1 / __nv_norm4d(A, B, C, D); }
float __nv_rnorm4df(float A, float B, float C, float D) {
  return static_cast<float>(1 / __nv_norm4d(A, B, C, D));
}
double __nv_norm(int Count, const double *Values) { return normOf(Count, Values); }
double __nv_rnorm(int Count, const double *Values) { return 1 / normOf(Count, Values); }
float __nv_normf(int Count, const float *Values) {
  double Sum = 0;
  for (int I = 0; I < Count; ++I)
    Sum = std::hypot(Sum, double(Values[I]));
  return static_cast<float>(Sum);
}
float __nv_rnormf(int Count, const float *Values) { return 1 / __nv_normf(Count, Values); }
double __nv_nan(const signed char *Tag) { return std::nan(reinterpret_cast<const char *>(Tag)); }
float __nv_nanf(const signed char *Tag) { return std::nanf(reinterpret_cast<const char *>(Tag)); }
double __nv_rcp64h(double X) { return reciprocalOfHighWord(X); }

// The fast single-precision forms (PTX's approximate instructions on the
// GPU): here as accurate as the others.
float __nv_fast_sinf(float X) { return static_cast<float>(std::sin(double(X))); }
float __nv_fast_cosf(float X) { return static_cast<float>(std::cos(double(X))); }
float __nv_fast_tanf(float X) { return static_cast<float>(std::tan(double(X))); }
float __nv_fast_expf(float X) { return static_cast<float>(std::exp(double(X))); }
float __nv_fast_exp10f(float X) { return static_cast<float>(::exp10(double(X))); }
float __nv_fast_logf(float X) { return static_cast<float>(std::log(double(X))); }
float __nv_fast_log2f(float X) { return static_cast<float>(std::log2(double(X))); }
float __nv_fast_log10f(float X) { return static_cast<float>(std::log10(double(X))); }
float __nv_fast_powf(float X, float Y) { return static_cast<float>(std::pow(double(X), double(Y))); }
float __nv_fast_fdividef(float X, float Y) { return X / Y; }
void __nv_fast_sincosf(float X, float *Sine, float *Cosine) { __nv_sincosf(X, Sine, Cosine); }
float __nv_frsqrt_rn(float X) { return static_cast<float>(1 / std::sqrt(double(X))); }

} // extern "C"

// --- rounding-mode variants: one IEEE operation in the named mode ----------
// FENV_ACCESS makes clang keep each operation between the fesetround calls
// around it (constrained floating point), so the result is the exact
// IEEE result in that mode.
#pragma STDC FENV_ACCESS ON
namespace {

struct RoundingMode {
  int Saved;
  explicit RoundingMode(int Mode) : Saved(std::fegetround()) { std::fesetround(Mode); }
  ~RoundingMode() { std::fesetround(Saved); }
};

template <typename T> T addIn(int Mode, T X, T Y) { RoundingMode In(Mode); return X + Y; }
template <typename T> T subtractIn(int Mode, T X, T Y) { RoundingMode In(Mode); return X - Y; }
template <typename T> T multiplyIn(int Mode, T X, T Y) { RoundingMode In(Mode); return X * Y; }
template <typename T> T divideIn(int Mode, T X, T Y) { RoundingMode In(Mode); return X / Y; }
template <typename T> T fmaIn(int Mode, T X, T Y, T Z) { RoundingMode In(Mode); return std::fma(X, Y, Z); }
template <typename T> T sqrtIn(int Mode, T X) { RoundingMode In(Mode); return std::sqrt(X); }
template <typename To, typename From> To convertIn(int Mode, From X) {
  RoundingMode In(Mode);
  return static_cast<To>(X);
}

} // namespace

extern "C" {

#define TIDAL_IN_EACH_MODE(Define)                                                             \
  Define(rn, FE_TONEAREST) Define(rz, FE_TOWARDZERO) Define(ru, FE_UPWARD) Define(rd, FE_DOWNWARD)

#define TIDAL_ARITHMETIC(Suffix, Mode)                                                         \
  double __nv_dadd_##Suffix(double X, double Y) { return addIn(Mode, X, Y); }                  \
  double __nv_dsub_##Suffix(double X, double Y) { return subtractIn(Mode, X, Y); }             \
  double __nv_dmul_##Suffix(double X, double Y) { return multiplyIn(Mode, X, Y); }             \
  double __nv_ddiv_##Suffix(double X, double Y) { return divideIn(Mode, X, Y); }               \
  double __nv_drcp_##Suffix(double X) { return divideIn(Mode, 1.0, X); }                       \
  double __nv_dsqrt_##Suffix(double X) { return sqrtIn(Mode, X); }                             \
  double __nv_fma_##Suffix(double X, double Y, double Z) { return fmaIn(Mode, X, Y, Z); }      \
  float __nv_fadd_##Suffix(float X, float Y) { return addIn(Mode, X, Y); }                     \
  float __nv_fsub_##Suffix(float X, float Y) { return subtractIn(Mode, X, Y); }                \
  float __nv_fmul_##Suffix(float X, float Y) { return multiplyIn(Mode, X, Y); }                \
  float __nv_fdiv_##Suffix(float X, float Y) { return divideIn(Mode, X, Y); }                  \
  float __nv_frcp_##Suffix(float X) { return divideIn(Mode, 1.0f, X); }                        \
  float __nv_fsqrt_##Suffix(float X) { return sqrtIn(Mode, X); }                               \
  float __nv_fmaf_##Suffix(float X, float Y, float Z) { return fmaIn(Mode, X, Y, Z); }         \
  float __nv_fmaf_ieee_##Suffix(float X, float Y, float Z) { return fmaIn(Mode, X, Y, Z); }    \
  float __nv_double2float_##Suffix(double X) { return convertIn<float>(Mode, X); }             \
  float __nv_int2float_##Suffix(int X) { return convertIn<float>(Mode, X); }                   \
  float __nv_uint2float_##Suffix(unsigned X) { return convertIn<float>(Mode, X); }             \
  float __nv_ll2float_##Suffix(long long X) { return convertIn<float>(Mode, X); }              \
  float __nv_ull2float_##Suffix(unsigned long long X) { return convertIn<float>(Mode, X); }    \
  double __nv_ll2double_##Suffix(long long X) { return convertIn<double>(Mode, X); }           \
  double __nv_ull2double_##Suffix(unsigned long long X) { return convertIn<double>(Mode, X); }
TIDAL_IN_EACH_MODE(TIDAL_ARITHMETIC)
#undef TIDAL_ARITHMETIC
#undef TIDAL_IN_EACH_MODE

// Exact in any mode: every int fits a double.
double __nv_int2double_rn(int X) { return X; }
double __nv_uint2double_rn(unsigned X) { return X; }

} // extern "C"
