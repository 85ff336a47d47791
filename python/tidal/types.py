"""Numba's type names (float32, int64[:, ::1], void(...)), for signatures and
for casts inside kernels (float32(x)).

The scalar types are the compiler's casts: one object per ``cast.*`` row of
the intrinsic table (pyfrontend/IntrinsicsBuiltins.cpp), read from the
generated ``_intrinsic_table``, so a type Python offers is one kernels can
convert to."""

import numpy as _np

from ._intrinsic_table import INTRINSICS as _INTRINSICS

__all__ = ["NumberType", "ArrayType", "Signature"]


class NumberType:
    """A scalar type. In a kernel, calling it casts; outside, calling it with
    types builds a signature (void(float32[:], int64)) and calling it with a
    number converts like the NumPy scalar type."""

    def __init__(self, name, numpy_name, doc=None, casts=None):
        self.name = name
        self._numpy_type = getattr(_np, numpy_name) if numpy_name else None
        # A cast in kernels: every type NumPy has, and bfloat16, which it has not.
        casts = bool(numpy_name) if casts is None else casts
        self.__tidal_intrinsic__ = "cast." + name if casts else None
        if doc:
            self.__doc__ = doc

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
        if self._numpy_type is None and self.__tidal_intrinsic__:
            raise TypeError(
                f"NumPy has no {self.name}: on the host, {self.name} values are their bits in a "
                f"uint16 array (docs/language.md); {self.name}(x) converts only in kernels")
        if self._numpy_type is None:
            raise TypeError("void cannot convert a value")
        return self._numpy_type(*args)


def _is_type(value):
    """tidal's types, and Numba's type objects (duck-typed: tidal never
    imports Numba), which a signature such as void(numba.float32[::1]) mixes in."""
    if isinstance(value, (NumberType, ArrayType, PointerType)):
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

    def __eq__(self, other):
        return isinstance(other, ArrayType) and self._text == other._text

    def __hash__(self):
        return hash(self._text)


class PointerType:
    """Numba's CPointer(uint8) (printed uint8*, as Numba prints it) and
    voidptr (void*): an address passed to a kernel or device function
    (docs/language.md, "Pointers")."""

    def __init__(self, dtype):
        self.dtype = dtype
        self._text = "void*" if dtype is None else f"{dtype.name}*"

    def __repr__(self):
        return self._text

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, PointerType) and self._text == other._text

    def __hash__(self):
        return hash(self._text)


def CPointer(dtype):
    """A pointer to elements of a scalar type: CPointer(uint8)."""
    if not isinstance(dtype, NumberType) or dtype.name == "void":
        name = getattr(dtype, "name", None)
        if name not in SCALAR_TYPES:
            raise TypeError(f"CPointer() takes a scalar type such as uint8, not {dtype!r}")
        dtype = SCALAR_TYPES[name]
    return PointerType(dtype)


class Signature:
    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = args

    def __repr__(self):
        return f"{self.return_type}({', '.join(map(str, self.args))})"

    __str__ = __repr__


def _scalar_types():
    """A NumberType per cast.* row of the compiler's table, by type name."""
    numpy_names = {"bool": "bool_"}
    types = {}
    for path, _, doc in _INTRINSICS:
        if path.startswith("cast."):
            name = path[len("cast."):]
            numpy_name = numpy_names.get(name, name)
            if not hasattr(_np, numpy_name):  # bfloat16: a kernel type NumPy has not
                types[name] = NumberType(name, None, doc, casts=True)
            else:
                types[name] = NumberType(name, numpy_name, doc)
    return types


SCALAR_TYPES = _scalar_types()
# "bool" would hide the builtin in this module: it is boolean and bool_.
globals().update({name: t for name, t in SCALAR_TYPES.items() if name != "bool"})
boolean = bool_ = SCALAR_TYPES["bool"]
intp = SCALAR_TYPES["int64"]
uintp = SCALAR_TYPES["uint64"]
# Numba's C-style aliases.
float_ = SCALAR_TYPES["float32"]
double = SCALAR_TYPES["float64"]
void = NumberType("void", None)
voidptr = PointerType(None)
# Numba's short aliases, after NumPy's type codes.
b1 = boolean
i1, i2, i4, i8 = (SCALAR_TYPES[f"int{n}"] for n in (8, 16, 32, 64))
u1, u2, u4, u8 = (SCALAR_TYPES[f"uint{n}"] for n in (8, 16, 32, 64))
f2, f4, f8 = (SCALAR_TYPES[f"float{n}"] for n in (16, 32, 64))
c8, c16 = SCALAR_TYPES["complex64"], SCALAR_TYPES["complex128"]
