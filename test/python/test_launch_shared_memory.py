"""A launch's dynamic shared memory, alone and with the kernel's static
shared arrays, against the device's shared memory per block (48 KiB
without opting in, 227 KiB with: a launch that asks for more than 48 KiB
opts in, as on a GPU): ValueError at the launch on both targets, with one
message naming the kernel, the bytes asked and the limit (issue 27 §2)."""

import numpy as np
import pytest

from tidal import cuda, float32

OPTIN = 232448  # an sm_90 GPU's, the mock driver's and the cpu target's
STATIC = 16384  # the static shared array of `with_static` below


@cuda.jit
def dynamic_only(a):
    s = cuda.shared.array(0, float32)
    s[0] = 1
    a[0] = s[0]


@cuda.jit
def with_static(a):
    fixed = cuda.shared.array(4096, float32)  # 16 KiB
    dynamic = cuda.shared.array(0, float32)
    i = cuda.threadIdx.x
    fixed[i] = 2
    dynamic[i] = 1
    cuda.syncthreads()
    if i == 0:
        a[0] = fixed[31] + dynamic[31]


def test_the_cpu_device_reports_the_limits():
    from tidal.cuda.target import use_target
    with use_target("cpu"):
        device = cuda.get_current_device()
        assert device.MAX_SHARED_MEMORY_PER_BLOCK == 48 * 1024
        assert device.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN == OPTIN


def test_far_too_much_dynamic_shared_memory_fails_at_the_launch(target):
    a = np.zeros(1, np.float32)
    with pytest.raises(ValueError) as error:
        dynamic_only[1, 32, 0, 2**40](a)
    message = str(error.value)
    assert "kernel 'dynamic_only'" in message
    assert f"{2**40} bytes of dynamic shared memory asked" in message
    assert f"the device allows at most {OPTIN} ({OPTIN} per block less the kernel's 0 " \
           f"static bytes)" in message
    if target.mock:
        assert target.launched("dynamic_only") == 0


def test_static_and_dynamic_shared_memory_together(target):
    a = np.zeros(1, np.float32)
    most = OPTIN - STATIC
    with pytest.raises(ValueError, match=f"kernel 'with_static' .*{most + 1} bytes of dynamic "
                       f"shared memory asked, the device allows at most {most} \\({OPTIN} per "
                       f"block less the kernel's {STATIC} static bytes\\)"):
        with_static[1, 32, 0, most + 1](a)
    target.forget_driver_calls()
    with_static[1, 32, 0, most](a)  # just fits: the launch opts in on a GPU
    target.assert_result("with_static", a, [3])


def test_dynamic_shared_memory_within_48_kib_needs_no_opt_in(target):
    a = np.zeros(1, np.float32)
    target.forget_driver_calls()
    dynamic_only[1, 32, 0, 48 * 1024](a)
    target.assert_result("dynamic_only", a, [1])
    if target.mock:
        assert target.driver_calls("cuFuncSetAttribute") == []
