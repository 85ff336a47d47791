"""The shape of the tidal package: every module imports on its own, in a
fresh interpreter, and no module imports another that imports it back
(directly or through others, counting imports inside functions too).
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tidal

PACKAGE_ROOT = Path(tidal.__file__).resolve().parent


def package_modules():
    """{dotted name: source path} of every Python module of the package."""
    modules = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = package_modules()


def imported_modules(name, path):
    """The modules of the package that module `name` imports anywhere in its
    source (at its top or inside a function)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                # `from . import streams` imports the module tidal.cuda.streams
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in MODULES else source)
    return {module for module in found if module in MODULES and module != name}


def import_graph():
    return {name: imported_modules(name, path) for name, path in MODULES.items()}


def find_cycle(graph):
    """A list of modules that import each other in a ring, or None. Packages
    are left out: importing a module runs its package's __init__ first, which
    then imports the package's modules by design."""
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    state = {}  # name -> "open" while on the current path, "done" after

    def visit(name, path):
        state[name] = "open"
        for target in sorted(graph[name] - packages):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target, path + [target])
                if cycle:
                    return cycle
        state[name] = "done"
        return None

    for name in sorted(set(graph) - packages):
        if name not in state:
            cycle = visit(name, [name])
            if cycle:
                return cycle
    return None


def test_the_package_has_the_modules_this_test_reads():
    # The test reads the package where it is imported from; a typo in the
    # walk would make the cycle test pass on nothing.
    assert {"tidal", "tidal.cuda", "tidal.cuda.target", "tidal.cuda.streams",
            "tidal.cuda.devices", "tidal.cuda.device_arrays", "tidal.cuda.interop",
            "tidal.cuda._native"} <= set(MODULES)
    graph = import_graph()
    assert "tidal.cuda.target" in graph["tidal.cuda.streams"]
    assert "tidal.cuda.streams" in graph["tidal.cuda.devices"]


def test_no_module_imports_itself_through_others():
    assert find_cycle(import_graph()) is None


def test_the_cycle_finder_finds_a_ring():
    graph = {name: set() for name in MODULES}
    graph["tidal.cuda.devices"] = {"tidal.cuda.streams"}
    graph["tidal.cuda.streams"] = {"tidal.cuda.target"}
    graph["tidal.cuda.target"] = {"tidal.cuda.devices"}
    assert find_cycle(graph) == ["tidal.cuda.devices", "tidal.cuda.streams",
                                 "tidal.cuda.target", "tidal.cuda.devices"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_alone_in_a_fresh_interpreter(module):
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT.parent))
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_launch_limits_come_from_the_extension():
    from tidal import _tidal
    from tidal.cuda import _native, dispatcher
    assert _native.MAX_THREADS_PER_BLOCK == _tidal.MAX_THREADS_PER_BLOCK == 1024
    assert _native.MAX_BLOCK_DIM == _tidal.MAX_BLOCK_DIM == (1024, 1024, 64)
    assert _native.MAX_GRID_DIM == _tidal.MAX_GRID_DIM == (2**31 - 1, 65535, 65535)
    assert dispatcher.MAX_BLOCK_DIM is _tidal.MAX_BLOCK_DIM
