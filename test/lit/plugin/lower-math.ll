; Math without libdevice: the functions NVPTX has instructions for become
; LLVM intrinsics; any other is an error that names it and asks for a
; toolkit. The module flags "tidal.prec-div"=0 / "tidal.prec-sqrt"=0 make f32
; division and square root approximate (ftz forms under "tidal.ftz").
; RUN: rm -rf %t && split-file %s %t
; RUN: env TIDAL_LIBDEVICE=none opt -load-pass-plugin=%plugin -passes=tidal-lower-math -S %t/native.ll | FileCheck %t/native.ll
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<libdevice=none>' %t/native.ll | llc -march=nvptx64 -mcpu=sm_75 -o %t/native.ptx
; RUN: FileCheck %t/native.ll --check-prefix=PTX < %t/native.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t/native.ptx -o %t/native.cubin %}
; RUN: not opt -load-pass-plugin=%plugin -passes='tidal-lower-math<libdevice=none>' -disable-output %t/no-libdevice.ll 2>&1 | FileCheck %t/no-libdevice.ll --check-prefix=ERR
; RUN: env TIDAL_LIBDEVICE=none not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/no-libdevice.ll 2>&1 | FileCheck %t/no-libdevice.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes='tidal-lower-math<libdevice=%t/missing.bc>' -disable-output %t/no-libdevice.ll 2>&1 | FileCheck %t/no-libdevice.ll --check-prefix=MISSING
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-math -S %t/fastmath.ll | FileCheck %t/fastmath.ll
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %t/fastmath.ll | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %t/fastmath.ll --check-prefix=PTX

;--- native.ll
declare float @tidal.math.sqrt.f32(float)
declare double @tidal.math.sqrt.f64(double)
declare float @tidal.math.fabs.f32(float)
declare double @tidal.math.floor.f64(double)
declare float @tidal.math.ceil.f32(float)
declare double @tidal.math.trunc.f64(double)
declare float @tidal.math.round.f32(float)
declare double @tidal.math.copysign.f64(double, double)
declare float @tidal.math.fmin.f32(float, float)
declare double @tidal.math.fmax.f64(double, double)

; CHECK-NOT: @tidal.
; CHECK-NOT: __nv_

; f32: sqrt (IEEE, sqrt.rn), fabs, ceil, round (half away from zero), fmin.
; CHECK-LABEL: define void @native_f32(
; CHECK-NEXT:    %sqrt = call float @llvm.sqrt.f32(float %x)
; CHECK-NEXT:    %fabs = call float @llvm.fabs.f32(float %sqrt)
; CHECK-NEXT:    %ceil = call float @llvm.ceil.f32(float %fabs)
; CHECK-NEXT:    %round = call float @llvm.round.f32(float %ceil)
; CHECK-NEXT:    %fmin = call float @llvm.minnum.f32(float %round, float %y)
; PTX-LABEL: .entry native_f32(
; PTX:         sqrt.rn.f32
; PTX:         abs.f32
; PTX:         cvt.rpi.f32.f32
; PTX:         min.f32
define void @native_f32(ptr %out, float %x, float %y) {
  %sqrt = call float @tidal.math.sqrt.f32(float %x)
  %fabs = call float @tidal.math.fabs.f32(float %sqrt)
  %ceil = call float @tidal.math.ceil.f32(float %fabs)
  %round = call float @tidal.math.round.f32(float %ceil)
  %fmin = call float @tidal.math.fmin.f32(float %round, float %y)
  store float %fmin, ptr %out
  ret void
}

; f64: sqrt, floor, trunc (O3 drops it after floor), copysign, fmax.
; CHECK-LABEL: define void @native_f64(
; CHECK-NEXT:    %sqrt = call double @llvm.sqrt.f64(double %x)
; CHECK-NEXT:    %floor = call double @llvm.floor.f64(double %sqrt)
; CHECK-NEXT:    %trunc = call double @llvm.trunc.f64(double %floor)
; CHECK-NEXT:    %copysign = call double @llvm.copysign.f64(double %trunc, double %y)
; CHECK-NEXT:    %fmax = call double @llvm.maxnum.f64(double %copysign, double %y)
; PTX-LABEL: .entry native_f64(
; PTX:         sqrt.rn.f64
; PTX:         cvt.rmi.f64.f64
; PTX:         max.f64
define void @native_f64(ptr %out, double %x, double %y) {
  %sqrt = call double @tidal.math.sqrt.f64(double %x)
  %floor = call double @tidal.math.floor.f64(double %sqrt)
  %trunc = call double @tidal.math.trunc.f64(double %floor)
  %copysign = call double @tidal.math.copysign.f64(double %trunc, double %y)
  %fmax = call double @tidal.math.fmax.f64(double %copysign, double %y)
  store double %fmax, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1}
!0 = !{ptr @native_f32}
!1 = !{ptr @native_f64}

;--- no-libdevice.ll
; sin has no instruction: without libdevice it is an error at its line.
; ERR: error: tidal: marker 'tidal.math.sin.f32' in function 'kernel' at kernel.py:6:12: this math function needs libdevice from a CUDA toolkit, and none was found (set CUDA_HOME, or TIDAL_LIBDEVICE to the libdevice.10.bc file)
; MISSING: error: tidal: cannot read libdevice '{{.*}}missing.bc': {{.*}}
declare float @tidal.math.sin.f32(float)

define void @kernel(ptr %out, float %x) !dbg !4 {
  %s = call float @tidal.math.sin.f32(float %x), !dbg !7
  store float %s, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!llvm.dbg.cu = !{!1}
!llvm.module.flags = !{!3}
!1 = distinct !DICompileUnit(language: DW_LANG_Python, file: !2, producer: "tidal", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "kernel.py", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "kernel", scope: !2, file: !2, line: 5, type: !5, scopeLine: 5, spFlags: DISPFlagDefinition, unit: !1)
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DILocation(line: 6, column: 12, scope: !4)

;--- fastmath.ll
; fastmath=True (ftz=1, prec-div=0, prec-sqrt=0): f32 x / y and sqrt become
; the approximate ftz instructions; f64 stays IEEE.
; CHECK-LABEL: define void @fast(
; CHECK-NEXT:    %q = call float @llvm.nvvm.div.approx.ftz.f(float %x, float %y)
; CHECK-NEXT:    %r = call float @llvm.nvvm.sqrt.approx.ftz.f(float %q)
; CHECK-NEXT:    %d = fdiv double %a, %b
; PTX-LABEL: .entry fast(
; PTX:         div.approx.ftz.f32
; PTX:         sqrt.approx.ftz.f32
; PTX:         div.rn.f64
declare float @tidal.math.sqrt.f32(float)

define void @fast(ptr %out, float %x, float %y, double %a, double %b) {
  %q = fdiv float %x, %y
  %r = call float @tidal.math.sqrt.f32(float %q)
  %d = fdiv double %a, %b
  store float %r, ptr %out
  %p = getelementptr double, ptr %out, i64 1
  store double %d, ptr %p
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @fast}
!llvm.module.flags = !{!1, !2, !3}
!1 = !{i32 1, !"tidal.ftz", i32 1}
!2 = !{i32 1, !"tidal.prec-div", i32 0}
!3 = !{i32 1, !"tidal.prec-sqrt", i32 0}
