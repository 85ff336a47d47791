"""The kernels behind ufuncs and gufuncs: Python source generated per
signature, registered with linecache (so that tidal's frontend, which reads
a kernel's source, finds it, and errors in it name the generated file),
executed in the user's globals beside `__core__` (the user's function as a
device function) and compiled through cuda.jit with a declared signature.

Errors in the user's function point at the user's file: it is compiled as
a device function from its own source."""

import itertools
import linecache
import re

from .. import cuda

_generated_files = itertools.count(1)


def _register_source(filename, source):
    lines = source.splitlines(keepends=True)
    # mtime None: linecache.checkcache keeps the entry.
    linecache.cache[filename] = (len(source), None, lines, filename)


def compile_generated_kernel(name, source, py_func, core, signature, what):
    """A cuda.jit kernel, declared with `signature`, from the function
    `name` defined by `source`; its globals are py_func's with `__core__`
    (the device function) and `__cuda__`. `what` names the kernel in its
    file name: '<tidal ufunc kernel #3: vector_add float32(float32, float32)>'."""
    filename = f"<tidal {what} kernel #{next(_generated_files)}>"
    _register_source(filename, source)
    namespace = dict(py_func.__globals__)
    namespace.update({"__core__": core, "__cuda__": cuda})
    exec(compile(source, filename, "exec"), namespace)
    kernel = cuda.jit(signature)(namespace[name])
    return kernel


def kernel_name(prefix, py_func):
    """A Python identifier for the kernel of py_func ('<lambda>' included)."""
    return prefix + re.sub(r"\W", "_", py_func.__name__)


def _index_names(ndim):
    return [f"__i{axis}__" for axis in range(ndim)]


def _unravel_lines(ndim, indent):
    """Lines that turn the flat thread index __tid__ into one index per axis
    of __out__ (C order), for ndim >= 2."""
    names = _index_names(ndim)
    lines = [f"{indent}__rest__ = __tid__"]
    for axis in range(ndim - 1, 0, -1):
        lines.append(f"{indent}{names[axis]} = __rest__ % __out__.shape[{axis}]")
        lines.append(f"{indent}__rest__ = __rest__ // __out__.shape[{axis}]")
    lines.append(f"{indent}{names[0]} = __rest__")
    return lines


def vectorize_kernel_source(name, scalar_positions, nargs, ndim):
    """The source of a ufunc's kernel: thread __tid__ computes element
    __tid__ of __out__ (ndim dimensions, at least 1) from the same element
    of each array argument; arguments at scalar_positions are scalars."""
    arguments = [f"a{i}" for i in range(nargs)]
    index = "__tid__" if ndim == 1 else ", ".join(_index_names(ndim))
    items = [a if i in scalar_positions else f"{a}[{index}]" for i, a in enumerate(arguments)]
    lines = [f"def {name}({', '.join(arguments + ['__out__'])}):",
             "    __tid__ = __cuda__.grid(1)",
             "    if __tid__ < __out__.size:"]
    if ndim > 1:
        lines += _unravel_lines(ndim, "        ")
    lines.append(f"        __out__[{index}] = __core__({', '.join(items)})")
    return "\n".join(lines) + "\n"


def gufunc_kernel_source(name, argument_types, core_ndims):
    """The source of a gufunc's kernel: thread __tid__ calls the core on
    item __tid__ of the outer (first) dimension of every argument. An
    argument whose core is 0-d but whose declared type is a 1-D array gets
    the 1-element slice, so that the core can write to it (scalar outputs)."""
    arguments = [f"arg{i}" for i in range(len(core_ndims))]
    items = []
    for argument, argument_type, core_ndim in zip(arguments, argument_types, core_ndims):
        if core_ndim == 0 and argument_type.is_array:
            items.append(f"{argument}[__tid__:__tid__ + 1]")
        else:
            items.append(f"{argument}[__tid__]")
    count = " ".join(f"{a}.shape[0]," for a in arguments[:-1]) + f" {arguments[-1]}.shape[0]"
    bound = f"min({count.strip()})" if len(arguments) > 1 else f"{arguments[0]}.shape[0]"
    return (f"def {name}({', '.join(arguments)}):\n"
            f"    __tid__ = __cuda__.grid(1)\n"
            f"    if __tid__ < {bound}:\n"
            f"        __core__({', '.join(items)})\n")


def infer_return_dtype(py_func, argument_dtypes):
    """The dtype py_func returns for arguments of these dtypes, as tidal's
    frontend types it: a probe kernel stores the call's result in a local
    variable, and the kernel's typing (inspect_types) names its type."""
    import io

    import numpy as np

    name = kernel_name("__return_type_of_", py_func)
    arguments = [f"a{i}" for i in range(len(argument_dtypes))]
    source = (f"def {name}({', '.join(arguments)}):\n"
              f"    __result__ = __core__({', '.join(a + '[0]' for a in arguments)})\n")
    signature = f"void({', '.join(d.name + '[:]' for d in argument_dtypes)})"
    core = cuda.jit(device=True)(py_func)
    probe = compile_generated_kernel(name, source, py_func, core, signature,
                                     f"return type of {py_func.__name__}")
    listing = io.StringIO()
    probe.inspect_types(file=listing)
    for line in listing.getvalue().splitlines():
        if line.strip().startswith("#   __result__ = "):
            type_text = line.split("=", 1)[1].strip()
            break
    else:
        raise RuntimeError(f"the typing of {name} does not list __result__")
    try:
        return np.dtype("bool" if type_text == "bool" else type_text)
    except TypeError:
        given = ", ".join(d.name for d in argument_dtypes)
        raise TypeError(f"ufunc '{py_func.__name__}' returns {type_text} for arguments "
                        f"({given}): a ufunc's function returns one number") from None
