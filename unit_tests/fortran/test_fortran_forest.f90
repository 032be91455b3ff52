! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! A code's own adaptive mesh from Fortran (korch_forest_*): five leaves u(-1:10, -1:10, 2) added
! with their level and position (2 x 1 root blocks, the left one split once) get their guard cells
! across levels in a cycle: the coarse leaf's guard cells next to the fine ones are the fine cells'
! means, on linear data the value at their centres. A list changed without korch_forest_relist is
! refused. Exits 1 on the first failed check, naming it.
module forest_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
  integer, parameter :: n = 8, g = 2
contains
  ! Variable 2 = the left neighbour in variable 1, guard cells included.
  recursive integer(c_int) function left(item, v, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: v(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), item%n_vars)
    type(c_ptr), value :: user
    integer :: i, j
    do j = item%lo(2), item%hi(2)
      do i = item%lo(1), item%hi(1)
        v(i, j, 2) = v(i - 1, j, 1)
      end do
    end do
    status = 0
  end function

  pure real(c_double) function linear(x, y)
    real(c_double), intent(in) :: x, y
    linear = 3 * x - 2 * y + 1
  end function
end module

program test_fortran_forest
  use, intrinsic :: iso_c_binding
  use korch
  use forest_routines
  use fortran_checks
  implicit none
  real(c_double), target :: u(1-g:n+g, 1-g:n+g, 2, 5)
  integer, parameter :: where(3, 5) = reshape([0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0], [3, 5])  ! x, y, level
  type(korch_blocks) :: leaves
  type(korch_bundle) :: bundle
  type(korch_configuration) :: cpu
  type(korch_forest) :: forest
  integer :: b, i, j
  real(c_double) :: h, want

  call check(korch_initialize() == korch_ok, "korch_initialize")
  u = -1.0d30
  do b = 1, 5
    h = 1.0d0 / (n * 2**where(3, b))
    do j = 1, n
      do i = 1, n
        u(i, j, 1, b) = linear((where(1, b) * n + i - 0.5d0) * h, (where(2, b) * n + j - 0.5d0) * h)
      end do
    end do
  end do
  call check(korch_blocks_create("leaves", 2, leaves) == korch_ok, "korch_blocks_create")
  call add_leaves()
  call check(korch_forest_create(leaves, 2, [2, 1, 1], [.false., .false., .false.], 1, forest) == korch_ok, &
             "korch_forest_create: " // korch_last_error())
  call check(korch_bundle_create("left", bundle) == korch_ok, "korch_bundle_create")
  call check(korch_bundle_add(bundle, "A", c_funloc(left)) == korch_ok, "korch_bundle_add")
  call check(korch_configuration_builtin("cpu_only", cpu) == korch_ok, "korch_configuration_builtin")

  call check(korch_execute_forest(bundle, cpu, forest, 0, 1) == korch_ok, "korch_execute_forest: " // korch_last_error())
  do j = 1, n
    do i = 1 - g, 0
      want = linear(1 + (i - 0.5d0) / n, (j - 0.5d0) / n)
      call check(abs(u(i, j, 1, 5) - want) <= 1d-14 * abs(want), "the coarse leaf's guard cells are the fine means")
    end do
    call check(u(1, j, 2, 5) == u(0, j, 1, 5), "the routine saw them filled")
    call check(u(n + 1, j, 1, 1) == u(1, j, 1, 2), "leaves of one level copy each other's cells")
  end do

  call check(korch_blocks_clear(leaves) == korch_ok, "korch_blocks_clear")
  call check(korch_forest_fill(forest) /= korch_ok, "a fill on a list changed without relist is refused")
  call check(index(korch_last_error(), "call relist()") > 0, "naming the fix: " // korch_last_error())
  call add_leaves()
  call check(korch_forest_relist(forest) == korch_ok, "korch_forest_relist: " // korch_last_error())
  call check(korch_forest_fill(forest) == korch_ok, "korch_forest_fill: " // korch_last_error())

  call check(korch_forest_destroy(forest) == korch_ok, "korch_forest_destroy")
  call check(korch_configuration_destroy(cpu) == korch_ok, "destroy cpu")
  call check(korch_bundle_destroy(bundle) == korch_ok, "destroy bundle")
  call check(korch_blocks_destroy(leaves) == korch_ok, "destroy leaves")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  print '(a)', "test_fortran_forest: all checks passed"

contains
  subroutine add_leaves()
    integer :: l
    do l = 1, 5
      call check(korch_add_block(leaves, u(:, :, :, l), cells=[n, n, 1], guard=[g, g, 0], level=where(3, l), &
                                 position=[where(1, l), where(2, l), 0]) == korch_ok, "add a leaf: " // korch_last_error())
    end do
  end subroutine
end program
