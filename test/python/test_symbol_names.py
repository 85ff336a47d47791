"""Symbols made from a user's names (frontend::symbolName, issue 27 §2): a
lambda's '<lambda>', non-ASCII identifiers, names of exec'd code and record
field names become legal symbols on every target, and no name reaches the
NVPTX backend's fatal error ("Symbol name with unsupported characters",
which ended the interpreter); a kernel calling itself is a TypingError at
the call."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda, int32, float64
from tidal.cuda._native import native
from tidal.errors import TypingError


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


def assert_ptxas_accepts(ptx, tmp_path):
    if _ptxas() is None:
        return
    path = tmp_path / "compiled.ptx"
    path.write_text(ptx)
    done = subprocess.run([str(_ptxas()), "-arch=sm_75", "-c", str(path), "-o", os.devnull],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_symbol_name_keeps_identifiers_and_escapes_the_rest():
    assert native.symbol_name("plain_name2") == "plain_name2"
    assert native.symbol_name("<lambda>") == "$3clambda$3e"
    assert native.symbol_name("é") == "$c3$a9"  # its UTF-8 bytes
    assert native.symbol_name("2x") == "$32x"  # no leading digit
    assert native.symbol_name("") == "$"
    names = ["<lambda>", "$3clambda$3e", "a.b", "a_b", "a b", "ab", "é", "e", "1", "_1"]
    symbols = [native.symbol_name(n) for n in names]
    assert len(set(symbols)) == len(names)  # no two names meet
    assert all(re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", s) for s in symbols)


def test_compile_ptx_of_a_lambda(target, tmp_path):
    # The reproducer: this aborted the process (LLVM ERROR).
    ptx, resty = cuda.compile_ptx(lambda x: x, (int32,), device=True)
    assert resty == int32
    assert re.search(r"\.visible \.func  \(\.param \.b32 func_retval0\) "
                     r"\$3clambda\$3e_int32\(", ptx), ptx
    assert_ptxas_accepts(ptx, tmp_path)
    ptx, resty = cuda.compile(lambda x: x + 1.0, (float64,))  # the C ABI
    assert resty == float64 and ") $3clambda$3e(" in ptx
    assert_ptxas_accepts(ptx, tmp_path)


def test_an_abi_name_that_ptx_cannot_hold_is_an_error(target):
    with pytest.raises(TypeError, match=r"the symbol 'my func' of the device function is not "
                                         r"a PTX name"):
        cuda.compile(lambda x: x, (int32,), abi_info={"abi_name": "my func"})
    with pytest.raises(TypeError, match=r"the symbol '1st' .* not starting with a digit"):
        cuda.compile(lambda x: x, (int32,), abi_info={"abi_name": "1st"})


def test_compile_ptx_of_a_kernel_with_a_non_ascii_name(target, tmp_path):
    def größe(a):
        a[0] = 1

    ptx, _ = cuda.compile_ptx(größe, (int32[::1],))
    assert f".visible .entry {native.symbol_name('größe')}(" in ptx
    assert_ptxas_accepts(ptx, tmp_path)


@cuda.jit(device=True)
def verdoppeln_ä(v):
    return 2 * v


add_one = cuda.jit(device=True)(lambda v: v + 1)


@cuda.jit
def ядро(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = verdoppeln_ä(x[i]) + add_one(x[i])


def test_kernels_and_device_functions_with_such_names_run(target):
    x = np.arange(8, dtype=np.int64)
    out = np.zeros(8, np.int64)
    ядро[1, 8](out, x)
    if target.computes:
        assert (out == 3 * x + 1).all()
    sig = ядро.signatures[0]
    if target.name == "cuda":
        assert f".entry {native.symbol_name('ядро')}(" in ядро.inspect_asm(sig)


EXECD = '''
from tidal import cuda


@cuda.jit(device=True)
def λ(v):
    return v * v


@cuda.jit
def κ(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = λ(i)
'''


def test_kernels_of_execd_code_with_such_names_run(target):
    namespace = {}
    exec(compile(EXECD, "<fuzzed cell>", "exec"), namespace)
    out = np.zeros(4, np.int64)
    namespace["κ"][1, 4](out)
    if target.computes:
        assert out.tolist() == [0, 1, 4, 9]


@cuda.jit(device=True)
def field_sum(r):
    return r["x-y"] + r["ü z"]


@cuda.jit
def sum_fields(records, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = field_sum(records[i])


def test_record_fields_that_are_not_identifiers(target):
    # A device function specialised for the record spells its fields in
    # its symbol.
    records = np.zeros(4, np.dtype([("x-y", np.int32), ("ü z", np.int32)]))
    records["x-y"] = [1, 2, 3, 4]
    records["ü z"] = 10
    out = np.zeros(4, np.int32)
    sum_fields[1, 4](records, out)
    if target.computes:
        assert out.tolist() == [11, 12, 13, 14]


ABORTED = '''
from tidal import cuda, int32
ptx, _ = cuda.compile_ptx(lambda x: x, (int32,), device=True)
print("compiled", len(ptx) > 0)
'''


def test_no_fatal_error_ends_the_process():
    # In a child, so that a regression shows as a status, not as pytest dying.
    from child_processes import python_environment
    done = subprocess.run([sys.executable, "-c", ABORTED], env=python_environment(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "compiled True" in done.stdout, done.stderr
    assert "LLVM ERROR" not in done.stderr


@cuda.jit
def calls_itself(out, n):
    i = cuda.grid(1)
    if i >= out.size:
        return
    if n > 0:
        calls_itself(out, n - 1)
    out[i] = n


@cuda.jit
def calls_back(out):
    reaches_back(out)


@cuda.jit
def reaches_back(out):
    calls_back(out)


@cuda.jit
def fill(out):
    out[cuda.grid(1)] = 7


@cuda.jit
def calls_another(out):
    fill(out)  # another kernel: compiled as a device function, as Numba does


def test_a_kernel_calling_itself_is_a_typing_error_at_the_call(target):
    line = calls_itself.py_func.__code__.co_firstlineno + 6  # from the decorator
    with pytest.raises(TypingError, match=rf"test_symbol_names.py:{line}:9: kernel "
                                          r"'calls_itself' cannot call itself: kernels are "
                                          r"launched from the host"):
        calls_itself[1, 4](np.zeros(4, np.int64), 3)
    # Through another kernel: the call that reaches it again.
    line = reaches_back.py_func.__code__.co_firstlineno + 2
    with pytest.raises(TypingError, match=rf"test_symbol_names.py:{line}:5: kernel "
                                          r"'calls_back' cannot call itself"):
        calls_back[1, 1](np.zeros(1, np.int64))
    out = np.zeros(4, np.int64)
    calls_another[1, 4](out)
    if target.computes:
        assert (out == 7).all()
