"""The CUDA names kernels use. They mean something only inside a kernel,
where the compiler recognises them by their ``__tidal_intrinsic__`` name
and emits markers (docs/markers.md); called from Python they raise.

The names, their kinds and their docs come from the compiler's intrinsic
table (pyfrontend/IntrinsicTable.h) through the generated module
``_intrinsic_table`` (``tidalc --list-intrinsics``, written at build time),
so Python lists exactly the names the compiler knows."""

from .._intrinsic_table import INTRINSICS


class _Intrinsic:
    def __init__(self, name, doc):
        self.__tidal_intrinsic__ = name
        self.__doc__ = doc
        self._name = name

    def __repr__(self):
        return f"<tidal intrinsic {self._name}>"


class _Function(_Intrinsic):
    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._name}() can only be used inside a kernel")


class _Value(_Intrinsic):
    """laneid, warpsize: a value inside a kernel."""


class _Namespace(_Intrinsic):
    """cuda.shared, cuda.local, cuda.const, cuda.atomic: holders of functions."""

    def __repr__(self):
        return f"<tidal namespace {self._name}>"


class _Dim3(_Intrinsic):
    """threadIdx, blockIdx, blockDim, gridDim: .x, .y and .z in kernels."""

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"{self._name}.{attr} can only be used inside a kernel")
        raise AttributeError(attr)


_KINDS = {"function": _Function, "value": _Value, "namespace": _Namespace, "dim3": _Dim3}


def _build(records):
    """The objects of tidal.cuda by attribute name: cuda.X becomes X; a
    function cuda.N.f becomes attribute f of namespace N (and cuda.N.M.f
    attribute f of N's namespace M)."""
    objects = {}
    # Namespaces first, so that their functions find them.
    for path, kind, doc in sorted(records, key=lambda record: record[0].count(".")):
        parts = path.split(".")
        obj = _KINDS[kind](path, doc)
        if len(parts) == 2:
            objects[parts[1]] = obj
        else:  # cuda.N.f, or cuda.N.M.f (cuda.cg.GridGroup.sync)
            owner = objects[parts[1]]
            for part in parts[2:-1]:
                owner = getattr(owner, part)
            setattr(owner, parts[-1], obj)
    return objects


# tidal.cuda's own names; libdevice.* are tidal.cuda.libdevice's (libdevice.py).
_CUDA = [record for record in INTRINSICS if record[0].startswith("cuda.")]
globals().update(_build(_CUDA))
__all__ = sorted(path.split(".")[1] for path, _, _ in _CUDA if path.count(".") == 1)


def _vector_type_aliases(objects):
    """CUDA's C names of the vector types (float4, double2, short2, ulong3,
    ...), each the same object as its sized name, as in Numba: the C type's
    size on this platform picks the element (long is int64 on Linux)."""
    c_types = {"char": "byte", "short": "short", "int": "intc", "long": "int_",
               "longlong": "longlong", "uchar": "ubyte", "ushort": "ushort",
               "uint": "uintc", "ulong": "uint", "ulonglong": "ulonglong",
               "float": "single", "double": "double"}
    import numpy as np
    aliases = {}
    for c_name, numpy_name in c_types.items():
        dtype = np.dtype(getattr(np, numpy_name))
        element = {"f": "float", "i": "int", "u": "uint"}[dtype.kind] + str(dtype.itemsize * 8)
        for count in range(1, 5):
            vector = objects[f"{element}x{count}"]
            vector.aliases = getattr(vector, "aliases", []) + [f"{c_name}{count}"]
            aliases[f"{c_name}{count}"] = vector
    return aliases


_VECTOR_ALIASES = _vector_type_aliases(globals())
globals().update(_VECTOR_ALIASES)
__all__ += sorted(_VECTOR_ALIASES)
