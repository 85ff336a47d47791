"""Numba's type names (float32, int64[:, ::1], void(...)), for signatures and
for casts inside kernels (float32(x))."""

import numpy as _np

__all__ = ["NumberType", "ArrayType", "Signature"]


class NumberType:
    """A scalar type. In a kernel, calling it casts; outside, calling it with
    types builds a signature (void(float32[:], int64)) and calling it with a
    number converts like the NumPy scalar type."""

    def __init__(self, name, numpy_name):
        self.name = name
        self._numpy_type = getattr(_np, numpy_name) if numpy_name else None
        self.__tidal_intrinsic__ = "cast." + name if numpy_name else None

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __getitem__(self, dims):
        if not isinstance(dims, tuple):
            dims = (dims,)
        return ArrayType(self, dims)

    def __call__(self, *args):
        if all(_is_type(a) for a in args) and (args or self._numpy_type is None):
            return Signature(self, args)
        if self._numpy_type is None:
            raise TypeError("void cannot convert a value")
        return self._numpy_type(*args)


def _is_type(value):
    """tidal's types, and Numba's type objects (duck-typed: tidal never
    imports Numba), which a signature such as void(numba.float32[::1]) mixes in."""
    if isinstance(value, (NumberType, ArrayType)):
        return True
    return type(value).__module__.startswith("numba.core.types")


class ArrayType:
    """float32[:, ::1]: ':' for any stride, '::1' for the contiguous dimension."""

    def __init__(self, dtype, dims):
        parts = []
        for d in dims:
            if not isinstance(d, slice) or d.start is not None or d.stop is not None \
                    or d.step not in (None, 1):
                raise TypeError(
                    f"array types are written with ':' or '::1' per dimension, got {dims!r}")
            parts.append("::1" if d.step == 1 else ":")
        self.dtype = dtype
        self.ndim = len(dims)
        self._text = f"{dtype.name}[{', '.join(parts)}]"

    def __repr__(self):
        return self._text

    __str__ = __repr__


class Signature:
    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = args

    def __repr__(self):
        return f"{self.return_type}({', '.join(map(str, self.args))})"

    __str__ = __repr__


boolean = bool_ = NumberType("bool", "bool_")
int8 = NumberType("int8", "int8")
int16 = NumberType("int16", "int16")
int32 = NumberType("int32", "int32")
int64 = intp = NumberType("int64", "int64")
uint8 = NumberType("uint8", "uint8")
uint16 = NumberType("uint16", "uint16")
uint32 = NumberType("uint32", "uint32")
uint64 = uintp = NumberType("uint64", "uint64")
float16 = NumberType("float16", "float16")
float32 = NumberType("float32", "float32")
float64 = NumberType("float64", "float64")
void = NumberType("void", None)
