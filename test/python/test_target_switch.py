"""The target chosen in the process, not once per process:
tidal.cuda.target.set_target / use_target, a kernel's code kept per target,
and device arrays, streams and events that belong to the target they were
made on.

The cuda target runs over the mock CUDA driver (build/lib/libtidal_mock_cuda.so,
see mock_driver.py), in a process of its own per test because the driver
library is chosen (TIDAL_CUDA_DRIVER) at its first use. The mock's kernel
``fill_seven`` writes int32 7 into its first array; on the cpu target the
same kernel really runs.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tidal
from tidal import cuda
from tidal.cuda import target as target_module

MOCK = Path(os.environ.get("TIDAL_MOCK_CUDA_LIBRARY") or
            Path(tidal.__file__).resolve().parents[2] / "lib" / "libtidal_mock_cuda.so")
needs_mock = pytest.mark.skipif(not MOCK.is_file(), reason=f"no mock CUDA driver at {MOCK}")

KERNELS = '''
from tidal import cuda


@cuda.jit
def fill_seven(a, x, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = 7
'''


def run_script(tmp_path, script, driver=MOCK, target="cpu"):
    """Runs `script` (after `import json, numpy as np; from tidal import cuda;
    from tidal.cuda.target import set_target, use_target; from kernels import
    *`) in a new process whose CUDA driver is `driver`; returns (process,
    the driver's calls)."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    log = tmp_path / "calls.jsonl"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TIDAL_MOCK_CUDA_") and k != "TIDAL_TARGET"}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path), str(Path(tidal.__file__).resolve().parents[1])])
    env["TIDAL_CUDA_DRIVER"] = str(driver)
    env["TIDAL_MOCK_CUDA_LOG"] = str(log)
    if target:
        env["TIDAL_TARGET"] = target
    prelude = ("import json, numpy as np\nfrom tidal import cuda\n"
               "from tidal.cuda.target import current_target, set_target, use_target\n"
               "from kernels import *\n")
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    calls = ([json.loads(line) for line in log.read_text().splitlines()]
             if log.exists() else [])
    return proc, calls


def result_of(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def named(calls, name):
    return [c for c in calls if c["call"] == name]


@needs_mock
def test_one_kernel_launches_on_both_targets_in_one_process(tmp_path):
    proc, calls = run_script(tmp_path, """
        seen = [current_target()]
        a = np.zeros(6, np.int32)
        other = np.zeros(2, np.int32)
        fill_seven[1, 8](a, 1.0, other)      # cpu: the kernel runs here
        with use_target("cuda"):
            seen.append(current_target())
            b = np.zeros(6, np.int32)
            fill_seven[1, 8](b, 1.0, other)  # cuda: the mock driver writes 7
            fill_seven[1, 8](b, 1.0, other)  # its loaded module is reused
        seen.append(current_target())
        c = np.zeros(3, np.int32)
        fill_seven[1, 8](c, 1.0, other)      # cpu again: its code was kept
        print(json.dumps({"seen": seen, "a": a.tolist(), "b": b.tolist(),
                          "c": c.tolist(), "signatures": fill_seven.signatures}))
    """)
    result = result_of(proc)
    assert result["seen"] == ["cpu", "cuda", "cpu"]
    assert result["a"] == [7] * 6 and result["c"] == [7] * 3
    assert result["b"] == [7] * 6
    assert len(named(calls, "cuLaunchKernel")) == 2  # only the cuda launches reach the driver
    assert len(named(calls, "cuModuleLoadDataEx")) == 1
    assert result["signatures"] == ["(array(int32, 1d, C), float64, array(int32, 1d, C))"]


@needs_mock
def test_set_target_switches_until_switched_back(tmp_path):
    proc, calls = run_script(tmp_path, """
        set_target("cuda")
        a = np.zeros(4, np.int32)
        fill_seven[1, 4](a, 1.0, np.zeros(2, np.int32))
        set_target("cpu")
        fill_seven[1, 4](a, 1.0, np.zeros(2, np.int32))
        print(json.dumps([current_target(), a.tolist()]))
    """)
    assert result_of(proc) == ["cpu", [7] * 4]
    assert len(named(calls, "cuLaunchKernel")) == 1


def test_a_target_is_cpu_or_cuda():
    before = target_module.current_target()
    for wrong in ("gpu", "CPU", None, 1):
        with pytest.raises(ValueError, match="a tidal target is 'cpu' or 'cuda', not"):
            target_module.set_target(wrong)
        with pytest.raises(ValueError, match="a tidal target is 'cpu' or 'cuda', not"):
            with target_module.use_target(wrong):
                pass
    assert target_module.current_target() == before


def test_use_target_restores_the_target_when_its_block_raises():
    before = target_module.current_target()
    with pytest.raises(KeyError):
        with target_module.use_target("cpu") as name:
            assert name == "cpu" and target_module.current_target() == "cpu"
            raise KeyError("inside")
    assert target_module.current_target() == before


def test_selecting_cuda_without_a_driver_raises_the_launch_error(tmp_path):
    proc, _ = run_script(tmp_path, """
        import sys
        try:
            set_target("cuda")
        except RuntimeError as error:
            print(json.dumps([str(error), current_target()]))
            sys.exit(0)
        sys.exit("set_target('cuda') did not raise")
    """, driver=tmp_path / "no-such-libcuda.so")
    message, still = result_of(proc)
    assert still == "cpu"
    assert message.startswith("the cuda target cannot be selected: the CUDA driver is not "
                              "usable: ")
    assert "no-such-libcuda.so" in message and "TIDAL_TARGET=cpu" in message


@needs_mock
def test_device_arrays_belong_to_the_target_they_were_made_on(tmp_path):
    proc, _ = run_script(tmp_path, """
        errors = []
        host = cuda.to_device(np.zeros(4, np.int32))         # cpu target
        with use_target("cuda"):
            device = cuda.to_device(np.zeros(4, np.int32))   # cuda target
            try:
                fill_seven[1, 4](host, 1.0, host)
            except ValueError as error:
                errors.append(str(error))
        try:
            fill_seven[1, 4](device, 1.0, device)
        except ValueError as error:
            errors.append(str(error))
        # Each array still works on its own target, and copies to the host.
        fill_seven[1, 4](host, 1.0, host)
        with use_target("cuda"):
            fill_seven[1, 4](device, 1.0, device)
        # Nor does an array take a stream of the other target.
        cpu_stream = cuda.stream()
        with use_target("cuda"):
            cuda_stream = cuda.stream()
        stream_errors = []
        for attempt in (lambda: host.copy_to_host(stream=cuda_stream),
                        lambda: device.copy_to_host(stream=cpu_stream),
                        lambda: cuda.to_device(np.zeros(2), stream=cuda_stream)):
            try:
                attempt()
            except ValueError as error:
                stream_errors.append(str(error))
        print(json.dumps([errors, host.copy_to_host().tolist(),
                          device.copy_to_host().tolist(), host.target, device.target,
                          stream_errors]))
    """)
    errors, host, device, host_target, device_target, stream_errors = result_of(proc)
    assert (host_target, device_target) == ("cpu", "cuda")
    mixed = ("this device array was made on the {} target but is used with a stream made on "
             "the {} target: each belongs to the target it was made on")
    assert stream_errors == [mixed.format("cpu", "cuda"), mixed.format("cuda", "cpu"),
                             mixed.format("cpu", "cuda")]
    assert errors == [
        "argument 'a' of kernel 'fill_seven' is a device array made on the cpu target, but "
        "the kernel is launched on the cuda target: copy it to the host (copy_to_host()) or "
        "launch on the cpu target",
        "argument 'a' of kernel 'fill_seven' is a device array made on the cuda target, but "
        "the kernel is launched on the cpu target: copy it to the host (copy_to_host()) or "
        "launch on the cuda target",
    ]
    assert host == [7] * 4 and device == [7] * 4


@needs_mock
def test_streams_and_events_belong_to_the_target_they_were_made_on(tmp_path):
    proc, _ = run_script(tmp_path, """
        errors = []
        cpu_stream, cpu_event = cuda.stream(), cuda.event()
        with use_target("cuda"):
            cuda_stream, cuda_event = cuda.stream(), cuda.event()
            for attempt in (lambda: fill_seven[1, 4, cpu_stream](np.zeros(4, np.int32), 1.0,
                                                                 np.zeros(4, np.int32)),
                            lambda: cuda_event.record(cpu_stream),
                            lambda: cuda_event.wait(cpu_stream)):
                try:
                    attempt()
                except ValueError as error:
                    errors.append(str(error))
            cuda_event.record(cuda_stream)
            cuda_stream.synchronize()
        a = np.zeros(4, np.int32)
        fill_seven[1, 4, cpu_stream](a, 1.0, a)
        cpu_stream.synchronize()
        cpu_event.record(cpu_stream)
        cuda_stream.synchronize()  # on its own target, whichever is selected
        for attempt in (lambda: fill_seven[1, 4, cuda_stream](a, 1.0, a),
                        lambda: cpu_event.record(cuda_stream),
                        lambda: cuda.event_elapsed_time(cpu_event, cuda_event)):
            try:
                attempt()
            except ValueError as error:
                errors.append(str(error))
        print(json.dumps([errors, a.tolist(), cpu_event.target, cuda_event.target,
                          cpu_stream.target, cuda_stream.target]))
    """)
    errors, a, *owners = result_of(proc)
    assert a == [7] * 4
    assert owners == ["cpu", "cuda", "cpu", "cuda"]
    launch_error = ("kernel 'fill_seven' is launched on the {} target with a stream made on "
                    "the {} target: a stream belongs to the target it was made on")
    event_error = ("this event was made on the {} target but is used with a stream made on "
                   "the {} target: each belongs to the target it was made on")
    assert errors[0] == launch_error.format("cuda", "cpu")
    assert errors[1] == errors[2] == event_error.format("cuda", "cpu")
    assert errors[3] == launch_error.format("cpu", "cuda")
    assert errors[4] == event_error.format("cpu", "cuda")
    assert errors[5].startswith("event_elapsed_time: the start event was made on the cpu "
                                "target and the end event on the cuda target")
    assert len(errors) == 6


@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_default_streams_serve_every_target():
    for stream in (cuda.default_stream(), cuda.legacy_default_stream(),
                   cuda.per_thread_default_stream()):
        assert stream.target is None
    with target_module.use_target("cpu"):
        a = np.zeros(3, np.float32)
        add_one[1, 4, cuda.default_stream()](a)
        cuda.default_stream().synchronize()
        assert repr(cuda.default_stream()) == "<Default CUDA stream on the tidal cpu target>"
        assert a.tolist() == [1, 1, 1]
