; tidal-link-host-libdevice: the __nv_* functions a module calls get tidal's
; host definitions (only those), internal; in tidal-host they inline into
; the kernel before O3. A module without such calls is left as it was.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-link-host-libdevice -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -S %s | FileCheck %s --check-prefix=HOST
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-link-host-libdevice -S %S/lower-host.ll | FileCheck %s --check-prefix=NONE

declare i32 @__nv_sad(i32, i32, i32)
declare double @__nv_frexp(double, ptr)
declare float @__nv_cyl_bessel_i0f(float)

; CHECK-LABEL: define void @kernel(
; Each is called as declared, and now defined here, internal.
; CHECK: define internal {{.*}}i32 @__nv_sad(i32 {{.*}}, i32 {{.*}}, i32 {{.*}})
; CHECK: define internal {{.*}}double @__nv_frexp(double {{.*}}, ptr {{.*}})
; Only what is called: nothing else of the library.
; CHECK-NOT: define {{.*}}@__nv_cyl_bessel_i0f
; CHECK-NOT: define {{.*}}@__nv_sinf
define void @kernel(ptr %out, ptr %exponent, i32 %a, double %x) {
  %sad = call i32 @__nv_sad(i32 %a, i32 7, i32 1)
  store i32 %sad, ptr %out
  %fraction = call double @__nv_frexp(double %x, ptr %exponent)
  %truncated = fptosi double %fraction to i32
  store i32 %truncated, ptr %out
  ret void
}

; HOST-LABEL: define void @kernel(
; HOST-NOT: call {{.*}}@__nv_sad
; HOST: ret void

; NONE-NOT: __nv_
