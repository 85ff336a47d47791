target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@_ZZ9transposeE4tile = internal unnamed_addr addrspace(3) global [32 x [33 x float]] undef, align 4

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @transpose(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, i32 noundef %2, i32 noundef %3) local_unnamed_addr #0 {
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = shl i32 %5, 5
  %7 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %8 = add i32 %6, %7
  %9 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %10 = shl nuw nsw i32 %9, 5
  %11 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %12 = add nuw nsw i32 %10, %11
  %13 = icmp ult i32 %8, %3
  %14 = zext nneg i32 %7 to i64
  br label %20

15:                                               ; preds = %34
  tail call void @llvm.nvvm.barrier0()
  %16 = add nuw nsw i32 %10, %7
  %17 = add i32 %6, %11
  %18 = icmp ult i32 %16, %2
  %19 = zext nneg i32 %7 to i64
  br label %38

20:                                               ; preds = %4, %34
  %21 = phi i32 [ 0, %4 ], [ %35, %34 ]
  br i1 %13, label %22, label %34

22:                                               ; preds = %20
  %23 = add nuw nsw i32 %12, %21
  %24 = icmp ult i32 %23, %2
  br i1 %24, label %25, label %34

25:                                               ; preds = %22
  %26 = mul i32 %23, %3
  %27 = add i32 %26, %8
  %28 = zext i32 %27 to i64
  %29 = getelementptr inbounds float, ptr %0, i64 %28
  %30 = load float, ptr %29, align 4, !tbaa !5
  %31 = add nuw nsw i32 %21, %11
  %32 = zext nneg i32 %31 to i64
  %33 = getelementptr inbounds [32 x [33 x float]], ptr addrspacecast (ptr addrspace(3) @_ZZ9transposeE4tile to ptr), i64 0, i64 %32, i64 %14
  store float %30, ptr %33, align 4, !tbaa !5
  br label %34

34:                                               ; preds = %20, %22, %25
  %35 = add nuw nsw i32 %21, 8
  %36 = icmp ult i32 %21, 24
  br i1 %36, label %20, label %15, !llvm.loop !9

37:                                               ; preds = %52
  ret void

38:                                               ; preds = %15, %52
  %39 = phi i32 [ 0, %15 ], [ %53, %52 ]
  br i1 %18, label %40, label %52

40:                                               ; preds = %38
  %41 = add i32 %17, %39
  %42 = icmp ult i32 %41, %3
  br i1 %42, label %43, label %52

43:                                               ; preds = %40
  %44 = add nuw nsw i32 %39, %11
  %45 = zext nneg i32 %44 to i64
  %46 = getelementptr inbounds [32 x [33 x float]], ptr addrspacecast (ptr addrspace(3) @_ZZ9transposeE4tile to ptr), i64 0, i64 %19, i64 %45
  %47 = load float, ptr %46, align 4, !tbaa !5
  %48 = mul i32 %41, %2
  %49 = add i32 %48, %16
  %50 = zext i32 %49 to i64
  %51 = getelementptr inbounds float, ptr %1, i64 %50
  store float %47, ptr %51, align 4, !tbaa !5
  br label %52

52:                                               ; preds = %38, %40, %43
  %53 = add nuw nsw i32 %39, 8
  %54 = icmp ult i32 %39, 24
  br i1 %54, label %38, label %37, !llvm.loop !12
}

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier0() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y() #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y() #2

attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_52" "target-features"="+ptx85,+sm_52" "uniform-work-group-size"="true" }
attributes #1 = { convergent nocallback nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!llvm.ident = !{!4}

!0 = !{ptr @transpose, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!4 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!5 = !{!6, !6, i64 0}
!6 = !{!"float", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
!9 = distinct !{!9, !10, !11}
!10 = !{!"llvm.loop.mustprogress"}
!11 = !{!"llvm.loop.unroll.disable"}
!12 = distinct !{!12, !10, !11}
