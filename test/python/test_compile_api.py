"""numba-cuda's compile API as tidal has it (tidal/cuda/compilation.py):
the signatures and defaults of compile, compile_for_current_device,
compile_ptx, compile_ptx_for_current_device and compile_all; their errors;
a declared return type converts the inferred one; Numba's type objects in,
Numba's type objects out; output='ltoir' (tidal's LTO-IR: LLVM bitcode
that llvm-dis-19 reads and llc-19 compiles to PTX that ptxas takes);
forceinline; launch_bounds in the PTX. test_compile_ptx.py has the PTX of
kernels and device functions and the older options."""

import inspect
import re
import shutil
import subprocess
import warnings

import pytest
from ptxas_tool import assert_ptxas_accepts

from tidal import cuda, float32, int16, int32, int64, uint32, void
from tidal.errors import InvalidConfigWarning

numba_types = pytest.importorskip("numba.core.types")


def f_module(x, y):
    return x + y


def empty():
    pass




# numba-cuda's signatures (numba_cuda/numba/cuda/compiler.py): every
# parameter, in order, with its default.
NUMBA_CUDA_SIGNATURES = {
    "compile": "(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, "
               "cc=None, opt=None, abi='c', abi_info=None, output='ptx', forceinline=False, "
               "launch_bounds=None)",
    "compile_for_current_device": "(pyfunc, sig, debug=None, lineinfo=False, device=True, "
                                  "fastmath=False, opt=None, abi='c', abi_info=None, "
                                  "output='ptx', forceinline=False, launch_bounds=None)",
    "compile_ptx": "(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False, "
                   "cc=None, opt=None, abi='numba', abi_info=None, forceinline=False, "
                   "launch_bounds=None)",
    "compile_ptx_for_current_device": "(pyfunc, sig, debug=None, lineinfo=False, "
                                      "device=False, fastmath=False, opt=None, abi='numba', "
                                      "abi_info=None, forceinline=False, launch_bounds=None)",
    "compile_all": "(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, "
                   "cc=None, opt=None, abi='c', abi_info=None, output='ltoir', "
                   "forceinline=False, launch_bounds=None)",
}


@pytest.mark.parametrize("name", sorted(NUMBA_CUDA_SIGNATURES))
def test_signatures_and_defaults_are_numba_cudas(name):
    assert str(inspect.signature(getattr(cuda, name))) == NUMBA_CUDA_SIGNATURES[name]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"output": "cubin"}, NotImplementedError, "Unsupported output type: cubin"),
    ({"forceinline": True}, ValueError, "Can only designate forced inlining in LTO-IR"),
    ({"abi": "fastcall"}, NotImplementedError, "Unsupported ABI: fastcall"),
    ({"device": False}, NotImplementedError, "The C ABI is not supported for kernels"),
    ({"device": False, "abi": "numba", "forceinline": True, "output": "ltoir"}, ValueError,
     "Cannot force-inline kernels"),
    ({"abi_info": {"abi_nmae": "g"}}, ValueError,
     "abi_info has 'abi_nmae': the 'c' ABI takes one option, 'abi_name'"),
    ({"abi": "numba", "abi_info": {"abi_name": "g"}}, ValueError,
     "abi_info has 'abi_name': the 'numba' ABI takes no options"),
    ({"abi_info": {"abi_name": 3}}, TypeError, "abi_info\\['abi_name'\\] must be a str"),
    ({"abi_info": "g"}, TypeError, "abi_info must be a dict"),
    ({"cc": (9, 0, "a")}, NotImplementedError, "not the architecture-specific sm_90a"),
])
def test_option_errors_are_numba_cudas(kwargs, error, message):
    with pytest.raises(error, match=message):
        cuda.compile(f_module, int32(int32, int32), **kwargs)
    if "output" not in kwargs:  # compile_all's default output is 'ltoir'
        with pytest.raises(error, match=message):
            cuda.compile_all(f_module, int32(int32, int32), output="ptx", **kwargs)


def test_too_many_launch_bounds():
    with pytest.raises(ValueError, match="Got 4 launch bounds: \\(128, 2, 4, 8\\). A maximum "
                                         "of three are supported"):
        cuda.compile_ptx(empty, "void()", launch_bounds=(128, 2, 4, 8))


def test_a_declared_return_type_converts_the_inferred_one(tmp_path):
    # int16 + int16 is int64 (Numba's rules); numba-cuda casts to the type
    # declared, and so does tidal: a device function that converts.
    ptx, result = cuda.compile(f_module, int16(int16, int16))
    assert result is int16
    assert cuda.compile(f_module, (int16, int16))[1] is int64
    ptx, result = cuda.compile(f_module, int32(int32, int32))
    assert result is int32
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b32\s+func_retval0\)\s+f_module\(",
                     ptx)
    ptx, result = cuda.compile(f_module, int64(int64, int64))
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b64", ptx)
    assert cuda.compile(f_module, "uint32(uint32, uint32)")[1] is uint32
    # float64 to int32 truncates, as Numba's cast.
    ptx, result = cuda.compile(f_module, int32(float32, float32))
    assert result is int32 and "cvt.rzi.s32.f32" in ptx
    assert_ptxas_accepts(ptx, tmp_path, 75)
    # Numba's ABI too: the result stored is the converted one.
    ptx, result = cuda.compile_ptx(f_module, int16(int16, int16), device=True)
    assert result is int16 and "st.u16" in ptx


def test_numba_type_objects_in_give_numba_type_objects_out():
    nt = numba_types
    _, result = cuda.compile(f_module, nt.int32(nt.int32, nt.int32))
    assert result == nt.int32 and type(result) is type(nt.int32)
    _, result = cuda.compile(f_module, (nt.float32, nt.float32))
    assert result == nt.float32
    _, result = cuda.compile_ptx(empty, ())
    assert result is void  # tidal's own where the signature names no Numba type
    _, result = cuda.compile_ptx(lambda r: None, (nt.float32[::1],))
    assert isinstance(result, nt.NoneType)

    def compare(a, b):
        return a == b

    _, result = cuda.compile(compare, (nt.int32, nt.int32))
    assert result == nt.boolean
    _, result = cuda.compile(lambda a: a, (nt.float64[::1],))
    assert result == nt.float64[::1]


def test_debug_with_opt_warns_as_numba_cuda():
    with pytest.warns(InvalidConfigWarning, match="debug=True with opt=True is not supported"):
        cuda.compile_ptx(empty, (), debug=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ptx, _ = cuda.compile_ptx(empty, (), debug=True, opt=False)
    assert re.search(r"\.section\s+\.debug_info", ptx)


def _llvm_tool(name):
    return shutil.which(f"{name}-19") or shutil.which(name, path="/usr/lib/llvm-19/bin")


def test_ltoir_is_nvptx_bitcode_that_llc_compiles(tmp_path):
    def scale(x, y):
        return 2.0 * x + y

    code, result = cuda.compile(scale, float32(float32, float32), output="ltoir",
                                abi_info={"abi_name": "scale_f32"})
    assert isinstance(code, bytes) and code[:4] == b"BC\xc0\xde" and result is float32
    path = tmp_path / "scale.bc"
    path.write_bytes(code)
    dis, llc = _llvm_tool("llvm-dis"), _llvm_tool("llc")
    if dis is None or llc is None:
        pytest.skip("llvm-dis-19 and llc-19 (llvm-19) are not here")
    text = subprocess.run([dis, str(path), "-o", "-"], capture_output=True, text=True,
                          check=True).stdout
    assert 'target triple = "nvptx64-nvidia-cuda"' in text
    assert "define" in text and "float @scale_f32(float" in text
    # The marker IR that tidal links in its place (test_c_abi.py) rides along.
    assert "!tidal.marker_ir" in text
    ptx = subprocess.run([llc, "-mcpu=sm_80", str(path), "-o", "-"], capture_output=True,
                         text=True, check=True).stdout
    assert ".target sm_80" in ptx
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b32\s+func_retval0\)\s+scale_f32\(",
                     ptx)
    assert_ptxas_accepts(ptx, tmp_path, 80)
    # A kernel's LTO-IR is its module, with the kernel.
    codes, result = cuda.compile_all(lambda r: None, (float32[::1],), device=False,
                                     abi="numba")
    assert result is void and codes[0][:4] == b"BC\xc0\xde"


def test_forceinline_marks_the_ltoir_function_alwaysinline(tmp_path):
    code, _ = cuda.compile(f_module, int32(int32, int32), output="ltoir", forceinline=True)
    plain, _ = cuda.compile(f_module, int32(int32, int32), output="ltoir")
    dis = _llvm_tool("llvm-dis")
    if dis is None:
        pytest.skip("llvm-dis-19 is not here")
    texts = []
    for name, data in (("forced.bc", code), ("plain.bc", plain)):
        (tmp_path / name).write_bytes(data)
        texts.append(subprocess.run([dis, str(tmp_path / name), "-o", "-"],
                                    capture_output=True, text=True, check=True).stdout)
    attributes = re.search(r"define [^@]*@f_module\([^)]*\)[^#]*#(\d+)", texts[0]).group(1)
    assert re.search(rf"attributes #{attributes} = {{[^}}]*alwaysinline", texts[0])
    assert "alwaysinline" not in texts[1]


@pytest.mark.parametrize("bounds, maxntid, minnctapersm, maxclusterrank", [
    (128, True, False, False),
    ((128,), True, False, False),
    ((128, 2), True, True, False),
    ((128, 2, 4), True, True, True),
])
def test_launch_bounds_in_the_ptx(bounds, maxntid, minnctapersm, maxclusterrank, tmp_path):
    ptx, result = cuda.compile_ptx(empty, "void()", launch_bounds=bounds, cc=(9, 0))
    assert result is void
    assert re.search(r"\.maxntid\s+128(?:,\s+1,\s+1)?\s*\n", ptx)
    assert bool(re.search(r"\.minnctapersm\s+2", ptx)) == minnctapersm
    assert bool(re.search(r"\.maxclusterrank\s+4", ptx)) == maxclusterrank
    assert_ptxas_accepts(ptx, tmp_path, 90)
    # Below sm_90 PTX has no .maxclusterrank: LLVM leaves it out.
    older, _ = cuda.compile_ptx(empty, "void()", launch_bounds=bounds, cc=(8, 0))
    assert ".maxclusterrank" not in older


def test_compile_for_current_device_takes_every_option(target):
    cc = cuda.get_current_device().compute_capability
    code, result = cuda.compile_for_current_device(f_module, int32(int32, int32),
                                                   output="ltoir", forceinline=True)
    assert code[:4] == b"BC\xc0\xde" and result is int32
    ptx, _ = cuda.compile_ptx_for_current_device(empty, (), launch_bounds=(64, 1))
    sm = min(cc[0] * 10 + cc[1], 90)
    assert f".target sm_{sm}" in ptx and re.search(r"\.maxntid\s+64", ptx)


@pytest.mark.parametrize("bounds", [128, (128,), (128, 2), (128, 2, 4)])
def test_a_launch_over_the_launch_bounds_is_refused(target, bounds):
    # numba-cuda's TestLaunchBounds: a block of 128 runs, 256 is the driver's
    # CUDA_ERROR_INVALID_VALUE (tidal refuses it before launching, on both
    # targets, naming it).
    @cuda.jit(launch_bounds=bounds)
    def bounded():
        pass

    bounded[1, 128]()
    with pytest.raises(ValueError, match="blockdim \\(256, 1, 1\\) has 256 threads, .*128 per "
                                         "block .*CUDA_ERROR_INVALID_VALUE"):
        bounded[1, 256]()
    ptx = bounded.inspect_asm(bounded.signatures[0])
    assert re.search(r"\.maxntid\s+128(?:,\s+1,\s+1)?\s*\n", ptx)
    if target.mock:
        assert target.launched("bounded") == 1


def test_cuda_jit_checks_its_launch_bounds():
    with pytest.raises(ValueError, match="Got 4 launch bounds:"):
        cuda.jit("void()", launch_bounds=(128, 2, 4, 8))(empty)
    with pytest.raises(ValueError, match="launch_bounds must be a positive int or a tuple"):
        cuda.jit(launch_bounds=(128, 0))(empty)


def test_a_kernel_that_returns_a_value_is_numba_cudas_type_error():
    def f(x, y):
        return x[0] + y[0]

    for compile_kernel in (lambda: cuda.compile_ptx(f, (uint32[::1], uint32[::1])),
                           lambda: cuda.compile_all(f, (uint32[::1], uint32[::1]),
                                                    device=False, abi="numba", output="ptx")):
        with pytest.raises(TypeError, match="CUDA kernel must have void return type. .*a kernel "
                                            "cannot return a value"):
            compile_kernel()
