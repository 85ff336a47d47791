"""guvectorize(target='cuda'): a generalized ufunc, one kernel per signature.

The layout ('(m,n),(n,p)->(m,p)') splits each argument's shape into outer
(loop) dimensions and core dimensions. A call checks that the core
dimensions agree, finds the loop dimensions (the largest outer shape; an
input with no outer dimensions, or one of length 1, is reused by every
item), and launches one thread per item, which calls the user's function on
the item's core arrays. As in numba-cuda: one output or several, written by
the function into its last arguments ('(n)->(),()' has two); inputs may be
host or device arrays; the result (a tuple of results for several outputs)
is a device array when an input or an output given is one.
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
    """How one call runs: core shapes, loop dimensions, the outputs' shapes."""

    def __init__(self, core_shapes, output_core_shapes, loop_shape):
        self.core_shapes = core_shapes
        self.loop_shape = loop_shape
        self.loop_count = functools.reduce(operator.mul, loop_shape, 1)
        self.output_core_shapes = output_core_shapes
        self.output_shapes = [tuple(loop_shape) + tuple(core) for core in output_core_shapes]


def _schedule(input_layout, output_layouts, shapes):
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
    output_cores = [tuple(sizes[name] for name in layout) for layout in output_layouts]
    counts = [functools.reduce(operator.mul, s, 1) for s in outer_shapes]
    loop_shape = outer_shapes[int(np.argmax(counts))]
    for number, outer in enumerate(outer_shapes, start=1):
        if outer != loop_shape and outer not in ((), (1,)):
            raise ValueError(f"arg #{number}: outer dimension mismatch")
    return _Schedule(core_shapes, output_cores, loop_shape)


def _positional(n):
    return f"{n} positional argument{'s' * (n != 1)}"


class _Specialization:
    __slots__ = ("input_dtypes", "output_dtypes", "kernel", "text")

    def __init__(self, input_dtypes, output_dtypes, kernel, text):
        self.input_dtypes = input_dtypes
        self.output_dtypes = output_dtypes
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
        self.input_layout, self.output_layouts = parse_layout(layout)
        self.nin = len(self.input_layout)
        self.nout = len(self.output_layouts)
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
        core_ndims = [len(names) for names in self.input_layout + self.output_layouts]
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
        for output in argument_types[self.nin:]:
            if not output.is_array:
                raise TypeError(f"guvectorize signature {text!r} of '{self.__name__}': the output "
                                f"(last argument) must be an array, such as {output.dtype}[:]"
                                if self.nout == 1 else
                                f"guvectorize signature {text!r} of '{self.__name__}': each of its "
                                f"{self.nout} outputs (the last arguments) must be an array, "
                                f"such as {output.dtype}[:]")
        core_text = f"void({', '.join(t.text() for t in argument_types)})"
        core = cuda.jit(core_text, device=True)(self.py_func)
        name = kernels.kernel_name("__gufunc_", self.py_func)
        source = kernels.gufunc_kernel_source(name, argument_types, core_ndims)
        kernel = kernels.compile_generated_kernel(
            name, source, self.py_func, core, f"void({', '.join(outer_types)})",
            f"gufunc {self.__name__} {core_text}")
        dtypes = tuple(t.dtype for t in argument_types)
        inputs = dtypes[:self.nin]
        self._specializations[inputs] = _Specialization(inputs, dtypes[self.nin:], kernel,
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

    def _outputs_given(self, args, out):
        """The inputs, and the outputs given (None for each one not given):
        as positional arguments after the inputs, or out= (an array, or a
        tuple of one per output); numba-cuda's errors."""
        if out is None and len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(f"This gufunc accepts {_positional(self.nin)} (when providing "
                            f"input only) or {_positional(self.nin + self.nout)} (when "
                            f"providing input and output). Got {_positional(len(args))}.")
        if out is not None and len(args) > self.nin:
            raise ValueError("cannot specify 'out' as both a positional and keyword argument")
        if out is None:
            outputs = list(args[self.nin:]) or [None] * self.nout
        elif isinstance(out, tuple):
            if len(out) != self.nout:
                raise ValueError(f"out= of gufunc '{self.__name__}' is a tuple of {len(out)}; "
                                 f"it has {self.nout} output(s)")
            outputs = list(out)
        elif self.nout == 1:
            outputs = [out]
        else:
            raise TypeError(f"out= of gufunc '{self.__name__}' must be a tuple of its "
                            f"{self.nout} outputs")
        if len(args) < self.nin:
            raise TypeError("invalid number of input argument")
        return args[:self.nin], outputs

    def __call__(self, *args, out=None, stream=0, **unknown):
        if unknown:
            raise TypeError(f"gufunc '{self.__name__}' got unexpected keyword argument(s) "
                            f"{', '.join(unknown)}: it takes out= and stream=")
        if not self._specializations:
            raise TypeError(f"gufunc '{self.__name__}' has no signatures")
        args, outputs = self._outputs_given(args, out)
        outputs_on_device = [o is not None and is_cuda_array(o) for o in outputs]
        outputs = [cuda.as_cuda_array(o) if d else o for o, d in zip(outputs, outputs_on_device)]
        on_device = [is_cuda_array(a) for a in args]
        inputs = [cuda.as_cuda_array(a) if d else np.asarray(a) for a, d in zip(args, on_device)]
        schedule = _schedule(self.input_layout, self.output_layouts, [a.shape for a in inputs])
        specialization = self._find(tuple(a.dtype for a in inputs))
        for given, shape, dtype in zip(outputs, schedule.output_shapes,
                                       specialization.output_dtypes):
            if given is None:
                continue
            if tuple(given.shape) != shape:
                raise ValueError("output shape mismatch")
            if given.dtype != dtype:
                raise TypeError(f"out= of gufunc '{self.__name__}' has dtype {given.dtype}; the "
                                f"signature {specialization.text} writes {dtype}")
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
        # Results stay on the device when an input, or an output given, is there.
        keep_on_device = any(outputs_on_device) or (
            any(on_device) and all(o is None for o in outputs))
        results = [given if on else cuda.device_array(shape, dtype, stream=stream)
                   for given, on, shape, dtype in zip(outputs, outputs_on_device,
                                                       schedule.output_shapes,
                                                       specialization.output_dtypes)]
        # 2. Every argument with one outer dimension: the loop's items.
        loop = schedule.loop_count if schedule.loop_shape else 1
        views = [self._outer_view(p, loop, core) for p, core in
                 zip(parameters, schedule.core_shapes)]
        views += [r.reshape((loop,) + core)
                  for r, core in zip(results, schedule.output_core_shapes)]
        if loop:
            specialization.kernel.forall(loop, stream=stream)(*views)
        # 3. The results in the outputs given, else where the inputs were.
        if not keep_on_device:
            hosts = [r.copy_to_host(stream=stream) for r in results]
            if stream:
                stream.synchronize()
            results = []
            for given, host in zip(outputs, hosts):
                if given is not None:
                    given[...] = host
                    host = given
                results.append(host)
        return results[0] if self.nout == 1 else tuple(results)

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
