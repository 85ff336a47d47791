# The binding analysis runs before typing: a local read that no path to it
# assigns is a typing error at the name, before any IR exists (CPython itself
# rejects 'break' and 'continue' outside a loop). A local assigned on some
# paths only compiles, as in Numba, and starts as zero (never undef).
# RUN: not %tidalc %s --kernel read_on_one_path --sig 'void(int32[::1])' --emit=markers 2>&1 | FileCheck %s --check-prefix=PATH
# RUN: %tidalc %s --kernel read_after_loop --sig 'void(int32[::1])' --emit=markers | FileCheck %s --check-prefix=LOOP
# RUN: %tidalc %s --kernel assigned_on_every_path --sig 'void(int32[::1])' --emit=markers | FileCheck %s --check-prefix=FINE

from tidal import cuda


@cuda.jit
def read_on_one_path(out):
    t = cuda.threadIdx.x
    if t < 16:
        if n == 5:
            out[0] = 7
    n = cuda.gridsize(1)

# PATH: TypingError: {{.*}}bindings.py:[[# @LINE - 4]]:12: local variable 'n' is read before it is assigned (no path to here assigns it)
# PATH-NEXT: {{^}}            if n == 5:
# PATH-NEXT: {{^}}               ^{{$}}


@cuda.jit
def read_after_loop(out):
    for i in range(out.size):
        last = i
    out[0] = last

# LOOP-LABEL: define void @read_after_loop(
# LOOP: phi i64 [ 0, %entry ]
# LOOP-NOT: undef
# LOOP: ret void


@cuda.jit
def assigned_on_every_path(out):
    if out[0] > 0:
        value = 1
    else:
        value = 2
    while True:
        found = value
        break
    out[1] = found

# FINE-LABEL: define void @assigned_on_every_path(
# FINE-NOT: undef
# FINE: ret void
