"""Pickling ufuncs and gufuncs by value, as tidal pickles kernels
(tidal/pickling.py, whose helpers this uses): the function with its source
and the values it reads, and the signatures, compiled again where the pickle
is loaded. Unpickling the same ufunc twice in a process gives one object."""

from .. import pickling


def reduce_ufunc(ufunc, kind, options):
    """__reduce__ of a CUDAUFunc ('ufunc') or a CUDAGUFunc ('gufunc');
    `options` are the constructor's keyword arguments."""
    state = pickling._function_state(ufunc.py_func)
    signatures = [s.text for s in ufunc._specializations.values()]
    return _rebuild_ufunc, (kind, pickling._identity(ufunc), state, signatures, options)


def _rebuild_ufunc(kind, identity, state, signatures, options):
    from . import CUDAGUFunc, CUDAUFunc
    with pickling._known_lock:
        existing = pickling._known.get(identity)
    if existing is not None:
        return existing
    function = pickling._rebuild_function(state)
    options = dict(options)
    dynamic = options.pop("dynamic", False)
    if kind == "ufunc":
        result = CUDAUFunc(function, signatures, **options)
        result.dynamic = dynamic
    else:
        result = CUDAGUFunc(function, signatures, **options)
    result.__dict__["_tidal_pickle_id"] = identity
    with pickling._known_lock:
        result = pickling._known.setdefault(identity, result)
        pickling._recently_rebuilt.append(result)
        return result
