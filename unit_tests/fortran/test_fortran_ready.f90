! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The readiness of blocks from Fortran (korch_ready_*): a code that fills its blocks' guard cells
! itself marks them from its poll routine, one per call in the order its "messages" arrive, and
! the cycle's routine sees every guard cell filled; a failing poll routine is a status with its
! message. Exits 1 on the first failed check, naming it.
module ready_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
  ! A ring of blocks u(0:n+1, 1, 2), periodic in x, one guard cell per side.
  integer, parameter :: n = 9, n_blocks = 5
  real(c_double), target :: u(0:n+1, 1, 2, 0:n_blocks-1)
  integer :: arrivals(n_blocks) = [3, 0, 4, 2, 1], arrived = 0, poll_status = 0
contains
  recursive integer(c_int) function poll(ready, user) bind(c) result(status)
    type(c_ptr), value :: ready, user
    integer :: b
    status = 0
    if (poll_status /= 0) then
      call korch_routine_message("the halo of block 2 never came")
      status = poll_status
      return
    end if
    if (arrived == n_blocks) return
    arrived = arrived + 1
    b = arrivals(arrived)
    u(0, 1, 1, b) = u(n, 1, 1, modulo(b - 1, n_blocks))
    u(n + 1, 1, 1, b) = u(1, 1, 1, modulo(b + 1, n_blocks))
    status = korch_ready_mark(korch_ready(ready), b)
  end function

  ! v2 = v1(i - 1) + v1(i + 1) on the item's cells.
  recursive integer(c_int) function stencil(item, v, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: v(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), item%n_vars)
    type(c_ptr), value :: user
    integer :: i
    do i = item%lo(1), item%hi(1)
      v(i, 1, 2) = v(i - 1, 1, 1) + v(i + 1, 1, 1)
    end do
    status = 0
  end function
end module

program test_fortran_ready
  use, intrinsic :: iso_c_binding
  use korch
  use ready_routines
  use fortran_checks
  implicit none
  type(korch_blocks) :: ring
  type(korch_bundle) :: bundle
  type(korch_configuration) :: cpu
  type(korch_ready) :: ready
  integer :: b, i, id
  real(c_double) :: expected

  call check(korch_initialize() == korch_ok, "korch_initialize")
  u = -1.0d30  ! guard cells stale until the poll routine fills them
  do b = 0, n_blocks - 1
    do i = 1, n
      u(i, 1, 1, b) = 10 * b + i
    end do
  end do
  call check(korch_blocks_create("ring", 2, ring) == korch_ok, "korch_blocks_create")
  do b = 0, n_blocks - 1
    call check(korch_add_block(ring, u(:, :, :, b), cells=[n, 1, 1], guard=[1, 0, 0], tile_cells=[4, 0, 0], id=id) &
               == korch_ok, "add a block: " // korch_last_error())
  end do
  call check(korch_bundle_create("ready", bundle) == korch_ok, "korch_bundle_create")
  call check(korch_bundle_add(bundle, "A", c_funloc(stencil)) == korch_ok, "korch_bundle_add")
  call check(korch_configuration_builtin("cpu_only", cpu) == korch_ok, "korch_configuration_builtin")
  call check(korch_ready_create(ring, c_funloc(poll), ready) == korch_ok, "korch_ready_create: " // korch_last_error())

  call check(korch_execute_ready(bundle, cpu, ready) == korch_ok, "korch_execute_ready: " // korch_last_error())
  do b = 0, n_blocks - 1
    do i = 1, n
      expected = u(i - 1, 1, 1, b) + u(i + 1, 1, 1, b)
      call check(u(i, 1, 2, b) == expected, "every cell sees its filled guard cells")
    end do
  end do

  poll_status = 5
  call check(korch_execute_ready(bundle, cpu, ready) /= korch_ok, "a failing poll routine fails the cycle")
  call check(index(korch_last_error(), "returned status 5: the halo of block 2 never came") > 0, &
             "naming its status and message: " // korch_last_error())
  call check(korch_ready_mark(ready, n_blocks) == korch_ok, "a mark for the next cycle")
  call check(korch_ready_clear(ready) == korch_ok, "korch_ready_clear")
  call check(korch_ready_destroy(ready) == korch_ok, "korch_ready_destroy")
  call check(korch_configuration_destroy(cpu) == korch_ok, "destroy cpu")
  call check(korch_bundle_destroy(bundle) == korch_ok, "destroy bundle")
  call check(korch_blocks_destroy(ring) == korch_ok, "destroy ring")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  print '(a)', "test_fortran_ready: all checks passed"

end program
