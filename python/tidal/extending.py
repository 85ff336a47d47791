"""Implementations of Python functions for kernels, with Numba's names:
``overload(func, target=...)`` and ``register_jitable`` (Numba's
``numba.core.extending``; docs/language.md, "Overloads").

    def clamp(x, low, high):           # a plain Python function
        ...

    @overload(clamp, target="cuda")    # or "generic": every target
    def clamp_for_kernels(x, low, high):
        def impl(x, low, high):
            return min(max(x, low), high)
        return impl

A kernel that calls ``clamp`` calls the typing function with the types of
the arguments (tidal's type objects: ``tidal.types.float32``,
``float32[::1]``; other types as an object whose ``str`` is Numba's text,
such as ``UniTuple(int64 x 2)``). It returns the implementation, a Python
function compiled as a device function (``cuda.jit(device=True)``), or None
when it does not handle those types. "cuda" overloads are tried before
"generic" ones, each in the order they were registered; the implementation
is compiled once per function and argument types.

Where the program has imported Numba itself, ``overload`` with a target
Numba's CPU compiler uses ("generic", "cpu") registers the typing function
with Numba too, so that ``@njit`` code calling ``func`` sees the same
implementations (tidal does not import Numba: it uses the module only if it
is already loaded)."""

import sys
import numpy as _np

__all__ = ["overload", "register_jitable"]

# Targets whose implementations kernels use, in the order they are tried.
_KERNEL_TARGETS = ("cuda", "gpu", "generic")
_TARGETS = frozenset(_KERNEL_TARGETS + ("cpu",))
# For Numba, where the program has loaded it.
_NUMBA_TARGETS = frozenset({"generic", "cpu"})

# func -> [(target, typing function, jit options)]
_OVERLOADS = {}
# (func, argument type texts) -> device dispatcher
_IMPLEMENTATIONS = {}
# implementation function -> its device dispatcher (one per function, which
# compiles a specialisation per argument types)
_DISPATCHERS = {}


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             target="generic", **options):
    """A decorator registering a typing function for `func` (Numba's
    numba.core.extending.overload): called with the argument types of a call
    of `func` in a kernel, it returns the Python function that implements
    that call, or None."""
    if not callable(func):
        raise TypeError(f"overload() takes the function to overload, not {type(func).__name__}")
    if target not in _TARGETS:
        raise ValueError(f"overload(): unknown target {target!r} (expected one of "
                         f"{', '.join(sorted(_TARGETS))})")
    if inline not in ("never", "always") and not callable(inline):
        raise ValueError(f"overload(): inline is 'never', 'always' or a function, not {inline!r}")
    jit_options = dict(jit_options or {})

    def decorate(typing_function):
        if not callable(typing_function):
            raise TypeError("@overload(...) decorates the typing function, not "
                            f"{type(typing_function).__name__}")
        _OVERLOADS.setdefault(func, []).append((target, typing_function, jit_options))
        for key in [k for k in _IMPLEMENTATIONS if k[0] is func]:
            del _IMPLEMENTATIONS[key]
        numba_extending = sys.modules.get("numba.core.extending")
        if numba_extending is not None and target in _NUMBA_TARGETS:
            numba_extending.overload(func, jit_options=jit_options, strict=strict,
                                     inline=inline, prefer_literal=prefer_literal,
                                     target=target, **options)(typing_function)
        return typing_function

    return decorate


def register_jitable(*args, **options):
    """Numba's register_jitable: `fn` stays a Python function, and kernels
    (and, where Numba is loaded, @njit code) may call it, compiled for the
    argument types of each call. As @register_jitable or
    @register_jitable(**jit_options)."""
    def wrap(fn):
        overload(fn, jit_options=options, target="generic")(lambda *types, **kw: fn)
        return fn

    if len(args) == 1 and not options and callable(args[0]):
        return wrap(args[0])
    if args:
        raise TypeError("register_jitable takes a function, or keyword jit options only")
    return wrap


class _OtherType:
    """An argument type tidal's type objects do not name: Numba's text."""

    def __init__(self, text):
        self.name = text

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, _OtherType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _type_object(text):
    """tidal's type object for the frontend's text of a type."""
    from . import types
    from .cuda.signatures import _parse_type
    try:
        description = _parse_type(text)
    except TypeError:
        return _OtherType(text)
    if description[0] == "scalar" and description[1] in types.SCALAR_TYPES:
        return types.SCALAR_TYPES[description[1]]
    if description[0] == "array" and not description[4]:
        element, ndim, layout = description[1], description[2], description[3]
        if element[0] == "scalar" and element[1] in types.SCALAR_TYPES:
            contiguous = {"C": ndim - 1, "F": 0}.get(layout)
            dims = tuple(slice(None, None, 1) if d == contiguous else slice(None)
                         for d in range(ndim))
            return types.SCALAR_TYPES[element[1]][dims]
    return _OtherType(text)


def _implementation(func, type_texts):
    """Called by the frontend for a call of `func` that is no intrinsic, device
    function or kernel: None when `func` has no overload; else the device
    dispatcher implementing the call, or the text of the error to report."""
    entries = _OVERLOADS.get(func)
    if not entries:
        if isinstance(func, _np.ufunc):
            return _ufunc_implementation(func, type_texts)
        return None
    key = (func, tuple(type_texts))
    found = _IMPLEMENTATIONS.get(key)
    if found is not None:
        return found
    argument_types = [_type_object(t) for t in type_texts]
    tried = []
    for target in _KERNEL_TARGETS:
        for entry_target, typing_function, jit_options in entries:
            if entry_target != target:
                continue
            name = getattr(typing_function, "__qualname__", repr(typing_function))
            try:
                implementation = typing_function(*argument_types)
            except Exception as error:  # noqa: BLE001 - reported, located, by the frontend
                return (f"the typing function {name} of overloaded '{_name(func)}' raised "
                        f"{type(error).__name__}: {error}")
            tried.append(f"{name} ({target})")
            if implementation is None:
                continue
            if not callable(implementation):
                return (f"the typing function {name} of overloaded '{_name(func)}' returned "
                        f"{type(implementation).__name__}, not a function")
            from .cuda import jit
            if hasattr(implementation, "__tidal_device__"):
                dispatcher = implementation
            else:
                dispatcher = _DISPATCHERS.get(implementation)
                if dispatcher is None:
                    dispatcher = jit(device=True, **jit_options)(implementation)
                    _DISPATCHERS[implementation] = dispatcher
            _IMPLEMENTATIONS[key] = dispatcher
            return dispatcher
    described = ", ".join(type_texts)
    listed = ", ".join(tried) or "none for kernels (its overloads are for the cpu target)"
    return (f"no implementation of overloaded '{_name(func)}' for argument types "
            f"({described}): its typing functions returned None: {listed}")


def _ufunc_implementation(func, type_texts):
    """A NumPy ufunc without a user's overload: the device function of
    tidal.cuda._ufunc_calls for these argument types (cached here too)."""
    key = (func, tuple(type_texts))
    found = _IMPLEMENTATIONS.get(key)
    if found is None:
        from .cuda import _ufunc_calls
        found = _ufunc_calls.implementation(func, list(type_texts))
        _IMPLEMENTATIONS[key] = found
    return found


def _name(func):
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
