"""GPU benchmarks, side by side: tidal, numba-cuda and CuPy (RawKernel, and
CuPy's own library call where one exists) on the same card.

Each interpreter measures the backends it can import and writes JSON; a third
call merges them into one JSON and one Markdown table (gpu-kit/run.sh does all
three: numba-cuda and CuPy under the GPU machine's Python 3.12, tidal under
the kit's Python 3.11):

    python3 bench/gpu.py --backends numba,cupy --json OUT/gpu-numba-cupy.json
    TIDAL_TARGET=cuda python3.11 bench/gpu.py --backends tidal --json OUT/gpu-tidal.json
    python3 bench/gpu.py --merge OUT/gpu-numba-cupy.json OUT/gpu-tidal.json --json OUT/gpu.json --md OUT/gpu.md

Measures: device-to-device copy bandwidth (the yardstick), effective
bandwidth of saxpy and the stencil against it (goal: at least 90%), GFLOP/s
of the 16x16-tiled matmul, time of the block reduction and of the histogram,
and launch overhead of an empty kernel for the argument shapes of
kernels.LAUNCH_SHAPES (0 arguments to 256 scalars; tidal also with CuPy arrays).
Kernel times come from CUDA events, median (min-max) over repeats; launch
overhead is host time per call over many calls, synchronised at the end.
`--small` shrinks every size (used to try the runner under Numba's simulator)."""

import argparse
import json
import os
import platform
import socket
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

SIZES = {"copy": 1 << 26, "saxpy": 1 << 26, "stencil": 8192, "matmul": 2048,
         "reduction": 1 << 26, "histogram": 1 << 26}
SMALL = {"copy": 1 << 12, "saxpy": 1 << 12, "stencil": 64, "matmul": 32,
         "reduction": 1 << 12, "histogram": 1 << 12}
BACKEND_LABEL = {"tidal": "tidal", "numba": "numba-cuda", "cupy": "CuPy RawKernel",
                 "cupy-lib": "CuPy library"}


def summary(samples):
    values = sorted(samples)
    return {"median": statistics.median(values), "min": values[0], "max": values[-1], "n": len(values)}


def first_line(error):
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _cupy():
    """CuPy when it imports here (as the source of foreign arrays), else None."""
    try:
        import cupy
    except Exception:  # noqa: BLE001 (not installed, or no driver for it)
        return None
    return cupy


# --- backends ------------------------------------------------------------------------------------

class NumbaStyle:
    """numba.cuda, or tidal.cuda: the same API, the same kernel source."""

    def __init__(self, name, cuda):
        self.name, self.cuda = name, cuda
        self.k = kernels.define(cuda)

    def to_device(self, array):
        return self.cuda.to_device(array)

    def to_host(self, array):
        return array.copy_to_host()

    def empty_like(self, array):
        return self.cuda.device_array_like(array)

    def copy(self, dst, src):
        dst.copy_to_device(src)

    def synchronize(self):
        self.cuda.synchronize()

    def event_ms(self, func, repeats):
        start, end = self.cuda.event(), self.cuda.event()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            start.record()
            func()
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
            # Numba's simulator has no real events (0 ms): use the host's clock there.
            times.append(ms if ms > 0 else (time.perf_counter() - t0) * 1e3)
        return times

    def launch(self, name, grid, block, args):
        kernels.kernel(self.k, name)[grid, block](*args)


CUDA_SOURCE = r"""
#define TILE 16
#define BLOCK 256
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void stencil(const float* a, float* out, long long n, long long m) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long j = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < m) {
        if (i > 0 && j > 0 && i < n - 1 && j < m - 1)
            out[i * m + j] = 0.25f * (a[(i - 1) * m + j] + a[(i + 1) * m + j] + a[i * m + j - 1] + a[i * m + j + 1]);
        else
            out[i * m + j] = a[i * m + j];
    }
}
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float sA[TILE][TILE];
    __shared__ float sB[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float tmp = 0.0f;
    for (int i = 0; i < gridDim.x; ++i) {
        sA[ty][tx] = 0; sB[ty][tx] = 0;
        if (y < n && tx + i * TILE < n) sA[ty][tx] = A[y * n + tx + i * TILE];
        if (x < n && ty + i * TILE < n) sB[ty][tx] = B[(ty + i * TILE) * n + x];
        __syncthreads();
        for (int j = 0; j < TILE; ++j) tmp += sA[ty][j] * sB[j][tx];
        __syncthreads();
    }
    if (y < n && x < n) C[y * n + x] = tmp;
}
extern "C" __global__ void reduction(const float* x, float* partial, long long n) {
    __shared__ float buf[BLOCK];
    int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + tid;
    buf[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = buf[0];
}
extern "C" __global__ void histogram(const int* x, int* bins, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i]], 1);
}
extern "C" __global__ void empty0() {}
"""
# The empty kernels of kernels.LAUNCH_SHAPES, with the same parameters in C.
for _kernel, _arrays, _scalars in kernels.LAUNCH_SHAPES.values():
    if _arrays + _scalars:
        _params = [f"float* a{i}" for i in range(_arrays)] + [f"float s{i}" for i in range(_scalars)]
        CUDA_SOURCE += f'extern "C" __global__ void {_kernel}({", ".join(_params)}) {{}}\n'


class CupyRaw:
    """The same kernels as CUDA C through cupy.RawModule (nvrtc)."""

    def __init__(self, cp):
        self.name, self.cp = "cupy", cp
        self.module = cp.RawModule(code=CUDA_SOURCE)
        self.functions = {}

    def to_device(self, array):
        return self.cp.asarray(array)

    def to_host(self, array):
        return self.cp.asnumpy(array)

    def empty_like(self, array):
        return self.cp.empty_like(array)

    def copy(self, dst, src):
        self.cp.copyto(dst, src)

    def synchronize(self):
        self.cp.cuda.runtime.deviceSynchronize()

    def event_ms(self, func, repeats):
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        times = []
        for _ in range(repeats):
            start.record()
            func()
            end.record()
            end.synchronize()
            times.append(self.cp.cuda.get_elapsed_time(start, end))
        return times

    def launch(self, name, grid, block, args):
        grid = grid if isinstance(grid, tuple) else (grid,)
        block = block if isinstance(block, tuple) else (block,)
        fixed = []
        for a in args:  # C's types: int -> long long (int for matmul's n), floats stay float32
            if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
                fixed.append(np.int32(a) if name == "matmul" else np.int64(a))
            else:
                fixed.append(a)
        extra = ()
        if name == "saxpy":
            extra = (np.int64(args[1].size),)
        elif name == "stencil":
            extra = (np.int64(args[0].shape[0]), np.int64(args[0].shape[1]))
        elif name == "matmul":
            extra = (np.int32(args[0].shape[0]),)
        elif name in ("reduction", "histogram"):
            extra = (np.int64(args[0].size),)
        function = self.functions.get(name)
        if function is None:
            function = self.functions[name] = self.module.get_function(name)
        function(grid, block, tuple(fixed) + extra)


# --- the measures ----------------------------------------------------------------------------------

def measure_backend(b, sizes, repeats, launches, log):
    """Every measure for one backend; a measure that fails says why and the rest go on."""
    results = {}
    rng = np.random.default_rng(0)

    def attempt(name, func):
        try:
            results[name] = func()
            log(f"  {b.name} {name}: {results[name].get('headline', '')}")
        except Exception as error:  # noqa: BLE001
            prefix = "unsupported" if b.name == "tidal" else "error"
            results[name] = {"error": f"{prefix}: {first_line(error)}"}
            log(f"  {b.name} {name}: {results[name]['error']}")

    def copy():
        n = sizes["copy"]
        src = b.to_device(rng.standard_normal(n).astype(np.float32))
        dst = b.empty_like(src)
        b.copy(dst, src)
        ms = summary(b.event_ms(lambda: b.copy(dst, src), repeats))
        gbs = 2 * 4 * n / (ms["median"] * 1e-3) / 1e9
        return {"size": n, "ms": ms, "GB/s": gbs, "headline": f"{gbs:.0f} GB/s"}
    attempt("copy", copy)
    copy_gbs = results["copy"].get("GB/s")

    def bandwidth(name, nbytes, ms, check):
        gbs = nbytes / (ms["median"] * 1e-3) / 1e9
        out = {"ms": ms, "GB/s": gbs, "check": "OK" if check else "MISMATCH"}
        if copy_gbs:
            out["of_copy"] = gbs / copy_gbs
        out["headline"] = f"{gbs:.0f} GB/s" + (f" ({100 * out['of_copy']:.0f}% of copy)" if copy_gbs else "")
        return out

    def saxpy():
        n = sizes["saxpy"]
        x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        dx, dy = b.to_device(x), b.to_device(y)
        dout = b.empty_like(dx)
        a = np.float32(2.0)
        grid = (n + 255) // 256
        run = lambda: b.launch("saxpy", grid, 256, (a, dx, dy, dout))  # noqa: E731
        run()
        ok = np.allclose(b.to_host(dout), a * x + y, rtol=1e-5, atol=1e-5)
        return dict(bandwidth("saxpy", 3 * 4 * n, summary(b.event_ms(run, repeats)), ok), size=n)
    attempt("saxpy", saxpy)

    def stencil():
        n = sizes["stencil"]
        a = rng.standard_normal((n, n)).astype(np.float32)
        da = b.to_device(a)
        dout = b.empty_like(da)
        grid = ((n + 15) // 16, (n + 15) // 16)
        run = lambda: b.launch("stencil", grid, (16, 16), (da, dout))  # noqa: E731
        run()
        out = b.to_host(dout)
        expected = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        ok = np.allclose(out[1:-1, 1:-1], expected, rtol=1e-4, atol=1e-4)
        return dict(bandwidth("stencil", 2 * 4 * n * n, summary(b.event_ms(run, repeats)), ok), size=n)
    attempt("stencil", stencil)

    def matmul():
        n = sizes["matmul"]
        A, B = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        dA, dB = b.to_device(A), b.to_device(B)
        dC = b.empty_like(dA)
        grid = ((n + 15) // 16, (n + 15) // 16)
        run = lambda: b.launch("matmul", grid, (16, 16), (dA, dB, dC))  # noqa: E731
        run()
        ok = np.allclose(b.to_host(dC), A @ B, rtol=1e-2, atol=1e-2)
        ms = summary(b.event_ms(run, max(3, repeats // 2)))
        gflops = 2 * n ** 3 / (ms["median"] * 1e-3) / 1e9
        return {"size": n, "ms": ms, "GFLOP/s": gflops, "check": "OK" if ok else "MISMATCH",
                "headline": f"{gflops:.0f} GFLOP/s"}
    attempt("matmul", matmul)

    def reduction():
        n = sizes["reduction"]
        x = rng.standard_normal(n).astype(np.float32)
        dx = b.to_device(x)
        blocks = (n + kernels.BLOCK - 1) // kernels.BLOCK
        dpartial = b.to_device(np.zeros(blocks, dtype=np.float32))
        run = lambda: b.launch("reduction", blocks, kernels.BLOCK, (dx, dpartial))  # noqa: E731
        run()
        total = b.to_host(dpartial).sum(dtype=np.float64)
        ok = abs(total - x.sum(dtype=np.float64)) <= 1e-3 * max(1.0, abs(x).sum())
        ms = summary(b.event_ms(run, repeats))
        out = bandwidth("reduction", 4 * n, ms, ok)
        out.update(size=n, headline=f"{ms['median'] * 1e3:.1f} us, " + out["headline"])
        return out
    attempt("reduction", reduction)

    def histogram():
        n = sizes["histogram"]
        x = rng.integers(0, kernels.BINS, n, dtype=np.int32)
        dx = b.to_device(x)
        dbins = b.to_device(np.zeros(kernels.BINS, dtype=np.int32))
        grid = (n + 255) // 256
        run = lambda: b.launch("histogram", grid, 256, (dx, dbins))  # noqa: E731
        run()
        ms = summary(b.event_ms(run, repeats))
        bins = b.to_host(dbins)
        ok = np.array_equal(bins, np.bincount(x, minlength=kernels.BINS) * (1 + ms["n"]))
        return {"size": n, "ms": ms, "check": "OK" if ok else "MISMATCH",
                "headline": f"{ms['median'] * 1e3:.1f} us"}
    attempt("histogram", histogram)

    def launch_overhead():
        """Host time per kernel[1, 1](...) of an empty kernel, for each shape of
        kernels.LAUNCH_SHAPES (device arrays, float32 scalars), synchronised
        at the end: the time to enqueue a launch. tidal also with foreign
        (CuPy) arrays where CuPy imports."""
        a = b.to_device(np.zeros(16, dtype=np.float32))
        shapes = {shape: kernels.launch_args(shape, a, np.float32(1.0)) for shape in kernels.LAUNCH_SHAPES}
        if b.name == "tidal" and _cupy() is not None:
            foreign = _cupy().zeros(16, dtype=np.float32)
            for shape in ("1 array", "3 arrays", "16 arrays"):
                shapes[shape + " (CuPy)"] = kernels.launch_args(shape, foreign, np.float32(1.0))
        out = {}
        for shape, values in shapes.items():
            name = kernels.LAUNCH_SHAPES[shape.split(" (")[0]][0]
            try:
                b.launch(name, 1, 1, values)
                b.synchronize()
                samples = []
                for _ in range(7):
                    t0 = time.perf_counter()
                    for _ in range(launches):
                        b.launch(name, 1, 1, values)
                    b.synchronize()
                    samples.append((time.perf_counter() - t0) / launches * 1e6)
                out[shape] = {"us": summary(samples)}
            except Exception as error:  # noqa: BLE001
                prefix = "unsupported" if b.name == "tidal" else "error"
                out[shape] = {"error": f"{prefix}: {first_line(error)}"}
        out["headline"] = ", ".join(f"{k}: {v['us']['median']:.1f} us" if "us" in v else f"{k}: {v['error']}"
                                    for k, v in out.items())
        return out
    attempt("launch", launch_overhead)
    return results


def measure_cupy_library(cp, sizes, repeats, log):
    """CuPy's own calls where one exists: copy, a @ b (cuBLAS), sum, bincount."""
    b = CupyRaw.__new__(CupyRaw)
    b.name, b.cp = "cupy-lib", cp
    results = {}
    rng = np.random.default_rng(0)
    try:
        n = sizes["matmul"]
        A = cp.asarray(rng.standard_normal((n, n)).astype(np.float32))
        B = cp.asarray(rng.standard_normal((n, n)).astype(np.float32))
        A @ B
        ms = summary(b.event_ms(lambda: A @ B, repeats))
        results["matmul"] = {"size": n, "ms": ms, "GFLOP/s": 2 * n ** 3 / (ms["median"] * 1e-3) / 1e9}
        n = sizes["reduction"]
        x = cp.asarray(rng.standard_normal(n).astype(np.float32))
        x.sum()
        results["reduction"] = {"size": n, "ms": summary(b.event_ms(lambda: x.sum(), repeats))}
        n = sizes["histogram"]
        h = cp.asarray(rng.integers(0, kernels.BINS, n, dtype=np.int32))
        cp.bincount(h, minlength=kernels.BINS)
        results["histogram"] = {"size": n, "ms": summary(
            b.event_ms(lambda: cp.bincount(h, minlength=kernels.BINS), repeats))}
    except Exception as error:  # noqa: BLE001
        results["error"] = f"error: {first_line(error)}"
    log(f"  cupy library: {sorted(results)}")
    return results


def machine():
    info = {"host": socket.gethostname(), "cores": os.cpu_count(), "python": platform.python_version()}
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        info["gpu"] = out.stdout.strip().splitlines() if out.returncode == 0 else None
    except (OSError, ValueError):
        info["gpu"] = None
    return info


def run(backends, sizes, repeats, launches, log):
    results = {"machine": machine(), "backends": {}}
    warnings.simplefilter("ignore")
    for name in backends:
        log(f"== {name} (Python {platform.python_version()})")
        try:
            if name == "tidal":
                from tidal import cuda
                if hasattr(cuda, "current_target"):
                    results["tidal_target"] = cuda.current_target()
                backend = NumbaStyle("tidal", cuda)
            elif name == "numba":
                from numba import cuda
                import numba
                results["numba_version"] = numba.__version__
                backend = NumbaStyle("numba", cuda)
            elif name == "cupy":
                import cupy as cp
                results["cupy_version"] = cp.__version__
                backend = CupyRaw(cp)
            else:
                raise ValueError(f"unknown backend {name}")
        except Exception as error:  # noqa: BLE001
            prefix = "unsupported" if name == "tidal" else "error"
            results["backends"][name] = {"error": f"{prefix}: {first_line(error)}"}
            log(f"  {results['backends'][name]['error']}")
            continue
        results["backends"][name] = measure_backend(backend, sizes, repeats, launches, log)
        if name == "cupy":
            results["backends"]["cupy-lib"] = measure_cupy_library(backend.cp, sizes, repeats, log)
    return results


# --- merge and table -------------------------------------------------------------------------------

def _fmt(entry, key, digits=1):
    if not isinstance(entry, dict):
        return "–"
    if "error" in entry:
        return entry["error"].replace("|", "\\|")
    if key not in entry:
        return "–"
    value = entry[key]
    if isinstance(value, dict):
        return f"{value['median']:.{digits}f} ({value['min']:.{digits}f}–{value['max']:.{digits}f})"
    return f"{value:.{digits}f}"


def markdown(merged):
    backends = [b for b in ("tidal", "numba", "cupy", "cupy-lib") if b in merged["backends"]]
    lines = ["# tidal on the GPU, beside numba-cuda and CuPy", ""]
    for part in merged["parts"]:
        m = part["machine"]
        lines.append(f"- Python {m['python']} on `{m['host']}` ({m['cores']} cores), GPU: "
                     f"{', '.join(m.get('gpu') or ['none'])}")
    for missing in merged.get("missing", []):
        lines.append(f"- no results from {missing}")
    for key in ("numba_version", "cupy_version", "tidal_target"):
        if key in merged:
            lines.append(f"- {key}: {merged[key]}")
    lines += ["", "Kernel times from CUDA events, median (min–max); bandwidth counts the bytes the "
              "kernel must move (saxpy 3×4 B per element, stencil 2×4 B per point, copy 2×4 B).", "",
              "| measure | " + " | ".join(BACKEND_LABEL[b] for b in backends) + " |",
              "|---|" + "---|" * len(backends)]

    def row(label, measure, key, digits=1, extra=None):
        cells = []
        for b in backends:
            all_entry = merged["backends"][b]
            entry = all_entry if "error" in all_entry and len(all_entry) == 1 else all_entry.get(measure)
            cell = _fmt(entry, key, digits)
            if extra and isinstance(entry, dict) and extra in entry:
                cell += f" ({100 * entry[extra]:.0f}% of copy)"
            if isinstance(entry, dict) and entry.get("check") == "MISMATCH":
                cell += " MISMATCH"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    row("device-to-device copy, GB/s", "copy", "GB/s", 0)
    row("saxpy, GB/s (goal ≥ 90% of copy)", "saxpy", "GB/s", 0, extra="of_copy")
    row("stencil 5-point, GB/s (goal ≥ 90% of copy)", "stencil", "GB/s", 0, extra="of_copy")
    row("matmul 16×16 tiles, GFLOP/s (CuPy library: cuBLAS)", "matmul", "GFLOP/s", 0)
    row("block reduction, ms (CuPy library: sum)", "reduction", "ms", 3)
    row("histogram 256 bins, ms (CuPy library: bincount)", "histogram", "ms", 3)
    goals = {"1 array": "goal ≤ 3 µs", "256 scalars": "goal ≤ 5 µs"}
    for count in list(kernels.LAUNCH_SHAPES) + [f"{s} (CuPy)" for s in ("1 array", "3 arrays", "16 arrays")]:
        cells = []
        for b in backends:
            entry = merged["backends"][b]
            if "error" in entry and len(entry) == 1:
                cells.append(entry["error"])
                continue
            launch = entry.get("launch", {})
            cells.append(_fmt(launch, "error", 2) if "error" in launch else _fmt(launch.get(count), "us", 2))
        goal = f" ({goals[count]})" if count in goals else ""
        lines.append(f"| launch overhead, {count}, µs per call{goal} | " + " | ".join(cells) + " |")
    sizes = merged.get("sizes", {})
    lines += ["", "Sizes: " + ", ".join(f"{k} {v}" for k, v in sizes.items()), ""]
    return "\n".join(lines)


def merge(paths):
    merged = {"parts": [], "backends": {}}
    for path in paths:
        try:
            with open(path) as f:
                part = json.load(f)
        except (OSError, ValueError) as error:
            merged.setdefault("missing", []).append(f"{path}: {first_line(error)}")
            continue
        merged["parts"].append({"machine": part["machine"], "file": os.path.basename(path)})
        merged["backends"].update(part["backends"])
        for key in ("numba_version", "cupy_version", "tidal_target", "sizes"):
            if key in part:
                merged[key] = part[key]
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="numba,cupy", help="comma-separated: tidal, numba, cupy")
    parser.add_argument("--json", help="where to write the results (JSON)")
    parser.add_argument("--md", help="where to write the table (Markdown; with --merge)")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="merge result files into one table")
    parser.add_argument("--small", action="store_true", help="tiny sizes (to try the runner)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--launches", type=int, default=2000)
    options = parser.parse_args()

    def log(message):
        print(message, file=sys.stderr, flush=True)

    if options.merge:
        results = merge(options.merge)
        table = markdown(results)
        if options.md:
            with open(options.md, "w") as f:
                f.write(table)
        print(table)
    else:
        sizes = SMALL if options.small else SIZES
        results = run(options.backends.split(","), sizes, options.repeats, options.launches, log)
        results["sizes"] = sizes
    if options.json:
        with open(options.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
