"""A kernel that nothing refers to any more frees its code: the JIT's module
on the cpu target, the driver's module (cuModuleUnload) on the cuda target.
Kernels defined by exec() or in a module are only freed as reference
cycles (function -> globals -> kernel), so the collector must see what the
C++ half holds (python/src/Dispatcher.cpp). The runtime's debug counters
(tidal._tidal.live_code()) count the modules alive: robust where RSS is not
(bench/soak.py measures RSS)."""

import gc
import importlib.util
import itertools
import threading
import time
from pathlib import Path

import numpy as np

from tidal import _tidal, cuda

_names = itertools.count()

SOURCE = '''
from tidal import cuda

@cuda.jit
def scale(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * {factor} + 1
'''


def live(target):
    """The compiled modules of `target` alive now."""
    gc.collect()
    return _tidal.live_code()["cpu_modules" if target.name == "cpu" else "cuda_modules"]


def exec_kernel(factor, source=SOURCE):
    namespace = {}
    exec(source.format(factor=factor), namespace)
    return namespace


def module_kernel(folder, factor, source=SOURCE):
    name = f"dropped_kernels_{next(_names)}"
    path = Path(folder) / f"{name}.py"
    path.write_text(source.format(factor=factor))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def launch_scale(kernel, target, factor):
    a = np.arange(32, dtype=np.float64)
    target.forget_driver_calls()
    kernel[1, 32](a)
    target.assert_result("scale", a, np.arange(32) * factor + 1)


def test_a_dropped_kernel_frees_its_code(target, tmp_path):
    before = live(target)
    namespace = exec_kernel(2)
    module = module_kernel(tmp_path, 3)
    launch_scale(namespace["scale"], target, 2)
    launch_scale(module.scale, target, 3)
    assert live(target) == before + 2
    target.forget_driver_calls()
    del namespace, module
    assert live(target) == before
    if target.mock:  # the driver saw both modules go
        assert len(target.driver_calls("cuModuleUnload")) == 2


def test_many_dropped_kernels_leave_nothing(target, tmp_path):
    before = live(target)
    for n in range(12):
        launch_scale((exec_kernel(n) if n % 2 else module_kernel(tmp_path, n).__dict__)["scale"],
                     target, n)
    assert live(target) == before


def test_a_launch_configuration_kept_in_globals_is_freed_with_the_kernel(target):
    before = live(target)
    namespace = exec_kernel(2, SOURCE + "launch = scale[1, 32]\n")
    a = np.arange(32, dtype=np.float64)
    namespace["launch"](a)
    assert live(target) == before + 1
    del namespace
    assert live(target) == before


def test_live_kernels_keep_their_code(target):
    kept = exec_kernel(5)
    launch_scale(kept["scale"], target, 5)
    for n in range(4):
        launch_scale(exec_kernel(n)["scale"], target, n)
    gc.collect()
    launch_scale(kept["scale"], target, 5)  # its code was not freed under it


def test_device_functions_shared_by_kernels_survive_one_of_them(target):
    source = '''
from tidal import cuda

@cuda.jit(device=True)
def twice(x):
    return 2 * x

@cuda.jit
def scale(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = twice(a[i]) * {factor} + 1
'''
    first = exec_kernel(1, source)
    second = {"cuda": cuda, "twice": first["twice"]}
    exec("@cuda.jit\ndef scale(a):\n    i = cuda.grid(1)\n    if i < a.size:\n"
         "        a[i] = twice(a[i]) * 3 + 1\n", second)
    launch_scale(first["scale"], target, 2)
    del first["scale"]
    gc.collect()
    launch_scale(second["scale"], target, 6)
    third = {"cuda": cuda, "twice": second["twice"]}
    exec("@cuda.jit\ndef scale(a):\n    i = cuda.grid(1)\n    if i < a.size:\n"
         "        a[i] = twice(a[i]) + 1\n", third)
    launch_scale(third["scale"], target, 2)


def test_cache_hits_after_the_first_kernel_was_dropped(target, tmp_path, monkeypatch):
    monkeypatch.setenv("TIDAL_CACHE_DIR", str(tmp_path / "cache"))
    source = SOURCE.replace("@cuda.jit", "@cuda.jit(cache=True)")
    path = tmp_path / "cached_scale.py"
    path.write_text(source.format(factor=4))
    before = live(target)

    def load():
        spec = importlib.util.spec_from_file_location(f"cached_scale_{next(_names)}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    module = load()
    launch_scale(module.scale, target, 4)
    del module
    assert live(target) == before
    module = load()
    launch_scale(module.scale, target, 4)
    assert sum(module.scale.stats.cache_hits.values()) == 1
    del module
    assert live(target) == before


SLOW = '''
import math
from tidal import cuda

@cuda.jit
def slow(out, n):
    if cuda.grid(1) == 0:
        out[0] = 1.0
        s = 0.0
        for j in range(n):
            s += math.sqrt(j)
        out[1] = s
'''


def test_a_launch_in_flight_keeps_its_code(target):
    """The last reference to a kernel is dropped on one thread while another
    runs it: the launch finishes with its code, which goes afterwards."""
    before = live(target)
    namespace = exec_kernel(0, SLOW)
    out = cuda.to_device(np.zeros(2)) if target.name == "cuda" else np.zeros(2)
    n = 3_000_000
    # The configuration in a list the launching thread empties: then only
    # that thread's call refers to it.
    box = [namespace["slow"][1, 32]]
    errors = []

    def run():
        try:
            box.pop()(out, n)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    if target.computes:  # wait until the kernel runs
        deadline = time.monotonic() + 30
        while out[0] != 1.0 and time.monotonic() < deadline:
            time.sleep(0.001)
    del namespace
    gc.collect()
    thread.join()
    assert not errors, errors
    if target.computes:
        result = out.copy_to_host() if target.name == "cuda" else out
        assert result[1] == sum(np.sqrt(np.arange(n, dtype=np.float64)).tolist())
    assert live(target) == before


def test_a_module_dropped_after_an_asynchronous_launch_is_unloaded_after_it(target):
    """cuda target: a launch with device arrays returns at once; the module
    of a kernel dropped then is unloaded once the context has finished it."""
    if target.name != "cuda":
        return
    namespace = exec_kernel(2)
    a = cuda.to_device(np.arange(32, dtype=np.float64))
    namespace["scale"][1, 32](a)
    target.forget_driver_calls()
    del namespace
    gc.collect()
    if target.mock:
        calls = [c["call"] for c in target.driver_calls()
                 if c["call"] in ("cuCtxSynchronize", "cuModuleUnload")]
        assert calls == ["cuCtxSynchronize", "cuModuleUnload"], calls
