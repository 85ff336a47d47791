# A tuple argument is flattened into the kernel's parameters (an array's
# data, shape and stride; then the scalars); a homogeneous tuple indexed at
# run time is a chain of selects on the wrapped index; a tuple in a for loop
# unrolls the body, and an array is counted up to its extent.
# RUN: %tidalc %s --kernel pick --sig 'void((float64[::1], (float64, float64, float64)), int64)' --emit=markers | FileCheck %s --check-prefix=PICK
# RUN: %tidalc %s --kernel loops --sig 'void(float64[::1])' --emit=markers | FileCheck %s --check-prefix=LOOPS

from tidal import cuda


@cuda.jit
def pick(t, i):
    t[0][0] = t[1][i]

# PICK: define void @pick(ptr %t.0, i64 %t.1, i64 %t.2, double %t.3, double %t.4, double %t.5, i64 %i)
# PICK: [[WRAPPED:%.*]] = add i64 %i, 3
# PICK: [[NEGATIVE:%.*]] = icmp slt i64 %i, 0
# PICK: [[INDEX:%.*]] = select i1 [[NEGATIVE]], i64 [[WRAPPED]], i64 %i
# PICK: [[IS1:%.*]] = icmp eq i64 [[INDEX]], 1
# PICK: [[PICK1:%.*]] = select i1 [[IS1]], double %t.4, double %t.3
# PICK: [[IS2:%.*]] = icmp eq i64 [[INDEX]], 2
# PICK: select i1 [[IS2]], double %t.5, double [[PICK1]]


@cuda.jit
def loops(a):
    total = 0.0
    for c in (1, 2.5):
        for v in a:
            total += c * v
    a[0] = total

# LOOPS-COUNT-2: {{^}}for.cond{{[0-9]*}}:
# LOOPS-NOT: {{^}}for.cond{{[0-9]*}}:
