target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@_ZZ10sum_reduceE7partial = internal unnamed_addr addrspace(3) global [256 x float] undef, align 4

; Function Attrs: convergent mustprogress norecurse nounwind memory(inaccessiblemem: readwrite)
define dso_local noundef float @_Z8warp_sumf(float noundef %0) local_unnamed_addr #0 {
  br label %3

2:                                                ; preds = %3
  ret float %7

3:                                                ; preds = %1, %3
  %4 = phi i32 [ 16, %1 ], [ %8, %3 ]
  %5 = phi float [ %0, %1 ], [ %7, %3 ]
  %6 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %5, i32 %4, i32 31)
  %7 = fadd contract float %5, %6
  %8 = lshr i32 %4, 1
  %9 = icmp ult i32 %4, 2
  br i1 %9, label %2, label %3, !llvm.loop !6
}

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @sum_reduce(ptr nocapture noundef readonly %0, i32 noundef %1, ptr nocapture noundef %2) local_unnamed_addr #1 {
  %4 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = shl i32 %5, 8
  %7 = add i32 %6, %4
  %8 = icmp ult i32 %7, %1
  br i1 %8, label %9, label %12

9:                                                ; preds = %3
  %10 = tail call noundef range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %11 = shl i32 %10, 8
  br label %16

12:                                               ; preds = %16, %3
  %13 = phi float [ 0.000000e+00, %3 ], [ %22, %16 ]
  %14 = zext nneg i32 %4 to i64
  %15 = getelementptr inbounds [256 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ10sum_reduceE7partial to ptr), i64 0, i64 %14
  store float %13, ptr %15, align 4, !tbaa !9
  tail call void @llvm.nvvm.barrier0()
  br label %27

16:                                               ; preds = %9, %16
  %17 = phi float [ 0.000000e+00, %9 ], [ %22, %16 ]
  %18 = phi i32 [ %7, %9 ], [ %23, %16 ]
  %19 = zext i32 %18 to i64
  %20 = getelementptr inbounds float, ptr %0, i64 %19
  %21 = load float, ptr %20, align 4, !tbaa !9
  %22 = fadd contract float %17, %21
  %23 = add i32 %18, %11
  %24 = icmp ult i32 %23, %1
  br i1 %24, label %16, label %12, !llvm.loop !13

25:                                               ; preds = %37
  %26 = icmp ult i32 %4, 32
  br i1 %26, label %40, label %53

27:                                               ; preds = %12, %37
  %28 = phi i32 [ 128, %12 ], [ %38, %37 ]
  %29 = icmp ult i32 %4, %28
  br i1 %29, label %30, label %37

30:                                               ; preds = %27
  %31 = add nuw nsw i32 %28, %4
  %32 = zext nneg i32 %31 to i64
  %33 = getelementptr inbounds [256 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ10sum_reduceE7partial to ptr), i64 0, i64 %32
  %34 = load float, ptr %33, align 4, !tbaa !9
  %35 = load float, ptr %15, align 4, !tbaa !9
  %36 = fadd contract float %34, %35
  store float %36, ptr %15, align 4, !tbaa !9
  br label %37

37:                                               ; preds = %30, %27
  tail call void @llvm.nvvm.barrier0()
  %38 = lshr i32 %28, 1
  %39 = icmp ugt i32 %28, 63
  br i1 %39, label %27, label %25, !llvm.loop !14

40:                                               ; preds = %25
  %41 = load float, ptr %15, align 4, !tbaa !9
  br label %42

42:                                               ; preds = %42, %40
  %43 = phi i32 [ 16, %40 ], [ %47, %42 ]
  %44 = phi float [ %41, %40 ], [ %46, %42 ]
  %45 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %44, i32 %43, i32 31)
  %46 = fadd contract float %44, %45
  %47 = lshr i32 %43, 1
  %48 = icmp ult i32 %43, 2
  br i1 %48, label %49, label %42, !llvm.loop !6

49:                                               ; preds = %42
  %50 = icmp eq i32 %4, 0
  br i1 %50, label %51, label %53

51:                                               ; preds = %49
  %52 = atomicrmw fadd ptr %2, float %46 seq_cst, align 4
  br label %53

53:                                               ; preds = %49, %51, %25
  ret void
}

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier0() #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32) #3

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #4

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #4

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.x() #4

attributes #0 = { convergent mustprogress norecurse nounwind memory(inaccessiblemem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_52" "target-features"="+ptx85,+sm_52" }
attributes #1 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_52" "target-features"="+ptx85,+sm_52" "uniform-work-group-size"="true" }
attributes #2 = { convergent nocallback nounwind }
attributes #3 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
attributes #4 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!nvvm.annotations = !{!0, !1}
!llvm.module.flags = !{!2, !3, !4}
!llvm.ident = !{!5}

!0 = !{ptr @sum_reduce, !"kernel", i32 1}
!1 = !{ptr @sum_reduce, !"maxntidx", i32 256}
!2 = !{i32 1, !"wchar_size", i32 4}
!3 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!4 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!6 = distinct !{!6, !7, !8}
!7 = !{!"llvm.loop.mustprogress"}
!8 = !{!"llvm.loop.unroll.disable"}
!9 = !{!10, !10, i64 0}
!10 = !{!"float", !11, i64 0}
!11 = !{!"omnipotent char", !12, i64 0}
!12 = !{!"Simple C++ TBAA"}
!13 = distinct !{!13, !7, !8}
!14 = distinct !{!14, !7, !8}
