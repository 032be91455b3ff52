! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The Fortran module over the C API: a bundle over Fortran-owned blocks equals a plain loop, and
! each kind of bad call (unknown configuration, a routine that fails, a block array of the wrong
! shape, a JSON configuration with a bad field) returns a non-zero status and a message naming the
! problem; a destroyed handle is an error, and korch_finalize from a routine is refused. Two blocks
! periodic in x with reflecting walls in y, filled by a Fortran boundary fill, equal the plain loop;
! walls without a fill, and a fill that fails, are statuses with messages. Exits 1 on the first
! failed check, naming it.
module test_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
  ! The walled blocks: 5 and 7 cells in x (periodic), 4 in y, 2 guard cells.
  integer, parameter :: g = 2, ny = 4, nx(0:1) = [5, 7], x0(0:1) = [0, 5], n_x = 12
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

  ! The reflecting wall in y: a guard cell beyond it takes minus its mirror image; counts its calls in
  ! the integer `user` points to.
  recursive integer(c_int) function reflect_y(region, direction, first_var, n_vars, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: region
    integer(c_int32_t), intent(in) :: direction(3)
    integer(c_int32_t), value :: first_var, n_vars
    real(c_double), intent(inout) :: u(1-region%guard(1):region%cells(1)+region%guard(1), &
                                       1-region%guard(2):region%cells(2)+region%guard(2), &
                                       1-region%guard(3):region%cells(3)+region%guard(3), region%n_vars)
    type(c_ptr), value :: user
    integer(c_int), pointer :: calls
    integer :: i, j, k, v, edge
    call c_f_pointer(user, calls)
    calls = calls + 1
    edge = merge(1, region%cells(2) + 1, direction(2) < 0)  ! the wall lies between cells edge - 1 and edge
    do v = first_var + 1, first_var + n_vars
      do k = region%lo(3), region%hi(3)
        do j = region%lo(2), region%hi(2)
          do i = region%lo(1), region%hi(1)
            u(i, j, k, v) = -u(i, 2 * edge - 1 - j, k, v)
          end do
        end do
      end do
    end do
    status = 0
  end function

  recursive integer(c_int) function broken_wall(region, direction, first_var, n_vars, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: region
    integer(c_int32_t), intent(in) :: direction(3)
    integer(c_int32_t), value :: first_var, n_vars
    real(c_double), intent(inout) :: u(*)
    type(c_ptr), value :: user
    call korch_routine_message("the wall is broken")
    status = 5
  end function

  real(c_double) function value_at(x, y, v)
    integer, intent(in) :: x, y, v
    value_at = 1 + x + 100 * y + 0.25d0 * v
  end function

  ! Interior cells value_at, guard cells -1.
  subroutine paint(u, b)
    real(c_double), intent(out) :: u(1-g:, 1-g:, :)
    integer, intent(in) :: b
    integer :: i, j, v
    u = -1
    do v = 1, 2
      do j = 1, ny
        do i = 1, nx(b)
          u(i, j, v) = value_at(x0(b) + i - 1, j - 1, v)
        end do
      end do
    end do
  end subroutine

  ! Block b as the code's own loop fills it: x wraps, y mirrors with a sign across the walls.
  function filled(b) result(u)
    integer, intent(in) :: b
    real(c_double) :: u(1-g:nx(b)+g, 1-g:ny+g, 2)
    integer :: i, j, v, y
    real(c_double) :: sign
    do v = 1, 2
      do j = 1 - g, ny + g
        y = j - 1
        sign = 1
        if (y < 0) then
          y = -1 - y
          sign = -1
        else if (y >= ny) then
          y = 2 * ny - 1 - y
          sign = -1
        end if
        do i = 1 - g, nx(b) + g
          u(i, j, v) = sign * value_at(modulo(x0(b) + i - 1, n_x), y, v)
        end do
      end do
    end do
  end function
end module

program test_fortran_api
  use, intrinsic :: iso_c_binding
  use korch
  use test_routines
  use fortran_checks
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

  call walls_in_y()

  call check(korch_bundle_destroy(bundle) == korch_ok, "destroy bundle")
  call check(korch_bundle_destroy(failing) == korch_ok, "destroy failing bundle")
  call check(korch_configuration_destroy(cpu) == korch_ok, "destroy configuration")
  call check(korch_blocks_destroy(mesh) == korch_ok, "destroy blocks")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  ! A main program's arrays live until the end; freed here so that LeakSanitizer sees no leak.
  deallocate(a, b, wrong, a0, b0)
  print '(a)', "fortran api: all checks passed"

contains
  ! Blocks of 5 and 7 cells in x (periodic), 4 in y between reflecting walls, 2 guard cells, 2
  ! variables; the exchange's fill against the plain loop, bitwise.
  subroutine walls_in_y()
    real(c_double), allocatable, target :: u0(:, :, :), u1(:, :, :)
    type(korch_blocks) :: walled
    type(korch_neighbours) :: near
    type(korch_exchange) :: fill
    integer(c_int), target :: calls
    integer :: block, dx, dy, kind, status
    allocate(u0(1-g:nx(0)+g, 1-g:ny+g, 2), u1(1-g:nx(1)+g, 1-g:ny+g, 2))
    call check(korch_blocks_create("walled", 2, walled) == korch_ok, "create the walled blocks")
    call check(korch_add_block(walled, u0, cells=[nx(0), ny, 1], guard=[g, g, 0]) == korch_ok, "add walled block 0")
    call check(korch_add_block(walled, u1, cells=[nx(1), ny, 1], guard=[g, g, 0]) == korch_ok, "add walled block 1")
    call check(korch_neighbours_create(2, near) == korch_ok, "korch_neighbours_create")
    do block = 0, 1
      do dy = -1, 1
        do dx = -1, 1
          if (dx == 0 .and. dy == 0) cycle
          kind = merge(korch_neighbour_user, korch_neighbour_block, dy /= 0)
          call check(korch_set_neighbour(near, block, [dx, dy, 0], kind, global_id=1 - block) == korch_ok, &
                     "korch_set_neighbour: " // korch_last_error())
        end do
      end do
    end do
    call check(korch_exchange_create(walled, near, fill) == korch_ok, "korch_exchange_create: " // korch_last_error())

    status = korch_exchange_fill(fill, 1, 2)
    call check(status /= korch_ok, "walls without a boundary fill are refused")
    call check(index(korch_last_error(), "call korch_exchange_set_boundary_fill first") > 0, &
               "naming the fix: " // korch_last_error())

    calls = 0
    call check(korch_exchange_set_boundary_fill(fill, c_funloc(reflect_y), c_loc(calls)) == korch_ok, &
               "korch_exchange_set_boundary_fill")
    call paint(u0, 0)
    call paint(u1, 1)
    call check(korch_exchange_fill(fill, 1, 2) == korch_ok, "the walled fill: " // korch_last_error())
    call check(calls == 12, "the fill ran once per block and direction beyond a wall")
    call check(all(u0 == filled(0)), "block 0 equals the plain loop")
    call check(all(u1 == filled(1)), "block 1 equals the plain loop")

    call check(korch_exchange_set_boundary_fill(fill, c_funloc(broken_wall)) == korch_ok, "set the broken wall")
    status = korch_exchange_fill(fill, 1, 2)
    call check(status /= korch_ok, "a failing boundary fill fails the fill")
    call check(index(korch_last_error(), "returned status 5") > 0, "with its status: " // korch_last_error())
    call check(index(korch_last_error(), "the wall is broken") > 0, "and its message: " // korch_last_error())

    ! The code changes its mesh: its blocks are listed anew, and the old exchange is refused.
    call check(korch_blocks_clear(walled) == korch_ok, "korch_blocks_clear: " // korch_last_error())
    status = korch_exchange_fill(fill, 1, 2)
    call check(status /= korch_ok, "an exchange made before the change is refused")
    call check(index(korch_last_error(), "changed since the exchange was made") > 0, "saying why: " // korch_last_error())
    call check(korch_add_block(walled, u0, cells=[nx(0), ny, 1], guard=[g, g, 0], id=block) == korch_ok, &
               "list block 0 anew")
    call check(block == 0, "ids start at 0 again")
    ! Device blocks: no data, or a device block among host ones, is refused before anything is read.
    status = korch_add_device_block(walled, c_null_ptr, 2, cells=[nx(1), ny, 1], guard=[g, g, 0])
    call check(status /= korch_ok, "a device block without data is refused")
    call check(index(korch_last_error(), "data is NULL") > 0, "naming it: " // korch_last_error())
    status = korch_add_device_block(walled, c_loc(u1), 2, cells=[nx(1), ny, 1], guard=[g, g, 0], global_id=1)
    call check(status /= korch_ok, "a device block among host blocks is refused")
    call check(index(korch_last_error(), "in device memory but the list's blocks are in host memory") > 0, &
               "naming both memories: " // korch_last_error())
    call check(korch_exchange_destroy(fill) == korch_ok, "destroy the walled exchange")
    call check(korch_neighbours_destroy(near) == korch_ok, "destroy the neighbours")
    call check(korch_blocks_destroy(walled) == korch_ok, "destroy the walled blocks")
    deallocate(u0, u1)
  end subroutine
end program
