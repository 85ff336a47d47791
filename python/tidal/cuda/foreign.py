"""Python kernels calling functions written in CUDA C++ (docs/cpp.md,
"Calling CUDA C++ from Python kernels"), two ways:

- Numba's: ``f = cuda.declare_device('f', 'float32(float32, float32)',
  link=['functions.cu'])`` declares a foreign function by its symbol and a
  signature; ``@cuda.jit(link=[...])`` names files for the whole kernel.
  Numba's ABI (``extern "C" __device__ int f(T *result, args...)``: an int
  status, which tidal ignores, and the result through the first
  parameter), or ``abi='c'`` (``T f(args...)``). Files: CUDA C++ (``.cu``,
  ``.cuh``: compiled by tidal's in-process Clang), LLVM IR (``.ll``,
  ``.bc``: clang's NVVM IR for CUDA device code) and PTX (``.ptx``: on the
  cuda target, linked with the kernel's PTX by the CUDA driver's JIT
  linker, as Numba does; on the cpu target an error that says what to
  link instead).
- tidal's, with no signatures: ``lib = cuda.include('functions.cu')`` (a
  file or a code string) binds every ``__device__`` function of the source
  with its C++ types (python/src/ForeignLinking.cpp, cxx/DeviceBinding.h,
  the code tidal-bind prints from); ``lib.mul(x, y)`` and ``lib.ns.f(...)``
  in a kernel call them, C++ overloads chosen by the argument types.

Either way the C++ (and LLVM IR) is linked into the kernel's module
before optimisation, so calls inline (PTX is linked after); a pointer parameter takes an array (its
data's address; ``a[i:]`` for an element's), a number parameter any real
number, converted as C++ converts it. The frontend's half is
pyfrontend/ForeignFunctions.cpp.
"""

import hashlib
import os
import re
import sys
import types as _types

from ._native import native
from . import signatures as _signatures
from .. import types as _tidal_types
from ..errors import CompileError
from .linkable_code import LinkableCode, binary_link_item

__all__ = ["declare_device", "include", "link_items", "CxxLibrary", "ForeignFunction"]

_LINK_KINDS = {".cu": "cu", ".cuh": "cu", ".ll": "ll", ".bc": "bc", ".ptx": "ptx",
               ".cubin": "cubin", ".fatbin": "fatbin", ".o": "object", ".a": "archive",
               ".lib": "archive", ".ltoir": "ltoir"}


def load_compiler():
    """Imports tidal._cxx, the module that links Clang and hands its
    compiler to _tidal; a clear error where it cannot load (a GPU kit
    without libclang-cpp)."""
    try:
        from .. import _cxx  # noqa: F401
    except ImportError as error:
        raise RuntimeError(f"CUDA C++ (RawKernel, RawModule, cuda.include, .cu links) needs "
                           f"tidal's Clang module tidal._cxx, which cannot load here: "
                           f"{error}") from None


_load_compiler = load_compiler


def include_directories(path=None):
    """clang's -I options for a linked .cu, in numba-cuda's order: the
    file's own folder first (for <...> includes too), then the extra search
    paths (Numba's CUDA_NVRTC_EXTRA_SEARCH_PATHS: numba.core.config's, when
    the program imported it and set one, else the environment's
    NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS), colon-separated."""
    config = sys.modules.get("numba.core.config")
    extra = getattr(config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "") or \
        os.environ.get("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")
    folders = [os.path.dirname(os.path.abspath(path))] if path else []
    folders += [folder for folder in str(extra).split(":") if folder]
    return tuple(f"-I{folder}" for folder in folders)


def _link_path(entry):
    """The path of a link=[...] entry that is not a code object; a TypeError
    for anything else."""
    try:
        return os.fspath(entry)
    except TypeError:
        raise TypeError(f"link takes file paths (str or os.PathLike) and code objects "
                        f"(cuda.CUSource, cuda.PTXSource), not "
                        f"{type(entry).__name__}: {entry!r}") from None


def check_link_entries(link):
    """link=[...] checked for its entries' types when the kernel is made
    (cuda.jit), so that a wrong one is an error at the user's decorator,
    not at the first launch; the files are read when it compiles."""
    if link is None:
        return
    if isinstance(link, (str, bytes, os.PathLike)):
        link = [link]  # one file, as link_items takes it
    for entry in link:
        if not (isinstance(entry, LinkableCode) or (isinstance(entry, tuple) and len(entry) == 4)):
            _link_kind(_link_path(entry))  # a suffix tidal does not link: at the decorator too


def _link_kind(path):
    """The kind of file path is by its suffix; ValueError for one tidal does
    not link."""
    extension = os.path.splitext(path)[1].lower()
    kind = _LINK_KINDS.get(extension)
    if kind is None:
        raise ValueError(f"cannot link '{path}': tidal links CUDA C++ (.cu, .cuh), LLVM IR "
                         f"(.ll, .bc), PTX (.ptx), binaries for the CUDA driver's linker "
                         f"(.cubin, .fatbin, .o, .a) and tidal's LTO-IR (.ltoir) files, not "
                         f"'{extension or 'no suffix'}'")
    return kind


def _link_item(entry, options=()):
    """One file to link as the C++ half takes it: (kind, name, payload,
    options)."""
    if isinstance(entry, tuple) and len(entry) == 4:
        return entry
    if isinstance(entry, LinkableCode):  # cuda.CUSource(...), cuda.PTXSource(...)
        item = entry.link_item()
        if item[0] == "cu":
            _load_compiler()
            options = include_directories() + tuple(options)
        return item[:3] + (tuple(options),)
    path = _link_path(entry)
    kind = _link_kind(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"cannot link '{path}': no such file")
    if kind in ("cubin", "fatbin", "object", "archive", "ltoir"):
        with open(path, "rb") as file:
            return binary_link_item(kind, path, file.read()) + (tuple(options),)
    if kind == "bc":
        with open(path, "rb") as file:
            payload = file.read()
    else:
        with open(path, encoding="utf-8") as file:
            payload = file.read()
    if kind == "cu":
        _load_compiler()
        options = include_directories(path) + tuple(options)
    return (kind, path, payload, tuple(options))


def link_items(link):
    """link=[...] of cuda.jit or declare_device as (kind, name, payload,
    options) tuples."""
    if link is None:
        return []
    if isinstance(link, (str, bytes, os.PathLike)):
        link = [link]
    return [_link_item(entry) for entry in link]


# --- Numba's way: declare_device ---------------------------------------------------------

_POINTER = re.compile(r"CPointer\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")


def _record_text(dtype, where):
    """A structured dtype as the C++ half's struct text
    ("struct record{x:float32@0,id:int32@4;8}"): numbers only."""
    fields = []
    for name in dtype.names:
        field, offset = dtype.fields[name][:2]
        description = _signatures.type_of(field) if not field.shape and not field.names else None
        if description is None or description[0] != "scalar" or \
                description[1] in ("complex64", "complex128"):
            raise TypeError(f"{where}: tidal passes records of numbers to foreign functions "
                            f"(as C structs), and field '{name}' is {field}")
        fields.append(f"{name}:{description[1]}@{offset}")
    return "struct record{" + ",".join(fields) + f";{dtype.itemsize}}}"


def _parameter_text(description, where):
    kind = description[0]
    if kind == "scalar" and description[1] not in ("complex64", "complex128"):
        return description[1]
    if kind == "record":  # a struct by value: a copy of the record
        return _record_text(description[1], where)
    if kind == "pointer" and description[1] is not None:  # a CPointer object
        return description[1][1] + "*"
    if kind == "array" and description[1][0] == "scalar":
        # An array parameter passes its data's address, as a C pointer.
        return ("const " if description[4] else "") + description[1][1] + "*"
    raise TypeError(f"{where}: tidal passes numbers and arrays (as pointers) to foreign "
                    f"functions, not {_signatures.canonical_text(description)}")


def _type_object(description):
    """A signature's type description as tidal's type object (for .sig)."""
    if description[0] == "scalar":
        return getattr(_tidal_types, description[1] if description[1] != "bool" else "boolean")
    if description[0] == "none":
        return _tidal_types.void
    if description[0] == "array":
        element = _type_object(description[1])
        dims = [slice(None)] * description[2]
        if description[3] == "C":
            dims[-1] = slice(None, None, 1)
        elif description[3] == "F":
            dims[0] = slice(None, None, 1)
        return element[tuple(dims)]
    return _signatures.canonical_text(description)


class ForeignFunction:
    """What cuda.declare_device returns: callable in kernels, where it calls
    the foreign symbol `name` with the declared signature `sig`."""

    def __init__(self, name, signature, text, abi, links):
        self.name = name
        self.abi = abi
        self.link = links
        self._text = text
        self.sig = _tidal_types.Signature(
            _type_object(signature.return_type), tuple(_type_object(a) for a in signature.args))
        where = f"declare_device('{name}')"
        self._parameters = [_parameter_text(a, where) for a in signature.args]
        result = signature.return_type
        if result[0] == "none":
            if abi == "numba":
                raise TypeError(f"{where}: Numba's ABI returns its result through a pointer; "
                                f"a function without a result needs abi='c'")
            self._result = "void"
        elif result[0] == "scalar" and result[1] not in ("complex64", "complex128"):
            self._result = result[1]
        elif result[0] == "record":
            if abi == "numba":
                raise TypeError(f"{where}: Numba's ABI returns numbers through its pointer; a "
                                f"struct result needs abi='c' (a C++ function returning it)")
            self._result = _record_text(result[1], where)
        else:
            raise TypeError(f"{where}: a foreign function returns a real number, a record "
                            f"(abi='c') or nothing, "
                            f"not {_signatures.canonical_text(result)}")

    @property
    def __tidal_foreign__(self):
        declared = f"declare_device('{self.name}', '{self._text}'" + \
            (", abi='c')" if self.abi == "c" else ")")
        candidate = (self.name, self.abi, self._result, self._parameters, None, declared)
        return (self.name, [candidate], self.link, "")

    def __call__(self, *args):
        raise TypeError(f"foreign function '{self.name}' can only be called inside a kernel")

    def __repr__(self):
        return f"<tidal foreign function {self.name} {self.sig} abi={self.abi}>"


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Numba's cuda.declare_device: the foreign function `name` (its
    symbol) with signature `sig` (text or type objects, a return type
    required), defined in the files of `link` (or of the kernel's
    @cuda.jit(link=[...])). abi='numba' (``int name(T *result, args...)``)
    or 'c' (``T name(args...)``). use_cooperative is accepted for Numba's
    sake: tidal's grid sync needs no separate runtime."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"declare_device's name is the function's symbol (a str), not {name!r}")
    if abi not in ("numba", "c"):
        raise ValueError(f"declare_device's abi is 'numba' or 'c', not {abi!r}")
    text = sig if isinstance(sig, str) else None
    if isinstance(sig, str):
        signature = _signatures.parse_signature(_POINTER.sub(r"\1[::1]", sig))
    else:
        signature = _signatures.signature_of(sig)
    if signature.return_type is None:
        raise TypeError("Return type must be provided for device declarations")
    if text is None:
        text = repr(signature)
    return ForeignFunction(name, signature, text, abi, link_items(link))


# --- tidal's way: include ----------------------------------------------------------------

def instantiations(name_expressions, what):
    """CuPy's name_expressions ("scale<float, 3>"): the instances of C++
    templates (of kernels or of device functions: `what`) to compile."""
    if name_expressions is None:
        return ()
    if isinstance(name_expressions, str):
        name_expressions = (name_expressions,)
    names = tuple(name_expressions)
    for name in names:
        if not isinstance(name, str) or not name.strip() or "\n" in name or ";" in name:
            raise TypeError(f"a name expression is one C++ name (a {what} template's "
                            f"instance, such as 'scale<float, 3>'), not {name!r}")
    return names


def with_instantiations(code, names, attribute, api):
    """The source with an explicit instantiation of each name appended
    (`template __device__ decltype(E) E;`), after the user's lines so that
    clang's line numbers stay theirs."""
    if not names:
        return code
    return code + f"\n// name_expressions (tidal.cuda.{api})\n" + "".join(
        f"template {attribute} decltype({name}) {name};\n" for name in names)


def _clang_error(error, user_lines):
    """clang's first error and its notes, located where it is in the
    user's lines (a template's body), not in the forwarding function."""
    reason = getattr(error, "reason", None)
    if not reason:
        return str(error).splitlines()[0]
    reason = reason.removeprefix("CUDA C++: ")
    line = getattr(error, "line", 0) or 0
    if 0 < line <= user_lines:
        reason += f", at {error.file}:{line}:{error.column}"
    return reason


class CxxFunction:
    """lib.name of cuda.include: the C++ overloads of one name."""

    def __init__(self, library, path, overloads):
        self._library = library
        self._path = path
        self._overloads = overloads

    @property
    def __tidal_foreign__(self):
        library = self._library
        candidates = []
        for symbol, _, declaration, reason, defined, result, parameters in self._overloads:
            if not reason and not defined:
                reason = (f"{library._file_name} declares it but does not define it "
                          f"(link the file that does with @cuda.jit(link=[...]))")
            candidates.append((symbol, "c", result, parameters, reason or None, declaration))
        return (f"{library.__name__}.{self._path}", candidates, library._links, "")

    def __tidal_instance__(self, arguments):
        """What the frontend asks when no overload bound so far takes a
        call's arguments exactly and one of them is a template: C++'s own
        choice for those argument types (template argument deduction and
        overload resolution by clang), as a __tidal_foreign__ description of
        one candidate. `arguments` are the arguments' C++ types ("float",
        "const double *"), as the frontend spells them; None where the name
        has no template. Raises TypeError with clang's reason when C++
        cannot make the call."""
        if not any(overload[3].startswith("a template") for overload in self._overloads):
            return None
        return self._library._instance(self._path, tuple(arguments))

    @property
    def declarations(self):
        """The C++ declarations of the overloads."""
        return [overload[2] for overload in self._overloads]

    def __call__(self, *args):
        raise TypeError(f"CUDA C++ function '{self._path}' can only be called inside a kernel")

    def __repr__(self):
        return f"<tidal CUDA C++ function {self._path}: {'; '.join(self.declarations)}>"


class _CxxScope(_types.ModuleType):
    """A namespace of C++ functions as a module (the frontend reads a
    module's attributes at compile time)."""

    def _fill(self, library, prefix, functions):
        members = {}
        for qualified, overloads in functions.items():
            head, _, rest = qualified.partition("::")
            members.setdefault(head, {})[rest] = overloads
        for head, entries in members.items():
            path = f"{prefix}{head}"
            if "" in entries:
                setattr(self, head, CxxFunction(library, path, entries.pop("")))
            if entries:
                if head in self.__dict__:
                    continue  # a function and a namespace of one name: the function
                scope = _CxxScope(f"{library.__name__}.{path}")
                scope._fill(library, path + ".", entries)
                setattr(self, head, scope)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        known = sorted(k for k in self.__dict__ if not k.startswith("_"))
        raise AttributeError(f"CUDA C++ {self.__name__} has no __device__ function or namespace "
                             f"'{name}'; it has: {', '.join(known) or 'none'}")


class CxxLibrary(_CxxScope):
    """cuda.include's result: the __device__ functions of a CUDA C++ source
    as attributes (namespaces as nested attributes)."""

    def __init__(self, code, file_name, options):
        super().__init__(os.path.basename(file_name))
        self._file_name = file_name
        self._code = code
        self._options = tuple(options)
        self._links = [("cu", file_name, code, self._options)]
        self._instances = {}
        _load_compiler()
        functions = {}
        for entry in native._cxx_device_functions(code, file_name, list(self._options)):
            functions.setdefault(entry[1], []).append(entry)
        self._functions = functions
        self._fill(self, "", functions)

    def __repr__(self):
        return f"<tidal CUDA C++ library {self._file_name}>"

    def _instance(self, path, arguments):
        """The call of the C++ function `path` ("ns.f") with argument types
        `arguments` (C++ types), compiled as a small forwarding function
        appended to the source: clang deduces the template arguments and
        picks the overload, as for a C++ caller; the forwarder is bound and
        inlines into the kernel with what it calls. Each argument list is
        compiled once per library; a failure is remembered too."""
        key = (path, arguments)
        known = self._instances.get(key)
        if known is None:
            known = self._instances[key] = self._compile_instance(path, arguments)
        if isinstance(known, Exception):
            raise known
        return known

    def _compile_instance(self, path, cxx_types):
        qualified = path.replace(".", "::")
        shown = f"{qualified}({', '.join(cxx_types)})"
        # Named by what it forwards, so that two libraries' forwarders in
        # one kernel never share a symbol.
        name = "call_" + hashlib.sha256(
            repr((self._code, self._options, path, cxx_types)).encode()).hexdigest()[:16]
        parameters = ", ".join(f"{t} a{i}" for i, t in enumerate(cxx_types))
        forwarded = ", ".join(f"a{i}" for i in range(len(cxx_types)))
        code = (self._code + f"\n// tidal: C++'s choice for {shown}\n"
                f"namespace __tidal_calls {{ __device__ auto {name}({parameters}) "
                f"{{ return ::{qualified}({forwarded}); }} }}\n")
        try:
            entries = native._cxx_device_functions(code, self._file_name, list(self._options))
        except CompileError as error:  # clang's diagnostics
            return TypeError(f"C++ cannot call {shown}: "
                             f"{_clang_error(error, self._code.count(chr(10)) + 1)}")
        for symbol, qualified_name, _, reason, _, result, parameters in entries:
            if qualified_name == "__tidal_calls::" + name:
                declared = f"{result} {shown}, as C++ resolves it"
                if reason:
                    return TypeError(f"{declared}: cannot be bound: "
                                     f"{reason.replace(name, qualified)}")
                candidate = (symbol, "c", result, parameters, None, declared)
                return (f"{self.__name__}.{path}", [candidate],
                        [("cu", self._file_name, code, self._options)], "")
        return TypeError(f"internal error: the forwarding function for {shown} was not bound")


def include(source=None, *, path=None, code=None, options=(), name_expressions=None):
    """tidal's cuda.include: the CUDA C++ file `path` (or the code string
    `code`) compiled, its __device__ functions bound to tidal's types and
    callable from kernels as attributes, no signatures needed. A single
    positional argument is a path when it names a file (or ends in .cu,
    .cuh, .h), else code. `options` are clang's (-DNAME=VALUE, -I DIR).
    `name_expressions` names instances of function templates to compile
    ("clamp<float>", "ops::axpy<double>"), as RawModule's do for kernels:
    each is then one more overload of its template's name."""
    if source is not None:
        if path is not None or code is not None:
            raise TypeError("cuda.include takes a source, or path=, or code=, one of them")
        text = os.fspath(source)
        if os.path.isfile(text) or os.path.splitext(text)[1] in (".cu", ".cuh", ".h") \
                and "\n" not in text:
            path = text
        else:
            code = text
    if (path is None) == (code is None):
        raise TypeError("cuda.include takes a path or code, exactly one of them")
    if isinstance(options, str):
        options = (options,)
    if path is not None:
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"cuda.include: no such file '{path}'")
        with open(path, encoding="utf-8") as file:
            code = file.read()
        file_name = path
    else:
        if not isinstance(code, str):
            raise TypeError(f"cuda.include's code is a str of CUDA C++, not "
                            f"{type(code).__name__}")
        file_name = "include.cu"
    names = instantiations(name_expressions, "device function")
    # Include directories as for a linked .cu: its folder, then the extra ones.
    options = include_directories(path) + tuple(options)
    return CxxLibrary(with_instantiations(code, names, "__device__", "include"), file_name,
                      options)
