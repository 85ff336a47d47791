; The warp markers become llvm.nvvm.*.sync intrinsics: shuffles (64-bit values
; as two 32-bit shuffles, c = 0x1f except 0 for up), votes, matches and
; activemask; in PTX shfl.sync, vote.sync, match.sync, activemask.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-warp-collectives -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=80>' %s | llc -march=nvptx64 -mcpu=sm_80 -o %t.sm_80.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare i32 @tidal.shfl.idx.i32(i32, i32, i32)
declare float @tidal.shfl.up.f32(i32, float, i32)
declare i64 @tidal.shfl.down.i64(i32, i64, i32)
declare double @tidal.shfl.xor.f64(i32, double, i32)
declare i1 @tidal.vote.all(i32, i1)
declare i1 @tidal.vote.any(i32, i1)
declare i1 @tidal.vote.uni(i32, i1)
declare i32 @tidal.vote.ballot(i32, i1)
declare i32 @tidal.match.any.i32(i32, i32)
declare i32 @tidal.match.any.i64(i32, i64)
declare { i32, i1 } @tidal.match.all.i32(i32, i32)
declare { i32, i1 } @tidal.match.all.i64(i32, i64)
declare i32 @tidal.activemask()

; CHECK-NOT: @tidal.

; 32-bit shuffles: one shfl.sync; up clamps at 0, idx at 0x1f.
; CHECK-LABEL: define void @shuffle_32(
; CHECK-NEXT:    %a = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 %mask, i32 %i, i32 %lane, i32 31)
; CHECK-NEXT:    %b = call float @llvm.nvvm.shfl.sync.up.f32(i32 %mask, float %f, i32 %lane, i32 0)
; PTX-LABEL: .entry shuffle_32(
; PTX:         shfl.sync.idx.b32 {{.*}}, 31, %r{{[0-9]+}};
; PTX:         shfl.sync.up.b32 {{.*}}, 0, %r{{[0-9]+}};
define void @shuffle_32(ptr %out, i32 %mask, i32 %i, float %f, i32 %lane) {
  %a = call i32 @tidal.shfl.idx.i32(i32 %mask, i32 %i, i32 %lane)
  %b = call float @tidal.shfl.up.f32(i32 %mask, float %f, i32 %lane)
  store i32 %a, ptr %out
  %p = getelementptr i32, ptr %out, i64 1
  store float %b, ptr %p
  ret void
}

; 64-bit shuffles: the two halves shuffled alike, then joined (a double
; through its bits).
; CHECK-LABEL: define void @shuffle_64(
; CHECK-NEXT:    %1 = trunc i64 %i to i32
; CHECK-NEXT:    %2 = lshr i64 %i, 32
; CHECK-NEXT:    %3 = trunc i64 %2 to i32
; CHECK-NEXT:    %4 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 %mask, i32 %1, i32 %lane, i32 31)
; CHECK-NEXT:    %5 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 %mask, i32 %3, i32 %lane, i32 31)
; CHECK-NEXT:    %6 = zext i32 %4 to i64
; CHECK-NEXT:    %7 = zext i32 %5 to i64
; CHECK-NEXT:    %8 = shl i64 %7, 32
; CHECK-NEXT:    %a = or i64 %6, %8
; CHECK-NEXT:    %9 = bitcast double %d to i64
; CHECK:         call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 %mask, i32 %{{[0-9]+}}, i32 %lane, i32 31)
; CHECK:         call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 %mask, i32 %{{[0-9]+}}, i32 %lane, i32 31)
; CHECK:         %b = bitcast i64 %{{[0-9]+}} to double
; PTX-LABEL: .entry shuffle_64(
; PTX-COUNT-2: shfl.sync.down.b32
; PTX-COUNT-2: shfl.sync.bfly.b32
define void @shuffle_64(ptr %out, i32 %mask, i64 %i, double %d, i32 %lane) {
  %a = call i64 @tidal.shfl.down.i64(i32 %mask, i64 %i, i32 %lane)
  %b = call double @tidal.shfl.xor.f64(i32 %mask, double %d, i32 %lane)
  store i64 %a, ptr %out
  %p = getelementptr i64, ptr %out, i64 1
  store double %b, ptr %p
  ret void
}

; Votes.
; CHECK-LABEL: define void @votes(
; CHECK-NEXT:    %all = call i1 @llvm.nvvm.vote.all.sync(i32 %mask, i1 %pred)
; CHECK-NEXT:    %any = call i1 @llvm.nvvm.vote.any.sync(i32 %mask, i1 %pred)
; CHECK-NEXT:    %uni = call i1 @llvm.nvvm.vote.uni.sync(i32 %mask, i1 %pred)
; CHECK-NEXT:    %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 %mask, i1 %pred)
; PTX-LABEL: .entry votes(
; PTX-DAG:     vote.sync.all.pred
; PTX-DAG:     vote.sync.any.pred
; PTX-DAG:     vote.sync.uni.pred
; PTX-DAG:     vote.sync.ballot.b32
define void @votes(ptr %out, i32 %mask, i1 %pred) {
  %all = call i1 @tidal.vote.all(i32 %mask, i1 %pred)
  %any = call i1 @tidal.vote.any(i32 %mask, i1 %pred)
  %uni = call i1 @tidal.vote.uni(i32 %mask, i1 %pred)
  %ballot = call i32 @tidal.vote.ballot(i32 %mask, i1 %pred)
  %x = zext i1 %all to i32
  %y = zext i1 %any to i32
  %z = zext i1 %uni to i32
  %s1 = add i32 %x, %y
  %s2 = add i32 %s1, %z
  %s3 = add i32 %s2, %ballot
  store i32 %s3, ptr %out
  ret void
}

; Matches and the active mask.
; CHECK-LABEL: define void @matches(
; CHECK-NEXT:    %any32 = call i32 @llvm.nvvm.match.any.sync.i32(i32 %mask, i32 %i)
; CHECK-NEXT:    %any64 = call i32 @llvm.nvvm.match.any.sync.i64(i32 %mask, i64 %l)
; CHECK-NEXT:    %all32 = call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32 %mask, i32 %i)
; CHECK-NEXT:    %all64 = call { i32, i1 } @llvm.nvvm.match.all.sync.i64p(i32 %mask, i64 %l)
; CHECK-NEXT:    %active = call i32 @llvm.nvvm.activemask()
; PTX-LABEL: .entry matches(
; PTX-DAG:     match.any.sync.b32
; PTX-DAG:     match.any.sync.b64
; PTX-DAG:     match.all.sync.b32
; PTX-DAG:     match.all.sync.b64
; PTX-DAG:     activemask.b32
define void @matches(ptr %out, i32 %mask, i32 %i, i64 %l) {
  %any32 = call i32 @tidal.match.any.i32(i32 %mask, i32 %i)
  %any64 = call i32 @tidal.match.any.i64(i32 %mask, i64 %l)
  %all32 = call { i32, i1 } @tidal.match.all.i32(i32 %mask, i32 %i)
  %all64 = call { i32, i1 } @tidal.match.all.i64(i32 %mask, i64 %l)
  %active = call i32 @tidal.activemask()
  %m32 = extractvalue { i32, i1 } %all32, 0
  %p64 = extractvalue { i32, i1 } %all64, 1
  %p = zext i1 %p64 to i32
  %s1 = add i32 %any32, %any64
  %s2 = add i32 %s1, %m32
  %s3 = add i32 %s2, %p
  %s4 = add i32 %s3, %active
  store i32 %s4, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @shuffle_32}
!1 = !{ptr @shuffle_64}
!2 = !{ptr @votes}
!3 = !{ptr @matches}
