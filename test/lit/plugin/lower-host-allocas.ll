; A constant-size alloca of a kernel with a sync point becomes the thread's
; slot of the frame, even though the resume switch makes K.thread's first
; block a new one (the alloca is then not "static" in LLVM's sense). Clang's
; CUDA C++ output has such allocas (printf's argument struct, local arrays);
; raise-nvvm-print.ll and test/runtime/CpuRaisedCudaTest.cpp come from there.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

; CHECK-LABEL: define internal i32 @k.thread(
; CHECK-NOT: alloca
; CHECK: %args.frame = getelementptr inbounds i8, ptr %frame
; CHECK: %args = getelementptr inbounds i8, ptr %args.frame
; CHECK-LABEL: define void @__tidal_block_k(

%arguments = type { i32, double }
@format = private unnamed_addr constant [7 x i8] c"%d %f\0A\00", align 1

define void @k(ptr %out, double %d) {
  %args = alloca %arguments, align 8
  %t = call i32 @tidal.tid.x()
  store i32 %t, ptr %args, align 8
  call void @tidal.syncthreads()
  %field = getelementptr inbounds %arguments, ptr %args, i32 0, i32 0
  %v = load i32, ptr %field, align 4
  call void (ptr, ...) @tidal.print(ptr @format, i32 %v, double %d)
  store i32 %v, ptr %out, align 4
  ret void
}

declare i32 @tidal.tid.x()
declare void @tidal.syncthreads()
declare void @tidal.print(ptr, ...)

!tidal.kernels = !{!0}
!0 = !{ptr @k}
