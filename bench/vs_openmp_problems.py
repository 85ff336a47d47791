"""The problems of the OpenMP comparison (bench/cpu_vs_openmp.py): for each
kernel its inputs, its NumPy reference and the check of a result against it,
and how tidal and @njit(parallel=True) call it.

A problem's arrays are named; the OpenMP worker (bench/openmp/main.cpp)
knows each kernel's names and parameters in the same order."""

import math

import numpy as np

# name -> (label, full size, --quick size, size for the tests)
SIZES = {
    "saxpy": ("saxpy, float32", 1 << 24, 1 << 22, 1000),
    "stencil": ("5-point stencil", 2048, 1024, 37),
    "matmul": ("matmul, 16×16 shared tiles", 512, 256, 40),
    "reduction": ("block tree reduction, 256 threads", 1 << 24, 1 << 22, 1000),
    "histogram": ("histogram, global atomics, 256 bins", 1 << 24, 1 << 22, 1000),
    "mandelbrot": ("mandelbrot, 200 iterations", 1024, 512, 40),
    "nbody": ("n-body, 128-body shared tiles", 4096, 2048, 300),
    "black_scholes": ("Black–Scholes (log, exp, erf)", 1 << 22, 1 << 20, 1000),
    "copy2d": ("2-D copy", 4096, 2048, 37),
    "transpose": ("transpose, 32×32 shared tiles", 4096, 2048, 37),
    "convolution": ("1-D convolution, 17 taps, shared halo", 1 << 24, 1 << 22, 1000),
}
KERNELS = tuple(SIZES)

# The block shape of each launch, as a CUDA author picks it; the kernels
# whose block is free are also run with the other shapes.
BLOCK = {"saxpy": (256,), "stencil": (16, 16), "matmul": (16, 16), "reduction": (256,),
         "histogram": (256,), "mandelbrot": (16, 16), "nbody": (128,),
         "black_scholes": (256,), "copy2d": (16, 16), "transpose": (32, 32),
         "convolution": (256,)}
SHAPES_2D = ((16, 16), (32, 8), (256, 1), (1024, 1))
BLOCK_VARIANTS = {"saxpy": ((256,), (1024,)), "stencil": SHAPES_2D, "copy2d": SHAPES_2D,
                  "mandelbrot": SHAPES_2D}

# Bytes a memory-bound kernel must move per run (STREAM's count: each array
# read or written once, no write-allocate), for its bandwidth beside the triad.
MEMORY_BOUND = ("saxpy", "stencil", "copy2d")
ITERATIONS = 200
RADIUS = 8
SOFTENING = 0.01


def size_text(name, size):
    if name in ("stencil", "matmul", "mandelbrot", "copy2d", "transpose"):
        return f"{size}²"
    if size >= 1 << 10 and size & (size - 1) == 0:
        return f"2^{size.bit_length() - 1}"
    return str(size)


def bytes_moved(name, size):
    if name == "saxpy":
        return 12 * size
    if name in ("stencil", "copy2d", "transpose"):
        return 8 * size * size
    return None


def make(name, size, seed=0):
    """(inputs, outputs, params): named arrays in the kernel's order (outputs
    zeroed) and its scalar parameters as the OpenMP worker takes them."""
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)
    if name == "saxpy":
        return {"x": normal(size), "y": normal(size)}, {"out": np.zeros(size, np.float32)}, [2.0]
    if name in ("stencil", "copy2d", "transpose"):
        return {"a": normal(size, size)}, {"out": np.zeros((size, size), np.float32)}, [size, size]
    if name == "matmul":
        return ({"A": normal(size, size), "B": normal(size, size)},
                {"C": np.zeros((size, size), np.float32)}, [size, size, size])
    if name == "reduction":
        return ({"x": rng.random(size, dtype=np.float32)}, {"total": np.zeros(1, np.float32)}, [])
    if name == "histogram":
        return ({"x": rng.integers(0, 256, size, dtype=np.int32)},
                {"bins": np.zeros(256, np.int32)}, [])
    if name == "mandelbrot":
        return {}, {"counts": np.zeros((size, size), np.int32)}, \
            [size, size, -2.0, -1.5, 3.0 / size, ITERATIONS]
    if name == "nbody":
        pos = np.empty((size, 4), np.float32)
        pos[:, :3] = normal(size, 3)
        pos[:, 3] = rng.uniform(0.5, 1.5, size)
        return {"pos": pos}, {"acc": np.zeros((size, 3), np.float32)}, [SOFTENING]
    if name == "black_scholes":
        inputs = {"price": rng.uniform(5.0, 30.0, size).astype(np.float32),
                  "strike": rng.uniform(1.0, 100.0, size).astype(np.float32),
                  "years": rng.uniform(0.25, 10.0, size).astype(np.float32)}
        return inputs, {"call": np.zeros(size, np.float32), "put": np.zeros(size, np.float32)}, \
            [0.02, 0.30]
    if name == "convolution":
        return ({"x": normal(size), "weights": normal(2 * RADIUS + 1)},
                {"out": np.zeros(size, np.float32)}, [])
    raise KeyError(name)


def _erf(values):
    try:
        from scipy.special import erf
        return erf(values)
    except ImportError:
        return np.vectorize(math.erf, otypes=[np.float64])(values)


def reference(name, inputs, params):
    """The expected outputs, from NumPy (in float64 where the kernel sums)."""
    if name == "saxpy":
        return {"out": np.float32(params[0]) * inputs["x"] + inputs["y"]}
    if name == "stencil":
        a = inputs["a"]
        out = a.copy()
        out[1:-1, 1:-1] = np.float32(0.25) * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        return {"out": out}
    if name == "copy2d":
        return {"out": inputs["a"].copy()}
    if name == "transpose":
        return {"out": np.ascontiguousarray(inputs["a"].T)}
    if name == "matmul":
        return {"C": inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)}
    if name == "reduction":
        return {"total": np.array([inputs["x"].sum(dtype=np.float64)])}
    if name == "histogram":
        return {"bins": np.bincount(inputs["x"], minlength=256).astype(np.int32)}
    if name == "mandelbrot":
        n, m, x0, y0, step, iterations = params
        cr = np.float32(x0) + np.float32(step) * np.arange(m, dtype=np.float32)[None, :]
        ci = np.float32(y0) + np.float32(step) * np.arange(n, dtype=np.float32)[:, None]
        cr, ci = np.broadcast_to(cr, (n, m)).copy(), np.broadcast_to(ci, (n, m)).copy()
        zr = np.zeros((n, m), np.float32)
        zi = np.zeros((n, m), np.float32)
        counts = np.zeros((n, m), np.int32)
        active = np.ones((n, m), bool)
        for _ in range(iterations):
            active &= zr * zr + zi * zi <= np.float32(4.0)
            if not active.any():
                break
            t = zr * zr - zi * zi + cr
            zi = np.where(active, np.float32(2.0) * zr * zi + ci, zi)
            zr = np.where(active, t, zr)
            counts += active
        return {"counts": counts}
    if name == "nbody":
        pos = inputs["pos"].astype(np.float64)
        acc = np.empty((len(pos), 3))
        for start in range(0, len(pos), 256):
            d = pos[None, :, :3] - pos[start:start + 256, None, :3]
            inv = 1.0 / np.sqrt((d * d).sum(axis=2) + params[0])
            acc[start:start + 256] = (d * (pos[None, :, 3] * inv ** 3)[:, :, None]).sum(axis=1)
        return {"acc": acc}
    if name == "black_scholes":
        s, k, t = (inputs[key].astype(np.float64) for key in ("price", "strike", "years"))
        rate, volatility = params
        d1 = (np.log(s / k) + (rate + 0.5 * volatility ** 2) * t) / (volatility * np.sqrt(t))
        d2 = d1 - volatility * np.sqrt(t)
        cdf1 = 0.5 * (1 + _erf(d1 / math.sqrt(2)))
        cdf2 = 0.5 * (1 + _erf(d2 / math.sqrt(2)))
        discount = k * np.exp(-rate * t)
        return {"call": s * cdf1 - discount * cdf2, "put": discount * (1 - cdf2) - s * (1 - cdf1)}
    if name == "convolution":
        x = inputs["x"].astype(np.float64)
        return {"out": np.correlate(x, inputs["weights"].astype(np.float64), mode="same")}
    raise KeyError(name)


# name -> (rtol, atol as a fraction of the reference's largest magnitude);
# None: exact. Mandelbrot's escape counts are exact but for pixels on the
# set's edge, where another rounding of z changes the count: g++ contracts
# z*z + c into FMAs by default (-ffp-contract=fast), which changes 0.08% of
# the 1024² counts (0.5% of 40²); at most MANDELBROT_EDGE of them may differ.
TOLERANCE = {"saxpy": (1e-5, 1e-6), "stencil": (1e-5, 1e-6), "matmul": (1e-3, 1e-4),
             "reduction": (1e-4, 0.0), "nbody": (1e-3, 1e-4), "black_scholes": (1e-3, 1e-5),
             "convolution": (1e-4, 1e-5)}
MANDELBROT_EDGE = 1e-2


def check(name, outputs, expected):
    """None when every output matches its reference, else what is wrong."""
    for key, want in expected.items():
        got = outputs.get(key)
        if got is None:
            return f"{key}: no output"
        if got.shape != want.shape:
            return f"{key}: shape {got.shape}, expected {want.shape}"
        if name == "mandelbrot":
            off = np.count_nonzero(got != want)
            if off > MANDELBROT_EDGE * want.size:
                return _describe(key, got, want, got != want)
            continue
        if name in TOLERANCE:
            rtol, atol = TOLERANCE[name]
            atol *= float(np.max(np.abs(want))) if want.size else 0.0
            wrong = ~np.isclose(got.astype(np.float64), want, rtol=rtol, atol=atol)
        else:
            wrong = got != want
        if wrong.any():
            return _describe(key, got, want, wrong)
    return None


def _describe(key, got, want, wrong):
    index = np.unravel_index(int(np.argmax(wrong)), wrong.shape)
    where = index[0] if len(index) == 1 else tuple(int(i) for i in index)
    return (f"{key}[{where}] = {got[index]!r}, expected {want[index]!r} "
            f"({np.count_nonzero(wrong)} of {wrong.size} elements wrong)")


def scalar_arguments(name, params):
    """The kernel's scalar arguments as the CUDA and @njit kernels take them
    (float32 where the kernel computes in float32)."""
    f32 = np.float32
    if name == "saxpy":
        return [f32(params[0])]
    if name == "mandelbrot":
        return [f32(params[2]), f32(params[3]), f32(params[4]), int(params[5])]
    if name == "nbody":
        return [f32(params[0])]
    if name == "black_scholes":
        return [f32(params[0]), f32(params[1])]
    return []


def njit_call(name, compiled, arrays, params):
    """A call of the @njit(parallel=True) version over the loaded arrays."""
    scalars = scalar_arguments(name, params)
    kernel = compiled[name]
    if name == "saxpy":
        return lambda: kernel(scalars[0], arrays["x"], arrays["y"], arrays["out"])
    if name == "mandelbrot":
        return lambda: kernel(arrays["counts"], *scalars)
    if name == "nbody":
        return lambda: kernel(arrays["pos"], arrays["acc"], scalars[0])
    if name == "histogram":
        from numba import get_num_threads
        return lambda: kernel(arrays["x"], arrays["bins"], get_num_threads())
    if name == "black_scholes":
        a = arrays
        return lambda: kernel(a["price"], a["strike"], a["years"], scalars[0], scalars[1],
                              a["call"], a["put"])
    order = {"stencil": ("a", "out"), "copy2d": ("a", "out"), "transpose": ("a", "out"),
             "matmul": ("A", "B", "C"), "reduction": ("x", "total"),
             "convolution": ("x", "weights", "out")}[name]
    args = [arrays[key] for key in order]
    return lambda: kernel(*args)


def _grid(extent, block):
    """The grid covering `extent` (x first, as CUDA counts) with `block`."""
    return tuple((e + b - 1) // b for e, b in zip(extent, block))


def tidal_call(name, namespace, arrays, params, block):
    """A launch of the CUDA-style kernel on the host arrays, as its user
    writes it, with `block` threads per block; ends when the kernel has."""
    scalars = scalar_arguments(name, params)
    kernel = getattr(namespace, name)
    a = arrays
    if name in ("saxpy", "black_scholes", "histogram", "reduction", "convolution", "nbody"):
        size = len(a["pos"]) if name == "nbody" else a["x" if "x" in a else "price"].size
        launch = kernel[_grid((size,), block), block]
        if name == "saxpy":
            return lambda: launch(scalars[0], a["x"], a["y"], a["out"])
        if name == "black_scholes":
            return lambda: launch(a["price"], a["strike"], a["years"], scalars[0], scalars[1],
                                  a["call"], a["put"])
        if name == "nbody":
            return lambda: launch(a["pos"], a["acc"], scalars[0])
        if name == "convolution":
            return lambda: launch(a["x"], a["weights"], a["out"])
        if name == "histogram":
            def histogram():
                a["bins"][:] = 0
                launch(a["x"], a["bins"])
            return histogram
        partial = np.zeros(_grid((size,), block)[0], np.float32)

        def reduction():
            # the blocks' sums, then their sum on the host
            launch(a["x"], partial)
            a["total"][0] = partial.sum()
        return reduction
    if name == "matmul":
        n, m = a["C"].shape
        launch = kernel[_grid((m, n), block), block]
        return lambda: launch(a["A"], a["B"], a["C"])
    if name == "transpose":
        n, m = a["a"].shape
        launch = kernel[_grid((m, n), block), block]
        return lambda: launch(a["a"], a["out"])
    if name in ("stencil", "copy2d"):
        n, m = a["a"].shape
        launch = kernel[_grid((m, n), block), block]
        return lambda: launch(a["a"], a["out"])
    if name == "mandelbrot":
        n, m = a["counts"].shape
        launch = kernel[_grid((m, n), block), block]
        return lambda: launch(a["counts"], *scalars)
    raise KeyError(name)
