"""tidal kernels on a Dask cluster of worker processes (Debian's
python3-distributed): the example end to end, kernels launched from many
worker threads at once, one compilation per worker."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tidal
from tidal import cuda

distributed = pytest.importorskip("distributed", reason="Dask's distributed is not installed")
cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle is not installed")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PACKAGE_PARENT = os.path.dirname(os.path.dirname(tidal.__file__))


@cuda.jit
def scaled_add(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def run_scaled_add(seed):
    # One task: its own arrays, one launch; returns what NumPy must match.
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(50_000)
    y = rng.standard_normal(50_000)
    out = np.zeros_like(x)
    scaled_add[(x.size + 127) // 128, 128](float(seed), x, y, out)
    return bool(np.array_equal(out, float(seed) * x + y))


def kernels_on_this_worker():
    # The kernels this worker unpickled, with the signatures compiled.
    from tidal import pickling
    return sorted((kernel.__name__, len(kernel.signatures))
                  for kernel in list(pickling._known.values())
                  if hasattr(kernel, "signatures"))


def test_dask_example_runs_and_equals_numpy():
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT, TIDAL_TARGET="cpu")
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "dask_map_blocks.py")],
                            env=env, capture_output=True, timeout=300)
    output = result.stdout.decode()
    assert result.returncode == 0, output + result.stderr.decode()[-3000:]
    assert "map_blocks equals NumPy: True" in output, output
    assert output.rstrip().endswith("ok"), output


def test_kernel_from_many_threads_of_one_worker(monkeypatch):
    # The tasks are functions of this module: send them by value (the
    # workers do not import the tests), the kernel with them.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setenv("TIDAL_TARGET", "cpu")
    monkeypatch.setenv("TIDAL_CPU_THREADS", "1")
    monkeypatch.setenv("PYTHONPATH", PACKAGE_PARENT)
    from distributed import Client, LocalCluster
    try:
        with LocalCluster(n_workers=1, processes=True, threads_per_worker=4,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            # A first task compiles the kernel on the worker; the 32 after it,
            # four at a time, launch it from its cache.
            assert client.submit(run_scaled_add, 0, pure=False).result()
            futures = client.map(run_scaled_add, range(1, 33), pure=False)
            assert client.gather(futures) == [True] * 32
            (worker_kernels,) = client.run(kernels_on_this_worker).values()
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    # 33 tasks, each with the kernel pickled in: one kernel on the worker,
    # compiled for its one signature once.
    assert worker_kernels == [("scaled_add", 1)]
