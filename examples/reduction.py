"""Reductions with cuda.reduce / cuda.Reduce: a sum, a maximum with an
initial value, the largest magnitude, and a result left on the device.

    PYTHONPATH=build/python /usr/bin/python3 examples/reduction.py

It runs on the GPU when one is usable and on the cpu target otherwise.
"""

import numpy as np

from tidal import cuda


@cuda.reduce
def sum_reduce(a, b):
    return a + b


max_reduce = cuda.Reduce(lambda a, b: max(a, b))
largest_magnitude = cuda.Reduce(lambda a, b: max(abs(a), abs(b)))


def main():
    rng = np.random.default_rng(0)
    values = rng.standard_normal(1_000_003)  # float64, on the host
    device_values = cuda.to_device(values)   # reductions take device arrays too

    total = sum_reduce(values)
    largest = max_reduce(device_values, init=-np.inf)
    magnitude = largest_magnitude(device_values)
    first_half = sum_reduce(device_values, size=values.size // 2)
    on_device = cuda.device_array(1, dtype=np.float64)
    sum_reduce(device_values, res=on_device)  # the result stays on the device

    checks = {
        "sum": (total, values.sum()),
        "max": (largest, values.max()),
        "max |x|": (magnitude, np.abs(values).max()),
        "sum of the first half": (first_half, values[:values.size // 2].sum()),
        "sum into a device array": (on_device.copy_to_host()[0], values.sum()),
    }
    ok = True
    print(f"reductions of {values.size:,} float64 on the {cuda.current_target()} target:")
    for name, (got, expected) in checks.items():
        good = np.isclose(got, expected, rtol=1e-9, atol=1e-9)
        ok &= bool(good)
        print(f"  {name:<24} {got: .9f}  (NumPy {expected: .9f}) {'OK' if good else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
