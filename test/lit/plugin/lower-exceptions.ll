; The debug-mode markers tidal.bounds.error and tidal.assert.fail write into
; the module's exception slot, numbered by raise site (1, 2, ... in the order
; of the module): the first raise of a launch claims it with a
; compare-and-swap of the code from 0, and only that thread writes its tid
; and ctaid (and for a bounds error the axis, index and extent); every
; raising thread then ends with PTX `exit` (no __assertfail, no trap: the
; context stays usable). A module without raise sites has no slot.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-exceptions -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %S/Inputs/no-raise-sites.ll | llc -march=nvptx64 -mcpu=sm_90 | FileCheck %s --check-prefix=NONE
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-exceptions -disable-output %S/Inputs/exception-slot-taken.ll 2>&1 | FileCheck %s --check-prefix=ERR

declare void @tidal.bounds.error(ptr, i64, i64, i32)
declare void @tidal.assert.fail(ptr)

@where = private unnamed_addr constant [16 x i8] c"k at k.py:3 (a)\00"
@message = private unnamed_addr constant [13 x i8] c"x must be >0\00"

; CHECK-NOT: @tidal.
; The slot: code, tid[3], ctaid[3], axis, index, extent; external, so that
; the driver finds it by name.
; CHECK: @__tidal_exception_slot = addrspace(1) global { i32, [3 x i32], [3 x i32], i32, i64, i64 } zeroinitializer, align 8
; PTX: .visible .global .align 8 .b8 __tidal_exception_slot[48];
; PTX-NOT: __assertfail
; PTX-NOT: trap;
; PTX-NOT: vprintf

; An index out of range: site 1; the winner also writes the axis, index and extent.
; CHECK-LABEL: define void @bounds(
; CHECK-NEXT:    %1 = cmpxchg ptr addrspace(1) @__tidal_exception_slot, i32 0, i32 1 monotonic monotonic, align 4
; CHECK-NEXT:    %raise.won = extractvalue { i32, i1 } %1, 1
; CHECK-NEXT:    br i1 %raise.won, label %raise.record, label %raise.exit
; CHECK:       raise.record:
; CHECK-NEXT:    %2 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK-NEXT:    store i32 %2, ptr addrspace(1) getelementptr inbounds ({{.*}} @__tidal_exception_slot, i32 0, i32 1), align 4
; CHECK:         call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; CHECK:         call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
; CHECK:         %5 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-NEXT:    store i32 %5, ptr addrspace(1) getelementptr inbounds ({{.*}} @__tidal_exception_slot, i32 0, i32 2), align 4
; CHECK:         call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
; CHECK:         call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
; CHECK:         store i32 2, ptr addrspace(1) getelementptr inbounds ({{.*}} @__tidal_exception_slot, i32 0, i32 3), align 4
; CHECK-NEXT:    store i64 %i, ptr addrspace(1) getelementptr inbounds ({{.*}} @__tidal_exception_slot, i32 0, i32 4), align 8
; CHECK-NEXT:    store i64 %n, ptr addrspace(1) getelementptr inbounds ({{.*}} @__tidal_exception_slot, i32 0, i32 5), align 8
; CHECK-NEXT:    br label %raise.exit
; CHECK:       raise.exit:
; CHECK-NEXT:    call void asm sideeffect "exit;", ""()
; CHECK-NEXT:    unreachable
; PTX-LABEL: .entry bounds(
; PTX:         atom.global.cas.b32 {{%r[0-9]+}}, [{{%rd[0-9]+}}], 0, 1;
; PTX:         mov.u32 {{%r[0-9]+}}, %tid.x;
; PTX:         st.global.u32 [__tidal_exception_slot+4],
; PTX:         mov.u32 {{%r[0-9]+}}, %ctaid.x;
; PTX:         st.global.u64 [__tidal_exception_slot+32],
; PTX:         st.global.u64 [__tidal_exception_slot+40],
; PTX:         exit;
define void @bounds(i64 %i, i64 %n) {
  call void @tidal.bounds.error(ptr @where, i64 %i, i64 %n, i32 2)
  unreachable
}

; A raise in a device function: site 2; `exit` ends the thread there (a
; return would go back to the kernel).
; CHECK-LABEL: define void @checked(
; CHECK:       fail:
; CHECK-NEXT:    %1 = cmpxchg ptr addrspace(1) @__tidal_exception_slot, i32 0, i32 2 monotonic monotonic, align 4
; CHECK:       raise.record:
; CHECK-NOT:     i32 0, i32 3)
; CHECK:         br label %raise.exit
; CHECK:       raise.exit:
; CHECK-NEXT:    call void asm sideeffect "exit;", ""()
; CHECK-NEXT:    unreachable
define void @checked(double %x) {
  %negative = fcmp olt double %x, 0.0
  br i1 %negative, label %fail, label %ok
fail:
  call void @tidal.assert.fail(ptr @message)
  unreachable
ok:
  ret void
}

; CHECK-LABEL: define void @calls_checked(
; CHECK-NEXT:    call void @checked(double %x)
; PTX-LABEL: .entry calls_checked(
; PTX:         atom.global.cas.b32 {{%r[0-9]+}}, [{{%rd[0-9]+}}], 0, 2;
; PTX:         exit;
define void @calls_checked(double %x) {
  call void @checked(double %x)
  ret void
}

!tidal.kernels = !{!0, !1}
!0 = !{ptr @bounds}
!1 = !{ptr @calls_checked}

; A kernel without raise sites (a non-debug kernel) has no slot.
; NONE-NOT: __tidal_exception_slot
; NONE: .entry plain(
; NONE-NOT: __tidal_exception_slot

; ERR: error: tidal: the global '__tidal_exception_slot' is reserved for tidal's exception slot
