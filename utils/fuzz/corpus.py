"""Realistic kernels the frontend fuzzer mutates: each is (source, arguments),
the source defining `kernel`, the arguments a function of numpy returning
the launch's arguments (small arrays, so that a mutated index stays cheap).
Launched as kernel[2, 32](*arguments)."""

# Arrays whose addresses a kernel gets as CPointer arguments: kept alive
# for the worker's life (a worker runs at most a few hundred inputs).
KEPT = []


def pointer_arguments(np):
    target = np.arange(64, dtype=np.float32)
    KEPT.append(target)
    return target.ctypes.data, np.zeros(64, np.float32), 64


KERNELS = [
    ("""
@cuda.jit
def kernel(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
""", lambda np: (np.float32(2.0), np.arange(64, dtype=np.float32),
                 np.ones(64, np.float32), np.zeros(64, np.float32))),
    ("""
@cuda.jit
def kernel(src, dst):
    i, j = cuda.grid(2)
    n, m = src.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        dst[i, j] = 0.25 * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1]) - src[i, j]
""", lambda np: (np.arange(64, dtype=np.float64).reshape(8, 8), np.zeros((8, 8)))),
    ("""
@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(32, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 16
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = buf[0]
""", lambda np: (np.arange(64, dtype=np.float32), np.zeros(2, np.float32))),
    ("""
@cuda.jit
def kernel(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i] % bins.size, 1)
""", lambda np: (np.arange(64, dtype=np.int32), np.zeros(8, np.int32))),
    ("""
@cuda.jit
def kernel(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        c[i, j] = acc
""", lambda np: (np.ones((8, 4)), np.ones((4, 8)), np.zeros((8, 8)))),
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.sin(v) * math.exp(-v) + math.sqrt(abs(v)) + v ** 2
""", lambda np: (np.linspace(-2, 2, 64), np.zeros(64))),
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i] if i < x.size else 0
    total = v
    offset = 16
    while offset > 0:
        total += cuda.shfl_down_sync(0xFFFFFFFF, total, offset)
        offset //= 2
    if lane == 0:
        cuda.atomic.add(out, 0, total)
""", lambda np: (np.arange(64, dtype=np.int64), np.zeros(1, np.int64))),
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        n = x[i]
        steps = 0
        while n != 1 and steps < 100:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        out[i] = steps
""", lambda np: (np.arange(1, 65, dtype=np.int64), np.zeros(64, np.int64))),
    ("""
@cuda.jit
def kernel(x, out):
    tmp = cuda.local.array(4, dtype=float64)
    i = cuda.grid(1)
    for k in range(4):
        tmp[k] = k * 1.5
    if i < x.size:
        out[i] = x[i] + tmp[i % 4]
""", lambda np: (np.arange(64, dtype=np.float64), np.zeros(64))),
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = a * 3 - 7
        c = (a & 0xFF) | (b << 2)
        out[i] = c ^ (a >> 1) if a > 10 else min(a, b) + max(a, b)
""", lambda np: (np.arange(64, dtype=np.int32), np.zeros(64, np.int32))),
    ("""
@cuda.jit
def kernel(z, out):
    i = cuda.grid(1)
    if i < z.size:
        w = z[i] * (1 - 0.5j) + complex(i, 2.0)
        out.real[i] = abs(cmath.sqrt(w) ** 2)
        out[i] += cmath.exp(w.conjugate() / 8) - cmath.acos(w) * w.imag
        cuda.atomic.add(out.imag, i, cmath.phase(w))
""", lambda np: (np.arange(64, dtype=np.complex128) * (1 + 1j), np.zeros(64, np.complex128))),
    # Threads that exit before the block's barriers (a scan that returns the
    # threads past the data's end).
    ("""
@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(32, dtype=float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= x.size - 8:
        return
    buf[tid] = x[i]
    cuda.syncthreads()
    if tid > 0:
        out[i] = buf[tid] + buf[tid - 1]
    cuda.syncthreads()
""", lambda np: (np.arange(64, dtype=np.float64), np.zeros(64))),
    # float16: arrays, cuda.fp16's functions, conversions.
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        h = x[i]
        two = np.float16(2.0)
        v = cuda.fp16.hfma(h, two, cuda.fp16.hneg(h))
        if cuda.fp16.hge(v, np.float16(0)):
            v = cuda.fp16.hmul(v, cuda.fp16.habs(h))
        out[i] = cuda.fp16.hsub(cuda.fp16.hadd(v, two), h) + np.float16(i % 3)
""", lambda np: (np.linspace(-4, 4, 64).astype(np.float16), np.zeros(64, np.float16))),
    # Device functions: a lambda and a non-ASCII name (their symbols), and a
    # recursive one.
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = dévié(x[i]) + twice(x[i]) + depth(x[i] % 5)


twice = cuda.jit(device=True)(lambda v: v * 2)


@cuda.jit(device=True)
def dévié(v):
    return v - 1


@cuda.jit(device=True)
def depth(n):
    if n <= 0:
        return 0
    return 1 + depth(n - 1)
""", lambda np: (np.arange(64, dtype=np.int64), np.zeros(64, np.int64))),
    # NumPy ufuncs: on numbers, and with an out array (one thread writes it).
    ("""
@cuda.jit
def kernel(x, y, out, row):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = np.maximum(np.sin(x[i]), np.add(x[i], y[i])) + np.sqrt(np.absolute(y[i]))
        out[i] += np.power(np.float32(x[i]), 2) - np.floor_divide(x[i], 0.25)
    if i == 0:
        np.multiply(y[:4], 2.0, row)
        np.add(row, x[4:8], row)
""", lambda np: (np.linspace(-3, 3, 64), np.ones(64), np.zeros(64), np.zeros(4))),
    # Cache-hinted loads and stores, of a 1-D and a 2-D array.
    ("""
@cuda.jit
def kernel(a, m, out):
    i = cuda.grid(1)
    if i < a.size:
        v = cuda.ldcg(a, i) + cuda.ldca(a, (i + 1) % a.size) + cuda.ldcv(a, 0)
        w = cuda.ldcs(m, (i % 4, i // 16)) * cuda.ldlu(m, (0, 3))
        cuda.stcs(out, i, v * w)
        if i % 8 == 0:
            cuda.stcg(out, i, cuda.ldcg(out, i) + 1)
            cuda.stwt(out, (i + 1,), 2.5)
            cuda.stwb(out, i + 2, 7)
""", lambda np: (np.arange(64, dtype=np.float32), np.ones((4, 4), np.float32),
                 np.zeros(64, np.float32))),
    # Array methods: a.T, reshape, item, ravel, a.dtype as a dtype.
    ("""
@cuda.jit
def kernel(a, flat, out):
    tmp = cuda.local.array(4, a.dtype)
    grid = flat.reshape(4, -1)
    square = flat.reshape((4, 4))
    i = cuda.grid(1)
    if i < out.size:
        tmp[i % 4] = a.T[i % 3, i % 2]
        out[i] = tmp[i % 4] + grid[i % 4, 1] + flat[i % 16:i % 16 + 1].item()
        out[i] += flat.ravel()[i % flat.size] * a.dtype.type(2) + square.T[1, 2]
        out[i] += a.itemsize + a.nbytes + grid.shape[1]
""", lambda np: (np.arange(6, dtype=np.float64).reshape(2, 3), np.arange(16.0), np.zeros(64))),
    # Tuple variables as indices, and variables whose type changes.
    ("""
@cuda.jit
def kernel(m, out):
    i = cuda.grid(1)
    row = i % 8
    at = (row, i // 8)
    v = 0
    if i < 64:
        v = m[at] * 2
        v = v + 0.5
        out[at] = v
    corner = (0, 0)
    if i == 0:
        n = 3
        n = n * 1.5
        out[corner] = n + len(at)
""", lambda np: (np.arange(64, dtype=np.int32).reshape(8, 8), np.zeros((8, 8)))),
    # Device functions with defaults, keyword arguments and several signatures.
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = scale(x[i]) + scale(x[i], 3.0) + scale(x[i], shift=1) + both(x[i], 2.0)
        out[i] += both(i, 3) + scale(both(x[i], x[i]), factor=0.5, shift=-1)


@cuda.jit(device=True)
def scale(v, factor=2.0, shift=0):
    return v * factor + shift


@cuda.jit(["int64(int64, int64)", "float64(float64, float64)"], device=True)
def both(a, b):
    return a * b + 1
""", lambda np: (np.linspace(0, 8, 64), np.zeros(64))),
    # print of numbers, tuples and dim3 (the workers' output goes nowhere).
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i == 0:
        print((1, 2.5), cuda.blockDim, cuda.gridDim.x)
        print('at', (x[0], (i, True)), cuda.threadIdx, cuda.blockIdx)
    if i < out.size:
        out[i] = x[i]
""", lambda np: (np.arange(64, dtype=np.float64), np.zeros(64))),
    # Captured device arrays (by reference) and a captured host array (a constant).
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + TABLE[i % 8] * HOST[i % 4] + GRID[i % 2, i % 3]
        if i == 0:
            TABLE[0] = 1.0


TABLE = cuda.to_device(np.arange(8, dtype=np.float64))
GRID = cuda.to_device(np.ones((2, 3), dtype=np.float32))
HOST = np.arange(4.0)
""", lambda np: (np.arange(64, dtype=np.float64), np.zeros(64))),
    # Extra passes at the pipeline's points.
    ("""
@cuda.jit(passes={'after-lowering': 'instcombine', 'after-frontend': 'function(sroa,early-cse)'})
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(4):
            acc += x[(i + k) % x.size] * k
        out[i] = acc
""", lambda np: (np.arange(64, dtype=np.float64), np.zeros(64))),
    # fp16's math functions (computed in float32, rounded to float16).
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        h = x[i]
        a = cuda.fp16.habs(h)
        v = cuda.fp16.hsin(h) + cuda.fp16.hcos(h) - cuda.fp16.htanh(h)
        v = cuda.fp16.hadd(v, cuda.fp16.hexp(cuda.fp16.hmul(h, np.float16(0.5))))
        v = cuda.fp16.hfma(cuda.fp16.hsqrt(a), cuda.fp16.hlog(cuda.fp16.hadd(a, np.float16(1))), v)
        out[i] = cuda.fp16.hmax(cuda.fp16.hfloor(v), cuda.fp16.hrint(cuda.fp16.hexp2(h)))
""", lambda np: (np.linspace(-4, 4, 64).astype(np.float16), np.zeros(64, np.float16))),
    # bfloat16: bits in an int16 array read through a view, cuda.bf16's
    # functions and conversions, a local array of bfloat16.
    ("""
@cuda.jit
def kernel(bits, out):
    i = cuda.grid(1)
    if i < bits.size:
        b = bits.view(bfloat16)[i]
        t = cuda.local.array(2, bfloat16)
        t[0] = cuda.bf16.hfma(b, bfloat16(0.5), cuda.bf16.hneg(b))
        t[1] = cuda.bf16.hmax(cuda.bf16.habs(b), bfloat16(i % 4))
        v = cuda.bf16.hsqrt(cuda.bf16.habs(t[0])) + math.floor(t[1])
        if cuda.bf16.hlt(v, bfloat16(2)):
            v = cuda.bf16.hmul_sat(v, b)
        out[i] = float32(v) + float32(cuda.bf16.ushort_as_bfloat16(cuda.bf16.bfloat16_as_ushort(b)))


bfloat16 = cuda.bfloat16
""", lambda np: ((np.linspace(-4, 4, 64).astype(np.float32).view(np.uint32) >> 16)
                 .astype(np.uint16).view(np.int16), np.zeros(64, np.float32))),
    # fp8: conversions to and from fp8_e4m3/e5m2 and their bits.
    ("""
@cuda.jit
def kernel(x, scaled, bits):
    i = cuda.grid(1)
    if i < x.size:
        v = fp8_e4m3(x[i] * 0.5)
        w = fp8_e5m2(float32(v) * 64)
        scaled[i] = float32(v) + float32(w) + float32(fp8_e4m3(bfloat16(x[i])))
        bits[i] = cvt_float_to_fp8(x[i], saturation_t.SATFINITE, fp8_interpretation_t.E4M3)


from tidal.cuda._internal.cuda_fp8 import (
    fp8_e4m3, fp8_e5m2, cvt_float_to_fp8, saturation_t, fp8_interpretation_t)
bfloat16 = cuda.bfloat16
""", lambda np: (np.linspace(-500, 500, 64).astype(np.float32), np.zeros(64, np.float32),
                 np.zeros(64, np.uint8))),
    # Pointers: a CPointer parameter launched with an address, read through
    # it and written through cuda.carray's array over it (checked stores).
    ("""
@cuda.jit("void(CPointer(float32), float32[::1], int64)")
def kernel(p, out, n):
    i = cuda.grid(1)
    view = cuda.carray(p, n)
    if i < n:
        out[i] = p[i] * 2 + view[n - 1 - i]
        view[i] = out[i] - p[i]


""", lambda np: pointer_arguments(np)),
    # Optional values, an inner function closing over a local, literal_unroll.
    ("""
@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    scale = None
    if i % 2 == 0:
        scale = 2.0

    def shifted(v):
        return v + i

    acc = 0.0
    for c in literal_unroll((1, 2.5, np.float32(3))):
        acc += shifted(c)
    if i < x.size:
        out[i] = x[i] * (1.0 if scale is None else scale) + acc


from tidal import literal_unroll
""", lambda np: (np.arange(64, dtype=np.float64), np.zeros(64, np.float64))),
    # CUDA C++ linked from memory (cuda.CUSource; compiled by Clang: few of these).
    ("""
@cuda.jit(link=[cuda.CUSource('extern "C" __device__ int twice(int *r, int x) { *r = 2 * x; return 0; }')])
def kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = twice(x[i]) + twice(i)


twice = cuda.declare_device("twice", "int32(int32)")
""", lambda np: (np.arange(64, dtype=np.int32), np.zeros(64, np.int32)), 0.1),
]

# How often each kernel is picked, relative to the others (a third element
# of its entry; 1 without).
WEIGHTS = [entry[2] if len(entry) > 2 else 1.0 for entry in KERNELS]

PRELUDE = "import cmath\nimport math\nimport numpy as np\nfrom numpy import float32, float64, int32, int64\nfrom tidal import cuda\n"
