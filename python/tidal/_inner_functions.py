"""Functions defined inside kernels and device functions (``def`` and ``lambda``).

The frontend (pyfrontend/InnerFunctions.cpp) compiles an inner function as a
device function of its own, as Numba's inlining of closures gives the same
values. What it needs from Python is here:

- ``free_names(node)``: the names an inner function (an ``ast.FunctionDef``
  or ``ast.Lambda``) reads from the scopes around it, in the order first read
  (Python's rule: a name the function binds anywhere in its body is its own).
- ``make(node, ...)``: the Python function object that stands for one inner
  function with one set of captured variables. The frontend's types name
  compile-time objects by identity, so the object is made once per
  definition and captures and kept on the node (whose tree the frontend
  caches with the outer function's code). The variables the inner function
  captures at run time become its last parameters (``__tidal_captures__``);
  each call passes their values at that point, so a call sees the variable
  as it is then, as a Python closure does. Captured compile-time values
  (device functions, other inner functions, constants bound once) are frozen
  into it (``__tidal_bound__``), as a closure variable of a kernel is.
"""

import ast
import types

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _parameters(args):
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            names.append(extra.arg)
    return names


def _body(node):
    return [node.body] if isinstance(node, ast.Lambda) else list(node.body)


def _walk_scope(statements):
    """The nodes of one scope, not entering nested scopes (yielded themselves)."""
    pending = list(reversed(statements))
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        pending.extend(reversed(list(ast.iter_child_nodes(node))))


def _own_names(node):
    """The names a function binds: parameters, assigned names, nested defs."""
    own = set(_parameters(node.args))
    for inner in _walk_scope(_body(node)):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
            own.add(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(inner.name)
    return own


def free_names(node):
    """The names `node` reads that it does not bind, its nested functions'
    included, in the order first read."""
    cached = getattr(node, "_tidal_free_names", None)
    if cached is not None:
        return cached
    own = _own_names(node)
    found = []

    def add(name):
        if name not in own and name not in found:
            found.append(name)

    for inner in _walk_scope(_body(node)):
        if inner is node:
            continue
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
            add(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.Lambda)):
            for name in free_names(inner):
                add(name)
            # Defaults are evaluated in this scope.
            for default in inner.args.defaults + [d for d in inner.args.kw_defaults if d]:
                for n in ast.walk(default):
                    if isinstance(n, ast.Name):
                        add(n.id)
    node._tidal_free_names = found
    return found


def definition(node):
    """The ``def`` the frontend compiles: the node itself, or a lambda made
    a def that returns its body, with the lambda's positions."""
    if not isinstance(node, ast.Lambda):
        return node
    made = getattr(node, "_tidal_definition", None)
    if made is None:
        returned = ast.copy_location(ast.Return(value=node.body), node.body)
        made = ast.FunctionDef(name="<lambda>", args=node.args, body=[returned],
                               decorator_list=[], returns=None, type_comment=None)
        made = ast.fix_missing_locations(ast.copy_location(made, node))
        node._tidal_definition = made
    return made


def unsupported_signature(node):
    """What the frontend cannot take in an inner function's parameters, or None."""
    args = node.args
    if args.vararg is not None or args.kwarg is not None:
        return "*args and **kwargs"
    if args.kwonlyargs:
        return "keyword-only parameters"
    if args.posonlyargs:
        return "positional-only parameters"
    return None


def defaults(node):
    """The values of the parameters' defaults, which must be constants."""
    values = []
    for default in node.args.defaults:
        try:
            values.append(ast.literal_eval(default))
        except ValueError:
            raise ValueError(ast.unparse(default)) from None
    return tuple(values)


def make(node, globals_, filename, captures, bound):
    """The function object for `node` capturing the run-time variables
    `captures` (a tuple of names) and the compile-time values `bound`."""
    made = node.__dict__.setdefault("_tidal_made", [])
    for (c, b, function) in made:
        if c == captures and b.keys() == bound.keys() and \
                all(b[k] is bound[k] for k in b):
            return function
    definition_node = definition(node)
    names = [a.arg for a in definition_node.args.args] + list(captures)
    name = definition_node.name
    stub = f"def _tidal_inner({', '.join(names)}):\n    pass\n"
    namespace = {}
    exec(compile(stub, filename, "exec"), namespace)
    code = namespace["_tidal_inner"].__code__.replace(co_name=name, co_qualname=name)
    function = types.FunctionType(code, globals_, name, defaults(definition_node) or None)
    function.py_func = function
    function.__tidal_inner__ = True
    function.__tidal_captures__ = tuple(captures)
    function.__tidal_bound__ = dict(bound)
    made.append((tuple(captures), dict(bound), function))
    return function
