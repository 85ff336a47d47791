"""Which target runs kernels and how the CUDA driver is found: the default
target is cuda when the driver has a device, cpu (with a notice) when it has
none; the cuda target without a driver says why at the first launch; the
driver's entry points are found through cuGetProcAddress or, where it
refuses, through dlsym. Against the mock CUDA driver (mock_driver.py)."""

from mock_driver import FILL_SEVEN


def test_entry_points_through_dlsym_too(mock_script):
    r = mock_script(FILL_SEVEN, no_proc_address=1)
    assert r.result["a"] == [7] * 10
    # The mock refused every cuGetProcAddress_v2, so dlsym found them.
    assert r.named("cuGetProcAddress_v2")
    r = mock_script(FILL_SEVEN)
    assert r.result["a"] == [7] * 10


def test_default_target_is_cuda_when_the_driver_has_a_device(mock_script):
    r = mock_script("print(json.dumps(cuda.current_target()))", target=None)
    assert r.result == "cuda" and "tidal:" not in r.stderr
    r = mock_script("print(json.dumps(cuda.current_target()))", target=None, devices=0)
    assert r.result == "cpu"
    assert "tidal: no usable CUDA GPU (no CUDA device" in r.stderr


def test_cuda_target_without_a_driver_says_why(mock_script):
    r = mock_script("""
        try:
            fill_seven[1, 1](np.zeros(1, np.int32), 1.0, np.zeros(1, np.float32))
        except RuntimeError as e:
            print(json.dumps(str(e)))
    """, driver="/nonexistent/libcuda.so.1")
    assert "kernel 'fill_seven' cannot run on the cuda target: the CUDA driver is not " \
        "usable: cannot open /nonexistent/libcuda.so.1" in r.result
