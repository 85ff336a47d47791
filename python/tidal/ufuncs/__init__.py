"""tidal.vectorize and tidal.guvectorize: Numba's decorators, for
target='cuda' (ufunc.py, gufunc.py). They run on the target tidal runs
kernels on: the GPU, or the cpu target where none is usable.

    @vectorize(['float32(float32, float32)', 'float64(float64, float64)'],
               target='cuda')
    def add(a, b):
        return a + b
"""

import inspect
import warnings

from .gufunc import CUDAGUFunc
from .ufunc import CUDAUFunc, check_identity

__all__ = ["vectorize", "guvectorize", "CUDAUFunc", "CUDAGUFunc"]

_TARGETS = ("cuda",)


def _check_target(target, what):
    if target not in _TARGETS:
        raise ValueError(
            f"Unsupported target: {target!r}. tidal's {what} compiles for target='cuda' "
            f"(which runs on the GPU, or on tidal's cpu target where no GPU is usable); "
            f"Numba's 'cpu' and 'parallel' ufunc targets are not part of tidal")


def _signature_list(signatures):
    return [signatures] if isinstance(signatures, str) else list(signatures)


def _check_function(func, what):
    if not inspect.isfunction(func):
        raise TypeError(f"{what} decorates a Python function, not {func!r}")


def vectorize(ftylist_or_function=(), target="cpu", identity=None, cache=False, **options):
    """Numba's vectorize: @vectorize(signatures, target='cuda') makes a
    ufunc with one kernel per signature, compiled now. Options as Numba's
    CUDA target: `nopython` (redundant: a RuntimeWarning), any other option
    a KeyError."""
    if inspect.isfunction(ftylist_or_function):
        _check_target(target, "vectorize")
        raise TypeError(
            f"vectorize of '{ftylist_or_function.__name__}' with target='cuda' needs its "
            f"signatures, such as @vectorize(['float32(float32, float32)'], target='cuda')")
    _check_target(target, "vectorize")
    signatures = _signature_list(ftylist_or_function)
    check_identity(identity)
    if cache:
        raise TypeError("caching is not supported")
    for option in options:
        if option == "nopython":
            warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning)
        else:
            raise KeyError(f"Unrecognized options. cuda vectorize target does not support "
                           f"option: '{option}'")
    if not signatures:
        raise TypeError("vectorize with target='cuda' needs signatures, such as "
                        "@vectorize(['float32(float32, float32)'], target='cuda')")

    def wrap(func):
        _check_function(func, "vectorize")
        return CUDAUFunc(func, signatures, identity=identity)

    return wrap


def guvectorize(*args, target="cpu", identity=None, cache=False, **options):
    """Numba's guvectorize: @guvectorize(signatures, layout, target='cuda').
    Options as Numba's CUDA target: `nopython` must be True; any other is a
    TypeError."""
    if len(args) == 1:
        signatures, layout = [], args[0]
    elif len(args) == 2:
        signatures, layout = _signature_list(args[0]), args[1]
    else:
        raise TypeError("guvectorize() takes one or two positional arguments")
    _check_target(target, "guvectorize")
    check_identity(identity)
    if cache:
        raise TypeError("caching is not supported")
    if not options.pop("nopython", True):
        raise TypeError("nopython flag must be True")
    if options:
        raise TypeError("The following target options are not supported: "
                        + ", ".join(repr(k) for k in options))
    if not signatures:
        raise TypeError("guvectorize with target='cuda' needs signatures, such as "
                        "@guvectorize(['void(float32[:], float32[:])'], '(n)->()', "
                        "target='cuda')")

    def wrap(func):
        _check_function(func, "guvectorize")
        return CUDAGUFunc(func, signatures, layout, identity=identity)

    return wrap
