"""The CUDA names kernels use. They mean something only inside a kernel,
where the compiler recognises them by their ``__tidal_intrinsic__`` name
and emits markers (docs/markers.md); called from Python they raise."""


class _Intrinsic:
    def __init__(self, name, doc):
        self.__tidal_intrinsic__ = name
        self.__doc__ = doc
        self._name = name

    def __repr__(self):
        return f"<tidal intrinsic {self._name}>"


class _Function(_Intrinsic):
    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._name}() can only be used inside a kernel")


class _Value(_Intrinsic):
    """laneid, warpsize: a value inside a kernel."""


class _Namespace:
    """cuda.shared, cuda.local, cuda.const, cuda.atomic: holders of functions."""

    def __init__(self, name, **functions):
        self.__tidal_intrinsic__ = name
        self._name = name
        for attr, doc in functions.items():
            python_name = attr
            setattr(self, attr, _Function(f"{name}.{python_name}", doc))

    def __repr__(self):
        return f"<tidal namespace {self._name}>"


class _Dim3(_Intrinsic):
    """threadIdx, blockIdx, blockDim, gridDim: .x, .y and .z in kernels."""

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"{self._name}.{attr} can only be used inside a kernel")
        raise AttributeError(attr)


threadIdx = _Dim3("cuda.threadIdx", "The thread's index in its block (int32 .x, .y, .z).")
blockIdx = _Dim3("cuda.blockIdx", "The block's index in the grid (int32 .x, .y, .z).")
blockDim = _Dim3("cuda.blockDim", "The size of a block, in threads (int32 .x, .y, .z).")
gridDim = _Dim3("cuda.gridDim", "The size of the grid, in blocks (int32 .x, .y, .z).")
grid = _Function(
    "cuda.grid",
    "grid(ndim): the thread's absolute index in the grid: an int64 for ndim=1, "
    "a tuple of ndim int64 otherwise.")
gridsize = _Function(
    "cuda.gridsize",
    "gridsize(ndim): the number of threads in the grid along each axis (int64).")

laneid = _Value("cuda.laneid", "The thread's lane in its warp (int32, 0..31).")
warpsize = _Value("cuda.warpsize", "The number of threads in a warp (int32, 32).")

shared = _Namespace(
    "cuda.shared",
    array="array(shape, dtype): a shared array of the block, static (shape a constant int "
          "or tuple) or dynamic (shape 0: sized by the launch's sharedmem)")
local = _Namespace(
    "cuda.local", array="array(shape, dtype): an array private to the thread")
const = _Namespace(
    "cuda.const", array_like="array_like(ary): a global NumPy array as constant memory")
atomic = _Namespace(
    "cuda.atomic",
    add="add(ary, idx, val): ary[idx] += val atomically; returns the old value",
    sub="sub(ary, idx, val): ary[idx] -= val atomically; returns the old value",
    and_="and_(ary, idx, val): ary[idx] &= val atomically; returns the old value",
    or_="or_(ary, idx, val): ary[idx] |= val atomically; returns the old value",
    xor="xor(ary, idx, val): ary[idx] ^= val atomically; returns the old value",
    max="max(ary, idx, val): ary[idx] = max(ary[idx], val) atomically; returns the old value",
    min="min(ary, idx, val): ary[idx] = min(ary[idx], val) atomically; returns the old value",
    inc="inc(ary, idx, val): wrapping increment (uint32/uint64); returns the old value",
    dec="dec(ary, idx, val): wrapping decrement (uint32/uint64); returns the old value",
    exch="exch(ary, idx, val): stores val; returns the old value",
    cas="cas(ary, idx, old, val): stores val if ary[idx] == old; returns the old value",
    compare_and_swap="compare_and_swap(ary, old, val): cas on ary[0]",
)

_FUNCTIONS = {
    "syncthreads": "Waits until every thread of the block reaches this point.",
    "syncthreads_count": "syncthreads_count(predicate): barrier; how many threads had it true.",
    "syncthreads_and": "syncthreads_and(predicate): barrier; 1 if every thread had it true.",
    "syncthreads_or": "syncthreads_or(predicate): barrier; 1 if any thread had it true.",
    "syncwarp": "syncwarp(mask=0xffffffff): barrier of the lanes in mask.",
    "threadfence_block": "Memory fence at block scope.",
    "threadfence": "Memory fence at device scope.",
    "threadfence_system": "Memory fence at system scope.",
    "shfl_sync": "shfl_sync(mask, value, src_lane): value of lane src_lane.",
    "shfl_up_sync": "shfl_up_sync(mask, value, delta): value of lane laneid - delta.",
    "shfl_down_sync": "shfl_down_sync(mask, value, delta): value of lane laneid + delta.",
    "shfl_xor_sync": "shfl_xor_sync(mask, value, lane_mask): value of lane laneid ^ lane_mask.",
    "all_sync": "all_sync(mask, predicate): true if it holds on every lane of mask.",
    "any_sync": "any_sync(mask, predicate): true if it holds on any lane of mask.",
    "eq_sync": "eq_sync(mask, predicate): true if it is the same on every lane of mask.",
    "ballot_sync": "ballot_sync(mask, predicate): the lanes of mask where it holds.",
    "match_any_sync": "match_any_sync(mask, value): the lanes of mask with the same value.",
    "match_all_sync": "match_all_sync(mask, value): (mask if all equal else 0, all equal).",
    "activemask": "activemask(): the lanes executing this call.",
    "lanemask_lt": "lanemask_lt(): the lanes below this one.",
    "popc": "popc(x): the number of set bits.",
    "brev": "brev(x): the bits in reverse order.",
    "clz": "clz(x): the number of leading zero bits.",
    "ffs": "ffs(x): 1 + the position of the lowest set bit, 0 for 0.",
    "fma": "fma(a, b, c): a * b + c with one rounding.",
    "cbrt": "cbrt(x): the cube root.",
    "selp": "selp(predicate, a, b): a if predicate else b.",
}
for _name, _doc in _FUNCTIONS.items():
    globals()[_name] = _Function(f"cuda.{_name}", _doc)
del _name, _doc
