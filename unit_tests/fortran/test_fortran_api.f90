! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The Fortran module over the C API: a bundle over Fortran-owned blocks equals a plain loop, and
! each kind of bad call (unknown configuration, a routine that fails, a block array of the wrong
! shape, a JSON configuration with a bad field) returns a non-zero status and a message naming the
! problem; a destroyed handle is an error, and korch_finalize from a routine is refused. Exits 1 on
! the first failed check, naming it.
module test_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
contains
  ! u(:,:,:,1) = 2 u + 1 on the item's cells
  recursive integer(c_int) function twice_plus_one(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), &
                                       1-item%guard(3):item%cells(3)+item%guard(3), item%n_vars)
    type(c_ptr), value :: user
    integer :: i, j, k
    do k = item%lo(3), item%hi(3)
      do j = item%lo(2), item%hi(2)
        do i = item%lo(1), item%hi(1)
          u(i, j, k, 1) = 2 * u(i, j, k, 1) + 1
        end do
      end do
    end do
    status = 0
  end function

  recursive integer(c_int) function refuses(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(*)
    type(c_ptr), value :: user
    if (item%block == 1) then
      call korch_routine_message("negative temperature in block 1")
      status = 3
    else
      status = 0
    end if
  end function

  ! Fails the cycle if korch_finalize, called from inside it, was not refused.
  recursive integer(c_int) function tries_finalize(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(*)
    type(c_ptr), value :: user
    status = 0
    if (korch_finalize() == korch_ok) status = 9
  end function
end module

program test_fortran_api
  use, intrinsic :: iso_c_binding
  use korch
  use test_routines
  implicit none
  type(korch_blocks) :: mesh
  type(korch_bundle) :: bundle, failing, finalizing, copy
  type(korch_configuration) :: cpu, bad
  real(c_double), allocatable, target :: a(:, :, :, :), b(:, :, :), wrong(:, :, :, :)
  real(c_double), allocatable :: a0(:, :, :, :), b0(:, :, :)
  integer :: status, id, i, j

  call check(korch_initialize(n_teams=6, threads_per_team=2) == korch_ok, "korch_initialize")

  ! Two blocks of different sizes: a 3-D one with 2 guard cells in x and a 2-D one.
  allocate(a(-1:8, 0:5, 1, 1), b(0:11, 0:4, 1))
  do j = 0, 5
    do i = -1, 8
      a(i, j, 1, 1) = 0.5d0 * i + 0.25d0 * j
    end do
  end do
  do j = 0, 4
    do i = 0, 11
      b(i, j, 1) = 0.125d0 * i - j
    end do
  end do
  allocate(a0, source=a)
  allocate(b0, source=b)
  call check(korch_blocks_create("fortran mesh", 1, mesh) == korch_ok, "korch_blocks_create")
  call check(korch_add_block(mesh, a, cells=[6, 4, 1], guard=[2, 1, 0], tile_cells=[3, 2, 0], id=id) == korch_ok, &
             "add block a")
  call check(id == 0, "block a has id 0")
  call check(korch_add_block(mesh, b, cells=[10, 3, 1], guard=[1, 1, 0], id=id) == korch_ok, "add block b")
  call check(id == 1, "block b has id 1")
  call check(korch_bundle_create("step", bundle) == korch_ok, "korch_bundle_create")
  call check(korch_bundle_add(bundle, "A", c_funloc(twice_plus_one)) == korch_ok, "korch_bundle_add")
  call check(korch_configuration_builtin("cpu_only", cpu) == korch_ok, "korch_configuration_builtin")
  call check(korch_execute(bundle, cpu, mesh) == korch_ok, "korch_execute: " // korch_last_error())
  ! The plain loop on the interiors; guard cells unchanged. Bitwise: the same operation per cell.
  a0(1:6, 1:4, 1, 1) = 2 * a0(1:6, 1:4, 1, 1) + 1
  b0(1:10, 1:3, 1) = 2 * b0(1:10, 1:3, 1) + 1
  call check(all(a == a0), "block a equals the plain loop")
  call check(all(b == b0), "block b equals the plain loop")

  ! Unknown configuration.
  status = korch_configuration_builtin("no_such_configuration", bad)
  call check(status /= korch_ok, "an unknown configuration fails")
  call check(index(korch_last_error(), "no_such_configuration") > 0, "its message names it: " // korch_last_error())
  call check(index(korch_last_error(), "cpu_only") > 0, "and lists the built-ins: " // korch_last_error())

  ! A JSON configuration with a bad field.
  status = korch_configuration_json('{"name": "x", "teams": [{"name": "t", "type": "tiles", "action": "A"}]}', bad)
  call check(status /= korch_ok, "a bad JSON configuration fails")
  call check(index(korch_last_error(), "teams[0].type") > 0, "its message names the field: " // korch_last_error())

  ! A routine that fails.
  call check(korch_bundle_create("failing", failing) == korch_ok, "create the failing bundle")
  call check(korch_bundle_add(failing, "A", c_funloc(refuses)) == korch_ok, "add the failing routine")
  status = korch_execute(failing, cpu, mesh)
  call check(status /= korch_ok, "a failing routine fails the cycle")
  call check(index(korch_last_error(), "negative temperature in block 1") > 0, &
             "the message carries the routine's: " // korch_last_error())
  call check(index(korch_last_error(), "returned status 3") > 0, "and its status: " // korch_last_error())
  ! The runtime is usable after the failure.
  call check(korch_execute(bundle, cpu, mesh) == korch_ok, "a cycle after the failure: " // korch_last_error())

  ! A block array of the wrong shape (one guard cell too few in y).
  allocate(wrong(8, 5, 1, 1))
  status = korch_add_block(mesh, wrong, cells=[6, 4, 1], guard=[1, 1, 0])
  call check(status /= korch_ok, "a block of the wrong shape is refused")
  call check(index(korch_last_error(), "shape (8, 5, 1, 1)") > 0, "the message gives its shape: " // korch_last_error())
  call check(index(korch_last_error(), "(8, 6, 1, 1)") > 0, "and the expected one: " // korch_last_error())

  ! Calls on handles that do not exist.
  status = korch_execute(bundle, bad, mesh)
  call check(status /= korch_ok, "executing a configuration that was never created fails")
  call check(index(korch_last_error(), "configuration is NULL") > 0, "naming it: " // korch_last_error())

  ! korch_finalize from a routine is refused; a copy of a destroyed handle is a dead handle.
  call check(korch_bundle_create("finalizing", finalizing) == korch_ok, "create the finalizing bundle")
  call check(korch_bundle_add(finalizing, "A", c_funloc(tries_finalize)) == korch_ok, "add the finalizing routine")
  call check(korch_execute(finalizing, cpu, mesh) == korch_ok, "korch_finalize in a routine is refused: " // korch_last_error())
  copy = finalizing
  call check(korch_bundle_destroy(finalizing) == korch_ok, "destroy the finalizing bundle")
  status = korch_bundle_destroy(copy)
  call check(status /= korch_ok, "destroying a copy of a destroyed handle fails")
  call check(index(korch_last_error(), "dead korch_bundle handle") > 0, "naming the dead handle: " // korch_last_error())
  call check(korch_bundle_destroy(finalizing) == korch_ok, "destroying the reset handle again does nothing")

  call check(korch_bundle_destroy(bundle) == korch_ok, "destroy bundle")
  call check(korch_bundle_destroy(failing) == korch_ok, "destroy failing bundle")
  call check(korch_configuration_destroy(cpu) == korch_ok, "destroy configuration")
  call check(korch_blocks_destroy(mesh) == korch_ok, "destroy blocks")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  ! A main program's arrays live until the end; freed here so that LeakSanitizer sees no leak.
  deallocate(a, b, wrong, a0, b0)
  print '(a)', "fortran api: all checks passed"

contains
  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      print '(2a)', "FAILED: ", what
      stop 1
    end if
  end subroutine
end program
