; A module whose own global has the exception slot's name (lower-exceptions.ll).
declare void @tidal.assert.fail(ptr)

@__tidal_exception_slot = global i32 0
@message = private unnamed_addr constant [5 x i8] c"fail\00"

define void @k() {
  call void @tidal.assert.fail(ptr @message)
  unreachable
}

!tidal.kernels = !{!0}
!0 = !{ptr @k}
