; Kernel options: "tidal-maxntid"/"tidal-minctasm"/"tidal-maxnreg" become
; !nvvm.annotations and PTX .maxntid/.minnctapersm/.maxnreg; "tidal.ftz"
; flushes f32 denormals (the function attribute NVPTX reads, and
; nvvm-reflect-ftz); debug locations survive into .file/.loc.
; RUN: rm -rf %t && split-file %s %t
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-annotate-kernels -S %t/bounds.ll | FileCheck %t/bounds.ll
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %t/bounds.ll | llc -march=nvptx64 -mcpu=sm_75 -o %t/bounds.ptx
; RUN: FileCheck %t/bounds.ll --check-prefix=PTX < %t/bounds.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t/bounds.ptx -o %t/bounds.cubin %}
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-annotate-kernels -S %t/cluster.ll | FileCheck %t/cluster.ll
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %t/cluster.ll | llc -march=nvptx64 -mcpu=sm_90 -o %t/cluster.ptx
; RUN: FileCheck %t/cluster.ll --check-prefix=PTX < %t/cluster.ptx
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %t/cluster.ll | llc -march=nvptx64 -mcpu=sm_80 | FileCheck %t/cluster.ll --check-prefix=SM80
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t/cluster.ptx -o %t/cluster.cubin %}
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/bad-bounds.ll 2>&1 | FileCheck %t/bad-bounds.ll --check-prefix=ERR
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-annotate-kernels -S %t/ftz.ll | FileCheck %t/ftz.ll
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<ftz>' %t/ftz-option.ll | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %t/ftz-option.ll --check-prefix=PTX
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %t/debug.ll | llc -march=nvptx64 -mcpu=sm_75 -o %t/debug.ptx
; RUN: FileCheck %t/debug.ll --check-prefix=PTX < %t/debug.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t/debug.ptx -o %t/debug.cubin %}

;--- bounds.ll
; launch_bounds=(256, 2) and max_registers=32 on one kernel, a 3-D maxntid
; on another.
; CHECK-DAG: !{ptr @bounded, !"maxntidx", i32 256}
; CHECK-DAG: !{ptr @bounded, !"minctasm", i32 2}
; CHECK-DAG: !{ptr @bounded, !"maxnreg", i32 32}
; CHECK-DAG: !{ptr @cube, !"maxntidx", i32 8}
; CHECK-DAG: !{ptr @cube, !"maxntidy", i32 8}
; CHECK-DAG: !{ptr @cube, !"maxntidz", i32 4}
; PTX-LABEL: .entry bounded(
; PTX:         .maxntid 256, 1, 1
; PTX-NEXT:    .minnctapersm 2
; PTX-NEXT:    .maxnreg 32
; PTX-LABEL: .entry cube(
; PTX:         .maxntid 8, 8, 4
define void @bounded(ptr %out) "tidal-maxntid"="256" "tidal-minctasm"="2" "tidal-maxnreg"="32" {
  store i32 1, ptr %out
  ret void
}

define void @cube(ptr %out) "tidal-maxntid"="8,8,4" {
  store i32 1, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1}
!0 = !{ptr @bounded}
!1 = !{ptr @cube}

;--- cluster.ll
; launch_bounds=(128, 2, 4): the third item, the most blocks per cluster,
; is .maxclusterrank on sm_90 (LLVM leaves it out below sm_90).
; CHECK-DAG: !{ptr @clustered, !"maxntidx", i32 128}
; CHECK-DAG: !{ptr @clustered, !"minctasm", i32 2}
; CHECK-DAG: !{ptr @clustered, !"maxclusterrank", i32 4}
; PTX-LABEL: .entry clustered(
; PTX:         .maxntid 128, 1, 1
; PTX-NEXT:    .minnctapersm 2
; PTX-NEXT:    .maxclusterrank 4
; SM80-LABEL: .entry clustered(
; SM80:         .minnctapersm 2
; SM80-NOT:     .maxclusterrank
define void @clustered(ptr %out) "tidal-maxntid"="128" "tidal-minctasm"="2" "tidal-maxclusterrank"="4" {
  store i32 1, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @clustered}

;--- bad-bounds.ll
; ERR: error: tidal: attribute "tidal-maxntid"="256,x" of kernel 'kernel': expected positive integers X[,Y[,Z]]
define void @kernel(ptr %out) "tidal-maxntid"="256,x" {
  store i32 1, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- ftz.ll
; "tidal.ftz"=1: every defined function flushes f32 denormals.
; CHECK: define void @kernel(ptr %out, float %x) #[[KERNEL:[0-9]+]]
; CHECK: define void @helper(ptr %out, float %x) #[[KERNEL]]
; CHECK: attributes #[[KERNEL]] = { "denormal-fp-math-f32"="preserve-sign,preserve-sign" "target-cpu"="sm_75" }
; CHECK: !{i32 4, !"nvvm-reflect-ftz", i32 1}
define void @kernel(ptr %out, float %x) {
  call void @helper(ptr %out, float %x)
  ret void
}

define void @helper(ptr %out, float %x) {
  %y = fmul float %x, %x
  store float %y, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!llvm.module.flags = !{!1}
!1 = !{i32 1, !"tidal.ftz", i32 1}

;--- ftz-option.ll
; The pass parameter ftz does the same: mul.rn.ftz.f32.
; PTX-LABEL: .entry kernel(
; PTX:         mul.rn.ftz.f32
define void @kernel(ptr %out, float %x) {
  %y = fmul float %x, %x
  store float %y, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- debug.ll
; Line tables of the Python file: .file and .loc lines in the PTX.
; PTX: .target sm_75, debug
; PTX-LABEL: .entry kernel(
; PTX:         .loc 1 6 9
; PTX:         .loc 1 7 5
; PTX:       .file 1 "/src/kernel.py"
define void @kernel(ptr %out, float %x) !dbg !4 {
  %y = fmul float %x, %x, !dbg !7
  store float %y, ptr %out, !dbg !8
  ret void, !dbg !8
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!llvm.dbg.cu = !{!1}
!llvm.module.flags = !{!3}
!1 = distinct !DICompileUnit(language: DW_LANG_Python, file: !2, producer: "tidal", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "kernel.py", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "kernel", scope: !2, file: !2, line: 5, type: !5, scopeLine: 5, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !1)
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DILocation(line: 6, column: 9, scope: !4)
!8 = !DILocation(line: 7, column: 5, scope: !4)
