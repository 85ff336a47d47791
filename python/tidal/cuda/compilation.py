"""Compiling to PTX without launching: Numba's ``cuda.compile_ptx``,
``cuda.compile_ptx_for_current_device`` and numba-cuda's ``cuda.compile``.

No GPU and no driver are needed: the function is compiled for the NVPTX
target whatever the current target is (docs/compile-ptx.md). Kernels give
a ``.visible .entry``; device functions a ``.visible .func`` under either
ABI:

- ``abi='c'``: ``T name(args...)``, the Python name as the symbol (or
  ``abi_info={'abi_name': ...}``), for CUDA C++ to call; a name that is not
  a PTX identifier (``<lambda>``, non-ASCII) is spelled as symbol_name does;
- ``abi='numba'``: ``int name(T *func_retval, args...)``, returning 0, with
  the symbol ``<name>_<argument manglings>``.

Array arguments are passed flattened, as tidal passes them everywhere: the
data pointer, then the shape and the strides (in bytes) as 64-bit ints.
"""

import builtins
import itertools
import linecache

from .. import types as _types
from ._native import native
from . import signatures as _signatures
from .dispatcher import DeviceFunction

__all__ = ["compile", "compile_all", "compile_for_current_device", "compile_ptx",
           "compile_ptx_for_current_device"]

# LLVM 19's NVPTX architectures: a cc that LLVM does not know compiles for
# the closest one below it (as Numba's find_closest_arch).
_LLVM_SM = (30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90)
_DEFAULT_SM = 75  # as the dispatcher's inspect_asm: the oldest CUDA 13's ptxas takes
_entries = itertools.count()


def _sm(cc):
    if cc is None:
        return _DEFAULT_SM
    if not (isinstance(cc, tuple) and len(cc) == 2 and all(isinstance(v, int) for v in cc)):
        raise TypeError(f"cc must be a (major, minor) tuple of ints, got {cc!r}")
    wanted = cc[0] * 10 + cc[1]
    known = [sm for sm in _LLVM_SM if sm <= wanted]
    if not known:
        raise ValueError(f"compute capability {cc[0]}.{cc[1]} is older than any NVPTX "
                         f"architecture LLVM 19 compiles for (the oldest is 3.0)")
    return known[-1]


def _python_function(pyfunc):
    function = getattr(pyfunc, "py_func", pyfunc)  # a kernel or device function too
    if not callable(function) or not hasattr(function, "__code__"):
        raise TypeError(f"compile_ptx compiles a Python function, not {pyfunc!r}")
    return function


def _tidal_type(text):
    """A return type's text as tidal's type object where it has one."""
    if text in ("none", "void"):
        return _types.void
    try:
        description = _signatures.type_of(text)
    except TypeError:
        return text
    if description[0] == "scalar":
        return getattr(_types, description[1] if description[1] != "bool" else "boolean")
    if description[0] == "array" and description[1][0] == "scalar" and not description[4]:
        _, element, ndim, layout, _ = description
        dims = [slice(None)] * ndim
        if layout == "C":
            dims[-1] = slice(None, None, 1)
        elif layout == "F":
            dims[0] = slice(None, None, 1)
        return getattr(_types, element[1] if element[1] != "bool" else "boolean")[tuple(dims)]
    return text


def _entry_kernel(function, count):
    """A kernel that calls `function` as a device function, from a source
    that linecache holds (the frontend reads kernels from their source)."""
    parameters = ", ".join(f"a{i}" for i in range(count))
    filename = f"<tidal compile_ptx entry {next(_entries)}>"
    source = (f"def _tidal_entry({parameters}):\n"
              f"    _tidal_result = _tidal_callee({parameters})\n")
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace = {"_tidal_callee": DeviceFunction(function)}
    exec(builtins.compile(source, filename, "exec"), namespace)
    return namespace["_tidal_entry"]


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=None, abi="c", abi_info=None, output="ptx"):
    """numba-cuda's cuda.compile: (PTX text, return type) of `pyfunc`
    compiled for the argument types of `sig` (any form tidal.cuda.jit
    takes). A device function by default, with the C ABI."""
    if output != "ptx":
        raise NotImplementedError(f"Unsupported output type: {output} (tidal writes 'ptx')")
    code, result, _ = _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, abi,
                               abi_info, "ptx")
    return code, result


def _current_cc():
    from .devices import get_current_device
    return tuple(get_current_device().compute_capability)


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi="c", abi_info=None, output="ptx"):
    """numba-cuda's cuda.compile_for_current_device: compile() for the
    current device's compute capability (on the cpu target, the capability
    the cpu device reports)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info,
                   output=output)


def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
                opt=None, abi="c", abi_info=None, output="ltoir"):
    """numba-cuda's cuda.compile_all: ([code, ...], return type), the code
    of the function and of the external code it links. tidal compiles the
    CUDA C++ a function links (declare_device(link=...)) into the same
    module, so the list holds one PTX text that has them all. Only
    output='ptx': tidal writes no LTO-IR (numba-cuda's default 'ltoir' is a
    NotImplementedError saying so)."""
    if output not in ("ptx", "ltoir"):
        raise NotImplementedError(f"Unsupported output type: {output}")
    if output == "ltoir":
        raise NotImplementedError("Unsupported output type: ltoir (tidal writes 'ptx', with the "
                                  "CUDA C++ a function links compiled into it: pass "
                                  "output='ptx')")
    code, result = compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                           fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                           output="ptx")
    return [code], result


def _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, abi, abi_info, output):
    """(code, return type, symbol) of compile(): the PTX, or with output
    'llvm' the NVVM IR it is made from."""
    if abi not in ("c", "numba"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if abi_info is not None and not isinstance(abi_info, dict):
        raise TypeError(f"abi_info must be a dict such as {{'abi_name': 'f'}}, got {abi_info!r}")
    if not device and abi == "c":
        raise NotImplementedError("The C ABI is not supported for kernels")
    function = _python_function(pyfunc)
    signature = _signatures.signature_of(sig)
    returned = signature.return_type
    if not device and returned not in (None, ("none",)):
        raise TypeError("CUDA kernel must have void return type.")
    arguments = signature.native_args()
    sm = _sm(cc)
    flags = (sm, bool(debug), bool(lineinfo), bool(fastmath))
    # Symbols made from the function's name are legal on every target
    # ('<lambda>', non-ASCII names: native.symbol_name); an abi_name given is
    # checked as it is.
    name = function.__code__.co_name
    if not device:
        code, _ = native.compile_to_ptx(function, arguments, *flags, None, "", False, output)
        return code, _types.void, native.symbol_name(name)
    if abi == "c":
        symbol = (abi_info or {}).get("abi_name", native.symbol_name(name))
    else:
        symbol = "_".join([native.symbol_name(name)] + [_mangle(a) for a in signature.args])
    entry = _entry_kernel(function, len(arguments))
    code, variables = native.compile_to_ptx(entry, arguments, *flags, name, symbol,
                                            abi == "numba", output)
    result = variables.get("_tidal_result", "none")
    if returned not in (None, ("none",)) and \
            _signatures.canonical_text(returned) != _signatures.canonical_text(
                _signatures.type_of(result)):
        raise TypeError(f"device function '{name}' returns {result}, not the "
                        f"{_signatures.canonical_text(returned)} its signature declares")
    return code, _tidal_type(result), symbol


def _mangle(description):
    text = _signatures.canonical_text(description)
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=True, abi="numba", abi_info=None):
    """Numba's cuda.compile_ptx: (PTX text, return type) of `pyfunc` for the
    argument types of `sig`; a kernel by default (its return type void)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info)


def compile_ptx_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=False,
                                   fastmath=False, opt=True, abi="numba", abi_info=None):
    """compile_ptx for the current device's compute capability (on the cpu
    target, the capability the cpu device reports)."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info)


def _compile_device_function(pyfunc, sig, output, debug=False, lineinfo=False, fastmath=False,
                             cc=None):
    """(code, return type, symbol) of a device function compiled on its own
    with Numba's ABI: DeviceFunction.compile_device / inspect_asm /
    inspect_llvm."""
    return _compile(pyfunc, sig, debug, lineinfo, True, fastmath, cc, "numba", None, output)


# DeviceFunction's compile_device() and inspection compile through here.
DeviceFunction._compile_device_function = staticmethod(_compile_device_function)
