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

# Numba's ufunc targets. tidal has one kernel target at a time (the GPU, or
# its cpu target where no GPU is usable), and ufuncs of every target run on
# it: 'cpu' and 'parallel' ufuncs give what Numba's do, computed there.
_TARGETS = ("cuda", "cpu", "parallel")


def _check_target(target, what):
    if target not in _TARGETS:
        raise ValueError(f"Unsupported target: {target!r}. tidal's {what} takes "
                         f"target='cuda' (or Numba's 'cpu' and 'parallel', which run on "
                         f"tidal's current target too)")


def _signature_list(signatures):
    return [signatures] if isinstance(signatures, str) else list(signatures)


def _check_function(func, what):
    if not inspect.isfunction(func):
        raise TypeError(f"{what} decorates a Python function, not {func!r}")


def _check_vectorize_options(target, identity, cache, options):
    _check_target(target, "vectorize")
    check_identity(identity)
    if cache:
        raise TypeError("caching is not supported")
    for option in options:
        if option == "nopython":
            warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning)
        else:
            raise KeyError(f"Unrecognized options. cuda vectorize target does not support "
                           f"option: '{option}'")


def vectorize(ftylist_or_function=(), target="cpu", identity=None, cache=False, **options):
    """Numba's vectorize: @vectorize(signatures, target='cuda') makes a
    ufunc with one kernel per signature, compiled now; @vectorize or
    @vectorize(target='cuda') without signatures makes a dynamic ufunc,
    which compiles a signature for each new set of input dtypes. Options
    as Numba's CUDA target: `nopython` (redundant: a RuntimeWarning), any
    other option a KeyError."""
    _check_vectorize_options(target, identity, cache, options)
    if inspect.isfunction(ftylist_or_function):
        return CUDAUFunc(ftylist_or_function, [], identity=identity)
    signatures = _signature_list(ftylist_or_function or ())

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
