"""numba-cuda's numba.cuda._internal.cuda_bf16: cuda_bf16.h's names as
programs import them from there.

    from tidal.cuda._internal.cuda_bf16 import nv_bfloat16, __hadd, __float2bfloat16_rz

The type (``nv_bfloat16``, also ``__nv_bfloat16``) is ``cuda.bfloat16``; each
function is the ``cuda.bf16`` function of the same name without the two
leading underscores (``__hadd`` is ``cuda.bf16.hadd``), the same object. The
bfloat162 pair type and its functions (``__hadd2``, ``__floats2bfloat162_rn``,
...) are not offered: tidal has no bfloat162 values (docs/language.md,
"bfloat16 and cuda.bf16").
"""

from .. import bf16 as _bf16

nv_bfloat16 = __nv_bfloat16 = _bf16.bfloat16

# CUDA's double-underscore name of each function (cuda.bf16 keeps CUDA's
# names without it, as numba-cuda's numba.cuda.bf16 does).
_FUNCTIONS = {"__" + name: value for name, value in _bf16._FUNCTIONS.items()}
globals().update(_FUNCTIONS)

__all__ = ["nv_bfloat16", "__nv_bfloat16"] + sorted(_FUNCTIONS)
