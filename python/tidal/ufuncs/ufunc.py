"""vectorize(target='cuda'): a ufunc made of one kernel per signature.

A call (Numba's CUDA ufunc semantics): the signature is chosen from the
input dtypes; inputs broadcast as NumPy's; host inputs are copied to the
device; the kernel computes one element per thread; the result stays on the
device when an input (or `out`) is a device array, and comes back to the
host otherwise. Kernels are compiled per (signature, which arguments are
scalars, rank of the result) and kept.
"""

import collections
import inspect
import warnings

import numpy as np

from .. import cuda
from ..cuda.array_interface import is_cuda_array
from ..cuda.dispatcher import _library_launches
from . import kernels
from .broadcasting import broadcast_device, broadcast_shapes, is_scalar
from .signatures import ArgumentType, parse_type_signature, signature_text

_IDENTITIES = frozenset((0, 1, None, "reorderable"))


def check_identity(identity):
    """Numba's identities: 0, 1, None or 'reorderable' (ValueError otherwise)."""
    try:
        known = identity in _IDENTITIES
    except TypeError:  # unhashable
        known = False
    if not known:
        raise ValueError(f"Invalid identity value {identity!r}")
    return identity


def check_arity(py_func, count, text, what):
    """A signature of `count` arguments for py_func, or a TypeError saying
    how many the function takes."""
    parameters = inspect.signature(py_func).parameters.values()
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) != count or any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY)
                                       for p in parameters):
        raise TypeError(f"{what} signature {text!r} of '{py_func.__name__}' has {count} "
                        f"arguments; the function takes {len(positional)} positional "
                        f"arguments")


class _Specialization:
    """One declared signature: its dtypes, its device function, its kernels."""

    __slots__ = ("argument_dtypes", "return_dtype", "text", "core", "kernels")

    def __init__(self, argument_dtypes, return_dtype, text, core):
        self.argument_dtypes = argument_dtypes
        self.return_dtype = return_dtype
        self.text = text
        self.core = core
        self.kernels = {}


class CUDAUFunc:
    """What @vectorize([...], target='cuda') returns: call it as a NumPy
    ufunc (with `out=` and `stream=`), or `.reduce()` a 1-D array."""

    def __init__(self, py_func, signatures, identity=None):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.identity = identity
        self.max_blocksize = 0  # accepted as Numba's; the block size is chosen per launch
        # Without signatures the ufunc is dynamic (Numba's DUFunc): each call
        # whose input dtypes no signature takes compiles one for them.
        self.dynamic = not signatures
        self._specializations = collections.OrderedDict()
        for signature in signatures:
            self._add(signature)
        if self._specializations:
            self.nin = len(next(iter(self._specializations)))
        else:
            self.nin = len(inspect.signature(py_func).parameters)
        self.nout = 1

    # --- building ---------------------------------------------------------------

    def _add(self, signature):
        text = signature_text(signature)
        return_type, argument_types = parse_type_signature(signature)
        if (return_type is not None and return_type.is_array) or \
                any(t.is_array for t in argument_types):
            raise TypeError(f"vectorize signature {text!r} of '{self.__name__}' has array "
                            f"types: a ufunc's function takes and returns scalars")
        if self._specializations and len(argument_types) != len(next(iter(self._specializations))):
            raise TypeError(f"vectorize signatures of '{self.__name__}' take different numbers "
                            f"of arguments: {text!r}")
        check_arity(self.py_func, len(argument_types), text, "vectorize")
        dtypes = tuple(t.dtype for t in argument_types)
        if return_type is None:  # argument types alone, (float64, float64): as Numba, inferred
            return_type = ArgumentType(kernels.infer_return_dtype(self.py_func, dtypes))
        core_text = f"{return_type.text()}({', '.join(t.text() for t in argument_types)})"
        core = cuda.jit(core_text, device=True)(self.py_func)
        specialization = _Specialization(dtypes, return_type.dtype, core_text, core)
        self._specializations[dtypes] = specialization
        # Compiled now: an error in the user's function is raised by the decorator.
        self._kernel(specialization, frozenset(), 1)

    def _kernel(self, specialization, scalar_positions, ndim):
        key = (scalar_positions, ndim)
        kernel = specialization.kernels.get(key)
        if kernel is None:
            name = kernels.kernel_name("__vectorized_", self.py_func)
            nargs = len(specialization.argument_dtypes)
            source = kernels.vectorize_kernel_source(name, scalar_positions, nargs, ndim)
            array_dims = ", ".join([":"] * ndim)
            types = [dtype.name if i in scalar_positions else f"{dtype.name}[{array_dims}]"
                     for i, dtype in enumerate(specialization.argument_dtypes)]
            types.append(f"{specialization.return_dtype.name}[{array_dims}]")
            signature = f"void({', '.join(types)})"
            kernel = kernels.compile_generated_kernel(
                name, source, self.py_func, specialization.core, signature,
                f"ufunc {self.__name__} {specialization.text}")
            specialization.kernels[key] = kernel
        return kernel

    @property
    def types(self):
        """The signatures as NumPy ufuncs list them ('ff->f')."""
        return [("".join(d.char for d in s.argument_dtypes) + "->" + s.return_dtype.char)
                for s in self._specializations.values()]

    def __reduce__(self):
        from .serialization import reduce_ufunc
        return reduce_ufunc(self, "ufunc", {"identity": self.identity, "dynamic": self.dynamic})

    def __repr__(self):
        return f"<tidal CUDA ufunc '{self.__name__}' {self.types}>"

    # --- calling ----------------------------------------------------------------

    def _resolve(self, dtypes, scalars, device_positions):
        """The specialization for these input dtypes (None for a scalar
        argument, whose value is in `scalars`): an exact match first, then
        scalars converted to a signature whose array types match exactly
        (Numba's rules), then NumPy's safe casting of host arrays."""
        candidates = list(self._specializations.values())
        scalar_dtypes = {i: np.asarray(v).dtype for i, v in scalars.items()}
        exact = [s for s in candidates if all(
            formal == (dtypes[i] if dtypes[i] is not None else scalar_dtypes[i])
            for i, formal in enumerate(s.argument_dtypes))]
        if exact:
            return exact[0]
        if self.dynamic:
            dtypes = tuple(d if d is not None else scalar_dtypes[i] for i, d in enumerate(dtypes))
            return self._compile_for(dtypes)
        coerced = [s for s in candidates if all(
            actual is None or formal == actual for formal, actual in zip(s.argument_dtypes, dtypes))]
        if len(coerced) > 1:
            raise TypeError("Failed to resolve ufunc due to ambiguous signature. Too many "
                            "untyped scalars. Use numpy dtype object to type tag.")
        if coerced:
            return coerced[0]
        for specialization in candidates:
            if all(actual is None or formal == actual or
                   (i not in device_positions and np.can_cast(actual, formal, "safe"))
                   for i, (formal, actual) in enumerate(zip(specialization.argument_dtypes,
                                                              dtypes))):
                return specialization
        given = ", ".join(str(d if d is not None else scalar_dtypes[i])
                          for i, d in enumerate(dtypes))
        raise TypeError(
            f"No matching version of ufunc '{self.__name__}' for ({given}): its signatures "
            f"are {', '.join(s.text for s in candidates)}. Arrays must have these types "
            f"(host arrays may cast safely to them; device arrays must match exactly)")

    def _compile_for(self, dtypes):
        """A new signature of a dynamic ufunc, for these argument dtypes."""
        return_dtype = kernels.infer_return_dtype(self.py_func, dtypes)
        self._add(f"{return_dtype.name}({', '.join(d.name for d in dtypes)})")
        return self._specializations[dtypes]

    def __call__(self, *args, out=None, stream=0, **unknown):
        if unknown:
            warnings.warn(f"unrecognized keywords: {', '.join(unknown)}")
        if len(args) != self.nin:
            raise TypeError(f"ufunc '{self.__name__}' takes {self.nin} arguments, "
                            f"got {len(args)}")
        # 1. Each argument: a device array, a scalar, or a host array.
        arrays, scalars, device_positions = {}, {}, set()
        for i, arg in enumerate(args):
            if is_cuda_array(arg):
                arrays[i] = cuda.as_cuda_array(arg)
                device_positions.add(i)
            elif is_scalar(arg):
                scalars[i] = arg
            else:
                arrays[i] = np.asarray(arg)
        dtypes = [arrays[i].dtype if i in arrays else None for i in range(len(args))]
        specialization = self._resolve(dtypes, scalars, device_positions)
        formal = specialization.argument_dtypes
        # 2. The result's shape; the kernel sees at least one dimension.
        shape = broadcast_shapes([arrays[i].shape for i in sorted(arrays)])
        kernel_shape = shape if shape else (1,)
        out_on_device = out is not None and is_cuda_array(out)
        on_device = bool(device_positions)
        if out is not None:
            out = self._check_out(out, out_on_device, shape, specialization.return_dtype)
        # 3. Arguments on the device, broadcast without copies (zero strides).
        launch_args = []
        for i in range(len(args)):
            if i in scalars:
                launch_args.append(formal[i].type(scalars[i]))
                continue
            array = arrays[i]
            if i not in device_positions:
                array = np.asarray(array, dtype=formal[i])
                if not (array.flags.c_contiguous or array.flags.f_contiguous):
                    array = np.ascontiguousarray(array)
                array = cuda.to_device(array, stream=stream)
            launch_args.append(broadcast_device(array, kernel_shape))
        if out_on_device:
            device_out = out if out.shape == kernel_shape else out.reshape(kernel_shape)
        else:
            device_out = cuda.device_array(kernel_shape, specialization.return_dtype,
                                           stream=stream)
        # 4. The launch, one thread per element.
        count = int(np.prod(kernel_shape))
        if count:
            kernel = self._kernel(specialization, frozenset(scalars), len(kernel_shape))
            kernel.forall(count, stream=stream)(*launch_args, device_out)
        # 5. The result in `out`, else where the inputs were.
        if out_on_device:
            return out
        if on_device and out is None:
            return device_out.reshape(shape) if shape != kernel_shape else device_out
        host = device_out.copy_to_host(stream=stream)
        if stream:
            stream.synchronize()
        host = host.reshape(shape)
        if out is not None:
            out[...] = host
            return out
        return host[()] if not shape else host

    def _check_out(self, out, on_device, shape, dtype):
        if on_device:
            out = cuda.as_cuda_array(out)
        elif not isinstance(out, np.ndarray):
            raise TypeError(f"out= of ufunc '{self.__name__}' must be a NumPy array or a "
                            f"device array, got {type(out).__name__}")
        if out.shape != shape:
            raise ValueError(f"out= of ufunc '{self.__name__}' has shape {out.shape}; the "
                             f"result has shape {shape}")
        if out.dtype != dtype:
            raise TypeError(f"out= of ufunc '{self.__name__}' has dtype {out.dtype}; the "
                            f"chosen signature returns {dtype}")
        return out

    # --- reduce -----------------------------------------------------------------

    def reduce(self, arg, stream=0):
        """Reduces a 1-D array with this binary ufunc, by halves: each step
        one launch over half of what is left, in place on the device."""
        if self.nin != 2:
            raise TypeError(f"reduce of ufunc '{self.__name__}': a reduction needs a binary "
                            f"ufunc; this one takes {self.nin} arguments")
        device = is_cuda_array(arg)
        array = cuda.as_cuda_array(arg) if device else np.asarray(arg)
        if array.ndim != 1:
            raise ValueError(f"reduce of ufunc '{self.__name__}' needs a 1-D array, got "
                             f"{array.ndim}-D (shape {array.shape})")
        n = array.shape[0]
        if n == 0:
            raise TypeError("Reduction on an empty array.")
        if n == 1:
            return array[0]
        if device:
            # The halves are reduced in place: work on a copy of the caller's array.
            work = cuda.device_array(n, array.dtype, stream=stream)
            work.copy_to_device(array, stream=stream)
        else:
            work = cuda.to_device(np.ascontiguousarray(array), stream=stream)
        leftovers = []
        # The halving steps' grids are the reduction's, not the user's: no
        # performance warnings for them.
        with _library_launches():
            while n > 1:
                if n % 2:  # the last element waits until the rest is one value
                    leftovers.append(work[n - 1:n])
                    n -= 1
                half = n // 2
                left = work[:half]
                self(left, work[half:n], out=left, stream=stream)
                n = half
            result = work[:1]
            for leftover in reversed(leftovers):
                self(result, leftover, out=result, stream=stream)
        host = result.copy_to_host(stream=stream)
        if stream:
            stream.synchronize()
        return host[0]
