"""A variable may change type where Numba's SSA form allows it
(tidal/_variable_versions.py): each group of assignments that some read sees
together is a variable of its own. A read that may see two types that do not
unify is a located error naming both."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError
from tidal._variable_versions import split_variables
from source_positions import position_of


def test_a_parameter_array_is_replaced_by_its_elements(target):
    # The shape of a points kernel: x, y = x[i][0], x[i][1].
    @cuda.jit
    def norms(x, out):
        i = cuda.grid(1)
        if i < out.size:
            x, y = x[i][0], x[i][1]
            out[i] = x * x + y * y

    points = np.array([[3.0, 4.0], [1.0, 2.0], [0.5, 0.5]])
    out = np.zeros(3)
    norms[1, 3](points, out)
    target.assert_result("norms", out, [25.0, 5.0, 0.5])


def test_a_row_then_a_number_in_one_name(target):
    @cuda.jit
    def row_means(data, out):
        i = cuda.grid(1)
        if i >= out.size:
            return
        tmp = data[i]            # a row: array(float64, 1d, C)
        s = 0.0
        for j in range(tmp.size):
            s += tmp[j]
        tmp = s / data.shape[1]  # now a float64
        out[i] = tmp

    data = np.arange(12.0).reshape(3, 4)
    out = np.zeros(3)
    row_means[1, 3](data, out)
    target.assert_result("row_means", out, data.mean(axis=1))


def test_a_variable_assigned_on_one_path_and_read_only_there(target):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < 2:
            v = a[i] * 2          # a float64, read on this path only
            out[i] = v
        else:
            v = (i, i + 1)        # a tuple, read on this path only
            out[i] = v[0] + v[1]

    out = np.zeros(4)
    k[1, 4](np.array([1.5, 2.5, 0.0, 0.0]), out)
    target.assert_result("k", out, [3.0, 5.0, 5.0, 7.0])


def test_a_device_function_parameter_takes_another_type(target):
    @cuda.jit(device=True)
    def scaled(n, factor):
        n = n * factor           # an int64 parameter becomes a float64
        return n

    @cuda.jit
    def k(out):
        out[0] = scaled(3, 0.5)
        out[1] = scaled(4, 2.0)

    out = np.zeros(2)
    k[1, 1](out)
    target.assert_result("k", out, [1.5, 8.0])


def test_types_that_unify_still_unify_across_paths(target):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if a[i] > 0:
            v = 1
        else:
            v = 2.5
        out[i] = v               # int64 and float64: one float64, as Numba's phi

    out = np.zeros(2)
    k[1, 2](np.array([1.0, -1.0]), out)
    target.assert_result("k", out, [1.0, 2.5])


def test_each_specialisation_types_its_own_versions(target):
    # The parsed function is typed again for other argument types: the
    # renaming must give the same versions.
    @cuda.jit
    def k(x, out):
        x = x[0] + x[1]
        out[0] = x

    for launches, dtype in enumerate((np.float32, np.int64, np.float64), start=1):
        out = np.zeros(1)
        k[1, 1](np.array([1, 2], dtype=dtype), out)
        target.assert_result("k", out, [3.0], launches=launches)
    assert len(k.overloads) == 3


def test_a_read_that_may_see_two_types_names_both():
    @cuda.jit
    def k(a, out):
        if a[0, 0] > 0:
            v = a[0]             # array(float64, 1d, C)
        else:
            v = 1.5
        out[0] = v

    line, column = position_of(k.py_func, "out[0] = v")
    assigned, _ = position_of(k.py_func, "v = 1.5")
    with pytest.raises(TypingError) as info:
        k[1, 1](np.ones((2, 2)), np.zeros(1))
    message = str(info.value)
    assert f":{line}:{column + len('out[0] = ')}: variable 'v' has type " in message
    assert "array(float64, 1d, C)" in message and "float64" in message
    assert f"(assigned at line {assigned})" in message
    assert "this read may see either" in message


def test_a_loop_carried_variable_keeps_one_type():
    @cuda.jit
    def k(a, out):
        v = a                    # the array on the first iteration
        for i in range(3):
            out[i] = v[0] if i == 0 else 0.0
            v = 2.0              # a number on the next: one variable
    with pytest.raises(TypingError, match=r"variable 'v' has type array\(float64, 1d, C\) and "
                                          r"cannot also hold a value of type float64"):
        k[1, 1](np.ones(3), np.zeros(3))


def _function(source):
    import ast
    return ast.parse(source).body[0]


def test_the_renaming_follows_the_definitions_reaching_each_read():
    import ast
    tree = _function(
        "def f(x, n):\n"
        "    x, y = x[0], x[1]\n"       # x: the parameter read, a new x stored
        "    for i in range(n):\n"
        "        if i:\n"
        "            t = 1\n"
        "            y += t\n"
        "        else:\n"
        "            t = (1, 2)\n"
        "            y += t[0]\n"
        "    return x + y\n")
    shared = split_variables(tree, ["x", "n"])
    names = [(node.id, node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Name)]
    assert ("x", 2) in names and ("x.1", 2) in names     # read the parameter, store x.1
    assert ("x.1", 10) in names
    assert {name for name, line in names if line in (5, 6)} >= {"t"}
    assert {name for name, line in names if line in (8, 9)} >= {"t.1"}
    assert "y" in shared                               # y += ... in a loop: one group
    # Idempotent: the frontend types one parsed tree once per specialisation.
    before = ast.dump(tree)
    split_variables(tree, ["x", "n"])
    assert ast.dump(tree) == before


def test_names_the_pass_cannot_follow_are_left_whole():
    import ast
    tree = _function(
        "def f(a):\n"
        "    v = 1\n"
        "    g = lambda: v\n"          # read by a nested scope
        "    v = (1, 2)\n"
        "    w = 1\n"
        "    w = 2.5\n"
        "    return w\n")
    split_variables(tree, ["a"])
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "v.1" not in names and "w.1" in names
