"""Launching: kernel[griddim, blockdim, stream, sharedmem] and its launch
plans. A launch reuses the plan of its argument classes while the arguments
fit it and types them afresh when they don't; other libraries' arrays come in
through __cuda_array_interface__ without a copy; the cpu target's pool runs
blocks on one worker per core. On the cuda target (the mock driver): arrays
are copied to the device and back as cuda.In/Out/InOut say, arguments reach
cuLaunchKernel as the flattened ABI with device pointers, and launches beyond
the device's limits are clear errors."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mock_driver import FILL_SEVEN, f64, u64
from targets import on_targets
from tidal import cuda
from child_processes import python_environment


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def store(out, v):
    out[0] = v


_PARAMS = ", ".join(f"v{i}" for i in range(256))
_BODY = " + ".join(f"v{i}" for i in range(256))


def _wide_kernel_source():
    return f"def wide(out, {_PARAMS}):\n    out[0] = {_BODY}\n"


# A kernel of 257 parameters, written to a file (tidal reads kernels' source).
@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    import importlib.util
    path = tmp_path_factory.mktemp("wide") / "wide_kernel.py"
    path.write_text("from tidal import cuda\n\n@cuda.jit\n" + _wide_kernel_source())
    spec = importlib.util.spec_from_file_location("wide_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.wide


class Interface:
    """Another library's array: only __cuda_array_interface__ (over a NumPy
    array's memory, which is device memory on the cpu target)."""

    def __init__(self, host, **changes):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": host.dtype.str,
            "data": (host.ctypes.data, not host.flags.writeable),
            "strides": host.strides if not host.flags.c_contiguous else None,
            "version": 3, "stream": None, **changes}


# --- launch plans ------------------------------------------------------------------------

def test_argument_classes_that_change_are_typed_again():
    out32 = np.zeros(8, np.float32)
    out64 = np.zeros(8, np.float64)
    x32 = np.arange(8, dtype=np.float32)
    x64 = np.arange(8, dtype=np.float64)
    for _ in range(2):  # the second round reuses the plans
        axpy[1, 8](out32, np.float32(2), x32, x32)
        axpy[1, 8](out64, 2.0, x64, x64)
        axpy[1, 8](out64, 3, x64, x64)  # an int where a float was
    assert np.array_equal(out32, 3 * x32)
    assert np.array_equal(out64, 4 * x64)
    strided = np.zeros(16, np.float64)[::2]  # layout A instead of C
    axpy[1, 8](strided, 2.0, x64, x64)
    assert np.array_equal(strided, 3 * x64)
    readonly = x64.copy()
    readonly.flags.writeable = False
    axpy[1, 8](out64, 1.0, readonly, x64)
    assert np.array_equal(out64, 2 * x64)
    assert len(axpy.signatures) == 5


def test_device_arrays_and_numpy_arrays_share_a_specialisation():
    host = np.zeros(4, np.float32)
    device = cuda.to_device(host)
    add_one[1, 4](host)
    add_one[1, 4](device)
    add_one[1, 4](device)
    assert np.array_equal(host, [1] * 4)
    assert np.array_equal(device.copy_to_host(), [2] * 4)
    assert add_one.signatures == ["(array(float32, 1d, C))"]


def test_records_take_the_plan_of_their_dtype():
    first = np.dtype([("a", np.float32), ("b", np.int32)])
    second = np.dtype([("b", np.int32), ("a", np.float32)])

    @cuda.jit
    def bump(r):
        r[0].a += 1

    x, y = np.zeros(1, first), np.zeros(1, second)
    for _ in range(2):
        bump[1, 1](x)
        bump[1, 1](y)
    assert x["a"][0] == 2 and y["a"][0] == 2
    assert len(bump.signatures) == 2


def test_a_kernel_of_257_parameters(wide):
    out = np.zeros(1, np.float64)
    values = [float(i) for i in range(256)]
    wide[1, 1](out, *values)
    assert out[0] == sum(values)
    values[255] = 1000.0
    wide[1, 1](out, *values)
    assert out[0] == sum(values)


def test_int_too_wide_for_int64_names_the_argument():
    out = np.zeros(1, np.int64)
    store[1, 1](out, 5)
    with pytest.raises(OverflowError, match="argument 'v' of kernel 'store' does not fit in int64"):
        store[1, 1](out, 2**64)
    assert out[0] == 5


def test_dispatch_prepares_everything_but_runs_nothing():
    x = np.zeros(4, np.float32)
    config = add_one[1, 4]
    config._dispatch(x)
    assert np.array_equal(x, [0] * 4)
    with pytest.raises(TypeError, match="kernel 'add_one' takes 1 argument but 2 were given"):
        config._dispatch(x, x)
    config(x)
    assert np.array_equal(x, [1] * 4)


# --- launch configurations -------------------------------------------------------------

def test_launch_configuration_attributes_and_repr():
    s = cuda.stream()
    config = add_one[(2, 3), 4, s, 16]
    assert config.griddim == (2, 3, 1) and config.blockdim == (4, 1, 1)
    assert config.stream is s and config.sharedmem == 16 and config.dispatcher is add_one
    assert repr(config).startswith("<launch of add_one griddim=(2, 3, 1) blockdim=(4, 1, 1)")
    assert add_one[1, 1].stream is None


def test_index_objects_as_dimensions():
    x = np.zeros(6, np.float32)
    add_one[np.int64(2), np.uint8(3)](x)
    add_one[(np.int32(1),), (6,), 0, np.int64(0)](x)
    assert np.array_equal(x, [2] * 6)


@pytest.mark.parametrize("config, message", [
    ((0, 1), "griddim must be a sequence of positive integers, got \\[0\\]"),
    ((1, (1, 1, 1, 1)), "blockdim must be a sequence of 1, 2 or 3 integers"),
    ((2**31, 1), "is 2147483648 along x: CUDA allows at most 2147483647"),
    ((1, 1, 0, -1), "sharedmem of kernel 'add_one' must be a number of bytes >= 0"),
    ((1, 1, 0, True), "sharedmem of kernel 'add_one' must be a number of bytes >= 0"),
    ((1,), "is launched as kernel\\[griddim, blockdim\\]"),
    (((1, 1 << 16), 1), "griddim .* along y: CUDA allows at most 65535"),
])
def test_bad_configurations_raise_value_error(config, message):
    with pytest.raises(ValueError, match=message):
        add_one[config]


@pytest.mark.parametrize("config, message", [
    ((1, (32, 32, 2)), "has 2048 threads: a block has at most 1024"),
    ((1, (1, 1, 65)), "is 65 along z: CUDA allows at most 64"),
    ((1, (32, 33)), "has 1056 threads: a block has at most 1024"),
])
def test_blocks_beyond_the_limits_raise_value_error_at_launch(config, message):
    launch = add_one[config]  # as Numba: the configuration is built
    with pytest.raises(ValueError, match=message):
        launch(np.zeros(4, np.float32))


@pytest.mark.parametrize("blockdim, message", [
    ((32, 32, 2), "blockdim \\(32, 32, 2\\) of kernel 'add_one' has 2048 threads: "
                  "a block has at most 1024"),
    (2048, "blockdim 2048 of kernel 'add_one' is 2048 along x: CUDA allows at most 1024"),
    ((1, 1, 65), "blockdim \\(1, 1, 65\\) of kernel 'add_one' is 65 along z: "
                 "CUDA allows at most 64"),
])
def test_a_block_beyond_the_limits_fails_at_launch_not_before(target, blockdim, message):
    # Numba builds the configuration and fails when it launches: a program
    # may build one it never launches (issue 24).
    config = add_one[1, blockdim]  # built, never launched: no error
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=message):
        config(x)
    with pytest.raises(ValueError, match=message):
        config._dispatch(x)
    add_one[1, 4](x)
    target.assert_result("add_one", x, np.ones(4, np.float32))


@pytest.mark.parametrize("stream", [True, 1, "stream"])
def test_bad_streams_raise_type_error(stream):
    with pytest.raises(TypeError, match="the stream of kernel 'add_one' must be a cuda.stream"):
        add_one[1, 1, stream]


def test_keyword_arguments_are_refused():
    with pytest.raises(TypeError, match="by position, not by keyword"):
        add_one[1, 1](x=np.zeros(1, np.float32))


# --- __cuda_array_interface__ arguments --------------------------------------------------

def test_interface_arrays_are_used_in_place():
    host = np.zeros(5, np.float32)
    add_one[1, 8](Interface(host))
    add_one[1, 8](Interface(host))
    assert np.array_equal(host, [2] * 5)
    x = np.arange(5, dtype=np.float32)
    out = np.zeros(10, np.float32)
    axpy[1, 8](Interface(out[::2]), np.float32(2), Interface(x), x)
    assert np.array_equal(out[::2], 3 * x) and not out[1::2].any()


def test_interface_array_stream_is_accepted_on_the_cpu_target():
    host = np.zeros(3, np.float32)
    add_one[1, 4](Interface(host, stream=1))
    add_one[1, 4](Interface(host, stream=cuda.stream().handle))
    assert np.array_equal(host, [2] * 3)


def test_interface_array_types_follow_the_typestr():
    host = np.zeros(4, np.int16)
    add_one[1, 4](Interface(host))
    assert np.array_equal(host, [1] * 4)
    assert "(array(int16, 1d, C))" in add_one.signatures


@pytest.mark.parametrize("changes, error, message", [
    ({"stream": 0}, ValueError, "'stream' is 0, which the CUDA Array Interface"),
    ({"typestr": ">f4"}, TypeError, "typestr '>f4'"),
    ({"typestr": "|V8"}, TypeError, "typestr '|V8'"),
    ({"mask": object()}, NotImplementedError, "Masked arrays are not supported"),
    ({"data": (0x10, False), "shape": (4,)}, ValueError, "is not host memory this process can read"),
    ({"strides": (4, 4)}, ValueError, "'strides' must be None or a tuple of 1 ints"),
    ({"strides": (4.0,)}, ValueError, "'strides' must be None or a tuple of 1 ints"),
    ({"shape": (-4,)}, ValueError, "'shape' must be a tuple of ints >= 0, not \\(-4,\\)"),
    ({"shape": ("4",)}, ValueError, "'shape' must be a tuple of ints >= 0"),
    ({"shape": [4]}, ValueError, "needs 'shape' as a tuple of ints"),
])
def test_bad_interface_descriptions_raise(changes, error, message):
    host = np.zeros(4, np.float32)
    with pytest.raises(error, match=message):
        add_one[1, 4](Interface(host, **changes))
    assert not host.any()


def test_interface_without_a_key_names_it():
    obj = Interface(np.zeros(2, np.float32))
    del obj.__cuda_array_interface__["typestr"]
    with pytest.raises(ValueError, match="__cuda_array_interface__ has no 'typestr'"):
        add_one[1, 2](obj)


def test_objects_without_an_interface_are_refused():
    with pytest.raises(TypeError, match="argument 'x' of kernel 'add_one' is 'object'"):
        add_one[1, 1](object())


@cuda.jit
def reverse_in_shared(out, x):
    buf = cuda.shared.array(0, np.float32)
    tid = cuda.threadIdx.x
    buf[tid] = x[tid] * 2
    cuda.syncthreads()
    out[tid] = buf[cuda.blockDim.x - 1 - tid]


# The cpu target has no such limit.
@on_targets("cuda")
def test_dynamic_shared_memory_beyond_the_device_is_a_clear_error(target):
    with pytest.raises(ValueError, match="dynamic shared memory"):
        reverse_in_shared[1, 32, 0, 1 << 30](np.zeros(32, np.float32), np.zeros(32, np.float32))


# --- kernel.forall ---------------------------------------------------------------------

@cuda.jit
def mark_block_size(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.blockDim.x


def test_forall_covers_every_task_with_a_picked_block_size():
    from tidal import _tidal
    workers = _tidal.cpu_worker_count()
    for n in (1, 100, 5000, 1 << 20):
        out = np.zeros(n, np.int32)
        mark_block_size.forall(n)(out)
        tpb = min(1024, max(32, -(-(-(-n // (4 * workers))) // 32) * 32))
        assert (out == tpb).all(), (n, out[:4], tpb)


def test_forall_with_a_block_size_and_no_tasks():
    out = np.zeros(100, np.int32)
    mark_block_size.forall(100, tpb=64)(out)
    assert (out == 64).all()
    out[:] = 0
    mark_block_size.forall(0)(out)
    assert not out.any()


def test_forall_covers_every_element(target):
    n = 100_003
    x = np.arange(n, dtype=np.float32)
    out = cuda.device_array(n, np.float32)
    axpy.forall(n)(out, np.float32(2), cuda.to_device(x), cuda.to_device(x))
    target.assert_result("axpy", out.copy_to_host(), 3 * x)


def test_forall_respects_launch_bounds():
    @cuda.jit(launch_bounds=64)
    def bounded(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.blockDim.x

    out = np.zeros(1 << 16, np.int32)
    bounded.forall(out.size)(out)
    assert (out == 64).all()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"ntasks": -1}, ValueError,
     "Can't create ForAll with negative task count: add_one.forall\\(-1\\)"),
    ({"ntasks": 2.5}, ValueError, "ntasks of add_one.forall\\(\\) must be an int >= 0"),
    ({"ntasks": 8, "tpb": 2048}, ValueError, "tpb of add_one.forall\\(\\) must be an int >= 0 and at most 1024"),
    ({"ntasks": 8, "sharedmem": -4}, ValueError, "sharedmem of add_one.forall\\(\\) must be an int >= 0"),
    ({"ntasks": 8, "stream": "s"}, TypeError, "the stream of kernel 'add_one' must be a cuda.stream"),
])
def test_forall_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        add_one.forall(**kwargs)


# --- cuda.In, cuda.Out, cuda.InOut ---------------------------------------------------------

def test_directed_arrays_are_the_arrays_on_the_cpu_target():
    out = np.zeros(8, np.float32)
    x = np.arange(8, dtype=np.float32)
    axpy[1, 8](cuda.Out(out), 2.0, cuda.In(x), cuda.InOut(x))
    assert np.array_equal(out, 3 * x)
    # A directed array shares the specialisation of its array.
    axpy[1, 8](out, 2.0, x, x)
    assert len([s for s in axpy.signatures if "float32, 1d, C" in s]) >= 1
    assert repr(cuda.In(x)).startswith("cuda.In(array([0., 1.,")


@cuda.jit
def write_three(a, out):
    out[0] = a[0] + a[a.shape[0] - 1]
    a[0] = 3
    a[a.shape[0] - 1] = 3


@on_targets("cpu")  # checks what the kernel read
def test_a_kernel_writes_into_a_copy_of_an_in_array(target):
    # cuda.In: copied to the device, not back, on every target: the cpu
    # target gives the kernel a copy (Numba's test_array_in, test_record_in).
    out = np.zeros(1)
    x = np.arange(5.0)
    write_three[1, 1](cuda.In(x), out)
    assert out[0] == 4.0 and np.array_equal(x, np.arange(5.0))
    # Strided, and negatively strided: the copy keeps the layout.
    y = np.arange(10.0)
    write_three[1, 1](cuda.In(y[::2]), out)
    assert out[0] == 8.0 and np.array_equal(y, np.arange(10.0))
    write_three[1, 1](cuda.In(y[::-3]), out)
    assert out[0] == 9.0 and np.array_equal(y, np.arange(10.0))
    # Records; InOut and a bare array are the array itself.
    records = np.zeros(2, np.dtype([("b", np.int32)], align=True))

    @cuda.jit
    def set_b(r):
        r[0]["b"] = 3

    set_b[1, 1](cuda.In(records))
    assert records[0]["b"] == 0
    set_b[1, 1](cuda.InOut(records))
    assert records[0]["b"] == 3
    write_three[1, 1](x, out)
    assert x[0] == 3 and x[4] == 3


def test_an_in_array_is_left_as_it_was(target):
    x = np.arange(4.0)
    out = cuda.device_array(1)
    write_three[1, 1](cuda.In(x), out)
    target.assert_result("write_three", out.copy_to_host(), [3.0])
    assert np.array_equal(x, np.arange(4.0))


def test_directed_wrappers_take_numpy_arrays():
    with pytest.raises(TypeError, match="cuda.Out takes a NumPy array, not list"):
        cuda.Out([1, 2])
    with pytest.raises(TypeError, match="cuda.In takes a NumPy array, not DeviceNDArray"):
        cuda.In(cuda.to_device(np.zeros(2)))


# --- DLPack arguments --------------------------------------------------------------------

class DLPackOnly:
    """Another library's array that speaks DLPack only (over a NumPy array)."""

    def __init__(self, array, device=None, capsule=None):
        self.array, self.device, self.capsule = array, device, capsule
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.capsule if self.capsule is not None else self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device or self.array.__dlpack_device__()


def test_dlpack_arrays_are_used_in_place_and_given_back():
    import sys
    host = np.zeros(6, np.float32)
    wrapped = DLPackOnly(host)
    before = sys.getrefcount(host)
    for _ in range(3):  # the first launch types it; the others reuse the plan
        add_one[1, 8](wrapped)
    assert np.array_equal(host, [3] * 6)
    assert wrapped.streams == [None] * 4  # typing, then each launch: no stream on the cpu target
    assert sys.getrefcount(host) == before  # each tensor given back once
    row = np.zeros(24, np.int16)  # strided: DLPack's strides count elements
    axpy[1, 12](DLPackOnly(row[1::4]), 2, np.ones(6, np.int16), DLPackOnly(np.ones(6, np.int16)))
    assert (row[1::4] == 3).all() and row.sum() == 18


@pytest.mark.parametrize("wrapper, error, message", [
    (DLPackOnly(np.zeros(4, np.float32), device=(2, 0)), ValueError,
     "argument 'x' of kernel 'add_one': DLPack memory of device type 2 \\(device 0\\): on the "
     "cpu target kernels take host memory"),
    (DLPackOnly(np.zeros(4, np.float32), device=(1,)), TypeError,
     "argument 'x' of kernel 'add_one': __dlpack_device__\\(\\) must return \\(device type, device id\\)"),
    (DLPackOnly(np.zeros(4, np.float32), capsule="not a capsule"), TypeError,
     "argument 'x' of kernel 'add_one': __dlpack__\\(\\) of 'DLPackOnly' did not return an "
     "untaken \\\"dltensor\\\" capsule"),
    (DLPackOnly(np.zeros(4, "datetime64[s]")), BufferError, "argument 'x' of kernel 'add_one': "),
])
def test_bad_dlpack_arguments(wrapper, error, message):
    with pytest.raises(error, match=message):
        add_one[1, 4](wrapper)


def test_a_dlpack_argument_that_turns_bad_after_its_plan_is_made():
    host = np.zeros(4, np.float32)
    wrapped = DLPackOnly(host)
    add_one[1, 4](wrapped)
    wrapped.device = (2, 0)
    with pytest.raises(ValueError, match="argument 'x' of kernel 'add_one': DLPack memory of device type 2"):
        add_one[1, 4](wrapped)
    assert np.array_equal(host, [1] * 4)


def test_threads_launching_one_kernel_with_changing_argument_classes():
    import threading
    import time

    class Yielding(DLPackOnly):
        def __dlpack__(self, stream=None):
            time.sleep(0)  # lets another thread launch meanwhile
            return super().__dlpack__(stream)

    dtypes = (np.float32, np.float64, np.int32, np.int16, np.uint8)
    errors = []

    def work(seed):
        try:
            arrays = [np.zeros(16, dtype) for dtype in dtypes]
            for round_ in range(40):
                for k, a in enumerate(arrays):
                    add_one[1, 16](Yielding(a) if (round_ + k + seed) % 3 == 0 else a)
            for a in arrays:
                assert (a == 40).all(), a
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# --- the cpu target's pool ---------------------------------------------------------------


def test_one_worker_runs_blocks_in_order(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent("""
        import os
        import numpy as np
        from tidal import cuda, _tidal

        @cuda.jit
        def order(counter, seen):
            if cuda.threadIdx.x == 0:
                seen[cuda.blockIdx.x] = cuda.atomic.add(counter, 0, 1)

        counter = np.zeros(1, np.int64)
        seen = np.zeros(500, np.int64)
        order[500, 32](counter, seen)
        print(_tidal.cpu_worker_count(), bool(np.all(seen == np.arange(500))))
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=python_environment(TIDAL_TARGET="cpu"),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[0]) == os.cpu_count()  # by default one worker per core
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=python_environment(TIDAL_TARGET="cpu", TIDAL_CPU_THREADS="1"),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True"]


# --- the cuda target over the mock driver: copies, arguments, limits ---------------------

def test_arrays_go_to_the_device_and_back(mock_script):
    r = mock_script(FILL_SEVEN)
    assert r.result == {"a": [7] * 10, "b": [0.0, 1.0, 2.0, 3.0]}
    # a (40 bytes) and b (16 bytes) were copied to fresh device memory.
    allocs = {c["bytes"]: c["alloc"] for c in r.named("cuMemAlloc_v2")}
    assert set(allocs) == {40, 16}
    a_id, b_id = allocs[40], allocs[16]
    assert sorted((c["alloc"], c["bytes"]) for c in r.named("cuMemcpyHtoD_v2")) == sorted(
        [(a_id, 40), (b_id, 16)])
    # Only the writable array comes back.
    assert [(c["alloc"], c["bytes"]) for c in r.named("cuMemcpyDtoH_v2")] == [(a_id, 40)]
    # Copies in, launch, synchronise, copies back, free: in that order.
    launch = r.index("cuLaunchKernel")
    assert r.index("cuMemcpyHtoD_v2", alloc=a_id) < launch
    assert r.index("cuMemcpyHtoD_v2", alloc=b_id) < launch
    sync = r.index("cuCtxSynchronize")
    assert launch < sync < r.index("cuMemcpyDtoH_v2", alloc=a_id) < r.index("cuMemFree_v2", alloc=a_id)
    assert len(r.named("cuMemFree_v2")) == 2


def test_in_out_and_inout_choose_the_copies(mock_script):
    r = mock_script("""
        a = np.zeros(10, np.int32)       # 40 bytes: Out, written by the kernel
        b = np.zeros(4, np.float32)      # 16 bytes: In, read only
        c = np.zeros(4, np.int32)        # 16 bytes, InOut: both ways
        fill_seven[2, 8](cuda.Out(a), 2.5, cuda.In(b))
        fill_seven[1, 4](cuda.InOut(c), 2.5, cuda.In(b))
        print(json.dumps([a.tolist(), c.tolist()]))
    """)
    assert r.result == [[7] * 10, [7] * 4]
    allocs = [(c["bytes"], c["alloc"]) for c in r.named("cuMemAlloc_v2")]
    (a_id, b_id), (c_id, b2_id) = [[i for _, i in allocs[k:k + 2]] for k in (0, 2)]
    copied_in = [c["alloc"] for c in r.named("cuMemcpyHtoD_v2")]
    copied_back = [c["alloc"] for c in r.named("cuMemcpyDtoH_v2")]
    assert a_id not in copied_in and sorted(copied_in) == sorted([b_id, c_id, b2_id])
    assert copied_back == [a_id, c_id]


def test_arguments_are_the_flattened_abi_with_device_pointers(mock_script):
    r = mock_script(FILL_SEVEN)
    assert r.returncode == 0, r.stderr
    (launch,) = r.named("cuLaunchKernel")
    assert launch["kernel"] == "fill_seven"
    assert launch["grid"] == [2, 1, 1] and launch["block"] == [8, 1, 1]
    assert launch["shared"] == 0
    p = launch["params"]
    # a: data, shape, stride; x: float64; b: data, shape, stride.
    assert len(p) == 7
    allocs = {c["bytes"]: c["alloc"] for c in r.named("cuMemAlloc_v2")}
    assert (p[0].get("alloc"), p[0].get("offset")) == (allocs[40], 0)
    assert (u64(p[1]["hex"]), u64(p[2]["hex"])) == (10, 4)
    assert f64(p[3]["hex"]) == 2.5
    assert (p[4].get("alloc"), p[4].get("offset")) == (allocs[16], 0)
    assert (u64(p[5]["hex"]), u64(p[6]["hex"])) == (4, 4)


def test_two_dimensional_non_contiguous_array(mock_script):
    r = mock_script("""
        base = np.arange(24, dtype=np.float64).reshape(4, 6)
        view = base[:, ::2]
        scale_2d[(1, 1), (4, 3)](view, 2.0)
        print(json.dumps(base.tolist()))
    """)
    assert r.returncode == 0, r.stderr
    (launch,) = r.named("cuLaunchKernel")
    p = launch["params"]
    # data, 2 shapes, 2 strides, factor
    assert len(p) == 6
    assert [u64(x["hex"]) for x in p[1:5]] == [4, 3, 48, 16]
    # The whole span the view covers is copied: 3 rows of 6 plus 5 elements.
    (alloc,) = r.named("cuMemAlloc_v2")
    assert alloc["bytes"] == (3 * 6 + 5) * 8
    # The mock does not run the kernel: the values come back unchanged.
    assert r.result == np.arange(24, dtype=np.float64).reshape(4, 6).tolist()


def test_device_array_argument(mock_script):
    r = mock_script("""
        d = cuda.to_device(np.zeros(6, np.int32))
        fill_seven[1, 32](d, 0.0, np.zeros(1, np.float32))
        print(json.dumps(d.copy_to_host().tolist()))
    """)
    assert r.result == [7] * 6


def test_too_many_threads_for_the_device(mock_script):
    r = mock_script("""
        try:
            fill_seven[1, 256](np.zeros(4, np.int32), 1.0, np.zeros(1, np.float32))
        except ValueError as e:
            print(json.dumps(str(e)))
    """, max_threads=128)
    assert "cannot launch kernel 'fill_seven' on device 0 (tidal mock GPU 0): blockdim " \
        "(256, 1, 1) has 256 threads, the device allows at most 128 per block" in r.result
    assert not r.named("cuLaunchKernel")


def test_grid_beyond_the_device(mock_script):
    r = mock_script("""
        try:
            fill_seven[100, 32](np.zeros(4, np.int32), 1.0, np.zeros(1, np.float32))
        except ValueError as e:
            print(json.dumps(str(e)))
    """, max_grid_x=64)
    assert "griddim (100, 1, 1) is 100 along x, the device allows at most 64" in r.result


def test_dynamic_shared_memory(mock_script):
    r = mock_script("""
        a, b = np.zeros(4, np.int32), np.zeros(1, np.float32)
        fill_seven[1, 32, 0, 100 * 1024](a, 1.0, b)
        try:
            fill_seven[1, 32, 0, 300 * 1024](a, 1.0, b)
        except ValueError as e:
            print(json.dumps(str(e)))
    """)
    assert "307200 bytes of dynamic shared memory asked, the device allows at most 232448" \
        in r.result
    # Above 48 KB the kernel opted in first, as CUDA requires.
    (opt_in,) = r.named("cuFuncSetAttribute")
    assert (opt_in["attribute"], opt_in["value"]) == (8, 100 * 1024)
    assert r.index("cuFuncSetAttribute") < r.index("cuLaunchKernel")
    assert [c["shared"] for c in r.named("cuLaunchKernel")] == [100 * 1024]


def test_forall_launches_with_the_block_size_of_the_best_occupancy(mock_script):
    r = mock_script("""
        d = cuda.to_device(np.zeros(2000, np.int32))
        b = cuda.to_device(np.zeros(1, np.float32))
        fill_seven.forall(2000)(d, 1.0, b)
        fill_seven.forall(2000, sharedmem=256)(d, 1.0, b)
        fill_seven.forall(100, tpb=64)(d, 1.0, b)
        print(json.dumps(d.copy_to_host()[:3].tolist()))
    """, occupancy_block=768)
    assert r.result == [7, 7, 7]
    occupancy = r.named("cuOccupancyMaxPotentialBlockSize")
    assert [(c["dynamic_shared"], c["limit"]) for c in occupancy] == [(0, 1024), (256, 1024)]
    launches = r.named("cuLaunchKernel")
    assert [(c["grid"], c["block"], c["shared"]) for c in launches] == [
        ([3, 1, 1], [768, 1, 1], 0), ([3, 1, 1], [768, 1, 1], 256), ([2, 1, 1], [64, 1, 1], 0)]
