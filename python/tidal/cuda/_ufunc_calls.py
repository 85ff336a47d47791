"""NumPy ufuncs called in kernels and device functions: `np.sin(x[i])`,
`np.add(a[i], b[i])`, `np.maximum(x, y, out)`.

The frontend types a call of a ufunc as a call of a device function
(`tidal.extending._implementation` asks `implementation` here, as it asks
an overload's typing function). The loop is the one NumPy's (and Numba's)
rules choose for the argument types: the first of `ufunc.types` whose
inputs the arguments cast to safely (any integer to a float or complex
loop when the inputs mix integers and floats), whose output casts to each
out array's dtype of the same kind, skipping float16 and object loops, as
Numba does. The device function casts the arguments to the loop's types,
applies the element operation of `ELEMENTS` (one row per ufunc, spelt
with tidal's math, cmath, libdevice and operator rows) and casts the
result to the loop's output type.

Scalars give a scalar. With an out array (the argument after the inputs,
as numba-cuda allows), the thread that calls the ufunc writes every element
of it, broadcasting scalar and array inputs from the right as NumPy does
(an axis of length 1 repeats); the call is then None. Without an out
array, an array input is an error: kernels cannot allocate the result."""

import itertools
import linecache
import re

import numpy as np

# The element operation of each ufunc, by the kind of its loop's inputs:
# "b" bool, "i" signed and "u" unsigned integers ("u" falls back to "i"),
# "f" float32/float64, "c" complex64/complex128. {0} and {1} are the inputs,
# already of the loop's types; {T} is the cast to the loop's first input
# type (np.float32) and {f} libdevice's float32 suffix ("f" or "").
# A loop whose kind has no entry is refused, naming the types.
_TRUTH = "({0} != 0)"
ELEMENTS = {
    # Arithmetic.
    "add": {"b": "({0} | {1})", "i": "({0} + {1})", "f": "({0} + {1})", "c": "({0} + {1})"},
    "subtract": {"i": "({0} - {1})", "f": "({0} - {1})", "c": "({0} - {1})"},
    "multiply": {"b": "({0} & {1})", "i": "({0} * {1})", "f": "({0} * {1})",
                 "c": "({0} * {1})"},
    "true_divide": {"f": "({0} / {1})", "c": "({0} / {1})"},
    # Numba's float floor_divide is floor(a / b) (NumPy's 1.0 // 0.1 is 9.0, Numba's 10.0).
    "floor_divide": {"i": "(0 if {1} == 0 else {0} // {1})",
                     "f": "libdevice.floor{f}({0} / {1})"},
    "remainder": {"i": "(0 if {1} == 0 else {0} % {1})", "f": "({0} % {1})"},
    "fmod": {"i": "(0 if {1} == 0 else (abs({0}) % abs({1})) * (-1 if {0} < 0 else 1))",
             "u": "(0 if {1} == 0 else {0} % {1})", "f": "math.fmod({0}, {1})"},
    "power": {"i": "({0} ** {1})", "f": "({0} ** {1})", "c": "({0} ** {1})"},
    "float_power": {"f": "({0} ** {1})", "c": "({0} ** {1})"},
    "negative": {"i": "(-{0})", "f": "(-{0})", "c": "(-{0})"},
    "positive": {"i": "{0}", "f": "{0}", "c": "{0}"},
    "absolute": {"b": "{0}", "i": "abs({0})", "u": "{0}", "f": "abs({0})", "c": "abs({0})"},
    "fabs": {"f": "math.fabs({0})"},
    "sign": {"i": "(1 if {0} > 0 else (-1 if {0} < 0 else 0))", "u": "(1 if {0} > 0 else 0)",
             "f": "(1.0 if {0} > 0 else (-1.0 if {0} < 0 else (0.0 if {0} == 0 else {0})))"},
    "conjugate": {"b": "{0}", "i": "{0}", "f": "{0}", "c": "{0}.conjugate()"},
    "square": {"b": "({0} & {0})", "i": "({0} * {0})", "f": "({0} * {0})", "c": "({0} * {0})"},
    "reciprocal": {"f": "({T}(1) / {0})", "c": "({T}(1) / {0})"},
    # Powers, exponentials, logarithms.
    "sqrt": {"f": "math.sqrt({0})", "c": "cmath.sqrt({0})"},
    "cbrt": {"f": "libdevice.cbrt{f}({0})"},
    "exp": {"f": "math.exp({0})", "c": "cmath.exp({0})"},
    "exp2": {"f": "math.exp2({0})"},
    "expm1": {"f": "math.expm1({0})"},
    "log": {"f": "math.log({0})", "c": "cmath.log({0})"},
    "log2": {"f": "math.log2({0})"},
    "log10": {"f": "math.log10({0})", "c": "cmath.log10({0})"},
    "log1p": {"f": "math.log1p({0})"},
    # Trigonometric and hyperbolic.
    "sin": {"f": "math.sin({0})", "c": "cmath.sin({0})"},
    "cos": {"f": "math.cos({0})", "c": "cmath.cos({0})"},
    "tan": {"f": "math.tan({0})", "c": "cmath.tan({0})"},
    "arcsin": {"f": "math.asin({0})", "c": "cmath.asin({0})"},
    "arccos": {"f": "math.acos({0})", "c": "cmath.acos({0})"},
    "arctan": {"f": "math.atan({0})", "c": "cmath.atan({0})"},
    "arctan2": {"f": "math.atan2({0}, {1})"},
    "hypot": {"f": "math.hypot({0}, {1})"},
    "sinh": {"f": "math.sinh({0})", "c": "cmath.sinh({0})"},
    "cosh": {"f": "math.cosh({0})", "c": "cmath.cosh({0})"},
    "tanh": {"f": "math.tanh({0})", "c": "cmath.tanh({0})"},
    "arcsinh": {"f": "math.asinh({0})", "c": "cmath.asinh({0})"},
    "arccosh": {"f": "math.acosh({0})", "c": "cmath.acosh({0})"},
    "arctanh": {"f": "math.atanh({0})", "c": "cmath.atanh({0})"},
    "deg2rad": {"f": "math.radians({0})"},
    "rad2deg": {"f": "math.degrees({0})"},
    # Rounding (NumPy's keep the float type; math.floor's is an integer).
    "floor": {"f": "libdevice.floor{f}({0})"},
    "ceil": {"f": "libdevice.ceil{f}({0})"},
    "trunc": {"f": "libdevice.trunc{f}({0})"},
    "rint": {"f": "libdevice.rint{f}({0})"},
    # Comparisons (complex ones are NumPy's lexicographic order: refused).
    "greater": {"b": "({0} > {1})", "i": "({0} > {1})", "f": "({0} > {1})"},
    "greater_equal": {"b": "({0} >= {1})", "i": "({0} >= {1})", "f": "({0} >= {1})"},
    "less": {"b": "({0} < {1})", "i": "({0} < {1})", "f": "({0} < {1})"},
    "less_equal": {"b": "({0} <= {1})", "i": "({0} <= {1})", "f": "({0} <= {1})"},
    "equal": {"b": "({0} == {1})", "i": "({0} == {1})", "f": "({0} == {1})",
              "c": "({0} == {1})"},
    "not_equal": {"b": "({0} != {1})", "i": "({0} != {1})", "f": "({0} != {1})",
                  "c": "({0} != {1})"},
    "logical_and": {"b": "({0} & {1})", "i": "(({0} != 0) & ({1} != 0))",
                    "f": "(({0} != 0) & ({1} != 0))", "c": "(({0} != 0) & ({1} != 0))"},
    "logical_or": {"b": "({0} | {1})", "i": "(({0} != 0) | ({1} != 0))",
                   "f": "(({0} != 0) | ({1} != 0))", "c": "(({0} != 0) | ({1} != 0))"},
    "logical_xor": {"b": "({0} ^ {1})", "i": "(({0} != 0) ^ ({1} != 0))",
                    "f": "(({0} != 0) ^ ({1} != 0))", "c": "(({0} != 0) ^ ({1} != 0))"},
    "logical_not": {"b": "(not {0})", "i": "({0} == 0)", "f": "({0} == 0)", "c": "({0} == 0)"},
    # Extrema: maximum and minimum propagate NaNs, fmax and fmin ignore them.
    "maximum": {"b": "({0} | {1})", "i": "({0} if {0} >= {1} else {1})",
                "f": "({0} if ({0} >= {1} or math.isnan({0})) else {1})"},
    "minimum": {"b": "({0} & {1})", "i": "({0} if {0} <= {1} else {1})",
                "f": "({0} if ({0} <= {1} or math.isnan({0})) else {1})"},
    "fmax": {"b": "({0} | {1})", "i": "({0} if {0} >= {1} else {1})",
             "f": "({0} if ({0} >= {1} or math.isnan({1})) else {1})"},
    "fmin": {"b": "({0} & {1})", "i": "({0} if {0} <= {1} else {1})",
             "f": "({0} if ({0} <= {1} or math.isnan({1})) else {1})"},
    # Bits.
    "bitwise_and": {"b": "({0} & {1})", "i": "({0} & {1})"},
    "bitwise_or": {"b": "({0} | {1})", "i": "({0} | {1})"},
    "bitwise_xor": {"b": "({0} ^ {1})", "i": "({0} ^ {1})"},
    "invert": {"b": "(not {0})", "i": "(~{0})"},
    "left_shift": {"i": "({0} << {1})"},
    "right_shift": {"i": "({0} >> {1})"},
    # Floating-point classes and parts.
    "isnan": {"b": "False", "i": "False", "f": "math.isnan({0})",
              "c": "(math.isnan({0}.real) or math.isnan({0}.imag))"},
    "isinf": {"b": "False", "i": "False", "f": "math.isinf({0})",
              "c": "(math.isinf({0}.real) or math.isinf({0}.imag))"},
    "isfinite": {"b": "True", "i": "True", "f": "math.isfinite({0})",
                 "c": "(math.isfinite({0}.real) and math.isfinite({0}.imag))"},
    "signbit": {"f": "(math.copysign(1.0, {0}) < 0)"},
    "copysign": {"f": "math.copysign({0}, {1})"},
    "nextafter": {"f": "libdevice.nextafter{f}({0}, {1})"},
    "ldexp": {"f": "math.ldexp({0}, {1})"},
}

# NumPy's other names of the same ufuncs (np.divide is np.true_divide, whose
# __name__ is 'divide' in NumPy 1.x and 'true_divide' before).
for _alias, _name in [("radians", "deg2rad"), ("degrees", "rad2deg"), ("divide", "true_divide"),
                      ("mod", "remainder"), ("conj", "conjugate"), ("abs", "absolute")]:
    ELEMENTS[_alias] = ELEMENTS[_name]

_KIND_OF_LETTER = {"?": "b", "f": "f", "d": "f", "F": "c", "D": "c"}
_KIND_OF_LETTER.update({letter: "i" for letter in "bhilq"})
_KIND_OF_LETTER.update({letter: "u" for letter in "BHILQ"})

_ARRAY = re.compile(r"^(readonly )?array\((\w+), (\d+)d, (\w+)\)$")
_generated_files = itertools.count(1)


class _Operand:
    """One argument of the call: its dtype, and its ndim when an array."""

    def __init__(self, text):
        match = _ARRAY.match(text)
        self.text = text
        self.ndim = int(match.group(3)) if match else None
        self.readonly = bool(match and match.group(1))
        name = match.group(2) if match else text
        try:
            self.dtype = np.dtype("bool" if name == "bool" else name)
        except TypeError:
            self.dtype = None
        if self.dtype is not None and self.dtype.kind not in "biufc":
            self.dtype = None


def _can_cast(from_, to, mixed, casting):
    if mixed and from_.kind in "iu" and to.kind in "fc":
        return True
    return np.can_cast(from_, to, casting)


def find_loop(ufunc, inputs, outputs):
    """The letters of the loop NumPy and Numba choose for these input and out
    dtypes ('ff->f'), or None."""
    mixed = any(d.kind in "iu" for d in inputs) and any(d.kind in "fc" for d in inputs)
    for candidate in ufunc.types:
        loop_inputs, loop_outputs = candidate[:ufunc.nin], candidate[-ufunc.nout:]
        if any(letter not in _KIND_OF_LETTER for letter in candidate if letter not in "->"):
            continue  # float16, long double, object, datetime loops
        if not all(_can_cast(d, np.dtype(l), mixed, "safe") for d, l in zip(inputs, loop_inputs)):
            continue
        if not all(_can_cast(np.dtype(l), d, mixed, "same_kind")
                   for d, l in zip(outputs, loop_outputs)):
            continue
        return candidate
    return None


def _cast(letter):
    return "bool" if letter == "?" else "np." + np.dtype(letter).name


def _element_expression(ufunc, loop, arguments):
    name = ufunc.__name__
    loop_inputs = loop[:ufunc.nin]
    kind = _KIND_OF_LETTER[loop_inputs[0]]
    rows = ELEMENTS[name]
    template = rows.get(kind) or (rows.get("i") if kind == "u" else None)
    if template is None:
        return None
    cast = [f"{_cast(letter)}({argument})" for letter, argument in zip(loop_inputs, arguments)]
    suffix = "f" if loop_inputs[0] in "fF" else ""
    body = template.format(*cast, T=_cast(loop_inputs[0]), f=suffix)
    return f"{_cast(loop[-1])}({body})"


def _register_source(filename, source):
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)


def _device_function(name, source):
    from . import jit, libdevice
    import cmath
    import math
    filename = f"<tidal ufunc call #{next(_generated_files)}: np.{name}>"
    _register_source(filename, source)
    namespace = {"np": np, "math": math, "cmath": cmath, "libdevice": libdevice}
    exec(compile(source, filename, "exec"), namespace)
    return jit(device=True)(namespace["__ufunc_" + name + "__"])


def _described(operands):
    return ", ".join(operand.text for operand in operands)


def implementation(ufunc, type_texts):
    """The device function for a call of `ufunc` with arguments of these
    tidal types, or the text of the error (the frontend locates it)."""
    name = ufunc.__name__
    operands = [_Operand(text) for text in type_texts]
    if name not in ELEMENTS or ufunc.nout != 1:
        return f"NumPy ufunc '{name}' is not supported in kernels (docs/language.md lists those that are)"
    if len(operands) not in (ufunc.nin, ufunc.nin + 1):
        return (f"NumPy ufunc '{name}' takes {ufunc.nin} input(s) and optionally one out array, "
                f"not {len(operands)} arguments")
    inputs, outputs = operands[:ufunc.nin], operands[ufunc.nin:]
    for operand in operands:
        if operand.dtype is None:
            return f"NumPy ufunc '{name}' does not take {operand.text} in kernels"
    for operand in operands:
        if operand.ndim == 0:
            return f"NumPy ufunc '{name}' does not take 0-d arrays in kernels ({operand.text})"
    if outputs:
        out = outputs[0]
        if out.ndim is None:
            return f"the out argument of NumPy ufunc '{name}' must be an array, not {out.text}"
        if out.readonly:
            return f"the out array of NumPy ufunc '{name}' is read-only ({out.text})"
        for operand in inputs:
            if operand.ndim is not None and operand.ndim > out.ndim:
                return (f"NumPy ufunc '{name}': input {operand.text} has more dimensions than its "
                        f"out array {out.text}")
    elif any(operand.ndim is not None for operand in inputs):
        return (f"NumPy ufunc '{name}' of an array in a kernel needs an out array as its last "
                f"argument: kernels cannot allocate its result ({_described(operands)})")
    loop = find_loop(ufunc, [o.dtype for o in inputs], [o.dtype for o in outputs])
    arguments = [f"__a{i}__" for i in range(len(inputs))]
    if loop is None:
        return f"NumPy ufunc '{name}' has no loop for argument types ({_described(operands)})"
    if not outputs:
        expression = _element_expression(ufunc, loop, arguments)
        if expression is None:
            return f"NumPy ufunc '{name}' is not supported in kernels for ({_described(operands)})"
        source = (f"def __ufunc_{name}__({', '.join(arguments)}):\n"
                  f"    return {expression}\n")
        return _device_function(name, source)
    out = outputs[0]
    indices = [f"__i{axis}__" for axis in range(out.ndim)]
    elements = []
    for argument, operand in zip(arguments, inputs):
        if operand.ndim is None:
            elements.append(argument)
            continue
        first = out.ndim - operand.ndim  # NumPy broadcasts from the right
        axes = [f"({indices[first + axis]} if {argument}.shape[{axis}] != 1 else 0)"
                for axis in range(operand.ndim)]
        elements.append(f"{argument}[{', '.join(axes)}]" if axes else argument)
    expression = _element_expression(ufunc, loop, elements)
    if expression is None:
        return f"NumPy ufunc '{name}' is not supported in kernels for ({_described(operands)})"
    lines = [f"def __ufunc_{name}__({', '.join(arguments)}, __out__):"]
    for axis, index in enumerate(indices):
        lines.append("    " * (axis + 1) + f"for {index} in range(__out__.shape[{axis}]):")
    lines.append("    " * (out.ndim + 1) + f"__out__[{', '.join(indices)}] = {expression}")
    return _device_function(name, "\n".join(lines) + "\n")
