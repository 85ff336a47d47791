"""Implementations of Python functions for kernels, with Numba's names:
``overload(func, target=...)`` and ``register_jitable`` (Numba's
``numba.core.extending``; docs/language.md, "Overloads").

    def clamp(x, low, high):           # a plain Python function
        ...

    @overload(clamp, target="cuda")    # or "generic": every target
    def clamp_for_kernels(x, low, high):
        def impl(x, low, high):
            return min(max(x, low), high)
        return impl

A kernel that calls ``clamp`` calls the typing function with the types of
the arguments (tidal's type objects: ``tidal.types.float32``,
``float32[::1]``; other types as an object whose ``str`` is Numba's text,
such as ``UniTuple(int64 x 2)``). It returns the implementation, a Python
function compiled as a device function (``cuda.jit(device=True)``), or None
when it does not handle those types. "cuda" overloads are tried before
"generic" ones, each in the order they were registered; the implementation
is compiled once per function and argument types.

Where the program has imported Numba itself, ``overload`` with a target
Numba's CPU compiler uses ("generic", "cpu") registers the typing function
with Numba too, so that ``@njit`` code calling ``func`` sees the same
implementations (tidal does not import Numba: it uses the module only if it
is already loaded)."""

import sys
import numpy as _np

__all__ = ["overload", "overload_method", "overload_attribute", "register_jitable"]

# Targets whose implementations kernels use, in the order they are tried.
_KERNEL_TARGETS = ("cuda", "gpu", "generic")
_TARGETS = frozenset(_KERNEL_TARGETS + ("cpu",))
# For Numba, where the program has loaded it.
_NUMBA_TARGETS = frozenset({"generic", "cpu"})

# func -> [_Overload]
_OVERLOADS = {}
# method or attribute name -> [_Overload] (whose `owner` is the receiver's
# type); the frontend looks a name up here before it asks for more
_METHODS = {}
_ATTRIBUTES = {}
# (what is overloaded, argument type texts, keywords, literal values) ->
# device dispatcher
_IMPLEMENTATIONS = {}
# implementation function -> its device dispatcher (one per function, which
# compiles a specialisation per argument types)
_DISPATCHERS = {}


class _Overload:
    """One registered typing function."""

    def __init__(self, target, typing_function, jit_options, prefer_literal, owner=None):
        self.target = target
        self.typing_function = typing_function
        self.jit_options = jit_options
        self.prefer_literal = prefer_literal
        self.owner = owner


def _check_options(decorator, target, inline):
    if target not in _TARGETS:
        raise ValueError(f"{decorator}(): unknown target {target!r} (expected one of "
                         f"{', '.join(sorted(_TARGETS))})")
    if inline not in ("never", "always") and not callable(inline):
        raise ValueError(f"{decorator}(): inline is 'never', 'always' or a function, "
                         f"not {inline!r}")


def _registrar(decorator, table, key, entry, numba_register):
    """The decorator that files `entry` (once given its typing function)
    under `key` of `table`, forgets the implementations made before, and
    registers it with Numba too where the program has loaded Numba."""
    def decorate(typing_function):
        if not callable(typing_function):
            raise TypeError(f"@{decorator}(...) decorates the typing function, not "
                            f"{type(typing_function).__name__}")
        entry.typing_function = typing_function
        table.setdefault(key, []).append(entry)
        _IMPLEMENTATIONS.clear()
        if numba_register is not None:
            numba_register(typing_function)
        return typing_function

    return decorate


def _numba_registration(decorator, owner, *args, **kwargs):
    """Numba's decorator of the same name, where the program has loaded
    Numba and the target is one Numba's CPU compiler uses; else None."""
    numba_extending = sys.modules.get("numba.core.extending")
    if numba_extending is None or kwargs["target"] not in _NUMBA_TARGETS:
        return None
    if owner is not None and not _is_numba_class(owner):
        return None  # a tidal type: nothing Numba could match
    return getattr(numba_extending, decorator)(*args, **kwargs)


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             target="generic", **options):
    """A decorator registering a typing function for `func` (Numba's
    numba.core.extending.overload): called with the argument types of a call
    of `func` in a kernel, it returns the Python function that implements
    that call, or None."""
    if not callable(func):
        raise TypeError(f"overload() takes the function to overload, not {type(func).__name__}")
    _check_options("overload", target, inline)
    jit_options = dict(jit_options or {})
    entry = _Overload(target, None, jit_options, prefer_literal)
    numba = _numba_registration("overload", None, func, jit_options=jit_options,
                                strict=strict, inline=inline, prefer_literal=prefer_literal,
                                target=target, **options)
    return _registrar("overload", _OVERLOADS, func, entry, numba)


def overload_method(typ, attr, jit_options=None, inline="never", prefer_literal=False,
                    target="generic", **options):
    """A decorator registering a typing function for the method `attr` of
    values of type `typ` (Numba's overload_method): called with the
    receiver's type and the arguments' types of `x.attr(...)` in a kernel,
    it returns the implementation (whose first parameter is the receiver),
    or None. `typ` is a type class (tidal's ArrayType or NumberType, or
    Numba's Array, Integer, Float, Complex, Boolean, Number, BaseTuple, Type)
    or one type (float32, float64[::1])."""
    return _overload_member("overload_method", _METHODS, typ, attr, jit_options, inline,
                            prefer_literal, target, options)


def overload_attribute(typ, attr, jit_options=None, inline="never", prefer_literal=False,
                       target="generic", **options):
    """A decorator registering a typing function for the attribute `attr`
    of values of type `typ` (Numba's overload_attribute): called with the
    value's type, it returns the implementation, a function of the value,
    or None. `typ` as for overload_method."""
    return _overload_member("overload_attribute", _ATTRIBUTES, typ, attr, jit_options, inline,
                            prefer_literal, target, options)


def _overload_member(decorator, table, typ, attr, jit_options, inline, prefer_literal, target,
                     options):
    if not isinstance(attr, str) or not attr.isidentifier():
        raise TypeError(f"{decorator}() takes the name of the attribute as a string, "
                        f"not {attr!r}")
    _type_matcher(typ, decorator)  # checks typ now, not at the first call
    _check_options(decorator, target, inline)
    jit_options = dict(jit_options or {})
    entry = _Overload(target, None, jit_options, prefer_literal, owner=typ)
    numba = _numba_registration(decorator, typ, typ, attr, jit_options=jit_options,
                                inline=inline, prefer_literal=prefer_literal, target=target,
                                **options)
    return _registrar(decorator, table, attr, entry, numba)


def register_jitable(*args, **options):
    """Numba's register_jitable: `fn` stays a Python function, and kernels
    (and, where Numba is loaded, @njit code) may call it, compiled for the
    argument types of each call. As @register_jitable or
    @register_jitable(**jit_options)."""
    def wrap(fn):
        overload(fn, jit_options=options, target="generic")(lambda *types, **kw: fn)
        return fn

    if len(args) == 1 and not options and callable(args[0]):
        return wrap(args[0])
    if args:
        raise TypeError("register_jitable takes a function, or keyword jit options only")
    return wrap


class _OtherType:
    """An argument type tidal's type objects do not name: Numba's text."""

    def __init__(self, text):
        self.name = text

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, _OtherType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _type_object(text):
    """tidal's type object for the frontend's text of a type."""
    from . import types
    from .cuda.signatures import _parse_type
    try:
        description = _parse_type(text)
    except TypeError:
        return _OtherType(text)
    if description[0] == "scalar" and description[1] in types.SCALAR_TYPES:
        return types.SCALAR_TYPES[description[1]]
    if description[0] == "array" and not description[4]:
        element, ndim, layout = description[1], description[2], description[3]
        if element[0] == "scalar" and element[1] in types.SCALAR_TYPES:
            contiguous = {"C": ndim - 1, "F": 0}.get(layout)
            dims = tuple(slice(None, None, 1) if d == contiguous else slice(None)
                         for d in range(ndim))
            return types.SCALAR_TYPES[element[1]][dims]
    return _OtherType(text)


class Literal:
    """A literal argument's type, as a typing function registered with
    prefer_literal sees it (Numba's IntegerLiteral, BooleanLiteral): the
    value is `literal_value`, its type `literal_type`."""

    def __init__(self, literal_type, literal_value):
        self.literal_type = literal_type
        self.literal_value = literal_value

    def __repr__(self):
        return f"Literal[{type(self.literal_value).__name__}]({self.literal_value!r})"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, Literal) and (other.literal_type, other.literal_value) == \
            (self.literal_type, self.literal_value)

    def __hash__(self):
        return hash((self.literal_type, self.literal_value))


def _argument_types(type_texts, literal_values, literal):
    types = [_type_object(t) for t in type_texts]
    if literal:
        types = [t if v is None else Literal(t, v) for t, v in zip(types, literal_values)]
    return types


def _implementation(func, type_texts, keywords=(), literal_values=()):
    """Called by the frontend for a call of `func` that is no intrinsic, device
    function or kernel: None when `func` has no overload; else the device
    dispatcher implementing the call, or the text of the error to report.
    The last len(keywords) arguments are keyword arguments of those names;
    literal_values gives each argument's value where it is a literal."""
    entries = _OVERLOADS.get(func)
    if not entries:
        if isinstance(func, _np.ufunc):
            if keywords:
                return (f"keyword arguments ({', '.join(keywords)}) in a call of the ufunc "
                        f"numpy.{func.__name__} are not supported in kernels: pass the out "
                        f"array positionally")
            return _ufunc_implementation(func, type_texts)
        return None
    return _resolve(func, f"overloaded '{_name(func)}'", entries, type_texts, keywords,
                    literal_values)


def _method_implementation(attr, type_texts, keywords=(), literal_values=()):
    """The frontend's question for x.attr(...), x's type first: as
    _implementation, from the overload_method entries for x's type."""
    return _member_implementation(_METHODS, "method", attr, type_texts, keywords, literal_values)


def _attribute_implementation(attr, type_texts, keywords=(), literal_values=()):
    """The frontend's question for x.attr: as _method_implementation."""
    return _member_implementation(_ATTRIBUTES, "attribute", attr, type_texts, keywords,
                                  literal_values)


def _member_implementation(table, kind, attr, type_texts, keywords, literal_values):
    receiver = type_texts[0]
    entries = [e for e in table.get(attr, ()) if _type_matcher(e.owner)(receiver)]
    if not entries:
        return None
    return _resolve((kind, attr), f"overloaded {kind} '{attr}' of {receiver}", entries,
                    type_texts, keywords, literal_values)


def _resolve(subject, described_subject, entries, type_texts, keywords, literal_values):
    keywords = tuple(keywords)
    literal_values = tuple(literal_values) or (None,) * len(type_texts)
    key = (subject, tuple(type_texts), keywords, literal_values)
    found = _IMPLEMENTATIONS.get(key)
    if found is not None:
        return found
    positional = len(type_texts) - len(keywords)
    has_literals = any(v is not None for v in literal_values)
    tried = []
    for target in _KERNEL_TARGETS:
        for entry in entries:
            if entry.target != target:
                continue
            typing_function = entry.typing_function
            name = getattr(typing_function, "__qualname__", repr(typing_function))
            # Numba's order: literal types first with prefer_literal, else
            # last, and only where an argument is a literal.
            tries = [entry.prefer_literal, not entry.prefer_literal] if has_literals \
                else [False]
            implementation = None
            for literal in tries:
                types = _argument_types(type_texts, literal_values, literal)
                try:
                    implementation = typing_function(
                        *types[:positional], **dict(zip(keywords, types[positional:])))
                except Exception as error:  # noqa: BLE001 - reported, located, by the frontend
                    return (f"the typing function {name} of {described_subject} raised "
                            f"{type(error).__name__}: {error}")
                if implementation is not None:
                    break
            tried.append(f"{name} ({target})")
            if implementation is None:
                continue
            if not callable(implementation):
                return (f"the typing function {name} of {described_subject} returned "
                        f"{type(implementation).__name__}, not a function")
            dispatcher = _dispatcher(implementation, entry.jit_options)
            _IMPLEMENTATIONS[key] = dispatcher
            return dispatcher
    described = ", ".join(type_texts[:positional] +
                          [f"{k}={t}" for k, t in zip(keywords, type_texts[positional:])])
    listed = ", ".join(tried) or "none for kernels (its overloads are for the cpu target)"
    return (f"no implementation of {described_subject} for argument types "
            f"({described}): its typing functions returned None: {listed}")


def _dispatcher(implementation, jit_options):
    """The device dispatcher of an implementation (one per function)."""
    if hasattr(implementation, "__tidal_device__"):
        return implementation
    dispatcher = _DISPATCHERS.get(implementation)
    if dispatcher is None:
        from .cuda import jit
        dispatcher = jit(device=True, **jit_options)(implementation)
        _DISPATCHERS[implementation] = dispatcher
    return dispatcher


def _is_numba_class(typ):
    return isinstance(typ, type) and typ.__module__.startswith("numba.core.types")


# Numba's type classes an overload_method/overload_attribute may name, by
# class name: the descriptions (signatures._parse_type) they match.
_NUMBA_CLASSES = {
    "Type": lambda d: True,
    "Array": lambda d: d[0] == "array",
    "Buffer": lambda d: d[0] == "array",
    "Number": lambda d: d[0] == "scalar" and d[1] != "bool",
    "Integer": lambda d: d[0] == "scalar" and d[1].startswith(("int", "uint")),
    "Float": lambda d: d[0] == "scalar" and d[1].startswith("float"),
    "Complex": lambda d: d[0] == "scalar" and d[1].startswith("complex"),
    "Boolean": lambda d: d[0] == "scalar" and d[1] == "bool",
    "BaseTuple": lambda d: d[0] == "tuple",
    "BaseAnonymousTuple": lambda d: d[0] == "tuple",
    "UniTuple": lambda d: d[0] == "tuple",
    "Tuple": lambda d: d[0] == "tuple",
}


def _type_matcher(typ, decorator=None):
    """A predicate over the frontend's type texts: the values of type `typ`
    (a class of tidal's or Numba's, or one type object). With `decorator`,
    a `typ` that names no type is a TypeError that says so."""
    from . import types
    from .cuda.signatures import _parse_type, type_of

    def described(text):
        try:
            return _parse_type(text)
        except TypeError:
            return ("other", text)

    if typ is types.ArrayType:
        return lambda text: described(text)[0] == "array"
    if typ is types.NumberType:
        return lambda text: described(text)[0] == "scalar"
    if _is_numba_class(typ):
        for klass in typ.__mro__:
            if klass.__name__ in _NUMBA_CLASSES and klass.__module__.startswith("numba.core.types"):
                rule = _NUMBA_CLASSES[klass.__name__]
                return lambda text: rule(described(text))
    else:
        try:
            wanted = type_of(typ)
        except TypeError:
            wanted = None
        if wanted is not None:
            return lambda text: described(text) == wanted
    if decorator is None:
        return lambda text: False
    raise TypeError(f"{decorator}() takes a type class (tidal.types.ArrayType, NumberType, or "
                    f"one of Numba's: {', '.join(sorted(_NUMBA_CLASSES))}) or a type, "
                    f"not {typ!r}")


def _ufunc_implementation(func, type_texts):
    """A NumPy ufunc without a user's overload: the device function of
    tidal.cuda._ufunc_calls for these argument types (cached here too)."""
    key = (func, tuple(type_texts))
    found = _IMPLEMENTATIONS.get(key)
    if found is None:
        from .cuda import _ufunc_calls
        found = _ufunc_calls.implementation(func, list(type_texts))
        _IMPLEMENTATIONS[key] = found
    return found


def _name(func):
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
