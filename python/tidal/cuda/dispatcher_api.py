"""Numba's dispatcher API on tidal's kernels (mixed into
tidal.cuda.dispatcher.Dispatcher): `overloads` (signature -> compiled kernel
object), `specialize()` / `specializations` / `specialized`, `definition` /
`definitions`, `bind()`, `inspect_sass()`, `extensions`, and the compiled kernel
object that `overloads` holds."""

import os
import shutil
import subprocess
import tempfile

from ._native import native
from .target import current_target


def split_signature(text):
    """'(array(float32, 1d, C), int64)' -> ('array(float32, 1d, C)', 'int64')."""
    inner = text[1:-1] if text.startswith("(") and text.endswith(")") else text
    parts, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    if inner.strip():
        parts.append(inner[start:].strip())
    return tuple(parts)


def _is_type(value):
    """A type given in place of an argument: tidal's (tidal.float32[::1]), a
    type's text, or an object of the same shape (Numba's types print the
    same text), or Numba's type objects (numba.core.types)."""
    from .. import types
    return isinstance(value, (types.NumberType, types.ArrayType, str)) or \
        type(value).__module__.startswith("numba.core.types")


def _type_text(value):
    """A type (tidal's, its text, or Numba's object) as the dispatcher's
    signatures spell it ('array(float32, 1d, C)')."""
    if not isinstance(value, str) and type(value).__module__.startswith("numba.core.types"):
        from .signatures import canonical_text, type_of
        value = canonical_text(type_of(value))
    return native.parse_signature(str(value))[1][0]


class _Overloads(dict):
    """{argument types: compiled kernel}, keyed by tuples of type texts, and
    found also by Numba's key, a signature's args: a tuple of type objects
    (overloads[(int32[:, ::1],)])."""

    @staticmethod
    def _key(key):
        if isinstance(key, tuple) and any(_is_type(k) and not isinstance(k, str) for k in key):
            return NumbaDispatcherAPI._argument_types(key)
        return key

    def __getitem__(self, key):
        return super().__getitem__(self._key(key))

    def __contains__(self, key):
        return super().__contains__(self._key(key))

    def get(self, key, default=None):
        return super().get(self._key(key), default)


class BySignature(_Overloads):
    """What inspect_llvm()/inspect_asm()/... give for every signature, as
    Numba's: keyed by the tuple of argument types (the signature's args, as
    `overloads`), found also by a signature's text ('(float32[::1], int64)',
    as tidal gave keys before)."""

    @staticmethod
    def _key(key):
        if isinstance(key, str):
            return split_signature(key)
        return _Overloads._key(key)


def _signature_syntax(text):
    """A type's text as a signature writes it ('array(float32, 2d, C)' ->
    'float32[:, ::1]'), or None for one that signatures cannot write."""
    if "(" not in text:
        return text  # a scalar
    if not text.startswith("array(") or not text.endswith(")"):
        return None
    parts = [p.strip() for p in text[len("array("):-1].split(",")]
    if len(parts) != 3 or not parts[1].endswith("d") or not parts[1][:-1].isdigit():
        return None
    dtype, ndim, layout = parts[0], int(parts[1][:-1]), parts[2]
    dims = [":"] * ndim
    if layout == "C" and ndim:
        dims[-1] = "::1"
    elif layout == "F" and ndim:
        dims[0] = "::1"
    elif layout != "A":
        return None
    return f"{dtype}[{', '.join(dims)}]"


class CompiledKernel:
    """One specialisation of a kernel, as Numba's dispatcher.overloads holds
    them: its signature and argument types, its views, and (cuda target) the
    facts of the kernel loaded on the current device."""

    def __init__(self, dispatcher, signature):
        self._dispatcher = dispatcher
        self.signature = signature
        self.argument_types = split_signature(signature)

    @property
    def py_func(self):
        return self._dispatcher.py_func

    @property
    def name(self):
        return self._dispatcher.__name__

    def inspect_llvm(self, arch=None):
        return self._dispatcher.inspect_llvm(self.signature, arch=arch)

    def inspect_asm(self, cc=None):
        return self._dispatcher.inspect_asm(self.signature, arch=_arch(cc))

    def inspect_types(self, file=None):
        self._dispatcher.inspect_types(file=file, signature=self.signature)

    def inspect_sass(self):
        return self._dispatcher.inspect_sass(self.signature)

    @property
    def _type_annotation(self):
        """Numba's type annotation of this specialisation, as far as tests
        read it: `typemap`, each local variable's type (tidal's type objects
        for numbers and arrays, the type's text otherwise)."""
        text = self._dispatcher._inspect(self.signature, "types", 75)
        return TypeAnnotation(variable_types(text))

    @property
    def regs_per_thread(self):
        return self._dispatcher.get_regs_per_thread(self.signature)

    @property
    def shared_mem_per_block(self):
        return self._dispatcher.get_shared_mem_per_block(self.signature)

    @property
    def local_mem_per_thread(self):
        return self._dispatcher.get_local_mem_per_thread(self.signature)

    @property
    def max_threads_per_block(self):
        return self._dispatcher.get_max_threads_per_block(self.signature)

    @property
    def const_mem_size(self):
        return self._dispatcher.get_const_mem_size(self.signature)

    class _CodeLibrary:
        """Numba's kernel._codelibrary, as far as tests read it: the files
        linked into the kernel's code. tidal links none (no libcudadevrt:
        grid.sync() is lowered in-line, docs/markers.md)."""
        _linking_files = ()

    _codelibrary = _CodeLibrary()

    @property
    def cooperative(self):
        """True when the kernel uses cuda.cg.this_grid(): it is launched
        cooperatively (every block at once), as Numba's."""
        return self._dispatcher._cooperative(self.signature)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """The most blocks of `blockdim` (an int or a 2- or 3-tuple) threads,
        with `dynsmemsize` bytes of dynamic shared memory, that a cooperative
        launch of this kernel may have on the current target."""
        return self._dispatcher.max_cooperative_grid_blocks(blockdim, dynsmemsize,
                                                            signature=self.signature)

    def __repr__(self):
        return f"<compiled kernel {self.name}{self.signature}>"


class TypeAnnotation:
    """What Numba's _type_annotation of a compiled kernel holds that tidal
    knows: typemap, {variable name: type}."""

    def __init__(self, typemap):
        self.typemap = typemap


def _type_object(text):
    """'int32' -> tidal.int32, 'array(float32, 2d, C)' -> tidal.float32[:, ::1];
    any other type stays its text."""
    from .. import types
    scalar = getattr(types, text, None)
    if isinstance(scalar, types.NumberType):
        return scalar
    declared = _signature_syntax(text)
    if declared and declared != text and "[" in declared:
        dtype = getattr(types, declared[:declared.index("[")], None)
        if isinstance(dtype, types.NumberType):
            dims = tuple(slice(None, None, 1) if part.strip() == "::1" else slice(None)
                         for part in declared[declared.index("[") + 1:-1].split(","))
            return types.ArrayType(dtype, dims)
    return text


def variable_types(types_text):
    """{name: type} from the '# variables:' part of inspect_types()' text."""
    found = {}
    in_variables = False
    for line in types_text.splitlines():
        if line.startswith("# variables:"):
            in_variables = True
        elif in_variables and line.startswith("#   ") and " = " in line:
            name, text = line[4:].split(" = ", 1)
            found[name.strip()] = _type_object(text.strip())
        elif in_variables:
            in_variables = False
    return found


def _arch(cc):
    """Numba's cc (7, 5) as tidal's arch 'sm_75'."""
    if cc is None:
        return None
    if isinstance(cc, str):
        return cc
    return f"sm_{cc[0]}{cc[1]}"


class NumbaDispatcherAPI:
    """The part of Numba's CUDA dispatcher that reads and makes
    specialisations (a mixin of tidal.cuda.dispatcher.Dispatcher)."""

    _specialized = False

    @property
    def overloads(self):
        """{argument types: compiled kernel} of the current target, as
        Numba's: the keys are tuples of type texts."""
        return _Overloads((split_signature(text), CompiledKernel(self, text))
                          for text in self.signatures)

    @property
    def specializations(self):
        """{(target, argument types): specialised dispatcher} made by
        specialize()."""
        try:
            return self.__dict__["_specializations"]
        except KeyError:
            return self.__dict__.setdefault("_specializations", {})

    @property
    def specialized(self):
        """True for a dispatcher that compiles nothing new, as Numba's: one
        made by specialize(), or a kernel declared with signatures
        (cuda.jit('void(float32[::1])'))."""
        return self._specialized or bool(getattr(self, "declared_signatures", ()))

    def specialize(self, *args):
        """Numba's specialize(*args): a dispatcher of this kernel for the
        types of these arguments (values, or types such as float32[::1]),
        compiled now; the same one for the same types. A specialised
        dispatcher, or a kernel declared with signatures, raises
        RuntimeError (Numba's: it has its types already)."""
        if self.specialized:
            how = ("made by specialize()" if self._specialized else
                   "declared with signatures " + ", ".join(map(str, self.declared_signatures)))
            raise RuntimeError(f"Dispatcher already specialized: kernel '{self.__name__}' was "
                               f"{how}, so it compiles no other types")
        types = self._argument_types(args)
        key = (current_target(), types)
        found = self.specializations.get(key)
        if found is not None:
            return found
        declared = [_signature_syntax(text) for text in types]
        if all(declared):
            # Declared, as Numba's disable_compile(): launches convert scalars
            # to these types and compile nothing else.
            specialization = type(self)(self.py_func, [declared], **self.options)
        else:  # a type with no signature syntax (a record, a read-only array)
            specialization = type(self)(self.py_func, **self.options)
            specialization._specialize(*args)
        specialization._specialized = True
        self.specializations[key] = specialization
        return specialization

    def bind(self):
        """Numba's bind(): readies every compiled specialisation (the declared
        signatures among them) on the current device. On the cuda target each
        one's PTX is made for the device and loaded (cuModuleLoadData), as
        Numba loads its cubins; on the cpu target a specialisation is
        launchable once compiled."""
        if current_target() != "cuda":
            return
        for signature in self.signatures:
            self._kernel_attribute(signature, "max_threads")

    @staticmethod
    def _argument_types(args):
        """The type text of each argument (a value or a type), as the
        dispatcher's signatures spell them."""
        return tuple(_type_text(arg) if _is_type(arg) else native.typeof(arg) for arg in args)

    def recompile(self):
        """Numba's recompile(): compiles again every signature compiled so far
        on the current target, reading the kernel's globals and closure
        variables as they are now (a kernel freezes them when it compiles);
        on other targets the kernel compiles afresh at its next launch. With
        cache=True the new code is saved beside the old, under its own key
        (docs/cache.md). A launch running on another thread meanwhile
        finishes with the old code."""
        for signature in self._forget():
            self.compile(signature)

    @property
    def definitions(self):
        """{argument types: compiled kernel}, as overloads."""
        return self.overloads

    @property
    def definition(self):
        """The one compiled kernel of a dispatcher that has exactly one (a
        specialised one)."""
        overloads = list(self.overloads.values())
        if len(overloads) != 1:
            raise ValueError(
                f"kernel '{self.__name__}' has {len(overloads)} compiled signatures, not "
                f"one: use definitions (or overloads) and pick one")
        return overloads[0]

    @property
    def extensions(self):
        """Numba's extensions: objects with prepare_args(ty, val, stream=,
        retr=) returning (ty, val), through which each launch passes every
        argument (the last extension first); retr collects functions called
        after the launch. cuda.jit(extensions=[...]) or appended here."""
        extensions = self.options.get("extensions")
        if not isinstance(extensions, list):
            extensions = list(extensions or ())
            self.options["extensions"] = extensions
        return extensions

    def _prepare_extension_arguments(self, args, stream):
        """The launch's arguments after the extensions, and the functions to
        call once it is done (called by the C++ launch when there are
        extensions). ty is tidal's type text of the argument, or None for a
        value kernels cannot take as it is."""
        retrieve = []
        prepared = []
        for value in args:
            try:
                ty = native.typeof(value)
            except TypeError:
                ty = None
            for extension in reversed(self.extensions):
                ty, value = extension.prepare_args(ty, value, stream=stream or 0,
                                                   retr=retrieve)
            prepared.append(value)
        return tuple(prepared), retrieve

    def inspect_sass(self, signature=None):
        """The SASS of the kernel (per signature, or for one), from the PTX
        that tidal makes for the current device: ptxas, then nvdisasm (or
        cuobjdump) of a CUDA toolkit on PATH or under CUDA_HOME."""
        if current_target() != "cuda":
            raise RuntimeError(
                f"kernel '{self.__name__}': inspect_sass() disassembles the code for a GPU; "
                f"kernels run on the {current_target()} target here")
        if signature is None and self._specialized:
            signature = self.signatures[0]
        if signature is not None:
            return self._sass(self._signature_text(signature))
        return {s: self._sass(s) for s in self.signatures}

    def _sass(self, signature):
        ptxas = _toolkit_program("ptxas")
        disassembler = _toolkit_program("nvdisasm") or _toolkit_program("cuobjdump")
        if not ptxas or not disassembler:
            missing = " and ".join(name for name, found in
                                   (("ptxas", ptxas), ("nvdisasm or cuobjdump", disassembler))
                                   if not found)
            raise RuntimeError(
                f"inspect_sass() of kernel '{self.__name__}' needs {missing} of a CUDA "
                f"toolkit, found neither on PATH nor under CUDA_HOME")
        arch = _device_arch()
        ptx = self._inspect(signature, "ptx", int(arch[3:]))
        with tempfile.TemporaryDirectory(prefix="tidal-sass-") as folder:
            ptx_path = os.path.join(folder, "kernel.ptx")
            cubin_path = os.path.join(folder, "kernel.cubin")
            with open(ptx_path, "w") as file:
                file.write(ptx)
            _run([ptxas, f"-arch={arch}", ptx_path, "-o", cubin_path])
            if os.path.basename(disassembler).startswith("nvdisasm"):
                return _run([disassembler, cubin_path])
            return _run([disassembler, "-sass", cubin_path])


def _toolkit_program(name):
    found = shutil.which(name)
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = os.path.join(home, "bin", name)
    return candidate if os.access(candidate, os.X_OK) else None


def _device_arch():
    """sm_XY of the current device."""
    from .devices import get_current_device
    major, minor = get_current_device().compute_capability
    return f"sm_{major}{minor}"


def _run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{os.path.basename(command[0])} failed: {result.stderr.strip()}")
    return result.stdout
