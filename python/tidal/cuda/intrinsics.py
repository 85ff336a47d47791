"""The CUDA names kernels use. They mean something only inside a kernel,
where the compiler recognises them by their ``__tidal_intrinsic__`` name
and emits markers (docs/markers.md); called from Python they raise."""


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


class _Dim3(_Intrinsic):
    """threadIdx, blockIdx, blockDim, gridDim: .x, .y and .z in kernels."""

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"{self._name}.{attr} can only be used inside a kernel")
        raise AttributeError(attr)


threadIdx = _Dim3("cuda.threadIdx", "The thread's index in its block (int32 .x, .y, .z).")
blockIdx = _Dim3("cuda.blockIdx", "The block's index in the grid (int32 .x, .y, .z).")
blockDim = _Dim3("cuda.blockDim", "The size of a block, in threads (int32 .x, .y, .z).")
gridDim = _Dim3("cuda.gridDim", "The size of the grid, in blocks (int32 .x, .y, .z).")
grid = _Function(
    "cuda.grid",
    "grid(ndim): the thread's absolute index in the grid: an int64 for ndim=1, "
    "a tuple of ndim int64 otherwise.")
gridsize = _Function(
    "cuda.gridsize",
    "gridsize(ndim): the number of threads in the grid along each axis (int64).")
