// Compiler helper functions that host-lowered kernels may call and that the
// JIT cannot find in the process: the half-precision conversions
// (__truncdfhf2 and friends) and 128-bit integer and powi helpers live in
// libgcc or compiler-rt, which a Python extension loads privately
// (RTLD_LOCAL), so dlsym(RTLD_DEFAULT) does not see them. They are handed to
// the JIT by address (CpuTarget.cpp, addProcessSymbols).
#include "CpuCompilerBuiltins.h"

#include <cstdint>

namespace tidal::runtime {
namespace {

#if defined(__FLT16_MAX__)
// The compiler implements each conversion (inline, or with its own runtime's
// helper, linked into this library); the JIT calls these with the same
// calling convention as the helper it asked for.
_Float16 truncateDoubleToHalf(double Value) { return static_cast<_Float16>(Value); }
_Float16 truncateFloatToHalf(float Value) { return static_cast<_Float16>(Value); }
float extendHalfToFloat(_Float16 Value) { return static_cast<float>(Value); }
double extendHalfToDouble(_Float16 Value) { return static_cast<double>(Value); }
// The older names, which pass the half as its 16 bits in an integer register.
uint16_t floatToHalfBits(float Value) {
  const _Float16 Half = static_cast<_Float16>(Value);
  return __builtin_bit_cast(uint16_t, Half);
}
float halfBitsToFloat(uint16_t Bits) {
  return static_cast<float>(__builtin_bit_cast(_Float16, Bits));
}
#endif

// bfloat16 from float32 and float64, rounded once to nearest, ties to even
// (NaN: CUDA's canonical NaN, 0x7fff), as NVPTX's cvt.rn.bf16.f32/.f64.
// The x86-64 ABI passes and returns a bfloat16 in the low 16 bits of an SSE
// register, as a float is: these return a float whose low 16 bits are the
// bfloat16's (the compiler may have no __bf16 type).
uint16_t floatBitsToBFloat16(uint32_t Bits) {
  if ((Bits & 0x7fffffffu) > 0x7f800000u)
    return 0x7fff;
  // Round to nearest even on the 16 dropped bits; a carry moves into the
  // exponent, up to infinity, as it should.
  const uint32_t Rounded = Bits + 0x7fffu + ((Bits >> 16) & 1u);
  return static_cast<uint16_t>(Rounded >> 16);
}
float bfloat16InFloatRegister(uint16_t BFloat16) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(BFloat16));
}
float truncateFloatToBFloat16(float Value) {
  return bfloat16InFloatRegister(floatBitsToBFloat16(__builtin_bit_cast(uint32_t, Value)));
}
// From float64: to float32 rounded to odd first (the nearest float32, moved
// one step to an odd significand where it was inexact and even), which
// keeps every bit the final rounding needs, then rounded once.
float truncateDoubleToBFloat16(double Value) {
  float Nearest = static_cast<float>(Value);
  uint32_t Bits = __builtin_bit_cast(uint32_t, Nearest);
  const double Back = static_cast<double>(Nearest);
  if (Value == Value && Back != Value && (Bits & 1u) == 0 &&
      (Bits & 0x7fffffffu) != 0x7f800000u) {
    const bool TowardZero = (Back > Value) == (Value > 0); // the nearest overshot in magnitude
    Bits = TowardZero ? Bits - 1 : Bits + 1;
  } // (a float64 past float32's range rounds to infinity in bfloat16 too)
  return bfloat16InFloatRegister(floatBitsToBFloat16(Bits));
}

// llvm.powi: x to an integer power, by squaring (as compiler-rt does).
template <typename Float> Float powerByInteger(Float Base, int32_t Exponent) {
  const bool Reciprocal = Exponent < 0;
  uint32_t Remaining = Reciprocal ? 0u - uint32_t(Exponent) : uint32_t(Exponent);
  Float Result = 1;
  while (Remaining) {
    if (Remaining & 1)
      Result *= Base;
    Base *= Base;
    Remaining >>= 1;
  }
  return Reciprocal ? 1 / Result : Result;
}
float powerByIntegerFloat(float Base, int32_t Exponent) {
  return powerByInteger(Base, Exponent);
}
double powerByIntegerDouble(double Base, int32_t Exponent) {
  return powerByInteger(Base, Exponent);
}

#if defined(__SIZEOF_INT128__)
// 128-bit division; the compiler expands these operators with its own
// runtime's helpers where it has no instruction for them. Division by zero
// is undefined, as it is for the helpers themselves; the frontend checks
// Python's integer division before it gets here.
__int128 divideSigned128(__int128 A, __int128 B) { return A / B; }
__int128 remainderSigned128(__int128 A, __int128 B) { return A % B; }
unsigned __int128 divideUnsigned128(unsigned __int128 A, unsigned __int128 B) {
  return A / B;
}
unsigned __int128 remainderUnsigned128(unsigned __int128 A, unsigned __int128 B) {
  return A % B;
}
#endif

} // namespace

std::vector<CompilerBuiltin> compilerBuiltins() {
  std::vector<CompilerBuiltin> Builtins = {
      {"__powisf2", reinterpret_cast<void *>(&powerByIntegerFloat)},
      {"__powidf2", reinterpret_cast<void *>(&powerByIntegerDouble)},
      {"__truncsfbf2", reinterpret_cast<void *>(&truncateFloatToBFloat16)},
      {"__truncdfbf2", reinterpret_cast<void *>(&truncateDoubleToBFloat16)},
  };
#if defined(__FLT16_MAX__)
  Builtins.insert(Builtins.end(), {
      {"__truncdfhf2", reinterpret_cast<void *>(&truncateDoubleToHalf)},
      {"__truncsfhf2", reinterpret_cast<void *>(&truncateFloatToHalf)},
      {"__extendhfsf2", reinterpret_cast<void *>(&extendHalfToFloat)},
      {"__extendhfdf2", reinterpret_cast<void *>(&extendHalfToDouble)},
      {"__gnu_f2h_ieee", reinterpret_cast<void *>(&floatToHalfBits)},
      {"__gnu_h2f_ieee", reinterpret_cast<void *>(&halfBitsToFloat)},
  });
#endif
#if defined(__SIZEOF_INT128__)
  Builtins.insert(Builtins.end(), {
      {"__divti3", reinterpret_cast<void *>(&divideSigned128)},
      {"__modti3", reinterpret_cast<void *>(&remainderSigned128)},
      {"__udivti3", reinterpret_cast<void *>(&divideUnsigned128)},
      {"__umodti3", reinterpret_cast<void *>(&remainderUnsigned128)},
  });
#endif
  return Builtins;
}

} // namespace tidal::runtime
