"""numba-cuda's ``cuda.vectorize``/``cuda.guvectorize`` (target='cuda' by
default) and ``numba.cuda.vectorizers``, the classes through which Numba's
own ``numba.vectorize(..., target='cuda')`` builds CUDA ufuncs: under
tidal.install_as_numba_cuda() Numba finds these, so ``from numba import
vectorize`` makes tidal's ufuncs (tidal/ufuncs/)."""

from .. import ufuncs


def vectorize(ftylist_or_function=(), target="cuda", **options):
    """numba-cuda's cuda.vectorize: tidal.vectorize with target='cuda'."""
    return ufuncs.vectorize(ftylist_or_function, target=target, **options)


def guvectorize(*args, target="cuda", **options):
    """numba-cuda's cuda.guvectorize: tidal.guvectorize with target='cuda'."""
    return ufuncs.guvectorize(*args, target=target, **options)


class CUDAVectorize:
    """Numba's builder of a CUDA ufunc (numba.np.ufunc.Vectorize calls it
    with the function, identity, cache and the other options, then add(sig)
    per signature and build_ufunc())."""

    def __init__(self, func, identity=None, cache=False, targetoptions=None):
        options = dict(targetoptions or {})
        ufuncs._check_function(func, "vectorize")
        ufuncs._check_vectorize_options("cuda", identity, cache, options)
        self.pyfunc = func
        self.identity = identity
        self._signatures = []

    def add(self, sig=None):
        self._signatures.append(sig)

    def disable_compile(self):
        """Numba calls it after the signatures: tidal's ufunc with
        signatures compiles no others already."""

    def build_ufunc(self):
        return ufuncs.CUDAUFunc(self.pyfunc, self._signatures, identity=self.identity)


class CUDAGUFuncVectorize:
    """Numba's builder of a CUDA gufunc (numba.np.ufunc.GUVectorize)."""

    def __init__(self, func, sig, identity=None, cache=False, targetoptions=None):
        options = dict(targetoptions or {})
        options.pop("is_dynamic", None)  # Numba's, for a gufunc declared without signatures
        self._decorate = lambda signatures: ufuncs.guvectorize(
            signatures, sig, target="cuda", identity=identity, cache=cache, **options)
        self.pyfunc = func
        self._signatures = []

    def add(self, sig=None):
        self._signatures.append(sig)

    def disable_compile(self):
        """As CUDAVectorize's."""

    def build_ufunc(self):
        return self._decorate(self._signatures)(self.pyfunc)
