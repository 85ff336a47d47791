# ``cuda.bf16`` (numba-cuda's ``numba.cuda.bf16``): the bfloat16 type and
# the functions of CUDA's cuda_bf16.h that kernels call.
#
# The functions are the compiler's ``cuda.bf16.*`` rows of the intrinsic table
# (pyfrontend/IntrinsicsBFloat16.cpp), under CUDA's names (``float2bfloat16_rz``,
# ``bfloat162int_rn``, ...) and numba-cuda's NumPy-style aliases of the
# conversions (``float32_to_bfloat16_rz``, ``bfloat16_to_int32_rn``, ...),
# which are the same objects. NumPy has no bfloat16: on the host, bfloat16
# values are their 16 bits in a uint16 (or int16) array, which a kernel reads
# as bfloat16 with ``a.view(bfloat16)`` or element by element with
# ``ushort_as_bfloat16`` (docs/language.md).

from . import intrinsics as _intrinsics
from ..types import bfloat16  # noqa: F401

# CUDA's C type names in the conversions' names, and NumPy's for them.
_NUMPY_NAMES = {
    "float": "float32", "double": "float64", "char": "int8", "uchar": "uint8",
    "short": "int16", "ushort": "uint16", "int": "int32", "uint": "uint32",
    "ll": "int64", "ull": "uint64",
}


# The table's cuda.bf16 namespace: this module stands for it (its name and
# doc line, as every object of the table has them).
_NAMESPACE = vars(_intrinsics)["bf16"]
__tidal_intrinsic__ = _NAMESPACE.__tidal_intrinsic__
__doc__ = _NAMESPACE.__doc__


def _functions():
    """The table's cuda.bf16 functions by name."""
    return {name: value for name, value in vars(_NAMESPACE).items()
            if isinstance(value, _intrinsics._Function)}


def _numpy_style(name):
    """numba-cuda's alias of a conversion's C name, or None: float2bfloat16_rz
    is float32_to_bfloat16_rz, bfloat162ll_rn bfloat16_to_int64_rn,
    short_as_bfloat16 int16_as_bfloat16."""
    stem, _, mode = name.partition("_")
    suffix = "_" + mode if mode in ("rn", "rz", "rd", "ru") else ""
    if suffix or not mode:
        if stem.startswith("bfloat162") and stem[len("bfloat162"):] in _NUMPY_NAMES:
            return f"bfloat16_to_{_NUMPY_NAMES[stem[len('bfloat162'):]]}{suffix}"
        if stem.endswith("2bfloat16") and stem[:-len("2bfloat16")] in _NUMPY_NAMES:
            return f"{_NUMPY_NAMES[stem[:-len('2bfloat16')]]}_to_bfloat16{suffix}"
    if name.startswith("bfloat16_as_") and name[len("bfloat16_as_"):] in _NUMPY_NAMES:
        return "bfloat16_as_" + _NUMPY_NAMES[name[len("bfloat16_as_"):]]
    if name.endswith("_as_bfloat16") and name[:-len("_as_bfloat16")] in _NUMPY_NAMES:
        return _NUMPY_NAMES[name[:-len("_as_bfloat16")]] + "_as_bfloat16"
    return None


_FUNCTIONS = _functions()
_ALIASES = {alias: value for name, value in _FUNCTIONS.items()
            if (alias := _numpy_style(name)) is not None}
globals().update(_FUNCTIONS)
globals().update(_ALIASES)

# As numba-cuda's: the type, the h* functions and the NumPy-style names of
# the conversions (CUDA's names are attributes too).
__all__ = ["bfloat16"] + sorted(n for n in _FUNCTIONS if n.startswith("h")) + sorted(_ALIASES)


def is_bfloat16_supported():
    """Whether kernels can use bfloat16 on the current device: always on the
    cpu target; on the cuda target from compute capability 8.0 (as
    numba-cuda answers; tidal emulates bfloat16 below, in float32)."""
    from .target import current_target
    if current_target() == "cpu":
        return True
    from .devices import current_context
    return current_context().device.compute_capability >= (8, 0)
