"""numba-cuda's ``numba.cuda.extending`` names: ``overload``,
``overload_method``, ``overload_attribute`` and ``register_jitable``, whose
target defaults to "cuda" here as in numba-cuda (tidal.extending's default,
Numba's, is "generic"). Under ``python3 -m tidal run`` a program's
``from numba.cuda.extending import overload_method`` gets these.

Numba's lower-level extension API (``intrinsic``, ``typeof_impl``,
``register_model``, ``lower_builtin``, ``make_attribute_wrapper``, ...) works
on Numba's typing objects and LLVM builders and is not offered: those names
import, and using one raises NotImplementedError saying so
(docs/language.md, "Overloads")."""

from .. import extending as _extending
from ..extending import Literal, register_jitable  # noqa: F401 (numba-cuda's names)

__all__ = ["overload", "overload_method", "overload_attribute", "register_jitable", "Literal"]

# numba.cuda.extending's names that tidal does not offer.
_NOT_OFFERED = frozenset({
    "intrinsic", "typeof_impl", "as_numba_type", "infer", "infer_getattr", "type_callable",
    "register_model", "models", "box", "unbox", "reflect", "NativeValue", "lower_builtin",
    "lower_getattr", "lower_getattr_generic", "lower_setattr", "lower_setattr_generic",
    "lower_cast", "make_attribute_wrapper", "overload_classmethod", "sentry_literal_args",
    "is_jitted",
})


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             target="cuda", **options):
    """numba.cuda.extending.overload: tidal.extending.overload with the
    target "cuda" unless told otherwise."""
    return _extending.overload(func, jit_options=jit_options, strict=strict, inline=inline,
                               prefer_literal=prefer_literal, target=target, **options)


def overload_method(typ, attr, target="cuda", **options):
    """numba.cuda.extending.overload_method (target "cuda" by default)."""
    return _extending.overload_method(typ, attr, target=target, **options)


def overload_attribute(typ, attr, target="cuda", **options):
    """numba.cuda.extending.overload_attribute (target "cuda" by default)."""
    return _extending.overload_attribute(typ, attr, target=target, **options)


class _NotOffered:
    """One of numba.cuda.extending's low-level names: importable, so that a
    program that imports it still loads, and an error that says why where it
    is used."""

    def __init__(self, name):
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"numba.cuda.extending.{self.__name__} is not offered by tidal: Numba's low-level "
            f"extension API works on Numba's typing objects and LLVM builders; use overload, "
            f"overload_method or overload_attribute (docs/language.md, 'Overloads')")

    def __repr__(self):
        return f"<numba.cuda.extending.{self.__name__}: not offered by tidal>"


globals().update({name: _NotOffered(name) for name in _NOT_OFFERED})
