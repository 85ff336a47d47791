"""Loop variables that several ``for`` loops reuse, each loop's its own.

Numba types a function in SSA form, so ``for v in (a, b): ...`` followed by
``for v in (c, d): ...`` may give ``v`` another type in each loop. tidal
types a variable once per function; the frontend (pyfrontend/TypeFunction.cpp)
calls ``split_loop_variables`` on the parsed function first, which renames
the variable of each such loop after the first (``v.1``, ``v.2``: names no
Python program can write, and Numba's spelling of SSA versions) where that
cannot change what the program reads: every store of the name is a ``for``
target, no loop binding it nests in another, and every read of it is in the
body of one of those loops (not in its ``else``, nor after it)."""

import ast


def _binding_loops(function_def):
    """{name: [For nodes whose target binds it]}, and the names stored otherwise."""
    loops, other_stores, target_ids = {}, set(), set()
    for node in ast.walk(function_def):
        if isinstance(node, ast.For):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    target_ids.add(id(name))
                    loops.setdefault(name.id, [])
                    if node not in loops[name.id]:
                        loops[name.id].append(node)
    for node in ast.walk(function_def):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) \
                and id(node) not in target_ids:
            other_stores.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            other_stores.update(node.names)
    return loops, other_stores


def _reads_in(nodes, name):
    return [n for tree in nodes for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def split_loop_variables(function_def, parameter_names):
    loops, other_stores = _binding_loops(function_def)
    for name, binding in loops.items():
        if len(binding) < 2 or name in other_stores or name in parameter_names:
            continue
        # No loop binding the name inside another's body or else.
        inner = {id(n) for loop in binding for n in ast.walk(ast.Module(loop.body + loop.orelse, []))}
        if any(id(loop) in inner for loop in binding):
            continue
        in_bodies = {id(n) for loop in binding for n in _reads_in(loop.body, name)}
        if any(id(n) not in in_bodies for n in _reads_in([function_def], name)):
            continue
        for version, loop in enumerate(binding[1:], start=1):
            renamed = f"{name}.{version}"
            for node in [*ast.walk(loop.target), *_reads_in(loop.body, name)]:
                if isinstance(node, ast.Name) and node.id == name:
                    node.id = renamed
