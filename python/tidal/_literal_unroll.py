"""``for v in literal_unroll(t)``: the loop's body once per element of the tuple.

Numba types such a loop's body once per distinct type of the tuple's
elements, so that ``v`` may be an int in one iteration and a float or an
array in the next. tidal copies the body once per element instead (the
results are the same): the frontend (pyfrontend/LiteralUnroll.cpp) types the
function; at the first ``literal_unroll`` loop whose tuple's length it knows,
it asks ``rebuild`` for a new tree of the function in which every loop it
knows the length of so far is unrolled, and types that tree from the start.
A nested ``literal_unroll`` loop (even over the outer loop's element) is
unrolled in its turn, in each copy. The tree the frontend shares between
specialisations is never changed: ``rebuild`` works on a copy, with the
variable versions of tidal/_variable_versions.py undone (it splits them
again, so that each copy's loop variable is a version of its own).

The loop

    for TARGET in literal_unroll(ITERABLE):
        BODY
    else:
        ORELSE

becomes, for a tuple of N elements (the tuple evaluated once):

    literal_unroll.K = ITERABLE
    TARGET = literal_unroll.K[0]
    BODY
    ...
    TARGET = literal_unroll.K[N - 1]
    BODY
    ORELSE

and where BODY holds a ``break`` or ``continue`` of this loop, each copy is
a loop over one element whose ``else`` holds the next copies, so that a
``continue`` goes on with the next element and a ``break`` skips them all
and the ``else``:

    literal_unroll.K = ITERABLE
    for literal_unroll.once in (0,):
        TARGET = literal_unroll.K[0]
        BODY
    else:
        for literal_unroll.once in (0,):
            TARGET = literal_unroll.K[1]
            ...
        else:
            ORELSE

Loops are named by a key: their position among the ``for`` loops of the
function (``ast.walk``'s order), and in a copy, the key of the unrolled loop,
the copy's index and the position in the body (``3/1/0``).
"""

import ast
import copy

KEY = "_tidal_loop_key"


def literal_unroll(container):
    """In a kernel, ``for v in literal_unroll(t)`` runs its body once per
    element of the tuple ``t``, each typed as that element is (Numba's
    literal_unroll). Called elsewhere, it returns ``container``."""
    return container


literal_unroll.__tidal_intrinsic__ = "tidal.literal_unroll"


def loop_key(function_def, loop):
    """The key of a ``for`` loop of the tree the frontend types."""
    key = getattr(loop, KEY, None)
    if key is not None:
        return key
    for index, node in enumerate(_loops(function_def)):
        if node is loop:
            return str(index)
    raise ValueError("the loop is not in the function")


def rebuild(function_def, lengths):
    """A copy of the function's tree with each loop whose key is in
    ``lengths`` (key -> the tuple's length) unrolled."""
    tree = copy.deepcopy(function_def)
    for node in ast.walk(tree):  # the versions split_variables made
        if isinstance(node, ast.Name) and "." in node.id:
            node.id = node.id.split(".")[0]
    for index, node in enumerate(_loops(tree)):
        setattr(node, KEY, str(index))
    _unroll_in(tree, lengths)
    return tree


def _loops(tree):
    return [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.AsyncFor))]


def _unroll_in(node, lengths):
    """Unrolls the decided loops among the statements under node."""
    for field, value in ast.iter_fields(node):
        if not isinstance(value, list):
            continue
        statements = []
        for item in value:
            if isinstance(item, ast.For) and getattr(item, KEY, None) in lengths:
                statements.extend(_unrolled(item, lengths))
            else:
                if isinstance(item, ast.AST):
                    _unroll_in(item, lengths)
                statements.append(item)
        setattr(node, field, statements)


def _exits_loop(body):
    """Whether a statement of body breaks or continues the loop around it
    (not a loop nested in it)."""
    pending = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            pending.extend(node.orelse)  # the else of a nested loop is ours
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        pending.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return False


def _name(text, context, at):
    return ast.copy_location(ast.Name(id=text, ctx=context), at)


def _unrolled(loop, lengths):
    key = getattr(loop, KEY)
    length = lengths[key]
    call = loop.iter
    iterable = call.args[0]
    if isinstance(iterable, ast.List):  # Numba's literal_unroll([constants])
        iterable = ast.copy_location(ast.Tuple(elts=iterable.elts, ctx=ast.Load()), iterable)
    held = "literal_unroll." + key
    statements = [ast.copy_location(
        ast.Assign(targets=[_name(held, ast.Store(), call)], value=iterable), call)]

    def copy_of(index):
        body = copy.deepcopy(loop.body)
        for position, inner in enumerate(n for s in body for n in ast.walk(s)
                                         if isinstance(n, (ast.For, ast.AsyncFor))):
            setattr(inner, KEY, f"{key}/{index}/{position}")
        element = ast.copy_location(ast.Subscript(
            value=_name(held, ast.Load(), call),
            slice=ast.copy_location(ast.Constant(value=index), call), ctx=ast.Load()), call)
        assign = ast.copy_location(
            ast.Assign(targets=[copy.deepcopy(loop.target)], value=element), loop.target)
        return [assign] + body

    if not _exits_loop(loop.body):
        for index in range(length):
            statements.extend(copy_of(index))
        statements.extend(loop.orelse)
    else:
        rest = loop.orelse
        for index in reversed(range(length)):
            once = ast.copy_location(ast.For(
                target=_name("literal_unroll.once", ast.Store(), loop),
                iter=ast.copy_location(ast.Tuple(
                    elts=[ast.copy_location(ast.Constant(value=0), loop)], ctx=ast.Load()), loop),
                body=copy_of(index), orelse=rest, type_comment=None), loop)
            setattr(once, KEY, f"{key}/once/{index}")
            rest = [once]
        statements.extend(rest)
    wrapper = ast.Module(body=statements, type_ignores=[])
    _unroll_in(wrapper, lengths)  # loops nested in the copies, in their turn
    ast.fix_missing_locations(wrapper)
    return wrapper.body
