; A fitted block function specialised to one block shape
; (LowerHostBlockShape.cpp): for a launch whose block has more than one row,
; the runtime lowers the kernel with tidal.host.fitted and
; tidal.host.fitted.shape = !{x, y, z}. The fitted entry then also tests
; that the block has that shape, its reads of the block's size are that
; constant (the thread loops' trip counts: a 16-wide row is one vector), and
; its thread loops are not unrolled (with constant trip counts LLVM's full
; unroll ran before the loop vectoriser, and the SLP vectoriser rebuilt the
; rows with gathers). A flag that is not three sizes of 1 to 1024 is not
; used: the function is fitted as without it.
; RUN: sed 's/^; SHAPE-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S | FileCheck %s --check-prefix=SHAPE
; RUN: sed 's/^; SHAPE-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s --check-prefix=SHAPE-HOST
; RUN: sed 's/^; BAD-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S | FileCheck %s --check-prefix=BAD

; SHAPE-LABEL: define void @__tidal_fitted_block_tile(
; SHAPE-NEXT:  fits.test:
; SHAPE:         %ntid.x.fits = icmp ule i32 %fit.ntid.x, 16
; SHAPE:         %fit.shape.x = load i32
; SHAPE-NEXT:    [[X:%.+]] = icmp eq i32 %fit.shape.x, 16
; SHAPE:         %fit.shape.y = load i32
; SHAPE-NEXT:    [[Y:%.+]] = icmp eq i32 %fit.shape.y, 8
; SHAPE:         %fit.shape.z = load i32
; SHAPE-NEXT:    [[Z:%.+]] = icmp eq i32 %fit.shape.z, 1
; SHAPE:         br i1 %{{fits[0-9]*}}, label %entry, label %general
; The body's reads of the block's size: exactly the shape.
; SHAPE:       entry:
; SHAPE:         %ntid.x = load i32, ptr %ntid.x.addr, align 4, !range [[SIXTEEN:![0-9]+]]
; SHAPE:         %ntid.y = load i32, ptr %ntid.y.addr, align 4, !range [[EIGHT:![0-9]+]]
; The thread loops: parallel, and not unrolled.
; SHAPE:         br label %{{.+}}, !llvm.loop [[LOOP:![0-9]+]]
; SHAPE:       general:
; SHAPE-NEXT:    tail call void @__tidal_block_tile(ptr %params, ptr %ctx)
; SHAPE-DAG:   [[SIXTEEN]] = !{i32 16, i32 17}
; SHAPE-DAG:   [[EIGHT]] = !{i32 8, i32 9}
; SHAPE:       [[LOOP]] = distinct !{[[LOOP]], [[PARALLEL:![0-9]+]], [[KEEP:![0-9]+]]}
; SHAPE:       [[PARALLEL]] = !{!"llvm.loop.parallel_accesses",
; SHAPE:       [[KEEP]] = !{!"llvm.loop.unroll.disable"}

; After tidal-host: the first round, whose 16 x 8 threads copy 128
; consecutive floats, is a loop of 8-float vectors (block functions are
; "no-builtin-memcpy": no call of libc's memcpy); the second writes 16-wide
; rows as two 8-float vectors; neither tests how many threads are left (no
; remainder loop).
; SHAPE-HOST-LABEL: define void @__tidal_fitted_block_tile(
; SHAPE-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; SHAPE-HOST-NOT:     min.iters.check
; SHAPE-HOST-NOT:     memcpy
; SHAPE-HOST:         %wide.load = load <8 x float>
; SHAPE-HOST-NEXT:    getelementptr
; SHAPE-HOST-NEXT:    store <8 x float> %wide.load
; SHAPE-HOST-NOT:     min.iters.check
; SHAPE-HOST:         store <8 x float>
; SHAPE-HOST-NOT:     min.iters.check
; SHAPE-HOST:         tail call void @__tidal_block_tile(

; BAD-LABEL: define void @__tidal_fitted_block_tile(
; BAD-NOT:       fit.shape
; BAD:           br i1 %{{.+}}, label %entry, label %general
; BAD:       general:

@where = private constant [16 x i8] c"kernel 'tile'..\00"

; tile[ty, tx] = x[ty * 16 + tx]; barrier; out[...] = tile[tx, ty]: a
; transpose of one 16x16 tile through shared memory, checked against the
; tile's 16 columns.
define void @tile(ptr %x, ptr %out) {
entry:
  %buf = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tx = call i32 @tidal.tid.x()
  %ty = call i32 @tidal.tid.y()
  %tx64 = zext i32 %tx to i64
  %ty64 = zext i32 %ty to i64
  %outside = icmp uge i64 %tx64, 16
  br i1 %outside, label %fault, label %store
fault:
  call void @tidal.bounds.fault(ptr @where, i64 %tx64, i64 16, i32 1)
  br label %store
store:
  %row = mul i64 %ty64, 16
  %at = add i64 %row, %tx64
  %xp = getelementptr float, ptr %x, i64 %at
  %v = load float, ptr %xp
  %slot = getelementptr float, ptr %buf, i64 %at
  store float %v, ptr %slot
  call void @tidal.syncthreads()
  %column = mul i64 %tx64, 16
  %from = add i64 %column, %ty64
  %tp = getelementptr float, ptr %buf, i64 %from
  %t = load float, ptr %tp
  %op = getelementptr float, ptr %out, i64 %at
  store float %t, ptr %op
  ret void
}

declare i32 @tidal.tid.x()
declare i32 @tidal.tid.y()
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)
declare void @tidal.bounds.fault(ptr, i64, i64, i32)

!tidal.kernels = !{!0}
!0 = !{ptr @tile}

; SHAPE-FLAG: !llvm.module.flags = !{!100, !101}
; SHAPE-FLAG: !100 = !{i32 1, !"tidal.host.fitted", i32 1}
; SHAPE-FLAG: !101 = !{i32 1, !"tidal.host.fitted.shape", !102}
; SHAPE-FLAG: !102 = !{i32 16, i32 8, i32 1}
; BAD-FLAG: !llvm.module.flags = !{!100, !101}
; BAD-FLAG: !100 = !{i32 1, !"tidal.host.fitted", i32 1}
; BAD-FLAG: !101 = !{i32 1, !"tidal.host.fitted.shape", !102}
; BAD-FLAG: !102 = !{i32 16, i32 0, i32 1}
