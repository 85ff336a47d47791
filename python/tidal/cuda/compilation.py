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
import os
import warnings

from .. import types as _types
from ._native import native
from . import signatures as _signatures
from ..errors import TypingError
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
    if not (isinstance(cc, tuple) and len(cc) in (2, 3)
            and all(isinstance(v, int) for v in cc[:2])):
        raise TypeError(f"cc must be a (major, minor) tuple of ints, got {cc!r}")
    if len(cc) == 3 and cc[2]:
        raise NotImplementedError(
            f"cc={cc!r}: tidal compiles for the family-portable sm_{cc[0]}{cc[1]}, not the "
            f"architecture-specific sm_{cc[0]}{cc[1]}{cc[2]} (pass ({cc[0]}, {cc[1]}))")
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


def _type_object(text, types=_types):
    """A return type's text as a type object of `types` (tidal.types, or
    numba.core.types for a signature written with Numba's objects) where it
    has one."""
    if text in ("none", "void"):
        return types.void
    try:
        description = _signatures.type_of(text)
    except TypeError:
        return text
    if description[0] == "scalar":
        return getattr(types, description[1] if description[1] != "bool" else "boolean")
    if description[0] == "array" and description[1][0] == "scalar" and not description[4]:
        _, element, ndim, layout, _ = description
        dims = [slice(None)] * ndim
        if layout == "C" or (layout == "F" and ndim == 1):  # 1-D: C and F are one
            dims[-1] = slice(None, None, 1)
        elif layout == "F":
            dims[0] = slice(None, None, 1)
        # One slice for 1-D: Numba reads a 1-tuple (::1,) as layout F.
        index = dims[0] if ndim == 1 else tuple(dims)
        return getattr(types, element[1] if element[1] != "bool" else "boolean")[index]
    return text


def _written_with_numba(sig):
    """Whether a signature is written with Numba's type objects (then the
    return type is Numba's too, so that a program compares it with its own)."""
    if isinstance(sig, (str, bytes)):
        return False
    if isinstance(sig, (tuple, list)):
        return any(_written_with_numba(item) for item in sig)
    if type(sig).__module__.startswith("numba."):
        return True
    arguments = getattr(sig, "args", None)
    return isinstance(arguments, tuple) and _written_with_numba(arguments)


def _result_types(sig):
    if _written_with_numba(sig):
        import numba.core.types
        return numba.core.types
    return _types


def _entry_kernel(function, count, returns=None):
    """A kernel that calls `function` as a device function, from a source
    that linecache holds (the frontend reads kernels from their source).
    With `returns` (a type object), it calls a device function
    `_tidal_returns` that converts `function`'s result to that type, as
    numba-cuda's compile casts the inferred type to the one declared."""
    parameters = ", ".join(f"a{i}" for i in range(count))
    filename = f"<tidal compile_ptx entry {next(_entries)}>"
    callee = "_tidal_callee" if returns is None else "_tidal_returns"
    source = ""
    if returns is not None:
        source += (f"def _tidal_returns({parameters}):\n"
                   f"    return _tidal_type(_tidal_callee({parameters}))\n")
    source += (f"def _tidal_entry({parameters}):\n"
               f"    _tidal_result = {callee}({parameters})\n")
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace = {"_tidal_callee": DeviceFunction(function), "_tidal_type": returns}
    exec(builtins.compile(source, filename, "exec"), namespace)
    if returns is not None:
        namespace["_tidal_returns"] = DeviceFunction(namespace["_tidal_returns"])
    return namespace["_tidal_entry"]


def _check_options(device, abi, abi_info, output, forceinline):
    """numba-cuda's checks of compile()'s options, in its order."""
    if output not in ("ptx", "ltoir"):
        raise NotImplementedError(f"Unsupported output type: {output}")
    if forceinline and output != "ltoir":
        raise ValueError("Can only designate forced inlining in LTO-IR")
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    if forceinline and not device:
        raise ValueError("Cannot force-inline kernels")
    if abi_info is None:
        return
    if not isinstance(abi_info, dict):
        raise TypeError(f"abi_info must be a dict such as {{'abi_name': 'f'}}, got {abi_info!r}")
    known = ("abi_name",) if abi == "c" else ()
    for key in abi_info:
        if key not in known:
            takes = "one option, 'abi_name'" if known else "no options"
            raise ValueError(f"abi_info has {key!r}: the {abi!r} ABI takes {takes}")
    name = abi_info.get("abi_name")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"abi_info['abi_name'] must be a str, not {type(name).__name__}")


def _debug_and_opt(debug, opt):
    """numba-cuda's defaults (debug from NUMBA_CUDA_DEBUGINFO, opt on) and
    its warning for debug with opt."""
    if debug is None:
        debug = os.environ.get("NUMBA_CUDA_DEBUGINFO", "0") not in ("", "0")
    if opt is None:
        opt = os.environ.get("NUMBA_OPT", "3") != "0"
    if debug and opt:
        from ..errors import InvalidConfigWarning
        warnings.warn("debug=True with opt=True is not supported by CUDA. This may result in "
                      "a crash - set debug=False or opt=False. (tidal compiles it, optimised "
                      "as always)", InvalidConfigWarning, stacklevel=4)
    return bool(debug), bool(opt)


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=None, abi="c", abi_info=None, output="ptx", forceinline=False,
            launch_bounds=None):
    """numba-cuda's cuda.compile: (code, return type) of `pyfunc` compiled
    for the argument types of `sig` (any form tidal.cuda.jit takes). A
    device function by default, with the C ABI. output='ptx' gives PTX text;
    output='ltoir' gives tidal's LTO-IR: the NVVM IR the PTX is made from
    (lowered and optimised for NVPTX, before code generation) as LLVM
    bitcode (bytes; docs/compile-ptx.md)."""
    _check_options(device, abi, abi_info, output, forceinline)
    debug, opt = _debug_and_opt(debug, opt)
    # As numba-cuda's, the function's own code: PTX and binaries it links
    # are compile_all's to list.
    code, result, _ = _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, abi,
                               abi_info, output, forceinline, launch_bounds)
    return code, result


def _current_cc():
    from .devices import get_current_device
    return tuple(get_current_device().compute_capability)


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi="c", abi_info=None, output="ptx",
                               forceinline=False, launch_bounds=None):
    """numba-cuda's cuda.compile_for_current_device: compile() for the
    current device's compute capability (on the cpu target, the capability
    the cpu device reports)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info,
                   output=output, forceinline=forceinline, launch_bounds=launch_bounds)


def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
                opt=None, abi="c", abi_info=None, output="ltoir", forceinline=False,
                launch_bounds=None):
    """numba-cuda's cuda.compile_all: ([code, ...], return type), the code
    of the function and of the external code it links. tidal compiles the
    CUDA C++ and LLVM IR a function links (declare_device(link=...)) into
    the same module, so the list starts with that one code (PTX, or tidal's
    LTO-IR by default), followed by the PTX and binaries the driver's
    linker would link with it, as code objects (PTXSource, Cubin, ...)."""
    _check_options(device, abi, abi_info, output, forceinline)
    debug, opt = _debug_and_opt(debug, opt)
    code, result, _, links = _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, abi,
                                      abi_info, output, forceinline, launch_bounds, True)
    from . import linkable_code
    kinds = {"ptx": linkable_code.PTXSource, "cubin": linkable_code.Cubin,
             "fatbin": linkable_code.Fatbin, "object": linkable_code.Object,
             "archive": linkable_code.Archive}
    objects = [kinds[kind](data.decode() if kind == "ptx" else data, name=name)
               for kind, name, data in links]
    return [code] + objects, result


def _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, abi, abi_info, output,
             forceinline=False, launch_bounds=None, with_links=False):
    """(code, return type, symbol) of compile(): the PTX, with output
    'llvm' the NVVM IR it is made from, with 'ltoir' that IR as bitcode;
    with_links adds the [(kind, name, bytes)] left to the driver's linker."""
    _check_options(device, abi, abi_info, "ptx" if output == "llvm" else output, forceinline)
    function = _python_function(pyfunc)
    signature = _signatures.signature_of(sig)
    returned = signature.return_type
    types = _result_types(sig)
    if not device and returned not in (None, ("none",)):
        raise TypeError("CUDA kernel must have void return type.")
    arguments = signature.native_args()
    sm = _sm(cc)
    bounds = _launch_bounds(launch_bounds, function.__name__) if not device else (0, 0, 0)
    flags = (sm, bool(debug), bool(lineinfo), bool(fastmath))
    # Symbols made from the function's name are legal on every target
    # ('<lambda>', non-ASCII names: native.symbol_name); an abi_name given is
    # checked as it is.
    name = function.__code__.co_name
    if not device:
        try:
            code, _, links = native.compile_to_ptx(function, arguments, *flags, None, "",
                                                   False, output, bounds, False)
        except TypingError as error:
            # A kernel whose return type is inferred as a value: numba-cuda's error.
            if "a kernel cannot return a value" in str(error):
                raise TypeError(f"CUDA kernel must have void return type. ({error})") from None
            raise
        found = (code, types.void, native.symbol_name(name))
        return found + (links,) if with_links else found
    if abi == "c":
        symbol = (abi_info or {}).get("abi_name", native.symbol_name(name))
    else:
        symbol = "_".join([native.symbol_name(name)] + [_mangle(a) for a in signature.args])

    def compiled(returns):
        entry = _entry_kernel(function, len(arguments), returns)
        callee = name if returns is None else "_tidal_returns"
        code, variables, links = native.compile_to_ptx(entry, arguments, *flags, callee,
                                                       symbol, abi == "numba", output, bounds,
                                                       bool(forceinline))
        return code, variables.get("_tidal_result", "none"), links

    code, result, links = compiled(None)
    if returned not in (None, ("none",)):
        declared = _signatures.canonical_text(returned)
        if declared != _signatures.canonical_text(_signatures.type_of(result)):
            # numba-cuda casts the inferred type to the one declared: a
            # device function that converts the result is the one kept.
            inferred_scalar = _signatures.type_of(result)[0] == "scalar"
            target = _type_object(declared)
            if not inferred_scalar or returned[0] != "scalar" or isinstance(target, str):
                raise TypeError(f"device function '{name}' returns {result}, not the "
                                f"{declared} its signature declares (tidal converts one "
                                f"number type to another only)")
            code, result, links = compiled(target)
    found = (code, _type_object(result, types), symbol)
    return found + (links,) if with_links else found


def _launch_bounds(value, name):
    from .dispatcher import _launch_bounds as check
    return check(value, name)


def _mangle(description):
    text = _signatures.canonical_text(description)
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=None, abi="numba", abi_info=None, forceinline=False,
                launch_bounds=None):
    """Numba's cuda.compile_ptx: (PTX text, return type) of `pyfunc` for the
    argument types of `sig`; a kernel by default (its return type void)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                   output="ptx", forceinline=forceinline, launch_bounds=launch_bounds)


def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False,
                                   fastmath=False, opt=None, abi="numba", abi_info=None,
                                   forceinline=False, launch_bounds=None):
    """compile_ptx for the current device's compute capability (on the cpu
    target, the capability the cpu device reports)."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info,
                       forceinline=forceinline, launch_bounds=launch_bounds)


def _compile_device_function(pyfunc, sig, output, debug=False, lineinfo=False, fastmath=False,
                             cc=None):
    """(code, return type, symbol) of a device function compiled on its own
    with Numba's ABI: DeviceFunction.compile_device / inspect_asm /
    inspect_llvm."""
    return _compile(pyfunc, sig, debug, lineinfo, True, fastmath, cc, "numba", None, output)


# DeviceFunction's compile_device() and inspection compile through here.
DeviceFunction._compile_device_function = staticmethod(_compile_device_function)
