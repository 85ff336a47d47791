; print becomes vprintf(format, buffer) with the arguments in a local struct
; (fields aligned to their size); the debug-mode markers print and end in
; __assertfail (the launch fails with CUDA_ERROR_ASSERT) and a trap.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-print -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare void @tidal.print(ptr, ...)
declare void @tidal.bounds.error(ptr, i64, i64, i32)
declare void @tidal.assert.fail(ptr)

@format = private unnamed_addr constant [12 x i8] c"%d %f %lld\0A\00"
@hello = private unnamed_addr constant [7 x i8] c"hello\0A\00"
@where = private unnamed_addr constant [16 x i8] c"k at k.py:3 (a)\00"
@message = private unnamed_addr constant [13 x i8] c"x must be >0\00"

; CHECK-NOT: @tidal.
; The Python file and the function name of the failed assert, for __assertfail.
; CHECK-DAG: @assert.file1 = private unnamed_addr constant [5 x i8] c"k.py\00"
; CHECK-DAG: @assert.function2 = private unnamed_addr constant [14 x i8] c"failed_assert\00"
; PTX-DAG: .extern .func  (.param .b32 func_retval0) vprintf
; PTX-DAG: .extern .func __assertfail

; print(i, x, n): an i32, a double (8-aligned: at offset 8), an i64.
; CHECK-LABEL: define void @print_values(
; CHECK-NEXT:    %printf.args = alloca { i32, double, i64 }, align 8
; CHECK-NEXT:    %1 = getelementptr inbounds { i32, double, i64 }, ptr %printf.args, i32 0, i32 0
; CHECK-NEXT:    store i32 %i, ptr %1, align 4
; CHECK-NEXT:    %2 = getelementptr inbounds { i32, double, i64 }, ptr %printf.args, i32 0, i32 1
; CHECK-NEXT:    store double %x, ptr %2, align 8
; CHECK-NEXT:    %3 = getelementptr inbounds { i32, double, i64 }, ptr %printf.args, i32 0, i32 2
; CHECK-NEXT:    store i64 %n, ptr %3, align 8
; CHECK-NEXT:    %4 = call i32 @vprintf(ptr @format, ptr %printf.args)
; PTX-LABEL: .entry print_values(
; PTX:         .local .align 8 .b8 __local_depot{{[0-9]+}}[24];
; PTX-DAG:     st.local.u32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
; PTX-DAG:     st.local.f64 [%rd{{[0-9]+}}+8], %fd{{[0-9]+}};
; PTX-DAG:     st.local.u64 [%rd{{[0-9]+}}+16], %rd{{[0-9]+}};
; PTX:         call.uni (retval0),
; PTX-NEXT:    vprintf,
define void @print_values(i32 %i, double %x, i64 %n) {
  call void (ptr, ...) @tidal.print(ptr @format, i32 %i, double %x, i64 %n)
  ret void
}

; print("hello"): no arguments, a null buffer.
; CHECK-LABEL: define void @print_text(
; CHECK-NEXT:    %1 = call i32 @vprintf(ptr @hello, ptr null)
define void @print_text() {
  call void (ptr, ...) @tidal.print(ptr @hello)
  ret void
}

; An index out of range: the message, then the assertion.
; CHECK-LABEL: define void @bounds(
; CHECK:         call i32 @vprintf(ptr @__tidal_bounds_format, ptr %printf.args)
; CHECK-NEXT:    call void @__assertfail(ptr @__tidal_bounds_message, ptr @assert.file, i32 0, ptr @assert.function, i64 1)
; CHECK-NEXT:    call void @llvm.trap()
; PTX-LABEL: .entry bounds(
; PTX:         vprintf,
; PTX:         __assertfail,
; PTX:         trap;
define void @bounds(i64 %i, i64 %n) {
  call void @tidal.bounds.error(ptr @where, i64 %i, i64 %n, i32 0)
  ret void
}

; A failed assert, with the Python line as __assertfail's file and line.
; CHECK-LABEL: define void @failed_assert(
; CHECK-NEXT:    call void @__assertfail(ptr @message, ptr @assert.file1, i32 9, ptr @assert.function2, i64 1)
; CHECK-NEXT:    call void @llvm.trap()
; PTX-LABEL: .entry failed_assert(
; PTX:         __assertfail,
define void @failed_assert() !dbg !14 {
  call void @tidal.assert.fail(ptr @message), !dbg !15
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @print_values}
!1 = !{ptr @print_text}
!2 = !{ptr @bounds}
!3 = !{ptr @failed_assert}
!llvm.dbg.cu = !{!10}
!llvm.module.flags = !{!12}
!10 = distinct !DICompileUnit(language: DW_LANG_Python, file: !11, producer: "tidal", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!11 = !DIFile(filename: "k.py", directory: "/src")
!12 = !{i32 2, !"Debug Info Version", i32 3}
!13 = !DISubroutineType(types: !{})
!14 = distinct !DISubprogram(name: "failed_assert", scope: !11, file: !11, line: 8, type: !13, scopeLine: 8, spFlags: DISPFlagDefinition, unit: !10)
!15 = !DILocation(line: 9, column: 5, scope: !14)
