"""tidal.cuda.kernels.transpose.transpose(a, b=None): the transpose of a 2-D
array into `b` (a device array of the transposed shape, allocated when not
given), as Numba 0.56's numba.cuda.kernels.transpose.

One kernel per dtype (numbers and bools; records move as the unsigned
integers they divide into, through views of C-contiguous arrays; records in
other layouts are copied one per thread, without the tile): each block copies a square
tile of `a` into shared memory, a row per thread row, and writes it to `b`
from the transposed tile, so that both the reads of `a` and the writes of
`b` go along rows. The tile has one column more than it is wide, so that
the column reads of the shared tile fall in different banks.
"""

import math

import numpy as np

from tidal import cuda

from ..device_arrays import device_array
from ..devices import get_current_device
from ..dispatcher import jit

_kernels = {}


def _tile_width():
    """The side of a tile: of the largest square of threads a block may have
    (32 for 1,024 threads)."""
    threads = get_current_device().MAX_THREADS_PER_BLOCK
    return 1 << int(math.log2(threads) / 2)


def _kernel(element_type, words, width):
    """The kernel for elements of `words` items of `element_type` each: a
    number or bool type with words=1, or, for records, the unsigned integer
    type that divides the record into `words` pieces (the arrays are then
    viewed as (rows, columns * words) arrays of it)."""
    key = (element_type, words, width)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    shared_shape = (width, width + 1, words)

    def transpose_tile(a, b):
        block = cuda.shared.array(shape=shared_shape, dtype=element_type)
        column, row = cuda.threadIdx.x, cuda.threadIdx.y
        first_row = cuda.blockIdx.y * width     # of a
        first_column = cuda.blockIdx.x * width  # of a
        if first_row + row < a.shape[0] and (first_column + column) * words < a.shape[1]:
            for w in range(words):
                block[row, column, w] = a[first_row + row, (first_column + column) * words + w]
        cuda.syncthreads()
        # b's element (first_column + row, first_row + column) is
        # a[first_row + column, first_column + row], held at block[column, row].
        if first_column + row < b.shape[0] and (first_row + column) * words < b.shape[1]:
            for w in range(words):
                b[first_column + row, (first_row + column) * words + w] = block[column, row, w]

    kernel = jit(transpose_tile)
    kernel._tidal_performance_warnings = False  # the grid follows the shape
    _kernels[key] = kernel
    return kernel


def _transpose_elements(a, b):
    """Records in arrays of other layouts: a thread copies one record."""
    row, column = cuda.grid(2)
    if row < a.shape[0] and column < a.shape[1]:
        b[column, row] = a[row, column]


def _c_contiguous(array):
    return array.flags.c_contiguous if isinstance(array, np.ndarray) else \
        array.is_c_contiguous()


def _as_words(array, dtype):
    """A C-contiguous record array as (rows, columns * words) of an unsigned
    integer type (the widest that divides the record): (the view, the type,
    words)."""
    for word in (np.uint64, np.uint32, np.uint16, np.uint8):
        size = np.dtype(word).itemsize
        if dtype.itemsize % size == 0:
            break
    return array.view(word), word, dtype.itemsize // size


def transpose(a, b=None):
    """The transpose of the 2-D array `a` (a NumPy or device array) stored
    into `b` and returned; `b`, when not given, is a new device array on
    `a`'s stream. Runs on `a`'s stream when it is a device array."""
    if getattr(a, "ndim", None) != 2:
        raise ValueError(f"transpose() takes a 2-D array, got "
                         f"{getattr(a, 'ndim', type(a).__name__)} dimensions")
    stream = getattr(a, "stream", 0)
    rows, columns = a.shape
    if b is None:
        b = device_array((columns, rows), a.dtype, stream=stream)
    elif tuple(b.shape) != (columns, rows) or b.dtype != a.dtype:
        raise ValueError(f"transpose() of an array of shape {tuple(a.shape)} and dtype "
                         f"{a.dtype} needs an output of shape {(columns, rows)} and the same "
                         f"dtype, got {tuple(b.shape)} and {b.dtype}")
    if rows == 0 or columns == 0:
        return b
    width = _tile_width()
    dtype = np.dtype(a.dtype)
    if dtype.fields is not None and not (_c_contiguous(a) and _c_contiguous(b)):
        blocks = (-(-rows // width), -(-columns // width))
        kernel = _kernels.get("elements")
        if kernel is None:
            kernel = _kernels["elements"] = jit(_transpose_elements)
            kernel._tidal_performance_warnings = False  # the grid follows the shape
        kernel[blocks, (width, width), stream](a, b)
        return b
    if dtype.fields is None:
        a_items, b_items, element_type, words = a, b, dtype.type, 1
    else:
        a_items, element_type, words = _as_words(a, dtype)
        b_items, _, _ = _as_words(b, dtype)
    # a's tiles: x along its columns, y along its rows; a thread per element.
    blocks = (-(-columns // width), -(-rows // width))
    kernel = _kernel(element_type, words, width)
    kernel[blocks, (width, width), stream](a_items, b_items)
    return b
