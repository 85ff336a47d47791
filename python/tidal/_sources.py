"""The source of kernels that are not in a file: exec() and compile() of a
string, ``python -c``.

tidal compiles a kernel from its source (the frontend reads its AST), and
``inspect`` finds the source only in files and in what ``linecache`` holds
(Jupyter and IPython register their cells there). Code generators, Numba's
own tests among them, build kernels with ``exec(code_string, globals)``, and
CPython keeps no copy of that string. Python's audit hooks see it: a
``compile`` event carries the source and the file name (``<string>``), then
an ``exec`` event the code object made from it. From ``import tidal`` on,
the hook installed here keeps, for every code object nested in an exec'd
code object that has no file, the source lines it came from, held weakly
through the code object (the source goes when the code does). ``python
-c``'s code is in ``sys.orig_argv``.

The hook costs one comparison per audit event. ``TIDAL_KEEP_SOURCES=0`` (read
at import) leaves it out. A function exec'd before tidal was imported has no
kept source: the error says so.

The frontend asks ``getsourcelines(function)`` for every function it
compiles (pyfrontend/FunctionCompiler.cpp).
"""

import collections
import inspect
import linecache
import os
import sys
import threading
import types
import weakref

__all__ = ["getsourcelines", "install", "installed", "lambda_definition"]

# Sources compiled from strings, not yet exec'd: (file name, lines), newest last.
_pending = collections.deque(maxlen=32)
# id(code object) -> (a weak reference to it, the lines of the source it was
# compiled from). Not a WeakKeyDictionary: code objects compare equal by
# value, so the same string exec'd twice would share one entry, keyed by the
# first code object, and lose it when that one dies while the second lives.
_kept = {}
_lock = threading.RLock()
_installed = False


def _is_file(filename):
    return isinstance(filename, str) and not filename.startswith("<") and \
        os.path.isfile(filename)


def _lines(source):
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = bytes(source).decode("utf-8", "replace")
    return source.splitlines(keepends=True)


def _nested_code(code):
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _nested_code(constant)


def _fits(code, lines):
    """True when every function in `code` has its 'def' where its first
    line (or one of its decorators) is in `lines`."""
    for nested in _nested_code(code):
        if nested.co_name.startswith("<"):  # the module, lambdas, comprehensions
            continue
        start = nested.co_firstlineno - 1
        if start >= len(lines) or not any(f"def {nested.co_name}" in line
                                          for line in lines[start:start + 32]):
            return False
    return True


def _keep(code, lines):
    """Keeps `lines` for `code` while it lives."""
    key = id(code)

    def forget(reference):  # only its own entry: the id may be reused
        entry = _kept.get(key)
        if entry is not None and entry[0] is reference:
            _kept.pop(key, None)

    _kept[key] = (weakref.ref(code, forget), lines)


def _audit(event, arguments):
    # Called for every audit event of the process: stay cheap (no system
    # call unless a string's code is exec'd).
    if event == "compile":
        source, filename = arguments
        if isinstance(source, (str, bytes)) and isinstance(filename, str):
            with _lock:
                _pending.append((filename, source))
    elif event == "exec":
        code = arguments[0]
        if not isinstance(code, types.CodeType):
            return
        filename = code.co_filename
        with _lock:
            sources = [s for f, s in _pending if f == filename]
        if not sources or _is_file(filename):
            return  # not from a string, or from a file that inspect reads
        # The newest string of that name that the code fits (a string may
        # be compiled, another of the same name compiled, then the first
        # exec'd).
        for source in reversed(sources):
            lines = _lines(source)
            if _fits(code, lines):
                with _lock:
                    for nested in _nested_code(code):
                        _keep(nested, lines)
                return


def install():
    """Keeps the sources of code compiled from strings from now on (once;
    not when TIDAL_KEEP_SOURCES=0)."""
    global _installed
    if _installed or os.environ.get("TIDAL_KEEP_SOURCES", "1") == "0":
        return
    sys.addaudithook(_audit)
    _installed = True


def installed():
    return _installed


def _matches(code, candidate):
    """True when `candidate` (a code object) is the same function as
    `code`: same name, first line and bytecode."""
    return candidate.co_name == code.co_name and \
        candidate.co_firstlineno == code.co_firstlineno and candidate.co_code == code.co_code


def _command_line_source(code):
    """The lines of ``python -c``'s code when `code` was compiled from it."""
    argv = getattr(sys, "orig_argv", [])
    if code.co_filename != "<string>" or "-c" not in argv[:-1]:
        return None
    command = argv[argv.index("-c") + 1]
    try:
        module = compile(command, "<string>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if any(_matches(code, nested) for nested in _nested_code(module)):
        return _lines(command)
    return None


def _missing(function, code):
    filename = code.co_filename
    name = getattr(function, "__qualname__", code.co_name)
    if filename in ("<stdin>", "<console>"):
        return (f"'{name}' was defined in an interactive session, whose source Python does "
                f"not keep: define it in a file, or in IPython/Jupyter, which keep it")
    if not _installed:
        why = ("tidal keeps the source of code compiled from strings only when "
               "TIDAL_KEEP_SOURCES is not 0" if os.environ.get("TIDAL_KEEP_SOURCES") == "0"
               else "tidal's source keeping is not installed")
        return f"'{name}' comes from {filename}, and {why}"
    return (f"'{name}' comes from {filename}, compiled before tidal was imported or "
            f"from an AST: import tidal before exec()/compile() of the kernel's source, "
            f"so that tidal can keep it")


def _file_source_lines(function):
    """inspect.getsourcelines, leaving linecache as it was: the frontend
    reads a function's source once per code object (and keeps it while the
    code lives), so an entry that inspect adds for a file would only keep
    the lines of every file a kernel was ever defined in (a process that
    generates kernels in new modules would grow by one file per kernel).
    Entries that were there (a notebook's cells, files others read) stay."""
    code = getattr(function, "__code__", None)
    filename = getattr(code, "co_filename", None)
    had = not isinstance(filename, str) or filename in linecache.cache
    try:
        return inspect.getsourcelines(function)
    finally:
        if not had:
            linecache.cache.pop(filename, None)


def getsourcelines(function):
    """inspect.getsourcelines, falling back to the sources kept from exec()
    and ``python -c``: (lines, first line number); OSError (with what to do)
    when there is none."""
    try:
        return _file_source_lines(function)
    except (OSError, TypeError):
        pass
    code = getattr(function, "__code__", None)
    if code is None:
        raise TypeError(f"{function!r} is not a Python function")
    with _lock:
        entry = _kept.get(id(code))
        lines = entry[1] if entry is not None and entry[0]() is code else None
    if lines is None:
        lines = _command_line_source(code)
    if lines is None or code.co_firstlineno > len(lines):
        raise OSError(_missing(function, code))
    first = code.co_firstlineno
    return inspect.getblock(lines[first - 1:]), first


def lambda_definition(function, module, first_line, indent):
    """A lambda as the frontend compiles it: the ``ast.Lambda`` of
    ``function`` among those of ``module`` (its parsed source lines, the
    first of them line ``first_line`` of the file, dedented by ``indent``
    columns) made a ``def`` that returns its body, with the lambda's own
    positions, so that errors point into the line that holds it. Several
    lambdas on one line are told apart by their parameters and by where
    the code object's first instruction after the entry sits."""
    import ast
    code = function.__code__
    names = list(code.co_varnames[:code.co_argcount])
    line = code.co_firstlineno - first_line + 1
    positions = [(start, column) for start, _, column, _ in list(code.co_positions())[1:]
                 if start is not None and column is not None]
    candidates = []
    for node in ast.walk(module):
        if not isinstance(node, ast.Lambda) or node.lineno != line:
            continue
        if [a.arg for a in node.args.args] != names:
            continue
        body = node.body
        start = (body.lineno + first_line - 1, body.col_offset + indent)
        end = (body.end_lineno + first_line - 1, body.end_col_offset + indent)
        inside = sum(1 for p in positions if start <= p < end)
        candidates.append((inside, node.col_offset, node))
    if not candidates:
        raise OSError(f"cannot find the lambda of {function.__qualname__!r} in its source "
                      f"line {code.co_firstlineno}")
    # The lambda whose body holds most of the code's instructions; of equals,
    # the innermost.
    lam = max(candidates, key=lambda c: c[:2])[2]
    returned = ast.copy_location(ast.Return(value=lam.body), lam.body)
    definition = ast.FunctionDef(name="<lambda>", args=lam.args, body=[returned],
                                 decorator_list=[], returns=None, type_comment=None)
    return ast.fix_missing_locations(ast.copy_location(definition, lam))
