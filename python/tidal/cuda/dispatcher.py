"""@cuda.jit and the kernel object it returns: launch configurations
(kernel[griddim, blockdim, stream, sharedmem]), one compiled specialisation
per argument-type signature (compiled and cached in C++), inspection."""

import contextlib
import functools
import os
import warnings

from ._native import MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK, native
from . import signatures as signature_forms
from .dispatcher_api import BySignature, NumbaDispatcherAPI, split_signature
from .target import current_target
from .. import compiler as _compiler  # noqa: E402

_JIT_OPTIONS = {"device", "debug", "lineinfo", "fastmath", "opt", "cache",
                "max_registers", "link", "inline", "boundscheck", "launch_bounds",
                "extensions", "forceinline", "lto", "shared_memory_carveout", "passes"}

# numba-cuda's shared_memory_carveout strings and their percentage (-1: the
# driver's default).
_CARVEOUTS = {"default": -1, "maxl1": 0, "maxshared": 100}


def _shared_memory_carveout(value):
    """numba-cuda's shared_memory_carveout: 'MaxL1', 'MaxShared', 'default'
    (any case) or a percentage from -1 (the default) to 100, as the value of
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT; None when not given."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.lower() not in _CARVEOUTS:
            raise ValueError(f"Invalid carveout value: {value}. "
                             f"Must be -1 to 100 or one of {list(_CARVEOUTS)}")
        return _CARVEOUTS[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool):
        if not -1 <= value <= 100:
            raise ValueError("Carveout must be between -1 and 100")
        return value
    raise TypeError(f"shared_memory_carveout must be str or int, got {type(value).__name__}")


def _check_options(options):
    """The options numba-cuda checks when cuda.jit is called."""
    _shared_memory_carveout(options.get("shared_memory_carveout"))
    _launch_bounds(options.get("launch_bounds"), None)
    for flag in ("forceinline", "lto"):
        value = options.get(flag)
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False, not {value!r}")
    registers = options.get("max_registers")
    if registers is not None:
        if isinstance(registers, bool) or not hasattr(registers, "__index__"):
            raise TypeError(f"max_registers must be an int, not {registers!r}")
        if registers.__index__() < 0:
            raise ValueError(f"max_registers must be 0 or more, not {registers!r}")
    extensions = options.get("extensions")
    if extensions is not None:
        if not isinstance(extensions, (list, tuple)) or \
                not all(callable(getattr(e, "prepare_args", None)) for e in extensions):
            raise TypeError("extensions must be a list of objects with a prepare_args method "
                            f"(Numba's argument extensions), not {extensions!r}")


def _dims(value, what, kernel):
    """A launch dimension (an int, or a tuple or list of 1 to 3) as a 3-tuple
    of positive ints. The errors are Numba's: ValueError for a sequence of
    the wrong length, TypeError for an item that is not an integer."""
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{what} must be a sequence of 1, 2 or 3 integers, got {items!r} "
                         f"(launching kernel '{kernel}')")
    dims = []
    for item in items:
        if isinstance(item, bool) or not hasattr(item, "__index__"):
            raise TypeError(f"{what} must be a sequence of integers, got {items!r} "
                            f"(launching kernel '{kernel}')")
        dims.append(item.__index__())
    if any(n < 1 for n in dims):
        raise ValueError(f"{what} must be a sequence of positive integers, got {items!r} "
                         f"(launching kernel '{kernel}')")
    return tuple(dims) + (1,) * (3 - len(dims))


def _block_size_error(blockdim, given, kernel):
    """The message of a block beyond CUDA's limits (None within them):
    `given` is the blockdim as the program wrote it."""
    for axis, n, limit in zip("xyz", blockdim, MAX_BLOCK_DIM):
        if n > limit:
            return (f"blockdim {given!r} of kernel '{kernel}' is {n} along {axis}: "
                    f"CUDA allows at most {limit}")
    threads = blockdim[0] * blockdim[1] * blockdim[2]
    if threads > MAX_THREADS_PER_BLOCK:
        return (f"blockdim {given!r} of kernel '{kernel}' has {threads} threads: "
                f"a block has at most {MAX_THREADS_PER_BLOCK}")
    return None


def _stream_handle(stream, kernel):
    """The launch's stream as the handle the binding takes (0: the default)."""
    if stream is None or (isinstance(stream, int) and not isinstance(stream, bool) and stream == 0):
        return 0
    if hasattr(stream, "handle"):
        return int(stream)
    raise TypeError(f"the stream of kernel '{kernel}' must be a cuda.stream() or 0, "
                    f"got {stream!r}")


def _launch_bounds(value, kernel):
    """launch_bounds=N or (max_threads_per_block[, min_blocks_per_sm[,
    max_blocks_per_cluster]]), as numba-cuda: (threads, blocks, cluster),
    0 for each not given."""
    if value is None:
        return 0, 0, 0
    items = value if isinstance(value, tuple) else (value,)
    if len(items) > 3:
        raise ValueError(
            f"Got {len(items)} launch bounds: {value}. A maximum of three are supported: "
            f"(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster)")
    if not items or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in items):
        of = f" of kernel '{kernel}'" if kernel else ""
        raise ValueError(
            f"launch_bounds{of} must be a positive int or a tuple "
            f"(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster) of "
            f"positive ints, got {value!r}")
    return tuple(items) + (0,) * (3 - len(items))


def _count(value, what, kernel, limit=None):
    """A non-negative int argument of kernel.forall (at most `limit`)."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or value.__index__() < 0 or \
            (limit is not None and value.__index__() > limit):
        bound = f" and at most {limit}" if limit is not None else ""
        raise ValueError(f"{what} of {kernel}.forall() must be an int >= 0{bound}, got {value!r}")
    return value.__index__()


def _signature_argument(signature, name="kernel"):
    """A kernel's signature, in any form signatures.py accepts, as the C++
    half takes it: the list of its argument types."""
    return signature_forms.kernel_signature(signature, name).native_args()


def _declared(signature):
    """A declared signature as the kernel keeps it (and pickles it): as
    given when text, else as text (Numba's type objects stay behind)."""
    if isinstance(signature, str):
        return signature
    parsed = signature_forms.signature_of(signature)
    if parsed.return_type is None:
        parsed.return_type = ("none",)
    try:
        return parsed.device_text()
    except TypeError:  # records: the object itself
        return signature


class _ForAll:
    """kernel.forall(ntasks, tpb, stream, sharedmem): called with the
    kernel's arguments, launches at least ntasks threads in blocks of tpb."""

    __slots__ = ("dispatcher", "ntasks", "tpb", "stream", "sharedmem")

    def __init__(self, dispatcher, ntasks, tpb, stream, sharedmem):
        name = dispatcher.__name__
        self.dispatcher = dispatcher
        if hasattr(ntasks, "__index__") and not isinstance(ntasks, bool) and \
                ntasks.__index__() < 0:  # Numba's words
            raise ValueError(f"Can't create ForAll with negative task count: "
                             f"{name}.forall({ntasks!r})")
        self.ntasks = _count(ntasks, "ntasks", name)
        self.tpb = _count(tpb, "tpb", name, MAX_THREADS_PER_BLOCK)
        _stream_handle(stream, name)
        self.stream = stream
        self.sharedmem = _count(sharedmem, "sharedmem", name)

    def __call__(self, *args):
        if self.ntasks == 0:
            return
        kernel = self.dispatcher
        tpb = self.tpb or kernel._forall_block_size(kernel._specialize(*args), self.sharedmem,
                                                    self.ntasks)
        blocks = (self.ntasks + tpb - 1) // tpb
        kernel[blocks, tpb, self.stream, self.sharedmem](*args)

    def __repr__(self):
        return (f"<forall of {self.dispatcher.__name__} ntasks={self.ntasks} "
                f"tpb={self.tpb or 'auto'}>")


class Dispatcher(NumbaDispatcherAPI, native.Dispatcher):
    """A kernel: launch it with kernel[griddim, blockdim](*args).

    kernel[...] and the launch itself are C++ (the base class): the
    configuration is read there, and each launch reuses the launch plan of
    its argument classes (no typing, no allocation). The methods here give
    the C++ half its options and check the unusual configurations."""

    __tidal_kernel__ = True
    # False for tidal's library kernels (cuda.reduce, transposes), whose
    # launch configuration the library chooses: Numba's performance warnings
    # would name nothing the user can change. Read with the other options.
    _tidal_performance_warnings = True

    def __init__(self, py_func, signatures=(), **options):
        super().__init__(py_func)
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = options
        # cache=True: the disk cache (caching.py); raises Numba's error for a
        # function without a file.
        self._cache = None
        if options.get("cache") and options.get("link"):
            # Numba's error: the cache's key would not see the files change.
            raise RuntimeError("Cannot pickle CUDACodeLibrary with linking files: tidal's "
                               "disk cache (cache=True) does not keep kernels that link "
                               "files (link=[...])")
        if options.get("link"):
            from .foreign import check_link_entries
            check_link_entries(options["link"])
        if options.get("cache"):
            from .caching import KernelCache
            self._cache = KernelCache(self)
        # Declared signatures (cuda.jit('void(int32[:], int32)')): launches
        # run one of them, converting scalars, and compile nothing else.
        # Kept as given, so that a pickled kernel declares them again.
        self.declared_signatures = tuple(_declared(s) for s in signatures)
        for signature in signatures:
            self._declare(_signature_argument(signature, self.__name__))

    def _tidal_options(self, target):
        """The options of the C++ half for `target` ('cpu' or 'cuda'), read at
        the kernel's first compilation for that target."""
        options = self.options
        # TIDAL_CPU_DEBUG=1: debug mode for every kernel on the cpu target.
        debug = bool(options.get("debug", False)) or (
            target == "cpu" and os.environ.get("TIDAL_CPU_DEBUG", "") == "1")
        max_threads, min_blocks, max_cluster_rank = _launch_bounds(
            options.get("launch_bounds"), self.__name__)
        return {"debug": debug,
                "lineinfo": bool(options.get("lineinfo", False)),
                "fastmath": bool(options.get("fastmath", False)),
                "max_registers": int(options.get("max_registers") or 0),
                "max_threads": max_threads, "min_blocks": min_blocks,
                "max_cluster_rank": max_cluster_rank,
                "shared_memory_carveout": _shared_memory_carveout(
                    options.get("shared_memory_carveout")),
                "cache": self._cache, "extensions": self.extensions,
                "link": self._links(),
                "performance_warnings": self._tidal_performance_warnings,
                # Extra passes (tidal.compiler): the kernel's own, and for the
                # disk cache's key the process's settings.
                "passes": _compiler.passes_text(options.get("passes"),
                                                f"passes of kernel '{self.__name__}'"),
                "pipeline": _compiler._fingerprint()}

    def _links(self):
        """link=[...]: the files linked into every specialisation, read
        when the kernel is first compiled for a target (foreign.py)."""
        from .foreign import link_items
        return link_items(self.options.get("link"))

    @property
    def stats(self):
        """Numba's stats: cache_path, and cache_hits and cache_misses (Counters
        by signature) of the disk cache (cache=True)."""
        from .caching import CompileStats
        cache = self._cache
        if cache is None:
            import collections
            return CompileStats(None, collections.Counter(), collections.Counter())
        return CompileStats(cache.cache_path, cache.hits, cache.misses)

    def _launch_config(self, config):
        """kernel[config] in the forms the C++ half leaves to Python: returns
        (griddim, blockdim, stream handle, sharedmem, stream, block error) or
        raises the error that says what is wrong. A block beyond CUDA's
        limits is an error of the launch, as in Numba (which normalises the
        configuration here and fails when it launches): its message is the
        last element (None for a block within the limits), which the C++
        half raises when the configuration is launched."""
        name = self.__name__
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError(
                f"kernel '{name}' is launched as kernel[griddim, blockdim] or "
                f"kernel[griddim, blockdim, stream, sharedmem], got [{config!r}]")
        griddim = _dims(config[0], "griddim", name)
        blockdim = _dims(config[1], "blockdim", name)
        for axis, n, limit in zip("xyz", griddim, MAX_GRID_DIM):
            if n > limit:
                raise ValueError(
                    f"griddim {config[0]!r} of kernel '{name}' is {n} along {axis}: "
                    f"CUDA allows at most {limit}")
        block_error = _block_size_error(blockdim, config[1], name)
        if block_error is not None:
            blockdim = tuple(min(n, 0xFFFFFFFF) for n in blockdim)
        stream = config[2] if len(config) > 2 else None
        handle = _stream_handle(stream, name)
        sharedmem = config[3] if len(config) > 3 else 0
        if isinstance(sharedmem, bool) or not hasattr(sharedmem, "__index__") or \
                sharedmem.__index__() < 0:
            raise ValueError(
                f"sharedmem of kernel '{name}' must be a number of bytes >= 0, "
                f"got {sharedmem!r}")
        return griddim, blockdim, handle, sharedmem.__index__(), stream, block_error

    def __call__(self, *args, **kwargs):
        # Numba's error (a ValueError) and its words, then tidal's hint.
        raise ValueError(
            f"launch configuration was not specified for kernel '{self.__name__}': "
            f"launch it as {self.__name__}[blocks, threads](...)")

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """Numba's kernel.forall: ``kernel.forall(n)(*args)`` launches at
        least n threads, in blocks of tpb threads; tpb=0 picks the block size
        (see _forall_block_size)."""
        return _ForAll(self, ntasks, tpb, stream, sharedmem)

    def _forall_block_size(self, signature, sharedmem, ntasks):
        """forall's block size when none is given. cuda target: the size of
        the best occupancy on the current device
        (cuOccupancyMaxPotentialBlockSize, as Numba). cpu target, where a
        block is a loop over its threads on one worker: about four blocks per
        worker, so that the pool can balance them, of 32 to 1024 threads
        (within the kernel's launch_bounds)."""
        if current_target() == "cuda":
            return self._kernel_attribute(signature, "potential_block", sharedmem)
        limit = _launch_bounds(self.options.get("launch_bounds"), self.__name__)[0] or \
            MAX_THREADS_PER_BLOCK
        blocks = 4 * native.cpu_worker_count()
        tpb = -(-ntasks // blocks)
        tpb = -(-tpb // 32) * 32
        return max(1, min(max(tpb, 32), MAX_THREADS_PER_BLOCK, limit))

    def compile(self, signature):
        """Compiles eagerly for a signature: 'void(float32[::1], int64)', a
        signature object, or a tuple of types; returns its text."""
        return self._compile(_signature_argument(signature, self.__name__))

    def _views(self, signature, what, arch=None, *view):
        sm = int(arch[3:]) if arch else 75
        if signature is None and self._specialized:  # its one signature, as Numba's
            signature = self.signatures[0]
        if signature is not None:
            return self._inspect(self._signature_text(signature), what, sm, *view)
        return BySignature((split_signature(s), self._inspect(s, what, sm, *view))
                           for s in self.signatures)

    def _stage_view(self, signature, arch, stage, target, method):
        """The IR at `stage` (tidal.compiler.stages()) of `target`'s
        pipeline, or its assembly for "asm"."""
        target = target or "cuda"
        if target not in ("cuda", "cpu"):
            raise ValueError(f"{method}(): target must be 'cuda' or 'cpu', not {target!r}")
        if stage not in _compiler.stages():
            raise ValueError(f"{method}(): unknown stage {stage!r}; the stages are "
                             f"{', '.join(_compiler.stages())}")
        return self._views(signature, "stage", arch, target, stage)

    def _signature_text(self, signature):
        if isinstance(signature, str) and signature in self.signatures:
            return signature
        return self.compile(signature)

    def inspect_markers(self, signature=None):
        """The frontend's marker IR, per signature (or for one)."""
        return self._views(signature, "markers")

    def inspect_llvm(self, signature=None, arch=None, stage=None, target=None):
        """The IR after tidal-nvptx (lowered and optimised), per signature.
        stage= shows another stage of the pipeline (tidal.compiler.stages():
        markers, lowered, prepared, optimised, final), and target="cpu" the
        cpu target's pipeline instead of the cuda target's; both with the
        kernel's passes= and TIDAL_PASSES."""
        if stage is None and target in (None, "cuda"):
            return self._views(signature, "llvm", arch)
        return self._stage_view(signature, arch, stage or "final", target, "inspect_llvm")

    def inspect_types(self, file=None, signature=None):
        """Prints each specialisation's source and the type of every local
        variable (to `file`, stdout by default), as Numba's does."""
        import sys
        out = file if file is not None else sys.stdout
        views = self._views(signature, "types")
        for text in ([views] if isinstance(views, str) else views.values()):
            print(text, file=out, end="")

    def inspect_asm(self, signature=None, arch=None, target=None):
        """The PTX, per signature; target="cpu": the host's assembly of the
        cpu target's code."""
        if target in (None, "cuda"):
            return self._views(signature, "ptx", arch)
        return self._stage_view(signature, arch, "asm", target, "inspect_asm")

    def _kernel_facts(self, method, what, signature):
        """A fact of the kernel loaded on the GPU (cuFuncGetAttribute), per
        signature (or for one), as Numba's get_regs_per_thread() etc."""
        target = current_target()
        if target != "cuda":
            raise RuntimeError(
                f"kernel '{self.__name__}': {method}() reads the compiled kernel from the "
                f"CUDA driver and needs a GPU; kernels run on the {target} target here")
        if signature is None and self._specialized:  # its one signature, as Numba's
            signature = self.signatures[0]
        if signature is not None:
            return self._kernel_attribute(self._signature_text(signature), what)
        return BySignature((split_signature(s), self._kernel_attribute(s, what))
                           for s in self.signatures)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0, signature=None):
        """The most blocks of `blockdim` threads (an int, or a tuple of 1 to 3
        ints) with `dynsmemsize` bytes of dynamic shared memory that a
        cooperative launch of the kernel (one that uses cuda.cg.this_grid())
        may have: on a GPU the resident blocks per SM times the SMs
        (cuOccupancyMaxActiveBlocksPerMultiprocessor), on the cpu target what
        it runs at once (docs/cpu-target.md). Per signature, or for one (a
        specialised kernel's own when omitted)."""
        dims = tuple(blockdim) if isinstance(blockdim, (tuple, list)) else (blockdim,)
        if not 1 <= len(dims) <= 3 or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in dims):
            raise TypeError(f"blockdim must be an int or a tuple of 1 to 3 ints, "
                            f"not {blockdim!r}")
        if any(d < 1 for d in dims):
            raise ValueError(f"blockdim {blockdim!r} must be positive")
        if not isinstance(dynsmemsize, int) or dynsmemsize < 0:
            raise ValueError(f"dynsmemsize must be a non-negative int, not {dynsmemsize!r}")
        threads = 1
        for d in dims:
            threads *= d
        if signature is None and self._specialized:  # its one signature, as Numba's
            signature = self.signatures[0]
        if signature is not None:
            return self._cooperative(self._signature_text(signature), threads, dynsmemsize)[1]
        return BySignature((split_signature(s), self._cooperative(s, threads, dynsmemsize)[1])
                           for s in self.signatures)

    def get_regs_per_thread(self, signature=None):
        """Registers each thread of the kernel uses (cuda target)."""
        return self._kernel_facts("get_regs_per_thread", "regs", signature)

    def get_shared_mem_per_block(self, signature=None):
        """Static shared memory of a block, in bytes (cuda target)."""
        return self._kernel_facts("get_shared_mem_per_block", "shared", signature)

    def get_local_mem_per_thread(self, signature=None):
        """Local memory of each thread, in bytes (cuda target)."""
        return self._kernel_facts("get_local_mem_per_thread", "local", signature)

    def get_const_mem_size(self, signature=None):
        """Constant memory the kernel uses, in bytes (cuda target)."""
        return self._kernel_facts("get_const_mem_size", "const", signature)

    def get_max_threads_per_block(self, signature=None):
        """The most threads a block of this kernel can have (cuda target)."""
        return self._kernel_facts("get_max_threads_per_block", "max_threads", signature)

    def __repr__(self):
        return f"<tidal kernel {self.__qualname__}>"

    def __reduce__(self):
        # By value, with its source (tidal/pickling.py).
        from ..pickling import reduce_kernel
        return reduce_kernel(self)


class DeviceFunction:
    """@cuda.jit(device=True): a function kernels and other device functions
    call. It is compiled into the caller's module for each set of argument
    types (or for its declared signature, to which arguments convert).

    Numba's device dispatcher API: compile_device(argument types) compiles
    it on its own (with Numba's ABI, as compile_ptx(..., device=True)) and
    keeps the result in ``overloads``; inspect_llvm / inspect_asm give that
    code's NVVM IR / PTX. A device function is not a kernel: launching one
    or asking for its SASS raises RuntimeError."""

    __tidal_device__ = True
    # compilation._compile_device_function, set by tidal.cuda.compilation
    # (which imports this module: importing it from here would make a cycle).
    _compile_device_function = None

    def __init__(self, py_func, signatures=(), **options):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = options
        if options.get("forceinline"):
            # numba-cuda's forceinline=True: the frontend emits the function
            # alwaysinline (FunctionCompiler::emitDeviceFunction reads this mark).
            py_func.__tidal_forceinline__ = True
        # As the frontend's signature parser reads them: ret(args) or the
        # bare argument list.
        # Several: a call uses the one its arguments convert to best, as
        # Numba's overload resolution picks it (pyfrontend/TypeCalls.cpp).
        self.signatures = [signature_forms.signature_of(s).device_text() for s in signatures]
        # {argument types: DeviceCompileResult} made by compile_device().
        self.overloads = {}

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __getitem__(self, config):
        raise RuntimeError(
            f"Cannot compile a device function as a kernel: '{self.__name__}' was made with "
            f"cuda.jit(device=True), so kernels call it; launch a kernel "
            f"(cuda.jit without device=True) that calls it instead")

    def _signature(self, signature, what):
        """The signature to compile for: the given one, else the declared
        one."""
        if signature is not None:
            return signature
        if not self.signatures:
            raise TypeError(
                f"device function '{self.__name__}' has no declared signature: pass one "
                f"to {what}(), as {what}((float32, float32)) or {what}('float32(float32)')")
        return self.signatures[0]

    def _code(self, signature, output, arch=None):
        options = self.options
        code, return_type, symbol = DeviceFunction._compile_device_function(
            self.py_func, signature, output, debug=bool(options.get("debug", False)),
            lineinfo=bool(options.get("lineinfo", False)),
            fastmath=bool(options.get("fastmath", False)),
            cc=(int(arch[3:-1]), int(arch[-1])) if arch else None)
        return code, return_type, symbol

    def compile_device(self, args):
        """Numba's compile_device(argument types): compiles the function on
        its own for `args` (a tuple of types, or any signature form), once
        per argument types, and returns the result (its ``signature``,
        ``return_type`` and ``fndesc.mangled_name``, the symbol its PTX and
        LLVM IR define)."""
        key = args if isinstance(args, tuple) else (args,)
        found = self.overloads.get(key)
        if found is None:
            _, return_type, symbol = self._code(args, "ptx")
            found = self.overloads[key] = DeviceCompileResult(self, key, return_type, symbol)
        return found

    def inspect_llvm(self, signature=None):
        """The NVVM IR (lowered and optimised for NVPTX, as the PTX is made
        from it) of the device function compiled on its own for
        `signature` (by default its declared one); it defines the symbol
        compile_device() names."""
        return self._code(self._signature(signature, "inspect_llvm"), "llvm")[0]

    def inspect_asm(self, signature=None, arch=None):
        """The PTX of the device function compiled on its own for
        `signature` (by default its declared one), with its options
        (fastmath, debug, lineinfo): compile_ptx(..., device=True), as
        Numba's device dispatcher gives it."""
        return self._code(self._signature(signature, "inspect_asm"), "ptx", arch)[0]

    def inspect_sass(self, signature=None):
        raise RuntimeError(
            f"Cannot inspect SASS of a device function: '{self.__name__}' is compiled into "
            f"the kernels that call it; inspect those kernels' SASS")

    def __reduce__(self):
        # By value, with its source (tidal/pickling.py).
        from ..pickling import reduce_device_function
        return reduce_device_function(self)


class DeviceCompileResult:
    """What DeviceFunction.compile_device() returns, as far as Numba's
    CompileResult is read: the signature, the return type and
    ``fndesc.mangled_name``."""

    class FunctionDescriptor:
        def __init__(self, qualname, mangled_name):
            self.qualname = qualname
            self.mangled_name = mangled_name

    def __init__(self, device_function, argument_types, return_type, symbol):
        self.py_func = device_function.py_func
        self.argument_types = argument_types
        self.return_type = return_type
        self.signature = (f"{return_type}"
                          f"({', '.join(str(a) for a in argument_types)})")
        self.fndesc = self.FunctionDescriptor(device_function.__qualname__, symbol)

    def __repr__(self):
        return f"<compiled device function {self.fndesc.mangled_name}: {self.signature}>"


@contextlib.contextmanager
def _library_launches():
    """No performance warnings on this thread inside: a sequence of launches
    whose grids the library chooses (ufunc.reduce's halving steps)."""
    was = native.pause_performance_warnings(True)
    try:
        yield
    finally:
        native.pause_performance_warnings(was)


def jit(func_or_sig=None, device=False, **options):
    """Numba's @cuda.jit: @jit, @jit(), @jit('void(float32[:])'),
    @jit(['sig1', 'sig2']), @jit(device=True)."""
    unknown = set(options) - _JIT_OPTIONS
    if unknown:
        raise TypeError(f"unknown option(s) to cuda.jit: {', '.join(sorted(unknown))}")
    _check_options(options)
    _compiler.passes_text(options.get("passes"))  # an unknown point is an error now
    if options.get("debug") and options.get("opt", True):
        # Numba's warning (its NVVM may crash on optimised debug code);
        # tidal compiles it, optimised as always.
        from ..errors import InvalidConfigWarning
        warnings.warn("debug=True with opt=True (the default) is not supported by CUDA "
                      "under Numba, whose compiler may crash on it: set debug=False or "
                      "opt=False for code that Numba also runs (tidal accepts opt and "
                      "always optimises)", InvalidConfigWarning, stacklevel=2)

    def decorate(py_func, signatures=()):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"cuda.jit decorates a Python function, not {py_func!r}")
        if device:
            if options.get("link"):
                raise ValueError("link keyword invalid for device function: give link=[...] "
                                 "to the kernel's cuda.jit, or to cuda.declare_device")
            return DeviceFunction(py_func, signatures, **options)
        return Dispatcher(py_func, signatures, **options)

    if func_or_sig is None:
        return decorate
    if callable(func_or_sig) and hasattr(func_or_sig, "__code__"):
        return decorate(func_or_sig)
    signatures = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    return lambda py_func: decorate(py_func, signatures)
