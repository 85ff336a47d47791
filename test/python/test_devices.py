"""Devices and contexts. On every target: each device in cuda.gpus runs
kernels and reports its memory. On the cpu target: one device, "tidal cpu
target". On the cuda target, over the mock CUDA driver with one and two
devices: device i is "tidal mock GPU i" with 132 + 2i multiprocessors, i + 1
GiB of memory, PCI bus id 0x10 + i and a UUID ending in i; its log lines
carry the "device" whose context each call ran in. What it shows: cuda.gpus
lists the driver's devices with their attributes; select_device() and
``with cuda.gpus[i]:`` move allocations, streams, events and launches to
that device's context, per thread; bad ids raise clear errors; memory info
is per device; detect() prints every device and the target; the cpu target
keeps its one device even where a driver is present.
"""

import numpy as np
import pytest

from tidal import cuda


@cuda.jit
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


# --- every target ----------------------------------------------------------------------


def test_every_device_runs_kernels(target):
    for device in cuda.gpus:
        with device:
            x = np.arange(256, dtype=np.float32)
            out = cuda.device_array(256, np.float32)
            axpy[1, 256](out, np.float32(2), cuda.to_device(x), cuda.to_device(x))
            target.assert_result("axpy", out.copy_to_host(), 3 * x, launches=device.id + 1)
    assert cuda.get_current_device().compute_capability >= (7, 0)
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total


# --- the cpu target: one device -------------------------------------------------------


def test_the_cpu_target_has_one_device():
    device = cuda.get_current_device()
    assert device.id == 0 and device.name == "tidal cpu target"
    assert device.compute_capability == (7, 5)
    from tidal import _tidal
    assert device.MULTIPROCESSOR_COUNT == _tidal.cpu_worker_count()
    assert device.MAX_THREADS_PER_BLOCK == 1024 and device.WARP_SIZE == 32
    assert device.MAX_BLOCK_DIM_Z == 64
    with pytest.raises(AttributeError, match="PCI_BUS_ID"):
        device.PCI_BUS_ID
    assert len(cuda.gpus) == 1 and cuda.gpus[0].name == device.name
    assert cuda.gpus[1:] == [] and cuda.gpus[:] == [cuda.gpus[0]]
    assert [g.id for g in cuda.gpus] == [0]
    assert cuda.select_device(0) == device
    assert cuda.list_devices() is cuda.gpus


def test_selecting_another_device_raises():
    with pytest.raises(ValueError, match="one device, id 0"):
        cuda.select_device(1)
    with pytest.raises(ValueError, match="one device, id 0"):
        cuda.gpus[1]


def test_context_memory_info_and_deallocations():
    context = cuda.current_context()
    free, total = context.get_memory_info()
    assert 0 < free <= total
    assert context.get_memory_info().total == total
    context.deallocations.clear()
    assert len(context.deallocations) == 0
    assert context.device == cuda.get_current_device()
    with cuda.defer_cleanup():
        pass


def test_close_drops_the_context_but_not_the_arrays():
    d = cuda.to_device(np.arange(3.0))
    with cuda.gpus[0]:
        before = cuda.current_context()
    cuda.close()
    assert cuda.gpus.current is None
    assert cuda.current_context() is not before
    assert cuda.gpus.current == cuda.get_current_device()
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(3.0))


# --- the cuda target over the mock driver ---------------------------------------------
GIB = 1 << 30


# --- listing and attributes --------------------------------------------------------------

def test_gpus_lists_every_device(mock_script):
    r = mock_script("""
        out = []
        for g in cuda.gpus:
            out.append([g.id, g.name, list(g.compute_capability), g.uuid, repr(g),
                        g.MULTIPROCESSOR_COUNT, g.WARP_SIZE, g.MAX_THREADS_PER_BLOCK,
                        g.PCI_BUS_ID, g.get_device_identity()])
        print(json.dumps({"len": len(cuda.gpus), "devices": out,
                          "list": cuda.list_devices() is cuda.gpus,
                          "same": cuda.gpus[1] is cuda.gpus[1], "repr": repr(cuda.gpus),
                          "name_type": type(cuda.gpus[0].name).__name__,
                          "slices": [[g.id for g in cuda.gpus[1:]],
                                     [g.id for g in cuda.gpus[::-1]],
                                     cuda.gpus[:1][0] is cuda.gpus[0]]}))
    """, devices=2, cc="9.0,8.6", max_threads=512)
    res = r.result
    assert res["len"] == 2 and res["list"] and res["same"]
    assert res["slices"] == [[1], [1, 0], True]  # lists, as Numba's gpus[1:]
    assert res["name_type"] == "str"
    assert res["repr"] == "<Managed Device 0>, <Managed Device 1>"
    (d0, d1) = res["devices"]
    assert d0[:5] == [0, "tidal mock GPU 0", [9, 0], "GPU-7a1da100-5eed-4011-9c0d-deadbeef0000",
                      "<Managed Device 0>"]
    assert d1[:4] == [1, "tidal mock GPU 1", [8, 6], "GPU-7a1da100-5eed-4011-9c0d-deadbeef0001"]
    # MULTIPROCESSOR_COUNT, WARP_SIZE, MAX_THREADS_PER_BLOCK, PCI_BUS_ID: what
    # the driver answers for each device.
    assert d0[5:9] == [132, 32, 512, 0x10]
    assert d1[5:9] == [134, 32, 512, 0x11]
    assert d1[9] == {"pci_domain_id": 0, "pci_bus_id": 0x11, "pci_device_id": 0}
    # Facts are read without creating a context.
    assert not r.named("cuDevicePrimaryCtxRetain")


def test_attributes_are_read_once_and_unknown_names_raise(mock_script):
    r = mock_script("""
        d = cuda.gpus[1]
        first, second = d.L2_CACHE_SIZE, d.L2_CACHE_SIZE
        out = {"values": [first, second, d.COMPUTE_CAPABILITY_MAJOR,
                          d.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN],
               "has": [hasattr(d, "NOT_AN_ATTRIBUTE"), hasattr(d, "CLOCK_RATE")],
               "f16": [d.supports_float16, d.supports_bfloat16]}
        try:
            d.CU_DEVICE_ATTRIBUTE_WARP_SIZE
        except AttributeError as e:
            out["error"] = str(e)
        print(json.dumps(out))
    """, devices=2, cc="9.0,7.0")
    res = r.result
    assert res["values"] == [0, 0, 7, 232448]
    assert res["has"] == [False, True]
    assert res["f16"] == [True, False]
    assert "CUDA devices have no attribute 'CU_DEVICE_ATTRIBUTE_WARP_SIZE'" in res["error"]
    assert "such as MULTIPROCESSOR_COUNT" in res["error"]
    l2 = [c for c in r.named("cuDeviceGetAttribute") if c["attribute"] == 38]
    assert len(l2) == 1, "read from the driver once, then kept"


def test_one_device(mock_script):
    r = mock_script("""
        try:
            cuda.gpus[1]
        except IndexError as e:
            print(json.dumps([len(cuda.gpus), str(e), isinstance(e, ValueError),
                              cuda.is_available()]))
    """)
    count, message, is_value_error, available = r.result
    assert count == 1 and is_value_error and available
    assert message == "there is no CUDA device 1: the driver has 1 device, id 0"


def test_bad_device_ids(mock_script):
    r = mock_script("""
        out = []
        cuda.select_device(1)
        for bad in (2, -1, "1", 1.0, True, None):
            for what in ("select", "index"):
                try:
                    cuda.select_device(bad) if what == "select" else cuda.gpus[bad]
                    out.append([what, repr(bad), "no error"])
                except (TypeError, ValueError, IndexError) as e:
                    out.append([what, repr(bad), type(e).__name__, str(e),
                                isinstance(e, IndexError)])
        out.append(cuda.get_current_device().id)
        out.append(cuda.select_device(np.int64(0)).id)
        print(json.dumps(out))
    """, devices=2)
    *errors, still_current, numpy_id = r.result
    assert still_current == 1, "a bad id leaves the current device alone"
    assert numpy_id == 0
    by_case = {(what, bad): rest for what, bad, *rest in errors}
    for what in ("select", "index"):
        assert by_case[(what, "2")] == [
            "InvalidDeviceError", "there is no CUDA device 2: the driver has 2 devices, ids 0 to 1",
            True]
        assert by_case[(what, "-1")][1].startswith("there is no CUDA device -1")
        assert by_case[(what, "'1'")][:2] == ["TypeError", "a device id must be an int, not str"]
        assert by_case[(what, "1.0")][0] == "TypeError"
        assert by_case[(what, "True")][:2] == ["TypeError", "a device id must be an int, not True"]
        assert by_case[(what, "None")][0] == "TypeError"


def test_no_driver_says_why(mock_script):
    # Numba's class, CudaSupportError (an ImportError), which is also the
    # RuntimeError tidal raised before; from the runtime and from set_target.
    r = mock_script("""
        out = [cuda.is_available()]
        try:
            len(cuda.gpus)
        except cuda.CudaSupportError as e:
            out.append([str(e), isinstance(e, ImportError), isinstance(e, RuntimeError)])
        from tidal.cuda.target import set_target
        try:
            set_target("cuda")
        except cuda.CudaSupportError as e:
            out.append(str(e))
        print(json.dumps(out))
    """, driver="/nonexistent/libcuda.so.1")
    available, (message, is_import_error, is_runtime_error), selecting = r.result
    assert available is False
    assert message.startswith("the CUDA driver is not usable: cannot open /nonexistent/libcuda.so.1")
    assert is_import_error and is_runtime_error
    assert selecting.startswith("the cuda target cannot be selected: the CUDA driver is not usable")


# --- the current device ------------------------------------------------------------------

def test_select_device_moves_allocations_and_launches(mock_script):
    r = mock_script("""
        first = cuda.get_current_device().id
        dev = cuda.select_device(1)
        d = cuda.to_device(np.zeros(8, np.int32))
        fill_seven[1, 32](d, 1.0, cuda.to_device(np.zeros(1, np.float32)))
        on_one = d.copy_to_host().tolist()
        cuda.select_device(0)
        e = cuda.to_device(np.zeros(4, np.int32))
        fill_seven[1, 32](e, 1.0, cuda.to_device(np.zeros(1, np.float32)))
        print(json.dumps({"first": first, "dev": repr(dev), "on_one": on_one,
                          "on_zero": e.copy_to_host().tolist(),
                          "current": cuda.get_current_device().id}))
    """, devices=2, cc="9.0,8.6")
    res = r.result
    assert res["first"] == 0 and res["dev"] == "<CUDA device 1 'tidal mock GPU 1'>"
    assert res["on_one"] == [7] * 8 and res["on_zero"] == [7] * 4 and res["current"] == 0
    assert [c["device"] for c in r.named("cuMemAlloc_v2")] == [1, 1, 0, 0]
    # One module per device, each for its own sm.
    assert [(c["device"], c["target"]) for c in r.named("cuModuleLoadDataEx")] == [
        (1, "sm_86"), (0, "sm_90")]
    launches = r.named("cuLaunchKernel")
    assert [c["device"] for c in launches] == [1, 0]
    assert [c["params"][0]["alloc_device"] for c in launches] == [1, 0]


def test_a_device_array_of_another_device_is_refused_before_the_driver(mock_script):
    r = mock_script("""
        with cuda.gpus[1]:
            d = cuda.to_device(np.zeros(8, np.int32))
        try:
            fill_seven[1, 32](d, 1.0, cuda.to_device(np.zeros(1, np.float32)))
            print(json.dumps("launched"))
        except ValueError as error:
            print(json.dumps(str(error)))
    """, devices=2)
    assert r.result == (
        "cannot launch kernel 'fill_seven' on device 0 (tidal mock GPU 0): argument 0 is "
        "device memory of device 1 (tidal mock GPU 1); launch it under `with cuda.gpus[1]:` "
        "or copy the array to device 0")
    assert r.named("cuLaunchKernel") == []


def test_numpy_arguments_are_copied_to_the_current_device(mock_script):
    r = mock_script("""
        a = np.zeros(10, np.int32)
        with cuda.gpus[1]:
            fill_seven[2, 8](a, 2.5, np.zeros(4, np.float32))
        print(json.dumps(a.tolist()))
    """, devices=2)
    assert r.result == [7] * 10
    assert {c["device"] for c in r.named("cuMemAlloc_v2")} == {1}
    assert [c["device"] for c in r.named("cuLaunchKernel")] == [1]
    assert [c["device"] for c in r.named("cuCtxSynchronize")] == [1]


def test_gpus_context_manager_restores_the_previous_device(mock_script):
    r = mock_script("""
        out = [cuda.gpus.current]
        with cuda.gpus[1] as entered:
            out.append([entered.id, cuda.get_current_device().id, cuda.gpus.current.id])
            d = cuda.device_array(16, np.float32)
            with cuda.gpus[0]:
                out.append(cuda.get_current_device().id)
            out.append(cuda.get_current_device().id)
        out.append(cuda.gpus.current)   # nothing was current before the block
        cuda.select_device(0)
        try:
            with cuda.gpus[1]:
                raise KeyError("inside")
        except KeyError:
            pass
        out.append([cuda.get_current_device().id, cuda.gpus.current == cuda.gpus[0],
                    cuda.gpus.current == cuda.get_current_device()])
        print(json.dumps(out))
    """, devices=2)
    assert r.result == [None, [1, 1, 1], 0, 1, None, [0, True, True]]
    assert [c["device"] for c in r.named("cuMemAlloc_v2")] == [1]


def test_streams_and_events_belong_to_the_current_device(mock_script):
    r = mock_script("""
        with cuda.gpus[1]:
            s = cuda.stream()
            e = cuda.event()
            d = cuda.device_array(10, np.int32, stream=s)
            e.record(s)
        s0 = cuda.stream()
        del d                   # freed while device 0 is current
        s.synchronize()
        cuda.synchronize()
        print(json.dumps(e.query()))
    """, devices=2, events_pending=1)
    assert r.result is True
    assert [c["device"] for c in r.named("cuStreamCreate")] == [1, 0]
    assert r.named("cuEventCreate")[0]["device"] == 1
    # Every event record succeeded: the free's event was made on device 1,
    # where the stream that used the memory lives.
    assert not [c for c in r.named("cuEventRecord") if c.get("result")]
    assert len(r.named("cuEventRecord")) == 2
    assert [c["device"] for c in r.named("cuCtxSynchronize")] == [0]


def test_each_thread_starts_on_device_0(mock_script):
    r = mock_script("""
        import threading
        cuda.select_device(1)
        seen = {}
        def work():
            seen["before"] = cuda.gpus.current
            seen["device"] = cuda.get_current_device().id
            seen["array"] = cuda.to_device(np.zeros(3, np.int32)).copy_to_host().tolist()
        t = threading.Thread(target=work)
        t.start(); t.join()
        print(json.dumps([seen["before"], seen["device"], cuda.get_current_device().id]))
    """, devices=2)
    assert r.result == [None, 0, 1]
    assert [c["device"] for c in r.named("cuMemAlloc_v2")] == [0]


def test_kernel_facts_come_from_the_current_device(mock_script):
    r = mock_script("""
        sig = fill_seven.compile("void(int32[::1], float64, float32[::1])")
        with cuda.gpus[1]:
            regs = fill_seven.get_regs_per_thread(sig)
        print(json.dumps(regs))
    """, devices=2)
    assert r.result == 32
    assert [c["device"] for c in r.named("cuModuleLoadDataEx")] == [1]


# --- contexts and memory ----------------------------------------------------------------

def test_memory_info_is_per_device(mock_script):
    r = mock_script("""
        zero, one = cuda.gpus[0].get_primary_context(), cuda.gpus[1].get_primary_context()
        before = [list(zero.get_memory_info()), list(one.get_memory_info())]
        with cuda.gpus[1]:
            d = cuda.to_device(np.zeros(1000, np.float32))    # 4096-byte size class
            inside = list(cuda.current_context().get_memory_info())
        after = [list(zero.get_memory_info()), list(one.get_memory_info())]
        print(json.dumps({"before": before, "inside": inside, "after": after,
                          "devices": [repr(zero.device), repr(one.device)],
                          "ids": [zero.id, one.id],
                          "same": cuda.gpus[1].get_primary_context() is one,
                          "current": cuda.get_current_device().id}))
    """, devices=2)
    res = r.result
    assert res["before"] == [[GIB, GIB], [2 * GIB, 2 * GIB]]
    assert res["inside"] == [2 * GIB - 4096, 2 * GIB]
    assert res["after"] == [[GIB, GIB], [2 * GIB - 4096, 2 * GIB]]
    assert res["devices"] == ["<CUDA device 0 'tidal mock GPU 0'>",
                              "<CUDA device 1 'tidal mock GPU 1'>"]
    assert res["ids"] == [0, 1] and res["same"]
    assert res["current"] == 0, "asking a context does not select its device"
    assert {c["device"] for c in r.named("cuMemGetInfo_v2")} == {0, 1}


def test_memory_stats_and_deallocations_are_per_device(mock_script):
    r = mock_script("""
        a = cuda.device_array(100, np.float32)
        with cuda.gpus[1]:
            b = cuda.device_array(1000, np.float32)
            ctx1 = cuda.current_context()
        ctx0 = cuda.current_context()
        del a, b
        stats = [ctx0.memory_stats()["bytes_cached"], ctx1.memory_stats()["bytes_cached"]]
        ctx1.deallocations.clear()
        stats += [ctx0.memory_stats()["bytes_cached"], ctx1.memory_stats()["bytes_cached"]]
        print(json.dumps(stats))
    """, devices=2)
    assert r.result == [512, 4096, 512, 0]
    allocs = {c["alloc"]: c["device"] for c in r.named("cuMemAlloc_v2")}
    assert [allocs[c["alloc"]] for c in r.named("cuMemFree_v2")] == [1]


def test_close_synchronises_frees_and_forgets_the_device(mock_script):
    r = mock_script("""
        keep = cuda.to_device(np.arange(4, dtype=np.int32))
        with cuda.gpus[1]:
            gone = cuda.device_array(10, np.int32)
        cuda.select_device(1)
        before = cuda.current_context()
        del gone
        cuda.close()
        out = [cuda.gpus.current, cuda.current_context() is before,
               cuda.get_current_device().id, keep.copy_to_host().tolist()]
        print(json.dumps(out))
    """, devices=2)
    assert r.result == [None, False, 0, [0, 1, 2, 3]]
    calls = [c["call"] for c in r.calls]
    close = calls.index("cuMemFree_v2")
    assert sorted(c["device"] for c in r.named("cuCtxSynchronize")) == [0, 1]
    assert "cuCtxSynchronize" in calls[:close]
    assert len(r.named("cuMemFree_v2")) == 1
    # The contexts stay retained (arrays and loaded kernels stay valid).
    assert not r.named("cuDevicePrimaryCtxRelease_v2")


# --- detect() and the cpu target ----------------------------------------------------------

def test_detect_prints_every_device_and_the_target(mock_script):
    r = mock_script("""
        found = cuda.detect()
        print(json.dumps(found))
    """, devices=2, cc="9.0,7.0")
    assert r.result is True
    lines = r.stdout.splitlines()[:-1]
    assert lines[0] == "Found 2 CUDA devices"
    assert lines[1].split() == ["id", "0", "tidal", "mock", "GPU", "0", "[SUPPORTED]"]
    facts = dict(line.strip().split(": ", 1) for line in lines[2:8])
    assert facts == {"Compute Capability": "9.0", "PCI Device ID": "0", "PCI Bus ID": "16",
                     "UUID": "GPU-7a1da100-5eed-4011-9c0d-deadbeef0000",
                     "Watchdog": "Disabled", "FP32/FP64 Performance Ratio": "2"}
    assert lines[8].split()[:6] == ["id", "1", "tidal", "mock", "GPU", "1"]
    assert lines[8].endswith("[NOT SUPPORTED: CC < 7.5]")
    assert lines[9].strip() == "Compute Capability: 7.0"
    assert lines[-3:-1] == ["Summary:", "\t1/2 devices are supported"]
    assert lines[-1].startswith("Kernels run on the 'cuda' target (driver: ")
    assert lines[-1].endswith("libtidal_mock_cuda.so)")


def test_detect_without_a_supported_device(mock_script):
    r = mock_script("print(json.dumps(cuda.detect()))", cc="7.0")
    assert r.result is False
    assert "\t0/1 devices are supported" in r.stdout.splitlines()


def test_detect_without_a_driver(mock_script):
    r = mock_script("print(json.dumps(cuda.detect()))", target=None, devices=0)
    assert r.result is True, "kernels run on the cpu target, as cuda.is_available() says"
    lines = r.stdout.splitlines()
    assert lines[0].startswith("No usable CUDA device: no CUDA device")
    assert lines[1] == "Kernels run on the 'cpu' target"


def test_cpu_target_keeps_its_device_beside_a_driver(mock_script):
    r = mock_script("""
        found = cuda.detect()
        d = cuda.get_current_device()
        out = [found, len(cuda.gpus), d.name, list(d.compute_capability),
               cuda.gpus.current == d]
        with cuda.gpus[0]:
            pass
        try:
            cuda.select_device(1)
        except ValueError as e:
            out.append([str(e), isinstance(e, IndexError)])
        out.append(list(cuda.current_context().get_memory_info()) != [GIB, GIB])
        print(json.dumps(out))
    """.replace("GIB", str(GIB)), target="cpu", devices=2)
    found, count, name, cc, current, error, host_memory = r.result
    assert found is True, "the driver's devices are there, though kernels run on the cpu"
    assert (count, name, cc, current) == (1, "tidal cpu target", [7, 5], True)
    assert error == ["the tidal cpu target has one device, id 0, not 1", True]
    assert host_memory
    assert r.stdout.splitlines()[0] == "Found 2 CUDA devices"
    assert "Kernels run on the 'cpu' target (driver: " in r.stdout
    assert not r.named("cuDevicePrimaryCtxRetain")


def test_binding_checks_its_arguments(mock_script):
    r = mock_script("""
        from tidal import _tidal
        out = {"by_number": _tidal.cuda_device_attribute(1, 16),
               "by_name": _tidal.cuda_device_attribute(1, "MULTIPROCESSOR_COUNT"),
               "current": _tidal.cuda_device_attribute(None, 16),
               "names": _tidal.cuda_device_attributes()["WARP_SIZE"],
               "info": _tidal.cuda_device_info(1)}
        calls = {
            "attribute_name": lambda: _tidal.cuda_device_attribute(0, "NOPE"),
            "attribute_type": lambda: _tidal.cuda_device_attribute(0, 1.5),
            "attribute_number": lambda: _tidal.cuda_device_attribute(0, 9999),
            "attribute_device": lambda: _tidal.cuda_device_attribute(5, 16),
            "info_device": lambda: _tidal.cuda_device_info(2),
            "info_type": lambda: _tidal.cuda_device_info("0"),
            "select_type": lambda: _tidal.cuda_select_device(True),
            "select_device": lambda: _tidal.cuda_select_device(2**40),
            "memory_info_type": lambda: _tidal.cuda_memory_info(0.0),
            "memory_info_device": lambda: _tidal.cuda_memory_info(-3),
            "stats_device": lambda: _tidal.cuda_memory_stats(9),
        }
        for name, call in calls.items():
            try:
                call()
                out[name] = "no error"
            except Exception as e:
                out[name] = [type(e).__name__, str(e)]
        out["selected"] = _tidal.cuda_current_device()
        print(json.dumps(out))
    """, devices=2)
    res = r.result
    assert (res["by_number"], res["by_name"], res["current"], res["names"]) == (134, 134, 132, 10)
    assert res["info"] == {
        "id": 1, "name": "tidal mock GPU 1", "compute_capability": [9, 0],
        "uuid": "GPU-7a1da100-5eed-4011-9c0d-deadbeef0001", "total_memory": 2 * GIB,
        "multiprocessor_count": 134, "warp_size": 32, "max_threads_per_block": 1024,
        "max_block_dim": [1024, 1024, 64], "max_grid_dim": [2**31 - 1, 65535, 65535],
        "max_shared_memory_per_block": 48 * 1024,
        "max_shared_memory_per_block_optin": 232448}
    assert res["attribute_name"][0] == "ValueError"
    assert "unknown CUDA device attribute 'NOPE'" in res["attribute_name"][1]
    assert res["attribute_type"] == [
        "TypeError", "a device attribute must be a name (str) or a CUdevice_attribute number (int)"]
    assert res["attribute_number"][0] == "CudaDriverError"
    assert "cuDeviceGetAttribute failed: CUDA_ERROR_INVALID_VALUE" in res["attribute_number"][1]
    assert "attribute 9999 of device 0 (tidal mock GPU 0)" in res["attribute_number"][1]
    no_device = "the driver has 2 devices, ids 0 to 1"
    for name, ordinal in (("attribute_device", 5), ("info_device", 2), ("select_device", -1),
                          ("memory_info_device", -3), ("stats_device", 9)):
        assert res[name] == ["ValueError", f"there is no CUDA device {ordinal}: {no_device}"]
    for name in ("info_type", "select_type", "memory_info_type"):
        assert res[name] == ["TypeError", "a device id must be an int or None"]
    assert res["selected"] is None


# --- fork -----------------------------------------------------------------------------

FORKED_CHILD = """
    import multiprocessing as mp

    def child(queue):
        try:
            cuda.to_device(np.arange(4))
        except cuda.CudaDriverError as error:
            queue.put(("error", str(error), error.call, error.error_name))
        else:
            queue.put(("ok",))

    {before_fork}
    queue = mp.get_context("fork").Queue()
    process = mp.get_context("fork").Process(target=child, args=[queue])
    process.start()
    got = queue.get(timeout=60)
    process.join()
    # The parent is not affected.
    print(json.dumps({{"child": got, "parent": cuda.to_device(np.arange(3)).copy_to_host().tolist()}}))
"""


def test_a_child_forked_after_cuda_started_cannot_use_it(mock_script):
    # Numba's test_fork: the child's first CUDA call raises CudaDriverError.
    r = mock_script(FORKED_CHILD.format(before_fork="cuda.current_context()"))
    assert r.returncode == 0, r.stderr
    kind, message, call, name = r.result["child"]
    assert kind == "error" and call == "fork" and name == "CUDA_ERROR_NOT_INITIALIZED"
    assert message.startswith("CUDA initialized before forking: this process (pid ")
    assert "'spawn'" in message
    assert r.result["parent"] == [0, 1, 2]


def test_a_forked_child_of_the_cpu_target_uses_it(mock_script):
    # The cpu target has no CUDA state to lose: a forked child uses it.
    r = mock_script(FORKED_CHILD.format(before_fork="cuda.current_context()"), target="cpu")
    assert r.returncode == 0, r.stderr
    assert r.result == {"child": ["ok"], "parent": [0, 1, 2]}
