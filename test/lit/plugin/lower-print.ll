; print becomes vprintf(format, buffer) with the arguments in a local struct
; (fields aligned to their size). The debug-mode markers bounds.error and
; assert.fail are tidal-lower-exceptions' (lower-exceptions.ll).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-print -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare void @tidal.print(ptr, ...)

@format = private unnamed_addr constant [12 x i8] c"%d %f %lld\0A\00"
@hello = private unnamed_addr constant [7 x i8] c"hello\0A\00"

; CHECK-NOT: @tidal.
; PTX: .extern .func  (.param .b32 func_retval0) vprintf

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

!tidal.kernels = !{!0, !1}
!0 = !{ptr @print_values}
!1 = !{ptr @print_text}
