"""Kernel source for bench/kernels.py: `cuda`, `float32` and `int32` are
put into this module's globals by kernels.define(cuda) before it runs."""
# flake8: noqa: F821  (cuda, float32, int32 come from kernels.define)

import math

TILE = 16    # matmul tile edge (threads per block: TILE x TILE)
BLOCK = 256  # threads per block of the reduction
BINS = 256   # histogram bins


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def stencil(a, out):
    # one Jacobi step of the 5-point Laplace stencil; the border is copied
    i, j = cuda.grid(2)
    n = a.shape[0]
    m = a.shape[1]
    if i < n and j < m:
        if i > 0 and j > 0 and i < n - 1 and j < m - 1:
            out[i, j] = float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
        else:
            out[i, j] = a[i, j]


@cuda.jit
def matmul(A, B, C):
    # C = A @ B with TILE x TILE tiles in shared memory (Numba's documented kernel)
    sA = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    sB = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TILE) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TILE]
        if x < B.shape[1] and (ty + i * TILE) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TILE, x]
        cuda.syncthreads()
        for j in range(TILE):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@cuda.jit
def reduction(x, partial):
    # each block sums BLOCK elements in shared memory; partial[block] = its sum
    buf = cuda.shared.array(shape=BLOCK, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        buf[tid] = x[i]
    else:
        buf[tid] = 0
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


@cuda.jit
def math_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.sin(v) * math.exp(-v) + math.sqrt(abs(v)) + math.pow(abs(v), float32(1.5))


# Empty kernels for the launch overhead (kernels.LAUNCH_SHAPES): no
# arguments, 1, 3 and 16 arrays, 16 and 256 float32 scalars.


@cuda.jit
def empty0():
    pass


@cuda.jit
def empty1(a0):
    pass


@cuda.jit
def empty3(a0, a1, a2):
    pass


@cuda.jit
def empty16a(
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11,
        a12, a13, a14, a15):
    pass


@cuda.jit
def empty16s(
        s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11,
        s12, s13, s14, s15):
    pass


@cuda.jit
def empty256(
        s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11,
        s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23,
        s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35,
        s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47,
        s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59,
        s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71,
        s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83,
        s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95,
        s96, s97, s98, s99, s100, s101, s102, s103, s104, s105, s106, s107,
        s108, s109, s110, s111, s112, s113, s114, s115, s116, s117, s118, s119,
        s120, s121, s122, s123, s124, s125, s126, s127, s128, s129, s130, s131,
        s132, s133, s134, s135, s136, s137, s138, s139, s140, s141, s142, s143,
        s144, s145, s146, s147, s148, s149, s150, s151, s152, s153, s154, s155,
        s156, s157, s158, s159, s160, s161, s162, s163, s164, s165, s166, s167,
        s168, s169, s170, s171, s172, s173, s174, s175, s176, s177, s178, s179,
        s180, s181, s182, s183, s184, s185, s186, s187, s188, s189, s190, s191,
        s192, s193, s194, s195, s196, s197, s198, s199, s200, s201, s202, s203,
        s204, s205, s206, s207, s208, s209, s210, s211, s212, s213, s214, s215,
        s216, s217, s218, s219, s220, s221, s222, s223, s224, s225, s226, s227,
        s228, s229, s230, s231, s232, s233, s234, s235, s236, s237, s238, s239,
        s240, s241, s242, s243, s244, s245, s246, s247, s248, s249, s250, s251,
        s252, s253, s254, s255):
    pass
