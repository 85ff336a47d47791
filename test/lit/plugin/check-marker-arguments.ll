; Marker calls whose arguments the contract refuses: one verifier
; (tidal-check-marker-arguments) runs first in both lowerings, so that
; tidal-lower-nvptx and tidal-lower-host reject the same modules with the same
; error naming the marker, the function and the Python line, and a non-zero
; exit (issue 16: the host lowering used to accept, crash on or misread them;
; /work/shared/bugs/host_*.ll).
; RUN: rm -rf %t && split-file %s %t
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-check-marker-arguments -disable-output %t/shared-size.ll 2>&1 | FileCheck %t/shared-size.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/shared-size.ll 2>&1 | FileCheck %t/shared-size.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/shared-size.ll 2>&1 | FileCheck %t/shared-size.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/local-align.ll 2>&1 | FileCheck %t/local-align.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/local-align.ll 2>&1 | FileCheck %t/local-align.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/local-huge-align.ll 2>&1 | FileCheck %t/local-huge-align.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/local-huge-align.ll 2>&1 | FileCheck %t/local-huge-align.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/shared-negative.ll 2>&1 | FileCheck %t/shared-negative.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/shared-negative.ll 2>&1 | FileCheck %t/shared-negative.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/shared-over-limit.ll 2>&1 | FileCheck %t/shared-over-limit.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/shared-over-limit.ll 2>&1 | FileCheck %t/shared-over-limit.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/local-over-limit.ll 2>&1 | FileCheck %t/local-over-limit.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/local-over-limit.ll 2>&1 | FileCheck %t/local-over-limit.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/const-data.ll 2>&1 | FileCheck %t/const-data.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/const-data.ll 2>&1 | FileCheck %t/const-data.ll --check-prefix=ERR
; The host lowering also adds up a kernel's shared arrays.
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/shared-total.ll 2>&1 | FileCheck %t/shared-total.ll --check-prefix=ERR
; Valid arguments at the limits pass.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-check-marker-arguments -disable-output %t/limits.ll
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %t/limits.ll | FileCheck %t/limits.ll
; -debug-only names each refused call (DebugOutput.cpp, also under NDEBUG).
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-check-marker-arguments -disable-output -debug-only=tidal-check-marker-arguments %t/shared-size.ll 2>&1 | FileCheck %t/shared-size.ll --check-prefix=DEBUG

;--- shared-size.ll
; A shared array whose size is not a constant (cuda.shared.array(n, ...)).
; ERR: error: tidal: marker 'tidal.shared.array' in function 'kernel' at kernel.py:4:9: the size and alignment must be constants
; DEBUG: tidal-check-marker-arguments: refused   %a = call ptr @tidal.shared.array(i64 %n, i64 4)
declare ptr @tidal.shared.array(i64, i64)

define void @kernel(ptr %out, i64 %n) !dbg !4 {
  %a = call ptr @tidal.shared.array(i64 %n, i64 4), !dbg !7
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!llvm.dbg.cu = !{!1}
!llvm.module.flags = !{!3}
!1 = distinct !DICompileUnit(language: DW_LANG_Python, file: !2, producer: "tidal", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "kernel.py", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "kernel", scope: !2, file: !2, line: 3, type: !5, scopeLine: 3, spFlags: DISPFlagDefinition, unit: !1)
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DILocation(line: 4, column: 9, scope: !4)

;--- local-align.ll
; A local array with an alignment that is not a power of two.
; ERR: error: tidal: marker 'tidal.local.array' in function 'kernel': invalid size 16 or alignment 3 (a power of two up to 65536)
declare ptr @tidal.local.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.local.array(i64 16, i64 3)
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- const-data.ll
; A constant array whose data is a mutable global.
; ERR: error: tidal: marker 'tidal.const.array' in function 'kernel': the argument must be a constant global variable with an initializer
declare ptr @tidal.const.array(ptr)

@data = global [2 x i32] [i32 1, i32 2]

define void @kernel(ptr %out) {
  %a = call ptr @tidal.const.array(ptr @data)
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- local-huge-align.ll
; An alignment of 2^62 (the host lowering used to emit an alloca with it and
; die with "Broken module found").
; ERR: error: tidal: marker 'tidal.local.array' in function 'kernel': invalid size 16 or alignment 4611686018427387904 (a power of two up to 65536)
declare ptr @tidal.local.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.local.array(i64 16, i64 4611686018427387904)
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- shared-negative.ll
; A size of -1 (2^64-1 bytes) and an alignment of 3.
; ERR: error: tidal: marker 'tidal.shared.array' in function 'kernel': invalid size -1 or alignment 3 (a power of two up to 65536)
declare ptr @tidal.shared.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.shared.array(i64 -1, i64 3)
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- shared-over-limit.ll
; 2^40 float32 elements: over the 48 KiB of static shared memory of a block.
; ERR: error: tidal: marker 'tidal.shared.array' in function 'kernel': a size of 4398046511104 bytes is over CUDA's limit of 49152 bytes of static shared memory per block
declare ptr @tidal.shared.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.shared.array(i64 4398046511104, i64 4)
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- local-over-limit.ll
; A local array over CUDA's 512 KiB of local memory per thread.
; ERR: error: tidal: marker 'tidal.local.array' in function 'kernel': a size of 524289 bytes is over CUDA's limit of 524288 bytes of local memory per thread
declare ptr @tidal.local.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.local.array(i64 524289, i64 4)
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- shared-total.ll
; Two arrays each within the limit, together over it.
; ERR: error: tidal: kernel 'kernel': its shared arrays take 65536 bytes, over CUDA's limit of 49152 bytes of static shared memory per block
declare ptr @tidal.shared.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.shared.array(i64 32768, i64 4)
  store ptr %a, ptr %out
  %b = call ptr @tidal.shared.array(i64 32768, i64 4)
  store ptr %b, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- limits.ll
; 48 KiB of shared memory and 512 KiB of local memory, 64 KiB aligned.
; CHECK-DAG: call ptr @__tidal_cpu_shared(ptr %ctx, i64 49152, i32 0)
; CHECK-DAG: alloca [524288 x i8], align 65536
declare ptr @tidal.shared.array(i64, i64)
declare ptr @tidal.local.array(i64, i64)

define void @kernel(ptr %out) {
  %a = call ptr @tidal.shared.array(i64 49152, i64 65536)
  store ptr %a, ptr %out
  %b = call ptr @tidal.local.array(i64 524288, i64 65536)
  store ptr %b, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
