"""Copies Numba's CUDA tests into a scratch folder and rewrites their imports.

Two copies are made from the installed python3-numba:
  numba/  the tests as Numba ships them (run under NUMBA_ENABLE_CUDASIM=1,
          they give the simulator's passing set),
  tidal/  the same tests with `cuda`, the scalar types and the other names a
          user's kernel code takes from Numba routed to tidal.

In both copies the packages `cudapy` and `doc_examples` become top-level
packages of the copy (their own `numba.cuda.tests.cudapy` imports follow),
and their `__init__.py` (Numba's test loader) is left empty.

Only import statements change, and each keeps its line count, so that the
line numbers of every test and kernel stay those of Numba's file.
"""

import ast
import os
import re
import shutil

NUMBA_TESTS = "/usr/lib/python3/dist-packages/numba/cuda/tests"
PACKAGES = ("cudapy", "doc_examples")
SHIM_FOLDER = os.path.dirname(os.path.abspath(__file__))

# The scalar type names Numba exports from `numba` and `numba.types`: in the
# tidal copy they are tidal's (a name tidal lacks becomes a placeholder that
# raises on use, see tidal_names.py).
SCALAR_TYPE_NAMES = frozenset("""
    boolean bool_ byte char uchar short ushort int_ uint intc uintc long_
    ulong longlong ulonglong intp uintp ssize_t size_t
    int8 int16 int32 int64 uint8 uint16 uint32 uint64
    float16 float32 float64 float_ double complex64 complex128 void none
    b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 c8 c16
""".split())

# Names of `numba` that compile for the GPU (vectorize and guvectorize are
# used here with target='cuda'): tidal's.
GPU_NAMES_OF_NUMBA = frozenset({"cuda", "vectorize", "guvectorize"})

# `numba.cuda` submodules that are part of the user's API: tidal's. The other
# submodules (cudadrv, cudaimpl, cudadecl, descriptor, compiler, simulator,
# libdevicefuncs, vector_types, ...) are Numba internals and stay Numba's.
PUBLIC_CUDA_SUBMODULES = ("numba.cuda.random", "numba.cuda.kernels")

# The user's functions of `numba.cuda.compiler` (Numba re-exports them as
# numba.cuda.compile_ptx...): tidal.cuda's. Its other names stay Numba's.
PUBLIC_COMPILER_NAMES = {"numba.cuda.compiler": frozenset({
    "compile_ptx", "compile_ptx_for_current_device"})}

# Errors a test expects from compiling a kernel, and warnings from launching
# one: tidal's of that name.
ERROR_NAMES = {"numba.core.errors": frozenset({"TypingError", "NumbaPerformanceWarning"})}
# Numba's extension API for functions kernels call (overload with
# target='cuda'/'generic', register_jitable): tidal.extending's, which also
# registers with Numba where it is loaded, for the tests' @njit code.
EXTENSION_NAMES = {"numba.core.extending": frozenset({"overload", "register_jitable"})}
# The driver's error a user catches (test_multiprocessing's forked child):
# tidal.cuda.CudaDriverError.
DRIVER_ERROR_NAMES = {"numba.cuda.cudadrv.error": frozenset({"CudaDriverError"})}


def _lookup_statement(module, names):
    """`a = lookup('tidal', 'a'); ...`, each name found in tidal or a placeholder."""
    parts = []
    for alias in names:
        target = alias.asname or alias.name
        parts.append(f"{target} = _tidal_lookup({module!r}, {alias.name!r})")
    return "from tidal_names import lookup as _tidal_lookup; " + "; ".join(parts)


def _from_statement(module, names, level=0):
    listed = ", ".join(a.name if not a.asname else f"{a.name} as {a.asname}" for a in names)
    return f"from {'.' * level}{module} import {listed}"


def _rewrite_import_from(node, for_tidal):
    """The statements that replace one `from X import ...`, or None to keep it."""
    module = node.module or ""
    if node.level:
        return None
    # The test packages themselves become top-level packages of the copy.
    for package in PACKAGES:
        prefix = f"numba.cuda.tests.{package}"
        if module == prefix or module.startswith(prefix + "."):
            return [_from_statement(package + module[len(prefix):], node.names)]
    if not for_tidal:
        return None
    if module == "numba.cuda.testing":
        return [_from_statement("testing_for_tidal", node.names)]
    if module in ("numba", "numba.types"):
        to_tidal = [a for a in node.names
                    if a.name in SCALAR_TYPE_NAMES or (module == "numba" and a.name in GPU_NAMES_OF_NUMBA)]
        to_numba = [a for a in node.names if a not in to_tidal]
        statements = []
        if to_tidal:
            statements.append(_lookup_statement("tidal", to_tidal))
        if to_numba:
            statements.append(_from_statement(module, to_numba))
        return statements
    if module == "numba.cuda":
        return [_lookup_statement("tidal.cuda", node.names)]
    for public in PUBLIC_CUDA_SUBMODULES:
        if module == public or module.startswith(public + "."):
            return [_lookup_statement("tidal" + module[len("numba"):], node.names)]
    for names, tidal_module in ((ERROR_NAMES, "tidal.errors"),
                                (PUBLIC_COMPILER_NAMES, "tidal.cuda"),
                                (DRIVER_ERROR_NAMES, "tidal.cuda"),
                                (EXTENSION_NAMES, "tidal.extending")):
        if module not in names:
            continue
        to_tidal = [a for a in node.names if a.name in names[module]]
        to_numba = [a for a in node.names if a not in to_tidal]
        statements = []
        if to_tidal:
            statements.append(_lookup_statement(tidal_module, to_tidal))
        if to_numba:
            statements.append(_from_statement(module, to_numba))
        return statements
    return None


# In a program held in a string (test_print runs `python -c` on one,
# test_libdevice exec()s one).
CUDA_IMPORTS_IN_STRING = [
    (re.compile(r"^(\s*)from numba import cuda(\s*)$"), r"\1from tidal import cuda\2"),
    (re.compile(r"^(\s*)from numba\.cuda import "), r"\1from tidal.cuda import "),
]


def rewrite_source(source, for_tidal):
    """The source with its import statements rewritten, line numbers kept."""
    lines = source.splitlines(keepends=True)
    replacements = []
    tree = ast.parse(source)
    if for_tidal:
        # Programs in string literals: their `from numba import cuda` lines.
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.end_lineno > node.lineno:
                for index in range(node.lineno, node.end_lineno - 1):
                    for pattern, replacement in CUDA_IMPORTS_IN_STRING:
                        lines[index] = pattern.sub(replacement, lines[index])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            statements = _rewrite_import_from(node, for_tidal)
            if statements is not None:
                replacements.append((node, statements))
    # From the last statement up, so that earlier positions stay valid.
    replacements.sort(key=lambda item: (item[0].lineno, item[0].col_offset), reverse=True)
    for node, statements in replacements:
        first, last = node.lineno - 1, node.end_lineno - 1
        head = lines[first][:node.col_offset]
        tail = lines[last][node.end_col_offset:]
        text = head + "; ".join(statements) + tail.rstrip("\n") + "\n"
        # Blank lines keep the statements after it on their lines.
        lines[first:last + 1] = [text] + ["\n"] * (last - first)
    return "".join(lines)


def copy_suite(scratch, for_tidal):
    """Copies the two test packages under `scratch`, rewritten; returns `scratch`."""
    if os.path.isdir(scratch):
        shutil.rmtree(scratch)
    os.makedirs(scratch)
    for package in PACKAGES:
        source_folder = os.path.join(NUMBA_TESTS, package)
        for folder, subfolders, files in os.walk(source_folder):
            subfolders[:] = [s for s in subfolders if s != "__pycache__"]
            relative = os.path.relpath(folder, NUMBA_TESTS)
            os.makedirs(os.path.join(scratch, relative), exist_ok=True)
            for name in files:
                source_path = os.path.join(folder, name)
                target_path = os.path.join(scratch, relative, name)
                if name == "__init__.py" and folder == source_folder:
                    open(target_path, "w").close()
                elif name.endswith(".py"):
                    with open(source_path) as source:
                        text = rewrite_source(source.read(), for_tidal)
                    with open(target_path, "w") as target:
                        target.write(text)
                else:
                    shutil.copyfile(source_path, target_path)
    if for_tidal:
        for shim in ("tidal_names.py", "testing_for_tidal.py"):
            shutil.copyfile(os.path.join(SHIM_FOLDER, shim), os.path.join(scratch, shim))
    return scratch
