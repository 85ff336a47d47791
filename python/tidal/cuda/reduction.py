"""cuda.Reduce and cuda.reduce: reducing a 1-D array with a binary function,
with Numba's API (``Reduce(fn)(arr, size=None, res=None, init=0, stream=0)``).

The function becomes a device function, called by a kernel generated for it
and the array's dtype. One launch folds the array into a partial result per
block: each thread first folds its elements (grid-strided on the cuda
target, where that coalesces; consecutive on the cpu target, where each
thread runs its loop alone), then the block combines its threads' values in
shared memory, halving down to one warp, whose last steps need only
``syncwarp``. A second launch of the same kernel, one block, folds the
partials and ``init`` into the result, which stays on the device in ``res``
or comes back as a NumPy scalar. An array of one block's worth needs the
one launch only.

The function is assumed associative and commutative, as in Numba: on the
cuda target the threads' elements interleave.
"""

import ast
import inspect
import linecache
import textwrap
import types

import numpy as np

from .device_arrays import DeviceNDArray, device_array, to_device
from .dispatcher import DeviceFunction, jit
from .array_interface import is_cuda_array
from .target import on_cuda
# The kernel's cuda.* names. tidal.cuda imports this module last, so the
# package is (partly) there already.
from tidal import cuda

_WARP_SIZE = 32
_BLOCK_SIZE = 256
# The first launch's blocks at most (the final pass folds their partials,
# one block): enough to fill a large GPU on the cuda target; on the cpu
# target a block costs its barriers, and 256 keep its workers busy. And the
# fewest elements a thread folds before a block is added.
_MAX_BLOCKS = {"cuda": 1024, "cpu": 256}
_ELEMENTS_PER_THREAD = 16


def _grid(count):
    """(blocks, chunk) of a launch over ``count`` elements: chunk 0 (grid
    stride) on the cuda target; on the cpu target, each thread's elements
    consecutive."""
    per_block = _BLOCK_SIZE * _ELEMENTS_PER_THREAD
    cuda_target = on_cuda()
    most = _MAX_BLOCKS["cuda" if cuda_target else "cpu"]
    blocks = max(1, min((count + per_block - 1) // per_block, most))
    if cuda_target:
        return blocks, 0
    threads = blocks * _BLOCK_SIZE
    chunk = (count + threads - 1) // threads
    # Every block must hold a value: with chunks rounded up, fewer may do.
    holders = (count + chunk - 1) // chunk
    return (holders + _BLOCK_SIZE - 1) // _BLOCK_SIZE, chunk


def _reduction_kernel(operation, dtype):
    """The kernel for one binary device function and one dtype."""
    item_type = np.dtype(dtype).type  # tidal freezes scalar types, not dtype objects

    @jit
    def reduce_blocks(source, count, chunk, out, init, use_init):
        # out[block] = the fold of this block's threads' elements of
        # source[:count], then of init if use_init (one block). A thread's
        # elements: grid-strided (chunk 0: coalesced on a GPU), or `chunk`
        # consecutive ones (the cpu target, where each thread runs its loop
        # alone and consecutive reads share cache lines).
        partials = cuda.shared.array(_BLOCK_SIZE, item_type)
        thread = cuda.threadIdx.x
        block_start = cuda.blockIdx.x * cuda.blockDim.x
        first = block_start + thread
        step = cuda.blockDim.x * cuda.gridDim.x
        stop = count
        holders = count
        if chunk > 0:
            first = first * chunk
            step = 1
            stop = min(first + chunk, count)
            holders = (count + chunk - 1) // chunk
        # 1. Each thread folds its elements. The threads that hold a value
        #    are a prefix of the grid, so of the block: `active` of them.
        if first < stop:
            value = source[first]
            for i in range(first + step, stop, step):
                value = operation(value, source[i])
            partials[thread] = value
        active = min(holders - block_start, cuda.blockDim.x)
        cuda.syncthreads()
        # 2. Halving in shared memory, the whole block, down to one warp.
        width = _BLOCK_SIZE // 2
        while width >= _WARP_SIZE:
            if thread < width and thread + width < active:
                partials[thread] = operation(partials[thread], partials[thread + width])
            cuda.syncthreads()
            width //= 2
        # 3. The last warp: its lanes write below `width` and read above it.
        if thread < _WARP_SIZE:
            while width > 0:
                if thread < width and thread + width < active:
                    partials[thread] = operation(partials[thread], partials[thread + width])
                cuda.syncwarp()
                width //= 2
            if thread == 0:
                result = partials[0]
                if use_init:
                    result = operation(result, init)
                out[cuda.blockIdx.x] = result

    # The grid is chosen here (a final pass of one block by design): no
    # performance warnings.
    reduce_blocks._tidal_performance_warnings = False
    return reduce_blocks


def _device_function(functor):
    """The binary function as a device function (a lambda is rewritten as a
    def first: tidal compiles functions from their statements)."""
    if isinstance(functor, DeviceFunction):
        return functor
    if not callable(functor) or not hasattr(functor, "__code__"):
        raise TypeError(f"Reduce takes a Python function of two arguments, not {functor!r}")
    if functor.__code__.co_argcount != 2 and not functor.__defaults__:
        raise TypeError(f"the reduction function '{functor.__qualname__}' must take two "
                        f"arguments, it takes {functor.__code__.co_argcount}")
    if functor.__name__ == "<lambda>":
        functor = _function_from_lambda(functor)
    return jit(device=True)(functor)


def _function_from_lambda(function):
    """A def with the lambda's arguments, body, globals and closure, whose
    source is registered with linecache (under a name that gives the
    lambda's file and line) so that tidal can compile it."""
    code = function.__code__
    try:
        lines, first_line = inspect.getsourcelines(function)
    except (OSError, TypeError) as error:
        raise TypeError(f"cannot read the source of the lambda at {code.co_filename}:"
                        f"{code.co_firstlineno}: tidal compiles functions from their "
                        f"source ({error})") from None
    text = textwrap.dedent("".join(lines))
    tree = None
    for attempt in (text, "(\n" + text + "\n)"):
        try:
            tree = ast.parse(attempt)
            line_shift = 0 if attempt is text else -1
            break
        except SyntaxError:
            continue
    candidates = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)] if tree else []
    for node in candidates:
        line = first_line + node.lineno - 1 + line_shift
        made = _def_for_lambda(node, line, function)
        if made is not None and (len(candidates) == 1 or made.__code__.co_code == code.co_code):
            return made
    raise TypeError(f"cannot find the source of the lambda at {code.co_filename}:"
                    f"{code.co_firstlineno}; define the reduction function with def")


def _def_for_lambda(node, line, function):
    code = function.__code__
    name = f"lambda_at_line_{line}"
    free = list(code.co_freevars)
    header = f"def _tidal_lambda_scope({', '.join(free)}):\n"
    body = f"    def {name}({ast.unparse(node.args)}): return ({ast.unparse(node.body)})\n"
    source_lines = ["\n"] * max(line - 2, 0) + [header, body, f"    return {name}\n"]
    filename = f"<tidal: the lambda at {code.co_filename}:{line}>"
    linecache.cache[filename] = (sum(map(len, source_lines)), None, source_lines, filename)
    namespace = {}
    exec(compile("".join(source_lines), filename, "exec"), namespace)
    inner = next(c for c in namespace["_tidal_lambda_scope"].__code__.co_consts
                 if isinstance(c, types.CodeType))
    cells = dict(zip(code.co_freevars, function.__closure__ or ()))
    if set(inner.co_freevars) != set(cells):
        return None
    closure = tuple(cells[n] for n in inner.co_freevars) or None
    made = types.FunctionType(inner, function.__globals__, name, function.__defaults__, closure)
    made.__qualname__ = name
    made.__module__ = function.__module__
    return made


class Reduce:
    """A reduction by a binary function (Numba's cuda.Reduce): the function
    is compiled as a device function once, and a kernel for each dtype the
    object reduces; keep the object to keep them."""

    def __init__(self, functor):
        """``functor(a, b)``: the binary operation, compiled as
        ``cuda.jit(device=True)(functor)``."""
        self._functor = functor
        self._operation = None
        self._kernels = {}

    def _kernel(self, dtype):
        kernel = self._kernels.get(dtype)
        if kernel is None:
            if self._operation is None:
                self._operation = _device_function(self._functor)
            kernel = self._kernels[dtype] = _reduction_kernel(self._operation, dtype)
        return kernel

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        """Reduces ``arr[:size]`` (a host or device 1-D array), and ``init``
        (converted to the array's dtype) with it. Returns the result as a
        NumPy scalar, or ``init`` for an empty array; with ``res`` (a device
        array), writes the result to ``res[0]`` on the device and returns
        None."""
        if not (isinstance(arr, np.ndarray) or is_cuda_array(arr)):
            arr = np.asarray(arr)
        if arr.ndim != 1:
            raise TypeError("only support 1D array")
        if size is not None:
            if isinstance(size, bool) or not hasattr(size, "__index__"):
                raise TypeError(f"size must be an integer or None, got {size!r}")
            arr = arr[:size]
        init = arr.dtype.type(init)
        count = arr.shape[0]
        if count < 1:
            return init
        kernel = self._kernel(arr.dtype)
        if not isinstance(arr, DeviceNDArray):
            arr = to_device(np.ascontiguousarray(arr) if isinstance(arr, np.ndarray) else arr,
                            stream=stream)
        out = res if res is not None else device_array(1, arr.dtype, stream=stream)
        blocks, chunk = _grid(count)
        if blocks == 1:
            kernel[1, _BLOCK_SIZE, stream](arr, count, chunk, out, init, True)
        else:
            partials = device_array(blocks, arr.dtype, stream=stream)
            kernel[blocks, _BLOCK_SIZE, stream](arr, count, chunk, partials, init, False)
            kernel[1, _BLOCK_SIZE, stream](partials, blocks, _grid(blocks)[1], out, init, True)
        if res is not None:
            return None
        return out[0]


# Numba's decorator name for the same class: @cuda.reduce def add(a, b): ...
reduce = Reduce
