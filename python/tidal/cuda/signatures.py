"""Signatures and types in every form a Numba user writes them, turned into
what tidal's compiler takes.

Accepted forms (docs/language.md, "Signatures"):

- text: tidal's and Numba's spellings, ``"void(float32[::1], intp)"``,
  ``"(i4[::1], i4, i4)"`` (no return type: the arguments),
  ``"void(array(float32, 1d, C), UniTuple(int64 x 2))"``, ``Record(...)``,
  ``"(array(float32, 1d, C), int64) -> none"`` (how a Numba signature prints);
- tidal's type objects (``tidal.float32[::1]``, ``tidal.void(...)``);
- Numba's type objects, duck-typed (tidal never imports Numba): a Numba
  type's ``str()`` is its Numba text; arrays have ``dtype``, ``ndim``,
  ``layout`` and ``mutable``; records a structured NumPy ``dtype``; tuples
  ``types``; signatures ``args`` and ``return_type``;
- a tuple or list of types: the argument types, no return type.

A type is described internally as a small tuple (``("scalar", "float32")``,
``("array", element, ndim, layout, readonly)``, ``("tuple", [..])``,
``("record", dtype)``, ``("none",)``) and handed to the C++ half as tidal's
canonical text (``float32[:, ::1]``, ``(int64, float32)``) where the C++
signature parser can read it, else as a description tuple (records,
read-only arrays) that ``python/src`` turns into a type.
"""

import re

import numpy as _np

__all__ = ["Signature", "parse_signature", "signature_of", "type_of", "canonical_text",
           "dtype_name"]

# Numba's scalar names and aliases (numba.core.types) -> tidal's names.
_SCALARS = {
    "bool": "bool", "bool_": "bool", "boolean": "bool", "b1": "bool",
    "int8": "int8", "i1": "int8", "char": "int8",
    "int16": "int16", "i2": "int16", "short": "int16",
    "int32": "int32", "i4": "int32", "intc": "int32",
    "int64": "int64", "i8": "int64", "intp": "int64", "int_": "int64", "long_": "int64",
    "longlong": "int64", "ssize_t": "int64",
    "uint8": "uint8", "u1": "uint8", "byte": "uint8", "uchar": "uint8",
    "uint16": "uint16", "u2": "uint16", "ushort": "uint16",
    "uint32": "uint32", "u4": "uint32", "uintc": "uint32",
    "uint64": "uint64", "u8": "uint64", "uintp": "uint64", "uint": "uint64", "ulong": "uint64",
    "ulonglong": "uint64", "size_t": "uint64",
    "float16": "float16", "f2": "float16", "half": "float16",
    "float32": "float32", "f4": "float32", "float_": "float32", "single": "float32",
    "float64": "float64", "f8": "float64", "double": "float64",
    "complex64": "complex64", "c8": "complex64",
    "complex128": "complex128", "c16": "complex128", "complex_": "complex128",
    "bfloat16": "bfloat16", "__nv_bfloat16": "bfloat16",  # numba-cuda's type prints __nv_bfloat16
}
_NONE_NAMES = ("void", "none", "None")
_DATETIMES = ("datetime64", "timedelta64")


class Signature:
    """A normalised signature: ``return_type`` (a type description, or None
    where none was written) and ``args`` (type descriptions)."""

    __slots__ = ("return_type", "args")

    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = list(args)

    def __repr__(self):
        args = ", ".join(canonical_text(a) for a in self.args)
        if self.return_type is None:
            return f"({args})"
        return f"{canonical_text(self.return_type)}({args})"

    def native_args(self):
        """The argument types as the C++ half takes them: a list of texts
        and description tuples."""
        return [_native(a) for a in self.args]

    def device_text(self):
        """The text of a device function's declared signature, as the C++
        signature parser reads it: ``ret(args)`` or the bare argument list."""
        args = ", ".join(_text_or_error(a) for a in self.args)
        if self.return_type is None:
            return args
        return f"{_text_or_error(self.return_type)}({args})"


# --- text ----------------------------------------------------------------------------------

class _TextParser:
    """Recursive descent over a signature's or a type's text."""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def fail(self, what):
        raise TypeError(f"invalid signature '{self.text}': {what} at column {self.pos + 1}")

    def skip(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, token=None):
        self.skip()
        if token is None:
            return self.text[self.pos] if self.pos < len(self.text) else ""
        return self.text.startswith(token, self.pos)

    def expect(self, token):
        if not self.peek(token):
            self.fail(f"expected '{token}'")
        self.pos += len(token)

    def accept(self, token):
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def identifier(self):
        self.skip()
        match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.text, self.pos)
        if not match:
            return ""
        self.pos = match.end()
        return match.group()

    def number(self):
        self.skip()
        match = re.compile(r"[0-9]+").match(self.text, self.pos)
        if not match:
            self.fail("expected a number")
        self.pos = match.end()
        return int(match.group())

    def at_end(self):
        self.skip()
        return self.pos == len(self.text)

    # signature := type '(' list ')' | '(' list ')' ['->' type] | list
    def signature(self):
        self.skip()
        if self.at_end():
            return Signature(None, [])
        start = self.pos
        if self.peek("("):
            args = self.parenthesised_list()
            if self.accept("->"):
                return_type = self.type()
                self.end()
                return Signature(return_type, args)
            if self.at_end():
                return Signature(None, args)
            self.pos = start
        first = self.type()
        if self.peek("("):
            self.expect("(")
            args = self.list(")")
            self.expect(")")
            self.end()
            return Signature(first, args)
        self.pos = start
        args = self.list("")
        self.end()
        return Signature(None, args)

    def end(self):
        if not self.at_end():
            self.fail("unexpected text")

    def parenthesised_list(self):
        self.expect("(")
        items = self.list(")")
        self.expect(")")
        return items

    def list(self, close):
        items = []
        if self.peek() == close or (not close and self.at_end()):
            return items
        while True:
            items.append(self.type())
            if not self.accept(","):
                return items
            if close and self.peek() == close:  # (int64,)
                return items

    def type(self):
        if self.peek("("):
            return ("tuple", self.parenthesised_list())
        start = self.pos
        name = self.identifier()
        if not name:
            self.fail("expected a type name")
        if name in ("readonly", "unaligned"):
            inner = self.type()
            if inner[0] != "array":
                self.fail(f"'{name}' qualifies array types only")
            return inner[:4] + (True,) if name == "readonly" else inner
        if name == "array" and self.peek("("):
            return self.numba_array()
        if name == "UniTuple" and self.peek("("):
            self.expect("(")
            element = self.type()
            if not self.accept(","):  # UniTuple(int32, 2), as Numba's constructor
                self.expect("x")  # UniTuple(int32 x 2), as Numba prints it
            count = self.number()
            self.expect(")")
            return ("tuple", [element] * count)
        if name == "Tuple" and self.peek("("):
            self.expect("(")
            if self.peek("("):  # Tuple((int32, float64)), as Numba's constructor
                elements = self.parenthesised_list()
                self.expect(")")
                return ("tuple", elements)
            elements = self.list(")")
            self.expect(")")
            return ("tuple", elements)
        if name in ("optional", "Optional", "OptionalType") and self.peek("("):
            self.expect("(")  # Numba's optional(int32), printed OptionalType(int32)
            inner = self.type()
            self.expect(")")
            return ("optional", inner)
        if name == "Record" and self.peek("("):
            return self.record()
        # Numba's pointers: CPointer(uint8), voidptr, and as Numba prints
        # them, uint8*, void*.
        if name == "CPointer" and self.peek("("):
            self.expect("(")
            element = self.type()
            if element[0] != "scalar":
                self.fail("CPointer() takes a scalar type")
            self.expect(")")
            return ("pointer", element)
        if name == "voidptr" or (name == "void" and self.peek("*")):
            if name == "void":
                self.expect("*")
            return ("pointer", None)
        if name in _NONE_NAMES:
            return ("none",)
        if name in _DATETIMES:  # datetime64[D], timedelta64[ns]: int64 counts of a unit
            unit = re.compile(r"\[(Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as)\]").match(self.text, self.pos)
            if unit:
                self.pos = unit.end()
                name = f"{name}[{unit.group(1)}]"
            scalar = ("scalar", name)
            return self.array_dims(scalar) if self.peek("[") else scalar
        if name not in _SCALARS:
            self.pos = start
            self.fail(f"unknown type '{name}'")
        scalar = ("scalar", _SCALARS[name])
        if self.peek("["):
            return self.array_dims(scalar)
        if self.peek("*"):
            self.expect("*")
            return ("pointer", scalar)
        return scalar

    def numba_array(self):
        # array(float32, 1d, C)
        self.expect("(")
        element = self.type()
        if element[0] not in ("scalar", "record"):
            self.fail("an array's elements are numbers or records")
        self.expect(",")
        ndim = self.number()
        self.expect("d")
        self.expect(",")
        layout = self.identifier()
        if layout not in ("C", "F", "A"):
            self.fail("expected the layout C, F or A")
        self.expect(")")
        return _array(element, ndim, layout, False)

    def array_dims(self, element):
        # float32[:, ::1]: ':' per dimension, '::1' on the contiguous one.
        self.expect("[")
        contiguous = []
        ndim = 0
        while True:
            if self.accept("::1"):
                contiguous.append(ndim)
            elif not self.accept(":"):
                self.fail("expected ':' or '::1' in an array type")
            ndim += 1
            if not self.accept(","):
                break
        self.expect("]")
        if len(contiguous) > 1:
            self.fail("only one dimension can be '::1'")
        layout = "A"
        if contiguous == [ndim - 1]:
            layout = "C"
        elif contiguous == [0]:
            layout = "F"
        elif contiguous:
            self.fail("'::1' must be on the first or the last dimension")
        return _array(element, ndim, layout, False)

    def record(self):
        # Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)
        self.expect("(")
        names, formats, offsets = [], [], []
        while not self.peek(";"):
            name = self.identifier()
            if not name:
                self.fail("expected a record field's name")
            self.expect("[")
            self.expect("type")
            self.expect("=")
            field_format = self.record_field_format(name)
            self.expect(";")
            self.expect("offset")
            self.expect("=")
            offset = self.number()
            self.expect("]")
            names.append(name)
            formats.append(field_format)
            offsets.append(offset)
            if not self.accept(","):
                break
        self.expect(";")
        size = self.number()
        self.expect(";")
        aligned = self.identifier()
        if aligned not in ("True", "False"):
            self.fail("expected True or False (aligned)")
        self.expect(")")
        dtype = _np.dtype({"names": names, "formats": formats, "offsets": offsets,
                           "itemsize": size}, align=aligned == "True")
        return ("record", dtype)


    def record_field_format(self, name):
        # A field's type: a number, a nested Record(...), or
        # nestedarray(float32, (2, 3)) of either; as a NumPy format.
        start = self.pos
        if self.identifier() == "nestedarray" and self.peek("("):
            self.expect("(")
            element = self.record_field_format(name)
            self.expect(",")
            self.expect("(")
            shape = []
            while not self.peek(")"):
                shape.append(self.number())
                if not self.accept(","):
                    break
            self.expect(")")
            self.expect(")")
            return (element, tuple(shape))
        self.pos = start
        field = self.type()
        if field[0] == "scalar":
            return _numpy_name(field[1])
        if field[0] == "record":
            return field[1]
        self.fail(f"record field '{name}' must be a number, a record or a nestedarray of either")


def _numpy_name(scalar):
    return "bool" if scalar == "bool" else scalar  # datetime64[D] too


def _array(element, ndim, layout, readonly):
    if ndim < 1:
        raise TypeError("0-dimensional array types are not supported in signatures")
    if ndim == 1 and layout == "F":
        layout = "C"
    return ("array", element, ndim, layout, readonly)


def parse_signature(text):
    """A signature's text as a Signature."""
    return _TextParser(text).signature()


def _parse_type(text):
    parser = _TextParser(text)
    result = parser.type()
    parser.end()
    return result


# --- objects --------------------------------------------------------------------------------

def _is_signature_object(value):
    return hasattr(value, "args") and hasattr(value, "return_type") and \
        isinstance(getattr(value, "args"), (tuple, list))


def type_of(value):
    """The description of one type given as an object (tidal's, Numba's, a
    NumPy dtype) or as text; TypeError when it is not a type."""
    if isinstance(value, str):
        return _parse_type(value)
    if value is None:
        return ("none",)
    if isinstance(value, _np.dtype) or (isinstance(value, type) and
                                        issubclass(value, _np.generic)):
        dtype = _np.dtype(value)
        if dtype.names:
            return ("record", dtype)
        if dtype.name in _SCALARS:
            return ("scalar", _SCALARS[dtype.name])
        if dtype.kind in "mM":
            return _parse_type(dtype.name)
        raise TypeError(f"NumPy dtype {dtype} is not a type kernels take")
    # Numba's array types: dtype, ndim, layout (and mutable).
    if all(hasattr(value, a) for a in ("dtype", "ndim", "layout")) and \
            not isinstance(value, _np.ndarray):
        element = type_of(value.dtype)
        if element[0] not in ("scalar", "record"):
            raise TypeError(f"array type {value} has elements that are not numbers or records")
        readonly = not getattr(value, "mutable", True)
        return _array(element, int(value.ndim), str(value.layout), readonly)
    # Numba's records: a structured NumPy dtype.
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, _np.dtype) and dtype.names:
        return ("record", dtype)
    # Numba's tuples (UniTuple, Tuple, NamedTuple): the element types.
    elements = getattr(value, "types", None)
    if isinstance(elements, tuple) and type(value).__name__ != "Signature":
        return ("tuple", [type_of(e) for e in elements])
    if isinstance(value, (tuple, list)):
        return ("tuple", [type_of(e) for e in value])
    # A scalar (tidal's NumberType, Numba's Integer/Float/...): its text.
    text = str(value)
    try:
        return _parse_type(text)
    except TypeError:
        raise TypeError(f"{value!r} is not a type (expected a type name such as "
                        f"float32, an array type such as float32[::1], or a Numba "
                        f"type object)") from None


def signature_of(value):
    """A Signature from any accepted form (module docstring)."""
    if isinstance(value, Signature):
        return value
    if isinstance(value, str):
        return parse_signature(value)
    if _is_signature_object(value):  # tidal's Signature, Numba's Signature
        return Signature(type_of(value.return_type), [type_of(a) for a in value.args])
    if isinstance(value, (tuple, list)):
        return Signature(None, [type_of(a) for a in value])
    # One type alone: a signature of one argument.
    return Signature(None, [type_of(value)])


def kernel_signature(value, name):
    """signature_of for a kernel: its return type must be void (Numba:
    'CUDA kernel must have void return type')."""
    signature = signature_of(value)
    returned = signature.return_type
    if returned is not None and returned != ("none",):
        raise TypeError(f"a kernel's signature must return void, not "
                        f"{canonical_text(returned)} (kernel '{name}')")
    return signature


# --- output ----------------------------------------------------------------------------------

def _layout_dims(ndim, layout):
    dims = [":"] * ndim
    if layout == "C":
        dims[-1] = "::1"
    elif layout == "F":
        dims[0] = "::1"
    return ", ".join(dims)


def _text(description):
    """tidal's canonical text, or None where the C++ parser has no
    spelling (records, read-only arrays)."""
    kind = description[0]
    if kind == "scalar":
        return description[1]
    if kind == "none":
        return "void"
    if kind == "array":
        _, element, ndim, layout, readonly = description
        if element[0] != "scalar" or readonly:
            return None
        return f"{element[1]}[{_layout_dims(ndim, layout)}]"
    if kind == "pointer":
        return "voidptr" if description[1] is None else f"CPointer({description[1][1]})"
    if kind == "tuple":
        parts = [_text(e) for e in description[1]]
        if any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if kind == "optional":
        inner = _text(description[1])
        return None if inner is None else f"optional({inner})"
    return None


def canonical_text(description):
    """A type description as text for people: tidal's spelling, Numba's
    for what tidal's has none."""
    text = _text(description)
    if text is not None:
        return text
    kind = description[0]
    if kind == "record":
        dtype = description[1]
        return "Record(" + ", ".join(f"{n}:{dtype.fields[n][0]}" for n in dtype.names) + ")"
    if kind == "array":
        _, element, ndim, layout, readonly = description
        return (("readonly " if readonly else "") +
                f"array({canonical_text(element)}, {ndim}d, {layout})")
    if kind == "tuple":
        return "(" + ", ".join(canonical_text(e) for e in description[1]) + ")"
    return str(description)


def _text_or_error(description):
    text = _text(description)
    if text is None:
        raise TypeError(f"{canonical_text(description)} cannot be declared in a device "
                        f"function's signature; leave the signature out and let the "
                        f"arguments' types decide")
    return text


def _native(description):
    """One argument type as the C++ half takes it (Dispatcher._compile,
    typesFromPython): text, or a description tuple with NumPy dtypes."""
    text = _text(description)
    if text is not None:
        return text
    kind = description[0]
    if kind == "record":
        return ("record", description[1], False)
    if kind == "array":
        _, element, ndim, layout, readonly = description
        dtype = element[1] if element[0] == "record" else _np.dtype(_numpy_name(element[1]))
        return ("array", dtype, ndim, layout, readonly)
    if kind == "tuple":
        return ("tuple", [_native(e) for e in description[1]])
    raise TypeError(f"{canonical_text(description)} is not an argument type")


# --- dtypes inside kernels --------------------------------------------------------------------

def dtype_name(value):
    """The scalar name of a dtype given in a kernel (cuda.local.array(n,
    dtype), cuda.shared.array): a Numba type object or a NumPy dtype's name
    as a string. The frontend calls this for objects it does not know
    itself; a ValueError's message becomes the TypingError's."""
    if isinstance(value, str):
        try:
            dtype = _np.dtype(value)
        except TypeError:
            raise ValueError(f"Invalid NumPy dtype specified: '{value}'") from None
        if dtype.name not in _SCALARS:
            raise ValueError(f"dtype '{value}' ({dtype}) is not a number type kernels take")
        return _SCALARS[dtype.name]
    try:
        description = type_of(value)
    except TypeError:
        description = None
    if description is None or description[0] != "scalar":
        raise ValueError(f"expected a dtype (tidal.float32, numpy.float32, 'float32', a Numba "
                         f"type such as numba.types.float32), got {value!r}")
    return description[1]
