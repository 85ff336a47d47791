; tidal-raise-nvvm: the special registers that clang reads for threadIdx,
; blockDim, blockIdx, gridDim and the lane registers become tidal's
; register markers; lanemask.eq/le/gt/ge are computed from tidal.laneid and
; tidal.lanemask.lt. The raised kernel then lowers for the host.
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
; | extern "C" __global__ void registers(unsigned *out) {
; |   out[0] = __nvvm_read_ptx_sreg_tid_x();
; |   out[1] = __nvvm_read_ptx_sreg_tid_y();
; |   out[2] = __nvvm_read_ptx_sreg_tid_z();
; |   out[3] = __nvvm_read_ptx_sreg_ntid_x();
; |   out[4] = __nvvm_read_ptx_sreg_ntid_y();
; |   out[5] = __nvvm_read_ptx_sreg_ntid_z();
; |   out[6] = __nvvm_read_ptx_sreg_ctaid_x();
; |   out[7] = __nvvm_read_ptx_sreg_ctaid_y();
; |   out[8] = __nvvm_read_ptx_sreg_ctaid_z();
; |   out[9] = __nvvm_read_ptx_sreg_nctaid_x();
; |   out[10] = __nvvm_read_ptx_sreg_nctaid_y();
; |   out[11] = __nvvm_read_ptx_sreg_nctaid_z();
; |   out[12] = __nvvm_read_ptx_sreg_laneid();
; |   out[14] = __nvvm_read_ptx_sreg_lanemask_lt();
; |   out[15] = __nvvm_read_ptx_sreg_lanemask_eq();
; |   out[16] = __nvvm_read_ptx_sreg_lanemask_le();
; |   out[17] = __nvvm_read_ptx_sreg_lanemask_gt();
; |   out[18] = __nvvm_read_ptx_sreg_lanemask_ge();
; | }

; CHECK-NOT: llvm.nvvm
; CHECK-LABEL: define {{.*}}void @registers(
; CHECK: call i32 @tidal.tid.x()
; CHECK: call i32 @tidal.tid.y()
; CHECK: call i32 @tidal.tid.z()
; CHECK: call i32 @tidal.ntid.x()
; CHECK: call i32 @tidal.ntid.y()
; CHECK: call i32 @tidal.ntid.z()
; CHECK: call i32 @tidal.ctaid.x()
; CHECK: call i32 @tidal.ctaid.y()
; CHECK: call i32 @tidal.ctaid.z()
; CHECK: call i32 @tidal.nctaid.x()
; CHECK: call i32 @tidal.nctaid.y()
; CHECK: call i32 @tidal.nctaid.z()
; CHECK: call i32 @tidal.laneid()
; CHECK: call i32 @tidal.lanemask.lt()
; lanemask.eq = 1 << laneid
; CHECK: [[LANE:%.*]] = call i32 @tidal.laneid()
; CHECK-NEXT: [[EQ:%.*]] = shl i32 1, [[LANE]]
; CHECK-NEXT: getelementptr inbounds i8, ptr %0, i64 60
; CHECK-NEXT: store i32 [[EQ]]
; lanemask.le = lt | eq
; CHECK: [[LT:%.*]] = call i32 @tidal.lanemask.lt()
; CHECK-NEXT: [[LANE2:%.*]] = call i32 @tidal.laneid()
; CHECK-NEXT: [[EQ2:%.*]] = shl i32 1, [[LANE2]]
; CHECK-NEXT: [[LE:%.*]] = or i32 [[LT]], [[EQ2]]
; CHECK-NEXT: getelementptr inbounds i8, ptr %0, i64 64
; CHECK-NEXT: store i32 [[LE]]
; lanemask.gt = ~le
; CHECK: [[LE3:%.*]] = or i32
; CHECK-NEXT: [[GT:%.*]] = xor i32 [[LE3]], -1
; CHECK-NEXT: getelementptr inbounds i8, ptr %0, i64 68
; CHECK-NEXT: store i32 [[GT]]
; lanemask.ge = ~lt
; CHECK: [[LT4:%.*]] = call i32 @tidal.lanemask.lt()
; CHECK-NEXT: [[GE:%.*]] = xor i32 [[LT4]], -1
; CHECK-NEXT: getelementptr inbounds i8, ptr %0, i64 72
; CHECK-NEXT: store i32 [[GE]]
; The kernel is listed for tidal's lowerings; NVVM's metadata and target
; attributes are gone.
; CHECK-NOT: "target-cpu"
; CHECK-NOT: nvvm.annotations
; CHECK: !tidal.kernels = !{[[K:![0-9]+]]}
; CHECK: [[K]] = !{ptr @registers}

; HOST: define {{.*}}void @__tidal_block_registers(ptr
; HOST-NOT: @tidal.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: write)
define dso_local void @registers(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  %2 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %2, ptr %0, align 4, !tbaa !5
  %3 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %4 = getelementptr inbounds i8, ptr %0, i64 4
  store i32 %3, ptr %4, align 4, !tbaa !5
  %5 = tail call range(i32 0, 64) i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %6 = getelementptr inbounds i8, ptr %0, i64 8
  store i32 %5, ptr %6, align 4, !tbaa !5
  %7 = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %8 = getelementptr inbounds i8, ptr %0, i64 12
  store i32 %7, ptr %8, align 4, !tbaa !5
  %9 = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %10 = getelementptr inbounds i8, ptr %0, i64 16
  store i32 %9, ptr %10, align 4, !tbaa !5
  %11 = tail call range(i32 1, 65) i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %12 = getelementptr inbounds i8, ptr %0, i64 20
  store i32 %11, ptr %12, align 4, !tbaa !5
  %13 = tail call range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %14 = getelementptr inbounds i8, ptr %0, i64 24
  store i32 %13, ptr %14, align 4, !tbaa !5
  %15 = tail call range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %16 = getelementptr inbounds i8, ptr %0, i64 28
  store i32 %15, ptr %16, align 4, !tbaa !5
  %17 = tail call range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %18 = getelementptr inbounds i8, ptr %0, i64 32
  store i32 %17, ptr %18, align 4, !tbaa !5
  %19 = tail call range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %20 = getelementptr inbounds i8, ptr %0, i64 36
  store i32 %19, ptr %20, align 4, !tbaa !5
  %21 = tail call range(i32 1, 65536) i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %22 = getelementptr inbounds i8, ptr %0, i64 40
  store i32 %21, ptr %22, align 4, !tbaa !5
  %23 = tail call range(i32 1, 65536) i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %24 = getelementptr inbounds i8, ptr %0, i64 44
  store i32 %23, ptr %24, align 4, !tbaa !5
  %25 = tail call range(i32 0, 32) i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %26 = getelementptr inbounds i8, ptr %0, i64 48
  store i32 %25, ptr %26, align 4, !tbaa !5
  %27 = tail call i32 @llvm.nvvm.read.ptx.sreg.lanemask.lt()
  %28 = getelementptr inbounds i8, ptr %0, i64 56
  store i32 %27, ptr %28, align 4, !tbaa !5
  %29 = tail call i32 @llvm.nvvm.read.ptx.sreg.lanemask.eq()
  %30 = getelementptr inbounds i8, ptr %0, i64 60
  store i32 %29, ptr %30, align 4, !tbaa !5
  %31 = tail call i32 @llvm.nvvm.read.ptx.sreg.lanemask.le()
  %32 = getelementptr inbounds i8, ptr %0, i64 64
  store i32 %31, ptr %32, align 4, !tbaa !5
  %33 = tail call i32 @llvm.nvvm.read.ptx.sreg.lanemask.gt()
  %34 = getelementptr inbounds i8, ptr %0, i64 68
  store i32 %33, ptr %34, align 4, !tbaa !5
  %35 = tail call i32 @llvm.nvvm.read.ptx.sreg.lanemask.ge()
  %36 = getelementptr inbounds i8, ptr %0, i64 72
  store i32 %35, ptr %36, align 4, !tbaa !5
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.laneid() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.lanemask.lt() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.lanemask.eq() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.lanemask.le() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.lanemask.gt() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.lanemask.ge() #1

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: write) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}

!0 = !{ptr @registers, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
