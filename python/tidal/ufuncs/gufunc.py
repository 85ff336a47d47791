"""guvectorize(target='cuda'): a generalized ufunc, one kernel per signature.

The layout ('(m,n),(n,p)->(m,p)') splits each argument's shape into outer
(loop) dimensions and core dimensions. A call checks that the core
dimensions agree, finds the loop dimensions (the largest outer shape; an
input with no outer dimensions, or one of length 1, is reused by every
item), and launches one thread per item, which calls the user's function on
the item's core arrays. As in Numba: one output, written by the function
into its last argument; inputs may be host or device arrays; the result is
a device array when an input or `out` is one.
"""

import collections
import functools
import operator

import numpy as np

from .. import cuda
from ..cuda.array_interface import is_cuda_array
from . import kernels
from .signatures import parse_layout, parse_type_signature, signature_text
from .ufunc import check_arity


class _Schedule:
    """How one call runs: core shapes, loop dimensions, the output's shape."""

    def __init__(self, core_shapes, output_core_shape, loop_shape):
        self.core_shapes = core_shapes
        self.loop_shape = loop_shape
        self.loop_count = functools.reduce(operator.mul, loop_shape, 1)
        self.output_core_shape = output_core_shape
        self.output_shape = tuple(loop_shape) + tuple(output_core_shape)


def _schedule(input_layout, output_layout, shapes):
    """The schedule of a call with inputs of these shapes (Numba's errors)."""
    if len(shapes) != len(input_layout):
        raise TypeError("invalid number of input argument")
    sizes = {}
    outer_shapes, core_shapes = [], []
    for number, (shape, names) in enumerate(zip(shapes, input_layout), start=1):
        core_ndim = len(names)
        if len(shape) < core_ndim:
            raise ValueError(f"arg #{number}: insufficient inner dimension")
        outer = tuple(shape[:len(shape) - core_ndim])
        core = tuple(shape[len(shape) - core_ndim:])
        for axis, (size, name) in enumerate(zip(core, names), start=len(outer)):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"arg #{number}: shape[{axis}] mismatch argument")
        outer_shapes.append(outer)
        core_shapes.append(core)
    output_core = tuple(sizes[name] for name in output_layout)
    counts = [functools.reduce(operator.mul, s, 1) for s in outer_shapes]
    loop_shape = outer_shapes[int(np.argmax(counts))]
    for number, outer in enumerate(outer_shapes, start=1):
        if outer != loop_shape and outer not in ((), (1,)):
            raise ValueError(f"arg #{number}: outer dimension mismatch")
    return _Schedule(core_shapes, output_core, loop_shape)


class _Specialization:
    __slots__ = ("input_dtypes", "output_dtype", "kernel", "text")

    def __init__(self, input_dtypes, output_dtype, kernel, text):
        self.input_dtypes = input_dtypes
        self.output_dtype = output_dtype
        self.kernel = kernel
        self.text = text


class CUDAGUFunc:
    """What @guvectorize([...], layout, target='cuda') returns."""

    def __init__(self, py_func, signatures, layout, identity=None):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.identity = identity
        self.layout = layout
        self.input_layout, output_layouts = parse_layout(layout)
        if len(output_layouts) != 1:
            raise TypeError(f"gufunc layout {layout!r} of '{self.__name__}' has "
                            f"{len(output_layouts)} outputs: tidal, as Numba's CUDA target, "
                            f"supports one")
        self.output_layout = output_layouts[0]
        self.nin = len(self.input_layout)
        self.nout = 1
        self.max_blocksize = 2 ** 30  # accepted as Numba's; the block size is chosen per launch
        self._specializations = collections.OrderedDict()
        for signature in signatures:
            self._add(signature)

    def _add(self, signature):
        text = signature_text(signature)
        return_type, argument_types = parse_type_signature(signature)
        if return_type is not None:
            raise TypeError(f"guvectorize signature {text!r} of '{self.__name__}' returns "
                            f"{return_type.dtype}: a gufunc's function returns nothing (void) "
                            f"and writes its output into its last argument")
        core_ndims = [len(names) for names in self.input_layout] + [len(self.output_layout)]
        if len(argument_types) != len(core_ndims):
            raise TypeError(f"guvectorize signature {text!r} of '{self.__name__}' has "
                            f"{len(argument_types)} arguments; the layout {self.layout!r} "
                            f"has {len(core_ndims)}")
        check_arity(self.py_func, len(argument_types), text, "guvectorize")
        outer_types = []
        for argument_type, core_ndim in zip(argument_types, core_ndims):
            if not argument_type.is_array and core_ndim > 0:
                raise ValueError("gufunc signature mismatch: ndim>0 for scalar")
            outer_types.append(argument_type.text(ndim=core_ndim + 1))
        if not argument_types[-1].is_array:
            raise TypeError(f"guvectorize signature {text!r} of '{self.__name__}': the output "
                            f"(last argument) must be an array, such as "
                            f"{argument_types[-1].dtype}[:]")
        core_text = f"void({', '.join(t.text() for t in argument_types)})"
        core = cuda.jit(core_text, device=True)(self.py_func)
        name = kernels.kernel_name("__gufunc_", self.py_func)
        source = kernels.gufunc_kernel_source(name, argument_types, core_ndims)
        kernel = kernels.compile_generated_kernel(
            name, source, self.py_func, core, f"void({', '.join(outer_types)})",
            f"gufunc {self.__name__} {core_text}")
        dtypes = tuple(t.dtype for t in argument_types)
        self._specializations[dtypes[:-1]] = _Specialization(dtypes[:-1], dtypes[-1], kernel,
                                                             core_text)

    def __reduce__(self):
        from .serialization import reduce_ufunc
        return reduce_ufunc(self, "gufunc", {"layout": self.layout, "identity": self.identity})

    def __repr__(self):
        return f"<tidal CUDA gufunc '{self.__name__}' {self.layout!r}>"

    def _find(self, dtypes):
        """The specialization for these input dtypes: the exact one, else
        the first whose types the inputs convert to (NumPy's same-kind
        casting, as Numba's first compatible signature)."""
        found = self._specializations.get(dtypes)
        if found is not None:
            return found
        for specialization in self._specializations.values():
            if all(np.can_cast(actual, formal, "same_kind")
                   for actual, formal in zip(dtypes, specialization.input_dtypes)):
                return specialization
        raise TypeError(f"no matching signature of gufunc '{self.__name__}' for inputs "
                        f"({', '.join(map(str, dtypes))}): its signatures are "
                        f"{', '.join(s.text for s in self._specializations.values())}")

    def __call__(self, *args, out=None, stream=0, **unknown):
        if unknown:
            raise TypeError(f"gufunc '{self.__name__}' got unexpected keyword argument(s) "
                            f"{', '.join(unknown)}: it takes out= and stream=")
        if not self._specializations:
            raise TypeError(f"gufunc '{self.__name__}' has no signatures")
        if len(args) > self.nin:
            extra = args[self.nin:]
            if out is not None:
                raise ValueError("cannot specify 'out' as both a positional and keyword "
                                 "argument")
            if len(extra) > 1:
                raise TypeError(f"gufunc '{self.__name__}' takes {self.nin} inputs and one "
                                f"output, got {len(args)} arguments")
            out = extra[0]
            args = args[:self.nin]
        out_on_device = out is not None and is_cuda_array(out)
        if out_on_device:
            out = cuda.as_cuda_array(out)
        on_device = [is_cuda_array(a) for a in args]
        inputs = [cuda.as_cuda_array(a) if d else np.asarray(a) for a, d in zip(args, on_device)]
        schedule = _schedule(self.input_layout, self.output_layout, [a.shape for a in inputs])
        specialization = self._find(tuple(a.dtype for a in inputs))
        if out is not None and tuple(out.shape) != schedule.output_shape:
            raise ValueError("output shape mismatch")
        if out is not None and out.dtype != specialization.output_dtype:
            raise TypeError(f"out= of gufunc '{self.__name__}' has dtype {out.dtype}; the "
                            f"signature {specialization.text} writes "
                            f"{specialization.output_dtype}")
        # 1. Inputs of the signature's dtypes, on the device.
        parameters = []
        for position, (value, formal) in enumerate(zip(inputs, specialization.input_dtypes)):
            if value.dtype != formal:
                if not hasattr(value, "astype"):
                    raise TypeError(f"compatible signature is possible by casting but "
                                    f"{type(value)} does not support .astype()")
                value = value.astype(formal)
            if not on_device[position]:
                value = cuda.to_device(np.ascontiguousarray(value), stream=stream)
            parameters.append(value)
        keep_on_device = out_on_device or (any(on_device) and out is None)
        if out_on_device:
            result = out
        else:
            result = cuda.device_array(schedule.output_shape, specialization.output_dtype,
                                       stream=stream)
        # 2. Every argument with one outer dimension: the loop's items.
        loop = schedule.loop_count if schedule.loop_shape else 1
        views = [self._outer_view(p, loop, core) for p, core in
                 zip(parameters, schedule.core_shapes)]
        views.append(result.reshape((loop,) + schedule.output_core_shape))
        if loop:
            specialization.kernel.forall(loop, stream=stream)(*views)
        # 3. The result in `out`, else where the inputs were.
        if keep_on_device:
            return result
        host = result.copy_to_host(stream=stream)
        if stream:
            stream.synchronize()
        if out is not None:
            out[...] = host
            return out
        return host

    @staticmethod
    def _outer_view(array, loop, core_shape):
        """The argument as (loop,) + core_shape: itself, reused by every item
        (zero stride) when it has no outer dimensions of its own, or its
        outer dimensions collapsed into one."""
        shape = (loop,) + tuple(core_shape)
        if tuple(array.shape) == shape:
            return array
        outer = array.shape[:array.ndim - len(core_shape)]
        if functools.reduce(operator.mul, outer, 1) == 1:
            core = array.reshape(tuple(core_shape)) if array.shape != tuple(core_shape) \
                else array
            return core._restrided(shape, (0,) + tuple(core.strides))
        return array.reshape(shape)
