# tidalc's errors: the kernel's rejected construct with file:line:col and a
# caret, and bad command lines, each with a non-zero exit.
# RUN: not %tidalc %s --kernel uses_with --sig 'void(float32[::1])' --emit=markers 2>&1 | FileCheck %s --check-prefix=WITH
# RUN: not %tidalc %s --kernel uses_list --sig 'void(float32[::1])' --emit=ptx 2>&1 | FileCheck %s --check-prefix=LIST
# RUN: not %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1])' --emit=markers 2>&1 | FileCheck %s --check-prefix=COUNT
# RUN: not %tidalc %s --kernel nothing_here --sig 'void()' --emit=markers 2>&1 | FileCheck %s --check-prefix=MISSING
# RUN: not %tidalc %s --kernel saxpy --sig 'void(floatt32)' --emit=markers 2>&1 | FileCheck %s --check-prefix=SIG
# RUN: not %tidalc %s --kernel saxpy --sig 'void(float32)' --emit=bogus 2>&1 | FileCheck %s --check-prefix=EMIT
# RUN: not %tidalc %s --kernel saxpy --sig 'void(float32)' --emit=ptx --arch sm_70 2>&1 | FileCheck %s --check-prefix=ARCH
# RUN: not %tidalc %s.missing --kernel saxpy --sig 'void(float32)' 2>&1 | FileCheck %s --check-prefix=NOFILE

from tidal import cuda


@cuda.jit
def uses_with(out):
    with open("x") as f:
        out[0] = 1

# WITH: UnsupportedError: {{.*}}errors.py:[[# @LINE - 3]]:5: 'with' statements are not supported in kernels
# WITH-NEXT: {{^}}        with open("x") as f:
# WITH-NEXT: {{^}}        ^{{$}}


@cuda.jit
def uses_list(out):
    out[0] = [1, 2][0]

# LIST: UnsupportedError: {{.*}}errors.py:[[# @LINE - 2]]:14: lists are not supported in kernels
# LIST-NEXT: out[0] = [1, 2][0]
# LIST-NEXT: {{^}}                 ^^^^^^{{$}}


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

# COUNT: TypingError: {{.*}}errors.py:[[# @LINE - 5]]:1: kernel 'saxpy' takes 4 arguments but the signature has 2
# MISSING: tidalc: error: {{.*}}errors.py defines no 'nothing_here'
# SIG: tidalc: error: invalid signature 'void(floatt32)': unknown type 'floatt32' at column 6
# EMIT: tidalc: error: --emit must be markers, llvm or ptx, not 'bogus'
# ARCH: tidalc: error: --arch must be between sm_75 and sm_90
# NOFILE: tidalc: error: cannot read '{{.*}}errors.py.missing'
