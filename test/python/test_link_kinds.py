"""What link= takes besides CUDA C++, LLVM IR and PTX (test_cxx_functions.py
has those): binaries for the CUDA driver's linker (.cubin, .fatbin, .o, .a
and cuda.Cubin, Fatbin, Object, Archive), linked on the cuda target by
cuLinkAddData with their CUjitInputType and refused on the cpu target
saying why and what to link instead; LTO-IR (tidal's, LLVM bitcode, linked
on both targets; NVVM's, refused: it needs nvJitLink); include directories
of a linked .cu (its own folder, then Numba's extra search paths); the
standard CUDA typedefs without an include."""

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda, int32, uint32, void
from tidal.errors import CompileError

# The binaries: as the driver's linker reads them only on a GPU, these are
# their headers followed by a string table that names 'twice' (the mock
# driver takes a binary's names as the symbols it defines).
STRINGS = b"\0.text.twice\0twice\0"
BINARIES = {
    "cubin": (b"\x7fELF\x02\x01\x01" + b"\0" * 9 + STRINGS, "Cubin", 0, "a cubin"),
    "fatbin": (b"\x50\xed\x55\xba\x01\x00\x10\x00" + STRINGS, "Fatbin", 2, "a fatbin"),
    "o": (b"\x7fELF\x02\x01\x01" + b"\0" * 9 + STRINGS, "Object", 3, "an object file"),
    "a": (b"!<arch>\n" + STRINGS, "Archive", 4, "an archive of object files"),
}


def twice_kernel(twice):
    @cuda.jit
    def doubled_by_binary(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = twice(i)
    return doubled_by_binary


def as_link(tmp_path, suffix, form):
    data, class_name, _, _ = BINARIES[suffix]
    if form == "file":
        path = tmp_path / f"twice.{suffix}"
        path.write_bytes(data)
        return str(path), str(path)
    return getattr(cuda, class_name)(data, name=f"twice-{suffix}"), f"twice-{suffix}"


@pytest.mark.parametrize("form", ["file", "object"])
@pytest.mark.parametrize("suffix", sorted(BINARIES))
def test_binaries_are_linked_by_the_driver_on_the_cuda_target(target, tmp_path, suffix, form):
    link, name = as_link(tmp_path, suffix, form)
    _, _, input_type, what = BINARIES[suffix]
    kernel = twice_kernel(cuda.declare_device("twice", "int32(int32)", link=[link]))
    out = np.zeros(16, dtype=np.int32)
    if target.name == "cpu":
        with pytest.raises(CompileError) as error:
            kernel[1, 16](out)
        message = str(error.value)
        assert f"cannot link {name} on the cpu target: it is {what} of GPU machine code" in message
        assert "link the CUDA C++ source it was compiled from (a .cu file or cuda.CUSource)" \
            in message
        assert "test_link_kinds.py" in message and "twice(i)" in message  # at the call
        return
    kernel[1, 16](out)
    target.assert_result("doubled_by_binary", out, 2 * np.arange(16))
    if target.mock:
        # The kernel's PTX (CU_JIT_INPUT_PTX, 1), then the binary with its type.
        added = target.driver_calls("cuLinkAddData_v2")
        assert [(c["type"], c["name"]) for c in added] == [
            (1, "the PTX of kernel 'doubled_by_binary'"), (input_type, name)]
        assert added[1]["bytes"] == len(BINARIES[suffix][0])
        (complete,) = target.driver_calls("cuLinkComplete")
        assert complete["result"] == 0 and complete["inputs"][1] == name
        # The call stays a call: the driver's linker resolves it.
        ptx = next(iter(kernel.inspect_asm().values()))
        assert ".extern .func" in ptx and "twice" in ptx


def test_a_binary_the_calls_do_not_need_runs_on_every_target(target, tmp_path):
    link, _ = as_link(tmp_path, "cubin", "file")

    @cuda.jit(link=[link])
    def plain(out):
        out[0] = 7

    out = np.zeros(1, dtype=np.int32)
    plain[1, 1](out)
    target.assert_result("plain", out, [7])


def test_a_symbol_no_binary_defines_is_the_linkers_error(target, tmp_path):
    data = BINARIES["cubin"][0].replace(b"twice", b"thrice")
    path = tmp_path / "thrice.cubin"
    path.write_bytes(data)
    kernel = twice_kernel(cuda.declare_device("twice", "int32(int32)", link=[str(path)]))
    out = np.zeros(4, dtype=np.int32)
    if target.name == "cpu":
        with pytest.raises(CompileError, match="it is a cubin of GPU machine code"):
            kernel[1, 4](out)
        return
    with pytest.raises(Exception, match="Undefined reference to 'twice'"):
        kernel[1, 4](out)


@pytest.mark.parametrize("suffix", sorted(BINARIES))
def test_a_binary_that_is_not_one_is_refused_when_linked(tmp_path, suffix):
    path = tmp_path / f"notes.{suffix}"
    path.write_bytes(b"these are notes\n")
    _, class_name, _, _ = BINARIES[suffix]
    what = {"cubin": "a cubin", "fatbin": "a fatbin", "o": "an object file",
            "a": "an archive"}[suffix]
    with pytest.raises(ValueError, match=f"cannot link '.*notes.{suffix}': it is not {what}"):
        cuda.declare_device("twice", "int32(int32)", link=[str(path)])
    with pytest.raises(ValueError, match=f"cannot link 'notes': it is not {what}"):
        cuda.declare_device("twice", "int32(int32)",
                            link=[getattr(cuda, class_name)(b"these are notes", name="notes")])
    with pytest.raises(TypeError, match=f"{class_name} data must be bytes"):
        cuda.declare_device("twice", "int32(int32)", link=[getattr(cuda, class_name)("text")])


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no CUDA toolkit's ptxas here to make a cubin")
def test_a_cubin_that_ptxas_made_links(target, tmp_path):
    from test_cxx_functions import TWICE_PTX
    ptx = tmp_path / "twice.ptx"
    ptx.write_text(TWICE_PTX)
    cubin = tmp_path / "twice.cubin"
    subprocess.run([str(_ptxas()), "-arch=sm_75", "-c", str(ptx), "-o", str(cubin)], check=True)
    kernel = twice_kernel(cuda.declare_device("twice", "int32(int32)", link=[str(cubin)]))
    out = np.zeros(8, dtype=np.int32)
    if target.name == "cpu":
        with pytest.raises(CompileError, match="it is a cubin of GPU machine code"):
            kernel[1, 8](out)
        return
    kernel[1, 8](out)
    target.assert_result("doubled_by_binary", out, 2 * np.arange(8))


# --- LTO-IR -------------------------------------------------------------------------------

def test_nvvms_ltoir_is_refused_saying_nvjitlink_is_needed(tmp_path):
    nvvm = (0x7F4E43ED).to_bytes(4, "little") + b"\0" * 28
    with pytest.raises(ValueError, match="cannot link LTO-IR 'lib': it is NVVM's LTO-IR .* only "
                                         "NVIDIA's nvJitLink links, and tidal does not use "
                                         "nvJitLink; link the CUDA C\\+\\+ it was compiled from"):
        cuda.declare_device("twice", "int32(int32)", link=[cuda.LTOIR(nvvm, name="lib")])
    path = tmp_path / "other.ltoir"
    path.write_bytes(b"not bitcode at all")
    with pytest.raises(ValueError, match="it is not LLVM bitcode, which only NVIDIA's nvJitLink"):
        cuda.declare_device("twice", "int32(int32)", link=[str(path)])


def times_three(x):
    return 3 * x


@pytest.mark.parametrize("form", ["object", "file"])
def test_tidals_ltoir_links_on_every_target(target, tmp_path, form):
    code, _ = cuda.compile(times_three, int32(int32), output="ltoir",
                           abi_info={"abi_name": "times_three_i32"})
    if form == "file":
        path = tmp_path / "times_three.ltoir"
        path.write_bytes(code)
        link = str(path)
    else:
        link = cuda.LTOIR(code, name="times_three")
    thrice = cuda.declare_device("times_three_i32", "int32(int32)", abi="c", link=[link])

    @cuda.jit
    def tripled(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = thrice(i)

    out = np.zeros(16, dtype=np.int32)
    tripled[1, 16](out)
    target.assert_result("tripled", out, 3 * np.arange(16))
    # Linked in IR before code generation: inlined, no call left.
    ptx = next(iter(tripled.inspect_asm().values()))
    assert "times_three_i32" not in ptx and "call" not in ptx


def test_code_objects_from_paths(tmp_path):
    path = tmp_path / "twice.cubin"
    path.write_bytes(BINARIES["cubin"][0])
    code = cuda.LinkableCode.from_path(str(path))
    assert isinstance(code, cuda.Cubin) and code.name == "twice" and code.data == path.read_bytes()
    assert cuda.LinkableCode.from_path_or_obj(code) is code
    with pytest.raises(ValueError, match="Don't know how to link"):
        cuda.LinkableCode.from_path(str(tmp_path / "twice.xyz"))


# --- CUDA C++ linked: include directories and typedefs -----------------------------------------

SAXPY_CU = """#include "scale.cuh"      // beside this file
#include <add.cuh>          // an extra search path
extern "C" __device__ int saxpy(float *ret, float a, float x, float y) {
  size_t one = 1; uint32_t two = 2; int64_t three = 3; uint8_t four = 4;   // no include
  *ret = myadd(mymul(a, x), y) + (float)(one + two + three + four) - 10.0f;
  return 0;
}
"""


def test_linked_cu_files_find_includes_as_numba_cuda(target, tmp_path, monkeypatch):
    # numba-cuda's doc_examples test_ex_extra_includes shape: the file's own
    # folder first, then CUDA_NVRTC_EXTRA_SEARCH_PATHS (colon-separated).
    (tmp_path / "ffi").mkdir()
    (tmp_path / "include").mkdir()
    (tmp_path / "ffi" / "scale.cuh").write_text(
        "template <typename T> __device__ T mymul(T a, T b) { return a * b; }\n")
    (tmp_path / "include" / "add.cuh").write_text(
        "template <typename T> __device__ T myadd(T a, T b) { return a + b; }\n")
    saxpy_cu = tmp_path / "ffi" / "saxpy.cu"
    saxpy_cu.write_text(SAXPY_CU)
    monkeypatch.setenv("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS",
                       f"{tmp_path / 'nowhere'}:{tmp_path / 'include'}")
    saxpy = cuda.declare_device("saxpy", "float32(float32, float32, float32)",
                                link=[str(saxpy_cu)])

    @cuda.jit
    def vector_saxpy(a, x, y, res):
        i = cuda.grid(1)
        if i < len(res):
            res[i] = saxpy(a, x[i], y[i])

    x = np.arange(64, dtype=np.float32)
    y = np.ones(64, dtype=np.float32)
    res = np.zeros(64, dtype=np.float32)
    vector_saxpy[2, 32](np.float32(3.0), x, y, res)
    target.assert_result("vector_saxpy", res, 3 * x + y)


def test_without_the_search_path_the_include_is_clangs_error(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", raising=False)
    path = tmp_path / "needs_add.cu"
    path.write_text('#include <add_missing.cuh>\nextern "C" __device__ int f(int *r) '
                    '{ *r = 1; return 0; }\n')
    f = cuda.declare_device("f", "int32()", link=[str(path)])

    @cuda.jit
    def calls_f(out):
        out[0] = f()

    with pytest.raises(CompileError, match="needs_add.cu:1:10: .*'add_missing.cuh' file not found"):
        calls_f[1, 1](np.zeros(1, dtype=np.int32))


def test_cuda_typedefs_need_no_include(target):
    source = cuda.CUSource(
        'extern "C" __device__ int sizes(int *r) {\n'
        '  *r = sizeof(size_t) * 1000 + sizeof(uint32_t) * 100 + sizeof(int16_t) * 10\n'
        '       + sizeof(uint8_t) + (sizeof(ptrdiff_t) == 8) + (sizeof(uintptr_t) == 8);\n'
        '  return 0;\n}\n', name="sizes.cu")
    sizes = cuda.declare_device("sizes", "int32()", link=[source])

    @cuda.jit
    def read_sizes(out):
        out[0] = sizes()

    out = np.zeros(1, dtype=np.int32)
    read_sizes[1, 1](out)
    target.assert_result("read_sizes", out, [8000 + 400 + 20 + 1 + 2])


def test_compile_all_lists_what_the_drivers_linker_takes(tmp_path):
    # numba-cuda's test_compile_all_with_external_functions: the function's
    # code, then each PTX or binary file as a code object of its kind.
    from test_cxx_functions import TWICE_PTX
    ptx = tmp_path / "twice.ptx"
    ptx.write_text(TWICE_PTX)
    cubin, _ = as_link(tmp_path, "cubin", "file")
    for link, kind in ((str(ptx), cuda.PTXSource), (cubin, cuda.Cubin)):
        twice = cuda.declare_device("twice", "uint32(uint32)", link=[link])

        def f(z, x):
            z[0] = twice(x)

        codes, result = cuda.compile_all(f, (uint32[::1], uint32), device=False, abi="numba",
                                         output="ptx")
        assert result is void and len(codes) == 2
        assert ".extern .func" in codes[0] and "twice" in codes[0]
        assert isinstance(codes[1], kind) and codes[1].name == link
        assert codes[1].data == (TWICE_PTX if kind is cuda.PTXSource else
                                 BINARIES["cubin"][0])
        ptx_only, _ = cuda.compile_ptx(f, (uint32[::1], uint32))  # the function's own
        # (LLVM numbers call sequences across the process's compiles.)
        assert re.sub(r"callseq \d+", "", ptx_only) == re.sub(r"callseq \d+", "", codes[0])
    # Linked CUDA C++ is compiled into the function's own code: one code.
    cu = tmp_path / "twice.cu"
    cu.write_text('extern "C" __device__ int twice(unsigned *r, unsigned x) '
                  '{ *r = 2 * x; return 0; }\n')
    twice = cuda.declare_device("twice", "uint32(uint32)", link=[str(cu)])

    def g(z, x):
        z[0] = twice(x)

    codes, _ = cuda.compile_all(g, (uint32[::1], uint32), device=False, abi="numba",
                                output="ptx")
    assert len(codes) == 1 and ".extern" not in codes[0]
