"""numba-cuda's numba.cuda._internal.cuda_fp8: CUDA's 8-bit floats
(cuda_fp8.h) in kernels.

    from tidal.cuda._internal.cuda_fp8 import fp8_e4m3, cvt_float_to_fp8, saturation_t

The types (``fp8_e4m3``, ``fp8_e5m2``, ``fp8_e8m0``) and the ``cvt_*``
functions are the compiler's ``cuda.fp8`` intrinsics (also
``tidal.cuda.fp8.<name>``); the enums are the IntEnum classes their mode
arguments take. ``cudaRoundMode`` is cuda.bindings.runtime's enum (numba-cuda's
tests import it from there; tidal, which does not need cuda-python, has its
own, with the same values: a member of either class is accepted in kernels).
See docs/language.md, "cuda.fp8".
"""

from enum import IntEnum

from .. import intrinsics as _intrinsics


class saturation_t(IntEnum):
    """What a conversion does with a value beyond the fp8 type's range:
    NOSAT gives NaN (e4m3, e8m0) or infinity (e5m2), SATFINITE the largest
    finite value."""
    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(IntEnum):
    """Which 8-bit format cvt_*_to_fp8 writes."""
    E4M3 = 0
    E5M2 = 1


class cudaRoundMode(IntEnum):
    """CUDA's rounding modes (device_types.h); the e8m0 conversions take
    cudaRoundZero and cudaRoundPosInf."""
    cudaRoundNearest = 0
    cudaRoundZero = 1
    cudaRoundPosInf = 2
    cudaRoundMinInf = 3


_NAMESPACE = _intrinsics.fp8

_RECORD_SYMBOLS = ["fp8_e5m2", "fp8_e4m3", "fp8_e8m0"]
_FUNCTION_SYMBOLS = [
    "cvt_double_to_fp8", "cvt_double2_to_fp8x2", "cvt_float_to_fp8", "cvt_float2_to_fp8x2",
    "cvt_bfloat16raw_to_fp8", "cvt_bfloat16raw_to_e8m0", "cvt_float_to_e8m0",
    "cvt_float2_to_e8m0x2", "cvt_double_to_e8m0", "cvt_double2_to_e8m0x2", "cvt_e8m0_to_bf16raw",
]
_ENUM_SYMBOLS = ["saturation_t", "fp8_interpretation_t"]

globals().update({name: getattr(_NAMESPACE, name) for name in _RECORD_SYMBOLS + _FUNCTION_SYMBOLS})
# cuda.fp8.saturation_t.NOSAT & co. work too.
for _enum in (saturation_t, fp8_interpretation_t, cudaRoundMode):
    setattr(_NAMESPACE, _enum.__name__, _enum)
del _enum

__all__ = _RECORD_SYMBOLS + _FUNCTION_SYMBOLS + _ENUM_SYMBOLS + ["cudaRoundMode"]
