target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@_ZZ9histogramE10block_bins = internal addrspace(3) global [64 x i32] undef, align 4

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @histogram(ptr nocapture noundef readonly %0, i32 noundef %1, ptr nocapture noundef %2) local_unnamed_addr #0 {
  %4 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %5 = icmp ult i32 %4, 64
  br i1 %5, label %6, label %8

6:                                                ; preds = %3
  %7 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  br label %17

8:                                                ; preds = %17, %3
  tail call void @llvm.nvvm.barrier0()
  %9 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %10 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %11 = mul i32 %9, %10
  %12 = add i32 %11, %4
  %13 = icmp ult i32 %12, %1
  br i1 %13, label %14, label %23

14:                                               ; preds = %8
  %15 = tail call noundef range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %16 = mul i32 %15, %10
  br label %25

17:                                               ; preds = %6, %17
  %18 = phi i32 [ %4, %6 ], [ %21, %17 ]
  %19 = zext nneg i32 %18 to i64
  %20 = getelementptr inbounds [64 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ9histogramE10block_bins to ptr), i64 0, i64 %19
  store i32 0, ptr %20, align 4, !tbaa !5
  %21 = add nuw nsw i32 %18, %7
  %22 = icmp ult i32 %21, 64
  br i1 %22, label %17, label %8, !llvm.loop !9

23:                                               ; preds = %25, %8
  tail call void @llvm.nvvm.barrier0()
  %24 = icmp ult i32 %4, 64
  br i1 %24, label %37, label %36

25:                                               ; preds = %14, %25
  %26 = phi i32 [ %12, %14 ], [ %34, %25 ]
  %27 = zext i32 %26 to i64
  %28 = getelementptr inbounds i8, ptr %0, i64 %27
  %29 = load i8, ptr %28, align 1, !tbaa !12
  %30 = and i8 %29, 63
  %31 = zext nneg i8 %30 to i64
  %32 = getelementptr inbounds [64 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ9histogramE10block_bins to ptr), i64 0, i64 %31
  %33 = atomicrmw add ptr %32, i32 1 seq_cst, align 4
  %34 = add i32 %26, %16
  %35 = icmp ult i32 %34, %1
  br i1 %35, label %25, label %23, !llvm.loop !13

36:                                               ; preds = %46, %23
  ret void

37:                                               ; preds = %23, %46
  %38 = phi i32 [ %47, %46 ], [ %4, %23 ]
  %39 = zext nneg i32 %38 to i64
  %40 = getelementptr inbounds [64 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ9histogramE10block_bins to ptr), i64 0, i64 %39
  %41 = load i32, ptr %40, align 4, !tbaa !5
  %42 = icmp eq i32 %41, 0
  br i1 %42, label %46, label %43

43:                                               ; preds = %37
  %44 = getelementptr inbounds i32, ptr %2, i64 %39
  %45 = atomicrmw add ptr %44, i32 %41 seq_cst, align 4
  br label %46

46:                                               ; preds = %37, %43
  %47 = add nuw nsw i32 %38, %10
  %48 = icmp ult i32 %47, 64
  br i1 %48, label %37, label %36, !llvm.loop !14
}

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier0() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.x() #2

attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_52" "target-features"="+ptx85,+sm_52" "uniform-work-group-size"="true" }
attributes #1 = { convergent nocallback nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!llvm.ident = !{!4}

!0 = !{ptr @histogram, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!4 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
!9 = distinct !{!9, !10, !11}
!10 = !{!"llvm.loop.mustprogress"}
!11 = !{!"llvm.loop.unroll.disable"}
!12 = !{!7, !7, i64 0}
!13 = distinct !{!13, !10, !11}
!14 = distinct !{!14, !10, !11}
