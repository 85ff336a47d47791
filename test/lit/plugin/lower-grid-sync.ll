; The cooperative groups' markers on NVPTX (tidal-lower-barriers):
; tidal.grid.group leaves nothing (it only says that launches must be
; cooperative), and tidal.grid.sync is a grid barrier on the module's
; counter @__tidal_grid_barrier: bar.sync, then thread (0, 0, 0) of each
; block fences (membar.gl), adds 2^31 - (blocks - 1) (block (0, 0, 0)) or 1
; (the others) with atom.global.add, spins on a volatile load until bit 31
; of the counter flips, fences again, and bar.sync lets its block go on.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-barriers -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %s --check-prefix=PTX
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare void @tidal.grid.group()
declare void @tidal.grid.sync()

; CHECK: @__tidal_grid_barrier = internal addrspace(1) global i32 0, align 4
; CHECK-NOT: @tidal.grid

; CHECK-LABEL: define void @two_phases(
; CHECK:         call void @llvm.nvvm.barrier0()
; CHECK:         %grid.sync.arrives = icmp eq i32 %{{.+}}, 0
; CHECK:         br i1 %grid.sync.arrives, label %grid.sync.arrive, label %grid.sync.after
; CHECK:       grid.sync.arrive:
; CHECK:         %grid.sync.increment = select i1 %{{.+}}, i32 %{{.+}}, i32 1
; CHECK:         call void @llvm.nvvm.membar.gl()
; CHECK:         %[[OLD:.+]] = atomicrmw add ptr addrspace(1) @__tidal_grid_barrier, i32 %grid.sync.increment monotonic
; CHECK:       grid.sync.spin:
; CHECK:         %grid.sync.counter = load volatile i32, ptr addrspace(1) @__tidal_grid_barrier
; CHECK:         xor i32 %[[OLD]], %grid.sync.counter
; CHECK:         and i32 %{{.+}}, -2147483648
; CHECK:         br i1 %{{.+}}, label %grid.sync.released, label %grid.sync.spin
; CHECK:       grid.sync.released:
; CHECK:         call void @llvm.nvvm.membar.gl()
; CHECK:       grid.sync.after:
; CHECK-NEXT:    call void @llvm.nvvm.barrier0()
; CHECK-NEXT:    %second = load i32, ptr %in
; PTX-LABEL:   .entry two_phases(
; PTX:           bar.sync 0;
; PTX:           membar.gl;
; PTX:           atom.global.add.u32
; PTX:           ld.volatile.global.u32
; PTX:           membar.gl;
; PTX:           bar.sync 0;
define void @two_phases(ptr %in, ptr %out) {
  call void @tidal.grid.group()
  store i32 1, ptr %in
  call void @tidal.grid.sync()
  %second = load i32, ptr %in
  store i32 %second, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @two_phases}
