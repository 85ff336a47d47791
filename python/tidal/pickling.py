"""Pickling kernels, device functions and device arrays, as Numba's pickle.

A kernel pickles by value: its code, the source it was compiled from, the
globals and closure values it reads. On unpickling, the source is
registered with ``linecache`` under a synthetic file name, so a process
that lacks the user's file (a Dask worker, an MPI rank elsewhere) still
compiles it; the line numbers of errors stay those of the original file.

Each pickled kernel carries an id. Unpickling an id this process has seen
returns the kernel it made then (or the original, in the process that
pickled it), so a kernel sent with every Dask task compiles once per worker
for each signature, and then launches from its in-memory cache.

A device array pickles as its host copy and comes back as a device array
on the current device of the process that unpickles it.

This module needs only the standard library at import: the functions that
rebuild objects import ``tidal.cuda`` when they run, so a process without
tidal's compiled extension gets an ImportError that names what is missing.
"""

import collections
import hashlib
import importlib
import linecache
import marshal
import sys
import threading
import types
import uuid
import weakref

# Pickled kernels and device functions by id, in this process; the last
# ones rebuilt are also held here, so that a kernel that no task holds
# between two tasks is not collected and compiled again.
_known = weakref.WeakValueDictionary()
_recently_rebuilt = collections.deque(maxlen=64)
_known_lock = threading.Lock()


# --- rebuilding (runs where the pickle is loaded) ---------------------------------

def _import_cuda():
    """tidal.cuda, or an ImportError that says what is missing here."""
    try:
        from tidal import _tidal  # noqa: F401
    except ImportError as error:
        package = sys.modules["tidal"].__path__[0]
        raise ImportError(
            f"cannot unpickle a tidal object: tidal's compiled extension 'tidal._tidal' "
            f"is missing from {package} in this process ({error}). Install tidal here "
            f"(pip install --no-build-isolation <checkout>) or build it with 'make build' "
            f"and put build/python on PYTHONPATH") from error
    return importlib.import_module("tidal.cuda")


def _register_source(filename, first_line, lines):
    """Registers the function's lines with linecache under ``filename``,
    after first_line - 1 empty lines, so that line numbers stay those of the
    original file. mtime None: linecache.checkcache keeps the entry."""
    padded = ["\n"] * (first_line - 1) + list(lines)
    linecache.cache[filename] = (sum(len(line) for line in padded), None, padded, filename)


def _rename_code(code, filename):
    """The code object, and those nested in it, with co_filename replaced."""
    constants = tuple(_rename_code(c, filename) if isinstance(c, types.CodeType) else c
                      for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)


def _rebuild_function(state):
    """The Python function described by _function_state."""
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if state["python"] != here:  # marshal's code objects differ between versions
        raise ImportError(
            f"cannot unpickle kernel '{state['qualname']}': it was pickled by Python "
            f"{state['python']} and this is Python {here}; run the same Python everywhere")
    code = marshal.loads(state["code"])
    filename = (f"<tidal: {state['qualname']} from {state['filename']}, "
                f"{state['digest']}>")
    _register_source(filename, state["first_line"], state["lines"])
    code = _rename_code(code, filename)
    namespace = {"__builtins__": __builtins__, "__name__": state["module"]}
    for name, module_name in state["modules"].items():
        namespace[name] = importlib.import_module(module_name)
    for name, (module_name, attribute) in state["references"].items():
        namespace[name] = getattr(importlib.import_module(module_name), attribute)
    namespace.update(state["globals"])
    closure = None
    if state["closure"] is not None:
        closure = tuple(types.CellType(value) if filled else types.CellType()
                        for filled, value in state["closure"])
    function = types.FunctionType(code, namespace, state["name"], state["defaults"], closure)
    function.__qualname__ = state["qualname"]
    function.__module__ = state["module"]
    function.__kwdefaults__ = state["kwdefaults"]
    return function


def _rebuild(kind, identity, state, options):
    """A kernel ('kernel') or a device function ('device') from its pickle;
    the one this process already has for ``identity`` where there is one."""
    cuda = _import_cuda()
    with _known_lock:
        existing = _known.get(identity)
    if existing is not None:
        return existing
    function = _rebuild_function(state)
    # A rebuilt function has no file to cache beside: it compiles as one
    # without cache=True.
    options = {name: value for name, value in options.items() if name != "cache"}
    if kind == "kernel":
        result = cuda.Dispatcher(function, state.get("signatures", ()), **options)
    else:
        result = cuda.DeviceFunction(function, state["signatures"], **options)
    result.__dict__["_tidal_pickle_id"] = identity
    with _known_lock:
        # Another thread may have rebuilt it meanwhile: keep the first.
        result = _known.setdefault(identity, result)
        _recently_rebuilt.append(result)
        return result


def _rebuild_device_array(host):
    """A device array on this process's current device, from its host copy."""
    import numpy as np
    cuda = _import_cuda()
    return cuda.to_device(np.ascontiguousarray(host) if host.ndim else host)


# --- reducing (runs where the object is pickled) ----------------------------------

def _referenced_names(code):
    """Every name the code (and code nested in it) loads from globals; also
    attribute names, which are looked up in the globals and mostly absent."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _referenced_names(constant)
    return names


def _tidal_reference(value):
    """(module, attribute) where ``value`` is one of tidal's public names
    (cuda.grid, cuda.shared, tidal.float32, ...), else None: these are
    pickled by name, so that the worker's own objects are used."""
    for module_name in ("tidal.cuda", "tidal"):
        module = sys.modules.get(module_name)
        for attribute, candidate in vars(module).items() if module else ():
            if candidate is value and not attribute.startswith("_"):
                return module_name, attribute
    return None


def _function_state(function):
    """What _rebuild_function needs, picklable with pickle or cloudpickle."""
    from . import _sources
    code = function.__code__
    try:
        lines, first_line = _sources.getsourcelines(function)
    except (OSError, TypeError) as error:
        raise TypeError(
            f"cannot pickle '{function.__qualname__}': tidal pickles a kernel with its "
            f"source, which cannot be read ({error})") from error
    modules, references, values = {}, {}, {}
    for name in sorted(_referenced_names(code)):
        if name not in function.__globals__:
            continue
        value = function.__globals__[name]
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
        elif (reference := _tidal_reference(value)) is not None:
            references[name] = reference
        else:
            values[name] = value
    closure = None
    if function.__closure__ is not None:
        closure = []
        for cell in function.__closure__:
            try:
                closure.append((True, cell.cell_contents))
            except ValueError:  # an empty cell
                closure.append((False, None))
    text = "".join(lines)
    return {
        "name": function.__name__, "qualname": function.__qualname__,
        "module": function.__module__, "filename": code.co_filename,
        "first_line": max(first_line, 1), "lines": lines,
        "digest": hashlib.sha256(text.encode()).hexdigest()[:12],
        "code": marshal.dumps(code),
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "modules": modules, "references": references, "globals": values,
        "closure": closure, "defaults": function.__defaults__,
        "kwdefaults": function.__kwdefaults__,
    }


def _identity(obj):
    """The id under which ``obj`` pickles, made at its first pickling."""
    identity = obj.__dict__.get("_tidal_pickle_id")
    if identity is None:
        identity = uuid.uuid4().hex
        obj.__dict__["_tidal_pickle_id"] = identity
    with _known_lock:
        _known.setdefault(identity, obj)
    return identity


def reduce_kernel(dispatcher):
    """Dispatcher.__reduce__."""
    state = _function_state(dispatcher.py_func)
    state["signatures"] = list(dispatcher.declared_signatures)
    return _rebuild, ("kernel", _identity(dispatcher), state, dict(dispatcher.options))


def reduce_device_function(function):
    """DeviceFunction.__reduce__."""
    state = _function_state(function.py_func)
    state["signatures"] = list(function.signatures)
    return _rebuild, ("device", _identity(function), state, dict(function.options))


def reduce_device_array(array):
    """DeviceNDArray's reducer (registered with copyreg by tidal.cuda)."""
    return _rebuild_device_array, (array.copy_to_host(),)
