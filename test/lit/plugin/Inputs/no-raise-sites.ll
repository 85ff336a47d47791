; A kernel without raise sites (lower-exceptions.ll): no exception slot.
declare i32 @tidal.tid.x()

define void @plain(ptr %out) {
  %i = call i32 @tidal.tid.x()
  store i32 %i, ptr %out, align 4
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @plain}
