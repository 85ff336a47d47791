target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@_ZZ10block_scanE11warp_totals = internal unnamed_addr addrspace(3) global [32 x i32] undef, align 4

; Function Attrs: convergent mustprogress norecurse nounwind memory(inaccessiblemem: readwrite)
define dso_local noundef i32 @_Z19warp_inclusive_scanij(i32 noundef %0, i32 noundef %1) local_unnamed_addr #0 {
  br label %4

3:                                                ; preds = %4
  ret i32 %10

4:                                                ; preds = %2, %4
  %5 = phi i32 [ %0, %2 ], [ %10, %4 ]
  %6 = phi i32 [ 1, %2 ], [ %11, %4 ]
  %7 = tail call noundef i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %5, i32 %6, i32 0)
  %8 = icmp ugt i32 %6, %1
  %9 = select i1 %8, i32 0, i32 %7
  %10 = add nsw i32 %9, %5
  %11 = shl nuw nsw i32 %6, 1
  %12 = icmp ult i32 %6, 16
  br i1 %12, label %4, label %3, !llvm.loop !5
}

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @block_scan(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, ptr nocapture noundef writeonly %2, i32 noundef %3) local_unnamed_addr #1 {
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %7 = mul i32 %5, %6
  %8 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %9 = add i32 %7, %8
  %10 = and i32 %8, 31
  %11 = lshr i32 %8, 5
  %12 = icmp ult i32 %9, %3
  br i1 %12, label %13, label %17

13:                                               ; preds = %4
  %14 = zext i32 %9 to i64
  %15 = getelementptr inbounds i32, ptr %0, i64 %14
  %16 = load i32, ptr %15, align 4, !tbaa !8
  br label %17

17:                                               ; preds = %4, %13
  %18 = phi i32 [ 0, %4 ], [ %16, %13 ]
  br label %19

19:                                               ; preds = %17, %19
  %20 = phi i32 [ %25, %19 ], [ %18, %17 ]
  %21 = phi i32 [ %26, %19 ], [ 1, %17 ]
  %22 = tail call noundef i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %20, i32 %21, i32 0)
  %23 = icmp ugt i32 %21, %10
  %24 = select i1 %23, i32 0, i32 %22
  %25 = add nsw i32 %24, %20
  %26 = shl nuw nsw i32 %21, 1
  %27 = icmp ult i32 %21, 16
  br i1 %27, label %19, label %28, !llvm.loop !5

28:                                               ; preds = %19
  %29 = icmp eq i32 %10, 31
  br i1 %29, label %30, label %33

30:                                               ; preds = %28
  %31 = zext nneg i32 %11 to i64
  %32 = getelementptr inbounds [32 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ10block_scanE11warp_totals to ptr), i64 0, i64 %31
  store i32 %25, ptr %32, align 4, !tbaa !8
  br label %33

33:                                               ; preds = %30, %28
  tail call void @llvm.nvvm.barrier0()
  %34 = icmp ult i32 %8, 32
  br i1 %34, label %35, label %56

35:                                               ; preds = %33
  %36 = lshr i32 %6, 5
  %37 = icmp ult i32 %10, %36
  br i1 %37, label %38, label %42

38:                                               ; preds = %35
  %39 = zext nneg i32 %10 to i64
  %40 = getelementptr inbounds [32 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ10block_scanE11warp_totals to ptr), i64 0, i64 %39
  %41 = load i32, ptr %40, align 4, !tbaa !8
  br label %42

42:                                               ; preds = %35, %38
  %43 = phi i32 [ 0, %35 ], [ %41, %38 ]
  br label %44

44:                                               ; preds = %42, %44
  %45 = phi i32 [ %50, %44 ], [ %43, %42 ]
  %46 = phi i32 [ %51, %44 ], [ 1, %42 ]
  %47 = tail call noundef i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %45, i32 %46, i32 0)
  %48 = icmp ugt i32 %46, %10
  %49 = select i1 %48, i32 0, i32 %47
  %50 = add nsw i32 %49, %45
  %51 = shl nuw nsw i32 %46, 1
  %52 = icmp ult i32 %46, 16
  br i1 %52, label %44, label %53, !llvm.loop !5

53:                                               ; preds = %44
  %54 = zext nneg i32 %10 to i64
  %55 = getelementptr inbounds [32 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ10block_scanE11warp_totals to ptr), i64 0, i64 %54
  store i32 %50, ptr %55, align 4, !tbaa !8
  br label %56

56:                                               ; preds = %53, %33
  tail call void @llvm.nvvm.barrier0()
  br i1 %34, label %63, label %57

57:                                               ; preds = %56
  %58 = add nsw i32 %11, -1
  %59 = zext nneg i32 %58 to i64
  %60 = getelementptr inbounds [32 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ10block_scanE11warp_totals to ptr), i64 0, i64 %59
  %61 = load i32, ptr %60, align 4, !tbaa !8
  %62 = add nsw i32 %61, %25
  br label %63

63:                                               ; preds = %57, %56
  %64 = phi i32 [ %62, %57 ], [ %25, %56 ]
  br i1 %12, label %65, label %68

65:                                               ; preds = %63
  %66 = zext i32 %9 to i64
  %67 = getelementptr inbounds i32, ptr %1, i64 %66
  store i32 %64, ptr %67, align 4, !tbaa !8
  br label %68

68:                                               ; preds = %65, %63
  %69 = add nsw i32 %6, -1
  %70 = icmp eq i32 %8, %69
  br i1 %70, label %71, label %74

71:                                               ; preds = %68
  %72 = zext nneg i32 %5 to i64
  %73 = getelementptr inbounds i32, ptr %2, i64 %72
  store i32 %64, ptr %73, align 4, !tbaa !8
  br label %74

74:                                               ; preds = %71, %68
  ret void
}

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier0() #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32) #3

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #4

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #4

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #4

attributes #0 = { convergent mustprogress norecurse nounwind memory(inaccessiblemem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_52" "target-features"="+ptx85,+sm_52" }
attributes #1 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_52" "target-features"="+ptx85,+sm_52" "uniform-work-group-size"="true" }
attributes #2 = { convergent nocallback nounwind }
attributes #3 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
attributes #4 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!llvm.ident = !{!4}

!0 = !{ptr @block_scan, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!4 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!5 = distinct !{!5, !6, !7}
!6 = !{!"llvm.loop.mustprogress"}
!7 = !{!"llvm.loop.unroll.disable"}
!8 = !{!9, !9, i64 0}
!9 = !{!"int", !10, i64 0}
!10 = !{!"omnipotent char", !11, i64 0}
!11 = !{!"Simple C++ TBAA"}
