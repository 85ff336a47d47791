"""Exceptions raised in kernels, as they reach the host after a launch
(docs/language.md#exceptions).

The compiler names a raised class by a key (`key_of`) and puts in the
message of the failure the kernel reports (pyfrontend/KernelExceptions.cpp),
each after a \\x1f: the key, the repr of the exception's constant arguments,
and the function, file and line that raised it. After the launch,
`exception_from` makes the exception: the class remembered under its key in
this process, else imported by module and qualified name, with its
arguments, the first one prefixed as Numba prefixes it ("In function 'f',
file /path/f.py, line 3, tid=[0, 0, 0] ctaid=[0, 0, 0]: message").
"""

import ast
import builtins
import importlib
import os

SEPARATOR = "\x1f"
FIELDS = 6

_classes = {}


def key_of(cls):
    """The key of an exception class; remembers the class under it."""
    key = f"{cls.__module__}:{cls.__qualname__}"
    _classes[key] = cls
    return key


def _class_of(key):
    if key in _classes:
        return _classes[key]
    module_name, _, qualified = key.partition(":")
    try:
        found = builtins if module_name == "builtins" else importlib.import_module(module_name)
        for part in qualified.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def is_raise(detail):
    """Whether a kernel failure's detail is a raised exception."""
    return detail.count(SEPARATOR) == FIELDS - 1


def exception_from(detail, thread, block):
    """The exception a kernel raised: detail is the failure's message (see
    above); thread and block are the (x, y, z) of the thread that raised it."""
    readable, key, arguments_text, function, path, line = detail.split(SEPARATOR)
    try:
        arguments = ast.literal_eval(arguments_text)
    except (ValueError, SyntaxError):
        arguments = ()
    prefix = (f"In function {function!r}, file {os.path.abspath(path)}, line {line}, "
              f"tid={list(thread)} ctaid={list(block)}")
    cls = _class_of(key)
    if cls is None:
        return RuntimeError(f"{prefix}: {readable} (the class {key} cannot be found here)")
    if arguments:
        arguments = (f"{prefix}: {arguments[0]}",) + tuple(arguments[1:])
    else:
        arguments = (prefix,)
    try:
        return cls(*arguments)
    except Exception:  # a class whose constructor takes other arguments
        return RuntimeError(f"{prefix}: {readable}")
