"""Signatures of ufuncs and gufuncs: type signatures ('float32(float32,
float32)', float32(float32, float32), a tuple of types) read into NumPy
dtypes and array ranks, and gufunc layouts ('(m,n),(n,p)->(m,p)') read into
their dimension names, with Numba's errors."""

import re
import string

import numpy as np

from ..cuda._native import native
from ..cuda.signatures import canonical_text, signature_of, type_of

# The frontend's text for an array type: array(float32, 2d, A).
_ARRAY_TYPE = re.compile(r"^array\(([\w\[\]]+), (\d+)d, ([CFA])\)$")  # datetime64[D] too


class ArgumentType:
    """One type of a signature: a scalar (ndim None) or an array."""

    __slots__ = ("dtype", "ndim", "layout")

    def __init__(self, dtype, ndim=None, layout="A"):
        self.dtype = dtype
        self.ndim = ndim
        self.layout = layout

    @property
    def is_array(self):
        return self.ndim is not None

    def text(self, ndim=None):
        """The type as a signature spells it (float32, float32[:, ::1]),
        with ``ndim`` dimensions if given."""
        if not self.is_array and ndim is None:
            return self.dtype.name
        ndim = self.ndim if ndim is None else ndim
        if ndim == 0:
            return self.dtype.name
        dims = [":"] * ndim
        if self.layout == "C":
            dims[-1] = "::1"
        elif self.layout == "F":
            dims[0] = "::1"
        return f"{self.dtype.name}[{', '.join(dims)}]"


def signature_text(signature):
    """A signature in any form a user writes, as text: a str, a signature
    object (tidal's float32(float32), or Numba's: int32(int32, int32) with
    `from numba import int32`), or a tuple/list of types (no return type)."""
    if isinstance(signature, str):
        return signature
    if isinstance(signature, (tuple, list)):  # each type in the frontend's spelling
        return "(" + ", ".join(canonical_text(type_of(t)) for t in signature) + ")"
    if hasattr(signature, "args") and hasattr(signature, "return_type"):
        parsed = signature_of(signature)
        returned = "" if parsed.return_type is None else canonical_text(parsed.return_type)
        return returned + "(" + ", ".join(canonical_text(a) for a in parsed.args) + ")"
    return str(signature)


def _argument_type(text, signature):
    match = _ARRAY_TYPE.match(text)
    name = match.group(1) if match else text
    try:
        dtype = np.dtype("bool" if name == "bool" else name)
    except TypeError:
        raise TypeError(f"ufunc signature {signature!r}: the type {text} has no NumPy "
                        f"dtype; ufuncs take numbers and arrays of numbers") from None
    if match:
        return ArgumentType(dtype, int(match.group(2)), match.group(3))
    return ArgumentType(dtype)


def parse_type_signature(signature):
    """(return type or None, [argument types]) of a type signature in any
    form (see signature_text); a signature without a return type, such as
    '(float64, float64[:])', gives None."""
    text = signature_text(signature).strip()
    if text.startswith("("):  # the arguments alone: read as a void signature
        return_name, arguments = native.parse_signature("void" + text)
        return_name = None
    else:
        return_name, arguments = native.parse_signature(text)
    if return_name in (None, "none"):
        return_type = None
    else:
        return_type = _argument_type(return_name, text)
    return return_type, [_argument_type(a, text) for a in arguments]


# --- gufunc layouts -----------------------------------------------------------------

_GROUP = re.compile(r"\(([^()]*)\)")


def _layout_groups(text, layout):
    """The dimension names of each '(a,b)' group of one side of a layout;
    groups are separated by commas, and a trailing comma is allowed."""
    groups = []
    position = 0
    while position < len(text):
        match = _GROUP.match(text, position)
        if match is None:
            raise ValueError(f'bad token in signature "{text[position]}"')
        names = []
        for name in match.group(1).split(","):
            if name == "":
                continue
            if not name.isidentifier():
                bad = next((c for c in name if not (c.isalnum() or c == "_")), name[0])
                raise ValueError(f'bad token in signature "{bad}"')
            names.append(name)
        groups.append(tuple(names))
        position = match.end()
        if position < len(text):
            if text[position] != ",":
                raise ValueError(f'bad token in signature "{text[position]}"')
            position += 1
    return groups


def parse_layout(layout):
    """([input groups], [output groups]) of a gufunc layout such as
    '(m,n),(n,p)->(m,p)'; Numba's ValueError for a bad token and NameError
    for an output dimension no input names."""
    if not isinstance(layout, str):
        raise TypeError(f"a gufunc layout is a str such as '(n),(n)->()', got {layout!r}")
    compact = "".join(c for c in layout if c not in string.whitespace)
    inputs_text, arrow, outputs_text = compact.partition("->")
    inputs = _layout_groups(inputs_text, layout)
    outputs = _layout_groups(outputs_text, layout)
    if not arrow or not outputs:
        raise ValueError(f"gufunc layout {layout!r} has no output: write it as "
                         f"'(inputs)->(output)', such as '(n),(n)->()'")
    known = {name for group in inputs for name in group}
    undefined = sorted({name for group in outputs for name in group} - known)
    if undefined:
        raise NameError(f"undefined output symbols: {','.join(undefined)}")
    return inputs, outputs
