# jit options as facts of the kernel and the module (docs/markers.md):
# launch_bounds and max_registers as function attributes, fastmath as
# fast-math flags and module flags, lineinfo as debug locations in the .py
# file, debug=True as bounds checks, asserts and the tidal.debug flag.
# RUN: %tidalc %s --kernel tuned --sig 'void(float32, float32[::1], float32[::1])' --emit=markers | FileCheck %s --check-prefix=TUNED
# RUN: %tidalc %s --kernel tuned --sig 'void(float32, float32[::1], float32[::1])' --emit=ptx --arch sm_80 | FileCheck %s --check-prefix=LINES
# RUN: %tidalc %s --kernel checked --sig 'void(float64[:, ::1], int64)' --emit=markers | FileCheck %s --check-prefix=CHECKED
# RUN: %tidalc %s --kernel checked --sig 'void(float64[:, ::1], int64)' --emit=markers | FileCheck %s --check-prefix=MESSAGES
# RUN: %tidalc %s --kernel plain --sig 'void(float64[::1])' --emit=markers | FileCheck %s --check-prefix=PLAIN

from tidal import cuda


@cuda.jit(lineinfo=True, fastmath=True, max_registers=32, launch_bounds=(256, 2))
def tuned(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + out[i]

# TUNED-LABEL: define void @tuned(
# TUNED-SAME: #[[ATTRS:[0-9]+]] !dbg
# TUNED: fmul fast float %a, {{.*}}, !dbg ![[MUL:[0-9]+]]
# TUNED: attributes #[[ATTRS]] = { "tidal-maxnreg"="32" "tidal-maxntid"="256" "tidal-minctasm"="2" }
# TUNED-DAG: !{i32 4, !"tidal.ftz", i32 1}
# TUNED-DAG: !{i32 4, !"tidal.prec-div", i32 0}
# TUNED-DAG: !{i32 4, !"tidal.prec-sqrt", i32 0}
# TUNED-DAG: distinct !DICompileUnit(language: DW_LANG_Python, file: ![[FILE:[0-9]+]], producer: "tidal", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly
# TUNED-DAG: ![[FILE]] = !DIFile(filename: "kernel-options.py"
# TUNED-DAG: ![[MUL]] = !DILocation(line: [[# @LINE - 11]], column: 18,

# The PTX points at the Python file.
# LINES: .loc 1 [[# @LINE - 14]]
# LINES: .file 1 "{{.*}}kernel-options.py"


@cuda.jit(debug=True)
def checked(grid, n):
    i, j = cuda.grid(2)
    assert i < n, "i is too large"
    grid[i, j] = n

# Every index is checked against its extent; failures call the markers,
# which do not return.
# CHECKED-LABEL: define void @checked(
# CHECKED: icmp slt i64 %grid.x, %n
# CHECKED: call void @tidal.assert.fail(ptr @assert.message)
# CHECKED-NEXT: unreachable
# CHECKED: icmp uge i64 %{{.*}}, %grid.shape.0
# CHECKED: call void @tidal.bounds.error(ptr @bounds.where, i64 %{{.*}}, i64 %grid.shape.0, i32 0)
# CHECKED-NEXT: unreachable
# CHECKED: icmp uge i64 %{{.*}}, %grid.shape.1
# CHECKED: call void @tidal.bounds.error(ptr @bounds.where{{.*}}, i64 %{{.*}}, i64 %grid.shape.1, i32 1)
# MESSAGES-DAG: @assert.message = private unnamed_addr constant {{.*}} c"i is too large (assert i < n in kernel 'checked' at {{.*}}kernel-options.py:[[# @LINE - 14]])\00"
# MESSAGES-DAG: @bounds.where = private unnamed_addr constant {{.*}} c"kernel 'checked' at {{.*}}kernel-options.py:[[# @LINE - 14]], array 'grid'\00"
# CHECKED-DAG: !{i32 4, !"tidal.debug", i32 1}


@cuda.jit
def plain(x):
    i = cuda.grid(1)
    assert i < 0
    x[i] = 1.0

# Without debug=True, asserts are compiled out, and the store's index is
# checked by tidal.bounds.fault only (dropped on a GPU; the cpu target's
# guard against stores into the process's memory).
# PLAIN-LABEL: define void @plain(
# PLAIN-NOT: tidal.assert
# PLAIN-NOT: tidal.bounds.error
# PLAIN: call void @tidal.bounds.fault(
# PLAIN-NOT: tidal.assert
# PLAIN-NOT: tidal.bounds.error
# PLAIN-NOT: !dbg
# PLAIN-NOT: tidal.debug
