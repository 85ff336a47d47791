; Malformed memory markers: an error naming the marker, the function and the
; Python line, and a non-zero exit, for each pass that sees them.
; RUN: rm -rf %t && split-file %s %t
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-memory-spaces -disable-output %t/shared-size.ll 2>&1 | FileCheck %t/shared-size.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/shared-size.ll 2>&1 | FileCheck %t/shared-size.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/local-align.ll 2>&1 | FileCheck %t/local-align.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/const-data.ll 2>&1 | FileCheck %t/const-data.ll --check-prefix=ERR

;--- shared-size.ll
; A shared array whose size is not a constant (cuda.shared.array(n, ...)).
; ERR: error: tidal: marker 'tidal.shared.array' in function 'kernel' at kernel.py:4:9: the size and alignment must be constants
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
