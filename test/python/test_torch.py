"""PyTorch CPU tensors with tidal on the cpu target (Debian's python3-torch):
tensors as kernel arguments without copies, by their strides; DLPack both
ways for every dtype the two share. CUDA tensors are in test_interop.py
(marked gpu)."""

import numpy as np
import pytest

from tidal import cuda

torch = pytest.importorskip("torch", reason="PyTorch does not import here (python3-torch)")

pytestmark = pytest.mark.skipif(cuda.current_target() != "cpu",
                                reason="CPU tensors are kernel arguments on the cpu target")

# Every dtype both have, as (torch, NumPy); bool apart (see below).
SHARED_DTYPES = [
    (torch.int8, np.int8), (torch.int16, np.int16), (torch.int32, np.int32),
    (torch.int64, np.int64), (torch.uint8, np.uint8), (torch.float16, np.float16),
    (torch.float32, np.float32), (torch.float64, np.float64),
    (torch.complex64, np.complex64), (torch.complex128, np.complex128),
]
DTYPE_IDS = [str(t).replace("torch.", "") for t, _ in SHARED_DTYPES]


def _torch_dlpack_has_bool():
    try:
        torch.utils.dlpack.to_dlpack(torch.zeros(1, dtype=torch.bool))
        return True
    except RuntimeError:  # PyTorch before 2.x: "Bool type is not supported by dlpack"
        return False


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] + 1


@cuda.jit
def add_index_2d(x):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] = x[i, j] + 10 * i + j


@pytest.mark.parametrize("torch_dtype,numpy_dtype", SHARED_DTYPES, ids=DTYPE_IDS)
def test_tensor_argument_is_written_in_place(torch_dtype, numpy_dtype):
    t = torch.arange(40).to(torch_dtype)
    before = t.data_ptr()
    add_one[2, 32](t)
    assert t.data_ptr() == before
    np.testing.assert_array_equal(t.numpy(), (np.arange(40) + 1).astype(numpy_dtype))


@pytest.mark.parametrize("view", ["transposed", "every_other_column", "sliced_rows"])
def test_non_contiguous_tensors_go_by_their_strides(view):
    base = torch.zeros(6, 8, dtype=torch.float64)
    t = {"transposed": base.t(), "every_other_column": base[:, ::2],
         "sliced_rows": base[1:5]}[view]
    expected = t.numpy().copy()
    rows, columns = np.indices(expected.shape)
    expected += 10 * rows + columns
    add_index_2d[(1, 1), (8, 8)](t)
    np.testing.assert_array_equal(t.numpy(), expected)
    # Only the view's elements of the base tensor changed.
    assert base.sum().item() == expected.sum()


def test_requires_grad_tensor_is_refused_and_detach_works():
    t = torch.zeros(8, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"argument 'x' of kernel 'add_one'.*detach"):
        add_one[1, 8](t)
    add_one[1, 8](t.detach())  # same storage: the writes are in t
    np.testing.assert_array_equal(t.detach().numpy(), np.ones(8, dtype=np.float32))


def test_tensor_on_an_unreachable_device_is_refused_naming_it():
    t = torch.empty(4, device="meta")
    with pytest.raises(Exception, match="meta"):
        add_one[1, 4](t)
    with pytest.raises(Exception, match="meta"):
        cuda.from_dlpack(t)


@pytest.mark.parametrize("torch_dtype,numpy_dtype", SHARED_DTYPES, ids=DTYPE_IDS)
def test_dlpack_both_ways_without_copies(torch_dtype, numpy_dtype):
    # tidal -> torch
    device = cuda.to_device(np.arange(6).astype(numpy_dtype))
    tensor = torch.from_dlpack(device)
    assert tensor.dtype == torch_dtype
    assert tensor.data_ptr() == device.__cuda_array_interface__["data"][0]
    tensor += 1
    np.testing.assert_array_equal(device.copy_to_host(), (np.arange(6) + 1).astype(numpy_dtype))
    # torch -> tidal, through a kernel
    source = torch.arange(6).to(torch_dtype)
    array = cuda.from_dlpack(source)
    assert array.dtype == np.dtype(numpy_dtype)
    assert array.__cuda_array_interface__["data"][0] == source.data_ptr()
    add_one[1, 8](array)
    np.testing.assert_array_equal(source.numpy(), (np.arange(6) + 1).astype(numpy_dtype))


def test_dlpack_keeps_strides():
    source = torch.arange(24, dtype=torch.float32).reshape(4, 6)[:, 1::2]
    array = cuda.from_dlpack(source)
    assert array.shape == (4, 3) and array.strides == (24, 8)
    np.testing.assert_array_equal(array.copy_to_host(), source.numpy())


def test_bool_tensors():
    if _torch_dlpack_has_bool():
        device = cuda.to_device(np.array([True, False, True]))
        np.testing.assert_array_equal(torch.from_dlpack(device).numpy(), [True, False, True])
        array = cuda.from_dlpack(torch.tensor([False, True]))
        np.testing.assert_array_equal(array.copy_to_host(), [False, True])
        return
    # This PyTorch's DLPack has no bool (Debian 12's 1.13): the refusal
    # names it, and a uint8 view of the same memory goes through.
    t = torch.tensor([True, False, True])
    with pytest.raises(RuntimeError, match="Bool"):
        add_one[1, 4](t)
    as_bytes = t.view(torch.uint8)
    array = cuda.from_dlpack(as_bytes)
    assert array.__cuda_array_interface__["data"][0] == t.data_ptr()
    np.testing.assert_array_equal(array.copy_to_host(), [1, 0, 1])


def test_bfloat16_is_refused_by_name():
    with pytest.raises(BufferError, match="bfloat16"):
        cuda.from_dlpack(torch.zeros(3, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="argument 'x' of kernel 'add_one'"):
        add_one[1, 4](torch.zeros(3, dtype=torch.bfloat16))
