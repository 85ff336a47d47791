; tidal-raise-nvvm: the "kernel" entries of !nvvm.annotations become
; !tidal.kernels; __launch_bounds__ (maxntidx, minctasm) become the kernel
; attributes tidal-annotate-kernels reads ("tidal-maxntid",
; "tidal-minctasm"), so the same kernel goes back to NVPTX with its bounds.
; Device functions of a module with kernels become internal, and one that
; nothing calls (clang inlined it and kept it for its name) is erased; sm_XX
; target attributes go.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-raise-nvvm,tidal-annotate-kernels' -S %s | FileCheck %s --check-prefix=NVPTX
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
; | extern "C" __global__ void plain(int *p) { p[0] = 1; }
; | extern "C" __global__ void __launch_bounds__(256) bounded(int *p) { p[0] = 2; }
; | extern "C" __global__ void __launch_bounds__(128, 4) bounded_blocks(int *p) { p[0] = 3; }
; | __device__ int device_function(int x) { return x + 1; }

; CHECK: define {{.*}}void @plain({{.*}}) {{.*}}#[[PLAIN:[0-9]+]]
; CHECK: define {{.*}}void @bounded({{.*}}) {{.*}}#[[BOUNDED:[0-9]+]]
; CHECK: define {{.*}}void @bounded_blocks({{.*}}) {{.*}}#[[BLOCKS:[0-9]+]]
; CHECK-NOT: device_function
; CHECK-NOT: "target-cpu"
; CHECK: attributes #[[PLAIN]] = {
; CHECK-NOT: tidal-max
; CHECK: attributes #[[BOUNDED]] = { {{.*}}"tidal-maxntid"="256"
; CHECK: attributes #[[BLOCKS]] = { {{.*}}"tidal-maxntid"="128" "tidal-minctasm"="4"
; CHECK-NOT: nvvm.annotations
; CHECK: !tidal.kernels = !{[[K1:![0-9]+]], [[K2:![0-9]+]], [[K3:![0-9]+]]}
; CHECK: [[K1]] = !{ptr @plain}
; CHECK: [[K2]] = !{ptr @bounded}
; CHECK: [[K3]] = !{ptr @bounded_blocks}

; NVPTX: !nvvm.annotations = !{
; NVPTX-DAG: !{ptr @plain, !"kernel", i32 1}
; NVPTX-DAG: !{ptr @bounded, !"maxntidx", i32 256}
; NVPTX-DAG: !{ptr @bounded_blocks, !"maxntidx", i32 128}
; NVPTX-DAG: !{ptr @bounded_blocks, !"minctasm", i32 4}

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: write)
define dso_local void @plain(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  store i32 1, ptr %0, align 4, !tbaa !10
  ret void
}

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: write)
define dso_local void @bounded(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  store i32 2, ptr %0, align 4, !tbaa !10
  ret void
}

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: write)
define dso_local void @bounded_blocks(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  store i32 3, ptr %0, align 4, !tbaa !10
  ret void
}

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(none)
define dso_local noundef range(i32 -2147483647, -2147483648) i32 @_Z15device_functioni(i32 noundef %0) local_unnamed_addr #1 {
  %2 = add nsw i32 %0, 1
  ret i32 %2
}

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: write) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nofree norecurse nosync nounwind willreturn memory(none) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" }

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5}
!llvm.module.flags = !{!6, !7, !8}

!0 = !{ptr @plain, !"kernel", i32 1}
!1 = !{ptr @bounded, !"kernel", i32 1}
!2 = !{ptr @bounded, !"maxntidx", i32 256}
!3 = !{ptr @bounded_blocks, !"kernel", i32 1}
!4 = !{ptr @bounded_blocks, !"maxntidx", i32 128}
!5 = !{ptr @bounded_blocks, !"minctasm", i32 4}
!6 = !{i32 1, !"wchar_size", i32 4}
!7 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!8 = !{i32 7, !"frame-pointer", i32 2}
!10 = !{!11, !11, i64 0}
!11 = !{!"int", !12, i64 0}
!12 = !{!"omnipotent char", !13, i64 0}
!13 = !{!"Simple C++ TBAA"}
