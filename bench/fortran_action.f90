! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The Fortran action of korch-bench-fortran_layer: v2 = 0.5 (v1(i-1) + v1(i+1)) + 0.25 v1 on the
! item's cells, the same arithmetic as the benchmark's C++ routine.
module bench_fortran_action
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
contains
  recursive integer(c_int) function smooth(item, u, user) bind(c, name="korch_bench_fortran_smooth") result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), item%n_vars)
    type(c_ptr), value :: user
    integer :: i, j
    do j = item%lo(2), item%hi(2)
      do i = item%lo(1), item%hi(1)
        u(i, j, 2) = 0.5d0 * (u(i-1, j, 1) + u(i+1, j, 1)) + 0.25d0 * u(i, j, 1)
      end do
    end do
    status = 0
  end function
end module
