; tidal-raise-nvvm: the whole-warp shuffles that __shfl_*_sync write
; (shfl.sync.{idx,up,down,bfly}.{i32,f32} with clamp 31, 0 for up), the votes
; (vote.{all,any,uni,ballot}.sync), the matches (match.{any,all}.sync) and
; __activemask become tidal's warp markers.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-raise-nvvm,tidal-lower-host' -S %s | FileCheck %s --check-prefix=HOST
;
; Input: clang's NVVM IR for this CUDA C++ (no CUDA headers: the attribute
; macros stand in for them), made with
;   clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -emit-llvm -S -O1
;
; | #define __global__ __attribute__((global))
; | #define __device__ __attribute__((device))
; | #define __shared__ __attribute__((shared))
; | #define __constant__ __attribute__((constant))
; | #define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
; | extern "C" __global__ void warps(int *i, float *f, long long *l, unsigned *u) {
; |   int t = __nvvm_read_ptx_sreg_tid_x();
; |   i[0] = __nvvm_shfl_sync_idx_i32(0xffffffffu, i[0], 3, 0x1f);
; |   f[0] = __nvvm_shfl_sync_idx_f32(0xffffffffu, f[0], 3, 0x1f);
; |   i[1] = __nvvm_shfl_sync_up_i32(0xffffffffu, i[1], 1, 0);
; |   f[1] = __nvvm_shfl_sync_up_f32(0xffffffffu, f[1], 1, 0);
; |   i[2] = __nvvm_shfl_sync_down_i32(0xffffffffu, i[2], 2, 0x1f);
; |   f[2] = __nvvm_shfl_sync_down_f32(0xffffffffu, f[2], 2, 0x1f);
; |   i[3] = __nvvm_shfl_sync_bfly_i32(0xffffffffu, i[3], 4, 0x1f);
; |   f[3] = __nvvm_shfl_sync_bfly_f32(0xffffffffu, f[3], 4, 0x1f);
; |   u[0] = __nvvm_vote_all_sync(0xffffffffu, t > 1);
; |   u[1] = __nvvm_vote_any_sync(0xffffffffu, t > 2);
; |   u[2] = __nvvm_vote_uni_sync(0xffffffffu, t > 3);
; |   u[3] = __nvvm_vote_ballot_sync(0xffffffffu, t > 4);
; |   u[4] = __nvvm_match_any_sync_i32(0xffffffffu, i[4]);
; |   u[5] = __nvvm_match_any_sync_i64(0xffffffffu, l[0]);
; |   int pred;
; |   u[6] = __nvvm_match_all_sync_i32p(0xffffffffu, i[5], &pred);
; |   u[7] = pred;
; |   u[8] = __nvvm_match_all_sync_i64p(0xffffffffu, l[1], &pred);
; |   u[9] = pred;
; |   u[10] = __nvvm_activemask();
; | }

; CHECK-NOT: llvm.nvvm
; CHECK-LABEL: define {{.*}}void @warps(
; CHECK: call i32 @tidal.shfl.idx.i32(i32 -1, i32 %{{.*}}, i32 3)
; CHECK: call float @tidal.shfl.idx.f32(i32 -1, float %{{.*}}, i32 3)
; CHECK: call i32 @tidal.shfl.up.i32(i32 -1, i32 %{{.*}}, i32 1)
; CHECK: call float @tidal.shfl.up.f32(i32 -1, float %{{.*}}, i32 1)
; CHECK: call i32 @tidal.shfl.down.i32(i32 -1, i32 %{{.*}}, i32 2)
; CHECK: call float @tidal.shfl.down.f32(i32 -1, float %{{.*}}, i32 2)
; CHECK: call i32 @tidal.shfl.xor.i32(i32 -1, i32 %{{.*}}, i32 4)
; CHECK: call float @tidal.shfl.xor.f32(i32 -1, float %{{.*}}, i32 4)
; CHECK: call i1 @tidal.vote.all(i32 -1, i1
; CHECK: call i1 @tidal.vote.any(i32 -1, i1
; CHECK: call i1 @tidal.vote.uni(i32 -1, i1
; CHECK: call i32 @tidal.vote.ballot(i32 -1, i1
; CHECK: call i32 @tidal.match.any.i32(i32 -1, i32
; CHECK: call i32 @tidal.match.any.i64(i32 -1, i64
; CHECK: [[ALL:%.*]] = call { i32, i1 } @tidal.match.all.i32(i32 -1, i32
; CHECK-NEXT: extractvalue { i32, i1 } [[ALL]], 1
; CHECK: call { i32, i1 } @tidal.match.all.i64(i32 -1, i64
; CHECK: call i32 @tidal.activemask()

; HOST: define {{.*}}void @__tidal_block_warps(ptr
; HOST-NOT: @tidal.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Function Attrs: convergent mustprogress norecurse nounwind memory(argmem: readwrite, inaccessiblemem: readwrite)
define dso_local void @warps(ptr nocapture noundef %0, ptr nocapture noundef %1, ptr nocapture noundef readonly %2, ptr nocapture noundef writeonly %3) local_unnamed_addr #0 {
  %5 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %6 = load i32, ptr %0, align 4, !tbaa !5
  %7 = tail call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %6, i32 3, i32 31)
  store i32 %7, ptr %0, align 4, !tbaa !5
  %8 = load float, ptr %1, align 4, !tbaa !9
  %9 = tail call contract float @llvm.nvvm.shfl.sync.idx.f32(i32 -1, float %8, i32 3, i32 31)
  store float %9, ptr %1, align 4, !tbaa !9
  %10 = getelementptr inbounds i8, ptr %0, i64 4
  %11 = load i32, ptr %10, align 4, !tbaa !5
  %12 = tail call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %11, i32 1, i32 0)
  store i32 %12, ptr %10, align 4, !tbaa !5
  %13 = getelementptr inbounds i8, ptr %1, i64 4
  %14 = load float, ptr %13, align 4, !tbaa !9
  %15 = tail call contract float @llvm.nvvm.shfl.sync.up.f32(i32 -1, float %14, i32 1, i32 0)
  store float %15, ptr %13, align 4, !tbaa !9
  %16 = getelementptr inbounds i8, ptr %0, i64 8
  %17 = load i32, ptr %16, align 4, !tbaa !5
  %18 = tail call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %17, i32 2, i32 31)
  store i32 %18, ptr %16, align 4, !tbaa !5
  %19 = getelementptr inbounds i8, ptr %1, i64 8
  %20 = load float, ptr %19, align 4, !tbaa !9
  %21 = tail call contract float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %20, i32 2, i32 31)
  store float %21, ptr %19, align 4, !tbaa !9
  %22 = getelementptr inbounds i8, ptr %0, i64 12
  %23 = load i32, ptr %22, align 4, !tbaa !5
  %24 = tail call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %23, i32 4, i32 31)
  store i32 %24, ptr %22, align 4, !tbaa !5
  %25 = getelementptr inbounds i8, ptr %1, i64 12
  %26 = load float, ptr %25, align 4, !tbaa !9
  %27 = tail call contract float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %26, i32 4, i32 31)
  store float %27, ptr %25, align 4, !tbaa !9
  %28 = icmp ugt i32 %5, 1
  %29 = tail call i1 @llvm.nvvm.vote.all.sync(i32 -1, i1 %28)
  %30 = zext i1 %29 to i32
  store i32 %30, ptr %3, align 4, !tbaa !5
  %31 = icmp ugt i32 %5, 2
  %32 = tail call i1 @llvm.nvvm.vote.any.sync(i32 -1, i1 %31)
  %33 = zext i1 %32 to i32
  %34 = getelementptr inbounds i8, ptr %3, i64 4
  store i32 %33, ptr %34, align 4, !tbaa !5
  %35 = icmp ugt i32 %5, 3
  %36 = tail call i1 @llvm.nvvm.vote.uni.sync(i32 -1, i1 %35)
  %37 = zext i1 %36 to i32
  %38 = getelementptr inbounds i8, ptr %3, i64 8
  store i32 %37, ptr %38, align 4, !tbaa !5
  %39 = icmp ugt i32 %5, 4
  %40 = tail call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %39)
  %41 = getelementptr inbounds i8, ptr %3, i64 12
  store i32 %40, ptr %41, align 4, !tbaa !5
  %42 = getelementptr inbounds i8, ptr %0, i64 16
  %43 = load i32, ptr %42, align 4, !tbaa !5
  %44 = tail call i32 @llvm.nvvm.match.any.sync.i32(i32 -1, i32 %43)
  %45 = getelementptr inbounds i8, ptr %3, i64 16
  store i32 %44, ptr %45, align 4, !tbaa !5
  %46 = load i64, ptr %2, align 8, !tbaa !11
  %47 = tail call i32 @llvm.nvvm.match.any.sync.i64(i32 -1, i64 %46)
  %48 = getelementptr inbounds i8, ptr %3, i64 20
  store i32 %47, ptr %48, align 4, !tbaa !5
  %49 = getelementptr inbounds i8, ptr %0, i64 20
  %50 = load i32, ptr %49, align 4, !tbaa !5
  %51 = tail call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %50)
  %52 = extractvalue { i32, i1 } %51, 1
  %53 = zext i1 %52 to i32
  %54 = extractvalue { i32, i1 } %51, 0
  %55 = getelementptr inbounds i8, ptr %3, i64 24
  store i32 %54, ptr %55, align 4, !tbaa !5
  %56 = getelementptr inbounds i8, ptr %3, i64 28
  store i32 %53, ptr %56, align 4, !tbaa !5
  %57 = getelementptr inbounds i8, ptr %2, i64 8
  %58 = load i64, ptr %57, align 8, !tbaa !11
  %59 = tail call { i32, i1 } @llvm.nvvm.match.all.sync.i64p(i32 -1, i64 %58)
  %60 = extractvalue { i32, i1 } %59, 1
  %61 = zext i1 %60 to i32
  %62 = extractvalue { i32, i1 } %59, 0
  %63 = getelementptr inbounds i8, ptr %3, i64 32
  store i32 %62, ptr %63, align 4, !tbaa !5
  %64 = getelementptr inbounds i8, ptr %3, i64 36
  store i32 %61, ptr %64, align 4, !tbaa !5
  %65 = tail call i32 @llvm.nvvm.activemask()
  %66 = getelementptr inbounds i8, ptr %3, i64 40
  store i32 %65, ptr %66, align 4, !tbaa !5
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.idx.f32(i32, float, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.up.f32(i32, float, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i1 @llvm.nvvm.vote.all.sync(i32, i1) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i1 @llvm.nvvm.vote.any.sync(i32, i1) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i1 @llvm.nvvm.vote.uni.sync(i32, i1) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.match.any.sync.i32(i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.match.any.sync.i64(i32, i64) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare { i32, i1 } @llvm.nvvm.match.all.sync.i64p(i32, i64) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.activemask() #2

attributes #0 = { convergent mustprogress norecurse nounwind memory(argmem: readwrite, inaccessiblemem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}

!0 = !{ptr @warps, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
!9 = !{!10, !10, i64 0}
!10 = !{!"float", !7, i64 0}
!11 = !{!12, !12, i64 0}
!12 = !{!"long long", !7, i64 0}
