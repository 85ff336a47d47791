; What tidal-lower-host decided, as a researcher sees it with Debian's opt-19
; (libLLVM built with NDEBUG): -debug-only=tidal-lower-host prints the
; decisions (DebugOutput.cpp registers the option when libLLVM has none),
; -stats the counters. The lowered IR is the same with or without them.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output -debug-only=tidal-lower-host %s 2>&1 | FileCheck %s --check-prefix=DEBUG
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output -stats %s 2>&1 | FileCheck %s --check-prefix=STATS
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s -o %t.plain.ll
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S -debug-only=tidal-lower-host -stats %s -o %t.debug.ll 2>/dev/null
; RUN: diff %t.plain.ll %t.debug.ll
; -debug-only names other passes' types too: none of the host lowering's
; output then.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output -debug-only=tidal-lower-atomics %s 2>&1 | count 0

; DEBUG:      tidal-lower-host: 'staged': 64 bytes of static shared memory
; DEBUG-NEXT: tidal-lower-host: 'staged': rounds split at sync point 1, syncthreads (block barrier)
; DEBUG-NEXT: tidal-lower-host: 'staged': {{[0-9]+}} block-uniform values
; DEBUG:      tidal-lower-host:   uniform:   %limit = phi i32 [ 100, %cap ], [ %n, %keep ]
; DEBUG-NOT:  uniform:   %pick
; DEBUG:      tidal-lower-host: block-uniform across a sync point:   %limit = phi i32 [ 100, %cap ], [ %n, %keep ] (uniform slot at offset 0, pending at 16, 4 bytes, once per block)
; DEBUG-NEXT: tidal-lower-host: per-thread across a sync point:   %pick = phi i32 [ 1, %few ], [ 2, %many ] (frame slot at prefix 20, 4 bytes per thread)
; DEBUG-NEXT: tidal-lower-host: 'staged': frame of 24 bytes per thread, 32 bytes of block-uniform slots
; DEBUG-NEXT: tidal-lower-host: 'staged.thread': {{[0-9]+}} loads and stores marked parallel in the thread loops
; DEBUG-NEXT: tidal-lower-host: '__tidal_block_staged': block rounds, x innermost (the loop order of the accesses)

; DEBUG:      tidal-lower-host: 'lastwarp': 0 bytes of static shared memory
; DEBUG-NEXT: tidal-lower-host: 'lastwarp' runs warp rounds: a warp sync point is under divergent control
; DEBUG-NEXT: tidal-lower-host: 'lastwarp': rounds split at sync point 1, shfl_down_i32 (warp exchange)
; DEBUG-NEXT: tidal-lower-host: 'lastwarp': frame of 24 bytes per thread, 0 bytes of block-uniform slots
; DEBUG:      tidal-lower-host: '__tidal_block_lastwarp': warp rounds, x innermost

; DEBUG:      tidal-lower-host: 'wholeblock' runs block rounds: every warp sync point is reached by the whole block
; DEBUG-NEXT: tidal-lower-host: 'wholeblock': activemask is every existing lane of the warp, not a sync point
; DEBUG-NEXT: tidal-lower-host: 'wholeblock': rounds split at sync point 1, syncthreads (block barrier)
; DEBUG-NEXT: tidal-lower-host: 'wholeblock': rounds split at sync point 2, syncthreads_count (block barrier with a count)
; DEBUG:      tidal-lower-host: 'wholeblock': frame of 20 bytes per thread, 0 bytes of block-uniform slots

; STATS:      Statistics Collected
; STATS-DAG:  68 tidal-lower-host - Frame bytes per thread of the lowered kernels
; STATS-DAG:   3 tidal-lower-host - Kernels lowered for the host
; STATS-DAG:   1 tidal-lower-host - Kernels that run warp rounds
; STATS-DAG:  64 tidal-lower-host - Static shared bytes of the lowered kernels
; STATS-DAG:   4 tidal-lower-host - Sync points (rounds split there)
; STATS-DAG:   1 tidal-lower-host - Values kept once per block across sync points (uniform slots)
; STATS-DAG:   1 tidal-lower-host - Values kept per thread across sync points

declare i32 @tidal.tid.x()
declare i32 @tidal.activemask()
declare void @tidal.syncthreads()
declare i32 @tidal.syncthreads.count(i32)
declare i32 @tidal.shfl.down.i32(i32, i32, i32)
declare ptr @tidal.shared.array(i64, i64)

; %limit: chosen by a branch on a parameter, the same in every thread (one
; slot of the block); %pick: chosen by the thread index (one frame element
; per thread). %buf, %t and what they compute move to K.thread's entry.
define void @staged(ptr %out, i32 %n) {
entry:
  %buf = call ptr @tidal.shared.array(i64 64, i64 4)
  %t = call i32 @tidal.tid.x()
  %big = icmp ugt i32 %n, 100
  br i1 %big, label %cap, label %keep
cap:
  br label %chosen
keep:
  br label %chosen
chosen:
  %limit = phi i32 [ 100, %cap ], [ %n, %keep ]
  %small = icmp ult i32 %t, 5
  br i1 %small, label %few, label %many
few:
  br label %join
many:
  br label %join
join:
  %pick = phi i32 [ 1, %few ], [ 2, %many ]
  call void @tidal.syncthreads()
  %sum = add i32 %pick, %limit
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr %out, i64 %t64
  store i32 %sum, ptr %p
  ret void
}

; A shuffle under `if tid < 32`: warp rounds.
define void @lastwarp(ptr %out) {
entry:
  %t = call i32 @tidal.tid.x()
  %first = icmp ult i32 %t, 32
  br i1 %first, label %warp, label %exit
warp:
  %v = call i32 @tidal.shfl.down.i32(i32 -1, i32 %t, i32 1)
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr %out, i64 %t64
  store i32 %v, ptr %p
  br label %exit
exit:
  ret void
}

; activemask reached by the whole block: no sync point.
define void @wholeblock(ptr %out) {
entry:
  %t = call i32 @tidal.tid.x()
  %m = call i32 @tidal.activemask()
  call void @tidal.syncthreads()
  %c = call i32 @tidal.syncthreads.count(i32 %m)
  %sum = add i32 %c, %t
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr %out, i64 %t64
  store i32 %sum, ptr %p
  ret void
}

!tidal.kernels = !{!0, !1, !2}
!0 = !{ptr @staged}
!1 = !{ptr @lastwarp}
!2 = !{ptr @wholeblock}
