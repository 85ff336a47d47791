"""CUDA C++ kernels launched from Python, with CuPy's names:
RawKernel(code, name, options=()) and RawModule(code=None, path=None,
options=()).get_function(name). Each is launched as tidal's Python kernels
are, kernel[griddim, blockdim, stream, sharedmem](*args), with the same
argument kinds (device arrays, NumPy arrays copied in and back, CAI/DLPack
objects, scalars); a pointer parameter takes an array of its element type,
a scalar parameter any real number, converted to the C++ type.

The source is compiled in process by Clang's libraries (tidal's prelude
stands in for cuda_runtime.h), raised to marker IR, and lowered for the
target like a Python kernel (docs/cpp.md, "From Python"). The C++ half is
python/src/RawKernels.cpp."""

import numpy as np

from ._native import native
from .device_arrays import DeviceNDArray, to_device
from .devices import get_current_device
from .dispatcher import Dispatcher
from .target import current_target

__all__ = ["RawKernel", "RawModule"]


from .foreign import instantiations, load_compiler as _load_compiler, with_instantiations


def _compile(code, file_name, options):
    _load_compiler()
    return native._raw_kernels(code, file_name, list(options))


class _DeviceGlobals:
    """The __device__ and __constant__ variables of one RawModule: one storage
    per variable, target and device, which every kernel of the module uses
    (the C++ half makes each kernel's references to the variable that
    address) and get_global() returns. A variable starts with its C++
    initializer."""

    def __init__(self, code, file_name, options):
        self._source = (code, file_name, list(options))
        self._variables = None  # symbol -> (name, size, align, initial bytes, constant)
        self._storage = {}

    def variables(self):
        if self._variables is None:
            _load_compiler()
            self._variables = {v[0]: v[1:] for v in native._raw_globals(*self._source)}
        return self._variables

    def storage(self, symbol):
        """The device array of a variable's bytes on the current target and device."""
        target = current_target()
        key = (target, get_current_device().id if target == "cuda" else 0, symbol)
        found = self._storage.get(key)
        if found is not None:
            return found
        _, size, align, initial, _ = self.variables()[symbol]
        host = np.zeros(size, np.uint8)
        if initial:
            host[:] = np.frombuffer(initial, np.uint8)
        if target == "cuda":
            array = to_device(host)  # the allocator's blocks are 256-byte aligned
        else:
            buffer = np.zeros(size + align, np.uint8)
            start = -buffer.ctypes.data % align
            array = DeviceNDArray._wrap(buffer[start:start + size])
            array._tidal_host[:] = host
        return self._storage.setdefault(key, array)


def _raw_links(link):
    """link=[...] of RawModule/RawKernel (a tidal extension): CUDA C++,
    LLVM IR and tidal's LTO-IR that define the functions the source
    declares, such as a Python device function compiled with the C ABI,
    cuda.LTOIR(cuda.compile(f, sig, output='ltoir')[0]) (docs/cpp.md)."""
    from .foreign import link_items
    items = link_items(link)
    for kind, name, _, _ in items:
        if kind not in ("cu", "ll", "bc"):
            raise ValueError(
                f"RawModule cannot link {name}: its kernels link CUDA C++ (.cu, "
                f"cuda.CUSource), LLVM IR (.ll, .bc) and tidal's LTO-IR (cuda.compile(..., "
                f"output='ltoir')), which tidal compiles for both targets; PTX and binaries "
                f"are linked by the CUDA driver for Python kernels' link= only")
    return items


def _options_tuple(options):
    if isinstance(options, str):
        options = (options,)
    options = tuple(options)
    for option in options:
        if not isinstance(option, str):
            raise TypeError(f"CUDA C++ options are str, not {type(option).__name__}: {option!r}")
    return options


def _describe(kernel):
    symbol, name, types, names = kernel
    shown = name if symbol == name else f"{name} ({symbol})"
    return f"{shown}({', '.join(types)})"


def _spaceless(name):
    return "".join(name.split())


class RawModule:
    """The kernels of one CUDA C++ source: `code` (a str) or the file at
    `path`, compiled with clang `options` (-DNAME=VALUE, -I DIR, -std=c++20).
    `name_expressions` names instances of kernel templates to compile
    ("scale<float, 3>"), which get_function then takes by that name, as in
    CuPy. `link` (tidal's) lists code that defines what the source declares
    (CUDA C++, LLVM IR, tidal's LTO-IR of a C-ABI Python function). Clang's
    errors raise tidal.errors.CompileError at the C++ file:line:col."""

    def __init__(self, code=None, path=None, options=(), name_expressions=None, link=None):
        if (code is None) == (path is None):
            raise TypeError("RawModule takes code (a str) or path (a file), exactly one of them")
        if path is not None:
            with open(path, encoding="utf-8") as source:
                code = source.read()
            file_name = str(path)
        else:
            if not isinstance(code, str):
                raise TypeError(f"RawModule's code is a str of CUDA C++, not {type(code).__name__}")
            file_name = "rawmodule.cu"
        self.name_expressions = instantiations(name_expressions, "kernel")
        code = with_instantiations(code, self.name_expressions, "__global__", "RawModule")
        self.code = code
        self.path = path
        self.options = _options_tuple(options)
        self._file_name = file_name
        self._kernels = _compile(code, file_name, self.options)
        self._device_globals = _DeviceGlobals(code, file_name, self.options)
        self._link_items = _raw_links(link)

    @property
    def kernel_names(self):
        """The names of the module's __global__ functions, as written."""
        return [kernel[1] for kernel in self._kernels]

    def get_function(self, name):
        """The kernel `name` (its name as written, or its symbol) as a
        RawKernel."""
        return RawKernel._from_module(self, name)

    def get_global(self, name, dtype=None):
        """The __device__ or __constant__ variable `name` (as written, or its
        symbol) as a device array of its bytes (uint8; of `dtype` when given),
        on the current target and device: what the module's kernels read and
        write. CuPy returns a MemoryPointer; copy_to_device/copy_to_host on
        this array do what its copy_from_host/copy_to_host do."""
        variables = self._device_globals.variables()
        found = [s for s, v in variables.items() if name in (s, v[0])]
        if not found:
            listed = ", ".join(v[0] for v in variables.values()) or "none"
            raise KeyError(f"CUDA C++ source {self._file_name} has no __device__ or "
                           f"__constant__ variable '{name}'; its variables: {listed}")
        symbol = found[0]
        if variables[symbol][3] is None:
            raise ValueError(f"__device__ variable '{name}' of {self._file_name} has an "
                             f"initializer that is not numbers (a pointer, an expression): "
                             f"each kernel keeps its own copy, which get_global cannot reach")
        array = self._device_globals.storage(symbol)
        return array if dtype is None else array.view(dtype)

    def _global_address(self, symbol):
        """The address of a variable's storage (the C++ half's question)."""
        return self._device_globals.storage(symbol).device_ctypes_pointer.value


class RawKernel(Dispatcher):
    """The __global__ function `name` of the CUDA C++ source `code`."""

    def __init__(self, code, name, options=(), link=None):
        if not isinstance(code, str):
            raise TypeError(f"RawKernel's code is a str of CUDA C++, not {type(code).__name__}")
        module = RawModule.__new__(RawModule)
        module.code, module.path = code, None
        module.options = _options_tuple(options)
        module._file_name = "rawkernel.cu"
        module._kernels = _compile(code, module._file_name, module.options)
        module._device_globals = _DeviceGlobals(code, module._file_name, module.options)
        module._link_items = _raw_links(link)
        self._start(module, name)

    @classmethod
    def _from_module(cls, module, name):
        kernel = cls.__new__(cls)
        kernel._start(module, name)
        return kernel

    def _start(self, module, name):
        if not isinstance(name, str):
            raise TypeError(f"a kernel's name is a str, not {type(name).__name__}")
        found = [k for k in module._kernels if name in (k[0], k[1])]
        if not found:  # "scale<float,3>" for clang's "scale<float, 3>"
            found = [k for k in module._kernels if _spaceless(name) == _spaceless(k[1])]
        if not found:
            listed = ", ".join(_describe(k) for k in module._kernels) or "none"
            hint = ("; an instance of a kernel template is compiled when RawModule's "
                    "name_expressions names it" if "<" in name else "")
            raise ValueError(f"CUDA C++ source {module._file_name} has no kernel '{name}'; "
                             f"its __global__ functions: {listed}{hint}")
        if len(found) > 1:
            listed = ", ".join(_describe(k) for k in found)
            raise ValueError(f"'{name}' names {len(found)} kernels of {module._file_name} "
                             f"(overloads): {listed}; give one's symbol")
        symbol, written, types, names = found[0]
        names = [n or f"#{i}" for i, n in enumerate(names)]
        for parameter, text in zip(names, types):
            if text.startswith("?"):
                raise TypeError(
                    f"parameter '{parameter}' of CUDA C++ kernel '{written}' has type "
                    f"'{text[1:]}': tidal passes only scalars, structs of numbers (as "
                    f"records) and pointers to them")
        native.Dispatcher.__init__(
            self, raw=(module.code, module._file_name, list(module.options), symbol, written,
                       list(types), names, module))
        self.module = module
        self.name = name
        self.code = module.code
        self.options = {}
        self.py_func = None
        self._cache = None
        self.declared_signatures = ()
        self.__name__ = written
        self.__qualname__ = written
        self.parameter_types = tuple(types)

    def __repr__(self):
        return f"<tidal RawKernel {self.__name__}({', '.join(self.parameter_types)})>"
