"""Numba programs on tidal without editing a line: ``numba.cuda`` is tidal.cuda.

    import tidal
    tidal.install_as_numba_cuda()      # then, in this process:
    from numba import cuda, njit       # cuda is tidal.cuda; njit is Numba's

or, for a whole program and every process it starts:

    python3 -m tidal run PROGRAM [ARGS]
    python3 -m tidal run -m pytest [ARGS]

After install_as_numba_cuda(), ``numba.cuda`` and every ``numba.cuda.X``
module a program imports (``numba.cuda.random``, ``numba.cuda.libdevice``,
``numba.cuda.cudadrv.devicearray``, ...) are tidal.cuda's modules of those
names; the rest of ``numba`` (``njit``, ``numba.core.types``, ...) stays
Numba's where Numba is installed, and without Numba a package ``numba``
holding only ``cuda`` is provided. tidal's warnings and errors become
subclasses of Numba's classes of those names, so that the filters and
``except`` clauses a program writes for Numba catch them.

Child processes get the same mapping: the variable TIDAL_NUMBA_CUDA=1 and
the folder SHIM_DIR first on PYTHONPATH, whose only package, ``numba``,
replaces itself with the mapping when a process first imports numba (no
sitecustomize and no .pth file).
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types as _module_types

ENVIRONMENT_VARIABLE = "TIDAL_NUMBA_CUDA"
SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_numba_shim")
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# tidal's classes and the Numba classes (numba.core.errors) each one also is,
# once mapped: (tidal.errors name, Numba names).
_NUMBA_BASES = (
    ("PerformanceWarning", ("NumbaPerformanceWarning",)),
    ("InvalidConfigWarning", ("NumbaInvalidConfigWarning",)),
    ("CompileWarning", ("NumbaWarning",)),
    ("UntrustedCacheWarning", ("NumbaWarning",)),
    ("TypingError", ("TypingError",)),
    ("UnsupportedError", ("UnsupportedError",)),
)


class _AliasLoader(importlib.abc.Loader):
    """Loads numba.cuda.X as the module tidal.cuda.X already imported."""

    def __init__(self, module):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        pass


class _NumbaCudaFinder(importlib.abc.MetaPathFinder):
    """Finds numba.cuda and numba.cuda.X as tidal.cuda and tidal.cuda.X."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba.cuda" and not name.startswith("numba.cuda."):
            return None
        tidal_name = "tidal" + name[len("numba"):]
        try:
            module = importlib.import_module(tidal_name)
        except ModuleNotFoundError as error:
            if error.name != tidal_name:
                raise
            raise ModuleNotFoundError(
                f"No module named {name!r}: numba.cuda is tidal.cuda here "
                f"(tidal.install_as_numba_cuda), and tidal has no {tidal_name}",
                name=name) from None
        return importlib.machinery.ModuleSpec(name, _AliasLoader(module))


def _real_numba():
    """Numba itself, imported from sys.path without the shim folder, or None
    where it is not installed."""
    module = sys.modules.get("numba")
    if module is not None and not getattr(module, "__tidal_shim__", False):
        return module
    shims = {SHIM_DIR}
    if module is not None:  # the shim importing us: its folder, wherever it is
        shims.add(os.path.dirname(os.path.dirname(os.path.abspath(module.__file__))))
    search_path = [p for p in sys.path if os.path.abspath(p or os.curdir) not in shims]
    spec = importlib.machinery.PathFinder.find_spec("numba", search_path)
    if spec is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["numba"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop("numba", None)
        raise
    return module


def _numba_alone():
    """A package ``numba`` that holds only ``cuda``, where Numba is not installed."""
    module = _module_types.ModuleType(
        "numba", "numba.cuda on tidal: Numba is not installed, so this holds only cuda")
    module.__path__ = []
    sys.modules["numba"] = module
    return module


def _adopt_numba_classes(numba):
    """tidal's warning and error classes become subclasses of Numba's of the
    same meaning too (NumbaPerformanceWarning, TypingError, ...)."""
    try:
        numba_errors = importlib.import_module("numba.core.errors")
    except ImportError:
        return
    from . import errors
    for tidal_name, numba_names in _NUMBA_BASES:
        cls = getattr(errors, tidal_name)
        extra = tuple(getattr(numba_errors, n) for n in numba_names
                      if hasattr(numba_errors, n))
        extra = tuple(b for b in extra if not issubclass(cls, b))
        if not extra:
            continue
        cls.__bases__ = cls.__bases__ + extra


def _mapped_modules():
    """numba.cuda* names already in sys.modules: made by Numba itself before
    the mapping (a program imported it first)."""
    return [n for n in sys.modules if n == "numba.cuda" or n.startswith("numba.cuda.")]


def install_as_numba_cuda(child_processes=True):
    """Makes ``numba.cuda`` (and numba.cuda.X) tidal's in this process and,
    with ``child_processes``, in the processes it starts. Call it before the
    program imports numba.cuda: a numba.cuda imported before is replaced in
    sys.modules, but the names already taken from it stay Numba's. Returns
    the ``numba`` module (Numba's, or one holding only cuda)."""
    from . import cuda
    numba = _real_numba() or _numba_alone()
    for name in _mapped_modules():
        if not getattr(sys.modules[name], "__name__", "").startswith("tidal."):
            del sys.modules[name]
    if not any(isinstance(f, _NumbaCudaFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _NumbaCudaFinder())
    sys.modules["numba.cuda"] = cuda
    numba.cuda = cuda
    _adopt_numba_classes(numba)
    if child_processes:
        os.environ[ENVIRONMENT_VARIABLE] = "1"
        os.environ["PYTHONPATH"] = _search_path(os.environ.get("PYTHONPATH", ""))
    return numba


def _search_path(python_path):
    """PYTHONPATH with the shim folder and tidal's own folder first."""
    entries = [p for p in python_path.split(os.pathsep) if p]
    front = [SHIM_DIR, PACKAGE_PARENT]
    return os.pathsep.join(front + [p for p in entries if p not in front])


def environment(base=None):
    """A copy of ``base`` (os.environ) for a process that maps numba.cuda to tidal."""
    env = dict(os.environ if base is None else base)
    env[ENVIRONMENT_VARIABLE] = "1"
    env["PYTHONPATH"] = _search_path(env.get("PYTHONPATH", ""))
    return env
