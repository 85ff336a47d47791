# The binding analysis runs before typing: a local read before it is
# assigned on some path is a typing error at the name, before any IR exists
# (CPython itself rejects 'break' and 'continue' outside a loop).
# RUN: not %tidalc %s --kernel read_on_one_path --sig 'void(int32[::1])' --emit=markers 2>&1 | FileCheck %s --check-prefix=PATH
# RUN: not %tidalc %s --kernel read_after_loop --sig 'void(int32[::1])' --emit=markers 2>&1 | FileCheck %s --check-prefix=LOOP
# RUN: %tidalc %s --kernel assigned_on_every_path --sig 'void(int32[::1])' --emit=markers | FileCheck %s --check-prefix=FINE

from tidal import cuda


@cuda.jit
def read_on_one_path(out):
    t = cuda.threadIdx.x
    if t < 16:
        if n == 5:
            out[0] = 7
    n = cuda.gridsize(1)

# PATH: TypingError: {{.*}}bindings.py:[[# @LINE - 4]]:12: local variable 'n' is read before it is assigned on some path to here
# PATH-NEXT: {{^}}            if n == 5:
# PATH-NEXT: {{^}}               ^{{$}}


@cuda.jit
def read_after_loop(out):
    for i in range(out.size):
        last = i
    out[0] = last

# LOOP: TypingError: {{.*}}bindings.py:[[# @LINE - 2]]:14: local variable 'last' is read before it is assigned on some path to here


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
