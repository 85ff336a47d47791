"""Versions of a local variable: one per group of assignments that reach common reads.

Numba types a function in SSA form: each assignment of a name makes a version
of it, and a read sees the versions that reach it (merged by a phi where
several do). So ``x, y = x[i][0], x[i][1]`` after an array parameter ``x``
gives a new ``x`` of another type, a variable assigned on one path and read
only there is typed on that path alone, and ``for v in (a, b): ...`` followed
by ``for v in (c, d): ...`` may give ``v`` another type in each loop.

tidal types a variable once per function. The frontend
(pyfrontend/TypeFunction.cpp) calls ``split_variables`` on the parsed
function first. It finds the assignments that reach each read (a data-flow
pass over the structured statements: branches join, loops run to a fixed
point, ``break``/``continue``/``return`` end a path), groups the assignments
that one read may see together (the "webs" of a register allocator), and
renames each group after the first: ``x.1``, ``x.2`` (names no Python program
can write, and Numba's spelling of versions; errors show ``x``). The groups
of one name are then typed apart; within a group types unify as before, and a
read that may see two types that do not unify is the error, located at that
read (``split_variables`` returns one such read per group).

A name is left whole where the pass would not see every read and write of
it: names that nested functions, lambdas or comprehensions use, ``global``,
``nonlocal``, ``del`` and ``:=`` targets. A function holding a statement the
pass does not follow (``try``, ``with``, ``match``, imports: kernels refuse
them anyway) is left as it is. Renaming is idempotent: the frontend parses a
function once and may type the same tree again for another specialisation.
"""

import ast

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Unfollowed(Exception):
    """A statement the pass does not follow: leave the function as it is."""


def _names_left_whole(function_def):
    """Names whose reads and writes the pass would not all see."""
    left = set()

    def scope_names(node):
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name):
                left.add(inner.id)
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                left.add(inner.name)

    for node in ast.walk(function_def):
        if node is not function_def and isinstance(node, _NESTED_SCOPES):
            scope_names(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            left.update(node.names)
        elif isinstance(node, ast.Delete):
            left.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            left.add(node.target.id)
    return left


def _join(*states):
    """The definitions reaching a point that several paths reach (None: no path)."""
    joined = None
    for state in states:
        if state is None:
            continue
        if joined is None:
            joined = dict(state)
            continue
        for name, definitions in state.items():
            joined[name] = joined.get(name, frozenset()) | definitions
    return joined


class _ReachingDefinitions:
    """Which assignments (Name nodes, or a parameter) reach each read."""

    def __init__(self, left_whole):
        self.left_whole = left_whole
        self.reads = {}        # id(Name) -> (Name, set of definition keys)
        self.definitions = {}  # definition key -> Name node (None: a parameter)
        self.loops = []        # innermost last: (break states, continue states)

    # -- expressions and targets ---------------------------------------------------

    def load(self, node, state):
        if node.id in self.left_whole:
            return
        seen = self.reads.setdefault(id(node), (node, set()))[1]
        if state is not None:
            seen.update(state.get(node.id, ()))

    def expression(self, node, state):
        if node is None:
            return
        pending = [node]
        while pending:
            inner = pending.pop()
            if isinstance(inner, _NESTED_SCOPES):
                continue  # its names are left whole
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                self.load(inner, state)
            pending.extend(ast.iter_child_nodes(inner))

    def target(self, node, state):
        if isinstance(node, ast.Name):
            if node.id not in self.left_whole:
                self.definitions[id(node)] = node
                state[node.id] = frozenset([id(node)])
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.target(element, state)
        elif isinstance(node, ast.Starred):
            self.target(node.value, state)
        else:  # a subscript or an attribute: reads what it stores into
            self.expression(node, state)

    # -- statements ----------------------------------------------------------------

    def body(self, statements, state):
        for statement in statements:
            # Code after a return still gets typed: walk it from nothing.
            state = self.statement(statement, {} if state is None else state)
        return state

    def statement(self, node, state):
        if isinstance(node, ast.Assign):
            self.expression(node.value, state)
            for target in node.targets:
                self.target(target, state)
        elif isinstance(node, ast.AugAssign):
            self.expression(node.value, state)
            if isinstance(node.target, ast.Name):
                # One node reads and writes: the read's definitions and this
                # one form one group.
                self.load(node.target, state)
                self.target(node.target, state)
                if node.target.id not in self.left_whole:
                    self.reads[id(node.target)][1].add(id(node.target))
            else:
                self.expression(node.target, state)
        elif isinstance(node, ast.AnnAssign):
            self.expression(node.value, state)
            if node.value is not None:
                self.target(node.target, state)
        elif isinstance(node, (ast.Expr, ast.Assert)):
            for child in ast.iter_child_nodes(node):
                self.expression(child, state)
        elif isinstance(node, (ast.Return, ast.Raise)):
            for child in ast.iter_child_nodes(node):
                self.expression(child, state)
            return None
        elif isinstance(node, ast.If):
            self.expression(node.test, state)
            return _join(self.body(node.body, dict(state)), self.body(node.orelse, dict(state)))
        elif isinstance(node, ast.While):
            endless = isinstance(node.test, ast.Constant) and bool(node.test.value)
            return self.loop(node, state, lambda head: self.expression(node.test, head),
                             endless=endless)
        elif isinstance(node, ast.For):
            self.expression(node.iter, state)
            return self.loop(node, state, lambda head: None, node.target)
        elif isinstance(node, (ast.Break, ast.Continue)):
            if not self.loops:
                raise _Unfollowed
            self.loops[-1][isinstance(node, ast.Continue)].append(state)
            return None
        elif isinstance(node, (ast.Pass, ast.Global, ast.Nonlocal, ast.Delete,
                               ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pass  # their names are left whole
        else:
            raise _Unfollowed
        return state

    def loop(self, node, entry, test, target=None, endless=False):
        """A while or for loop: its head to a fixed point, then its else and
        breaks (only its breaks leave ``while True``)."""
        head = dict(entry)
        while True:
            test(head)
            self.loops.append(([], []))
            iteration = dict(head)
            if target is not None:
                self.target(target, iteration)
            end = self.body(node.body, iteration)
            breaks, continues = self.loops.pop()
            next_head = _join(entry, end, *continues)
            if next_head == head:
                break
            head = next_head
        # The loop ends when its test fails (or its iterable runs out): the
        # else runs from the head; a break skips it.
        if endless:
            return _join(*breaks)
        return _join(self.body(node.orelse, dict(head)), *breaks)


def split_variables(function_def, parameter_names):
    """Renames each group of a name's assignments after its first; returns
    {name: a read that may see two of its assignments} for the frontend's
    error where their types do not unify."""
    left_whole = _names_left_whole(function_def)
    flow = _ReachingDefinitions(left_whole)
    entry = {}
    for name in parameter_names:
        if name not in left_whole:
            key = "parameter " + name
            flow.definitions[key] = None
            entry[name] = frozenset([key])
    try:
        flow.body(function_def.body, entry)
    except _Unfollowed:
        return {}

    # 1. Group the definitions that one read may see (union-find).
    parent = {key: key for key in flow.definitions}

    def root(key):
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for _, seen in flow.reads.values():
        seen = list(seen)
        for other in seen[1:]:
            parent[root(other)] = root(seen[0])

    # 2. The groups of each name: the parameter's first, then in source order.
    def name_of(key):
        return key[len("parameter "):] if flow.definitions[key] is None else flow.definitions[key].id

    def position(key):
        node = flow.definitions[key]
        return (0, 0, 0) if node is None else (1, node.lineno, node.col_offset)

    groups = {}
    for key in flow.definitions:
        groups.setdefault(name_of(key), {}).setdefault(root(key), []).append(key)
    new_names = {}  # group root -> the name its definitions and reads take
    for name, by_root in groups.items():
        ordered = sorted(by_root, key=lambda r: min(position(k) for k in by_root[r]))
        for version, group in enumerate(ordered):
            new_names[group] = name if version == 0 or "." in name else f"{name}.{version}"

    # 3. Rename, and note a read that sees two definitions of each group.
    for key, node in flow.definitions.items():
        if node is not None:
            node.id = new_names[root(key)]
    shared_reads = {}
    for node, seen in flow.reads.values():
        if seen:
            node.id = new_names[root(next(iter(seen)))]
            if len(seen) > 1:
                shared_reads.setdefault(node.id, node)
    return shared_reads
