! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! Face variables through the Fortran module: two 2-D blocks of unequal widths carry fluxes on their
! faces in the code's own arrays; a routine writes the fluxes, another updates the cells from them,
! on tiles (cpu_only) and on packets (gpu_only, where packets are host memory), and both equal the
! plain loop bitwise. A block without its faces, or with faces of the wrong shape, is a status with
! a message naming the fix. Exits 1 on the first failed check, naming it.
module face_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
  integer, parameter :: g = 1, ny = 4, nx(2) = [6, 5]
contains
  real(c_double) function initial(b, i, j)
    integer, intent(in) :: b, i, j
    initial = mod(b * 13 + i * 7 + j * 3 + 40, 11) * 0.25d0 + 0.1d0 * b
  end function

  ! The fluxes through the faces bounding the item's cells (face i across x is the low face of cell
  ! i), each written once: a tile writes its high face only at the block's high edge, as the next
  ! tile, perhaps on another thread, writes the face between them.
  recursive integer(c_int) function fluxes(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), item%n_vars)
    type(c_ptr), value :: user
    real(c_double), pointer :: fx(:, :, :), fy(:, :, :)
    integer :: i, j, last(2)
    call faces_of(item, fx, fy)
    last = item%hi(1:2)
    where (item%hi(1:2) == item%cells(1:2)) last = last + 1
    do j = item%lo(2), item%hi(2)
      do i = item%lo(1), last(1)
        fx(i, j, 1) = 0.5d0 * (u(i, j, 1) - u(i - 1, j, 1))
      end do
    end do
    do j = item%lo(2), last(2)
      do i = item%lo(1), item%hi(1)
        fy(i, j, 1) = 0.5d0 * (u(i, j, 1) - u(i, j - 1, 1))
      end do
    end do
    status = 0
  end function

  recursive integer(c_int) function update(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), item%n_vars)
    type(c_ptr), value :: user
    real(c_double), pointer :: fx(:, :, :), fy(:, :, :)
    integer :: i, j
    call faces_of(item, fx, fy)
    do j = item%lo(2), item%hi(2)
      do i = item%lo(1), item%hi(1)
        u(i, j, 2) = u(i, j, 1) + (fx(i + 1, j, 1) - fx(i, j, 1)) + (fy(i, j + 1, 1) - fy(i, j, 1))
      end do
    end do
    status = 0
  end function

  ! The item's face arrays with the cells' numbering (guard cells from 1 - g).
  subroutine faces_of(item, fx, fy)
    type(korch_item), intent(in) :: item
    real(c_double), pointer, intent(out) :: fx(:, :, :), fy(:, :, :)
    real(c_double), pointer :: flat(:, :, :)
    integer :: ex, ey
    ex = item%cells(1) + 2 * item%guard(1)
    ey = item%cells(2) + 2 * item%guard(2)
    call c_f_pointer(item%face_data(1), flat, [ex + 1, ey, item%n_face_vars])
    fx(1-item%guard(1):, 1-item%guard(2):, 1:) => flat
    call c_f_pointer(item%face_data(2), flat, [ex, ey + 1, item%n_face_vars])
    fy(1-item%guard(1):, 1-item%guard(2):, 1:) => flat
  end subroutine
end module

program test_fortran_faces
  use, intrinsic :: iso_c_binding
  use korch
  use face_routines
  use fortran_checks
  implicit none
  real(c_double), target :: u1(1-g:nx(1)+g, 1-g:ny+g, 2), u2(1-g:nx(2)+g, 1-g:ny+g, 2)
  real(c_double), target :: fx1(1-g:nx(1)+g+1, 1-g:ny+g, 1), fy1(1-g:nx(1)+g, 1-g:ny+g+1, 1)
  real(c_double), target :: fx2(1-g:nx(2)+g+1, 1-g:ny+g, 1), fy2(1-g:nx(2)+g, 1-g:ny+g+1, 1)
  real(c_double), target :: wrong(1-g:nx(1)+g, 1-g:ny+g, 1)
  type(korch_blocks) :: blocks, plain
  type(korch_bundle) :: flux_bundle, update_bundle
  type(korch_configuration) :: configuration
  character(len=*), parameter :: names(2) = [character(len=8) :: "cpu_only", "gpu_only"]
  integer :: c

  call check(korch_initialize() == korch_ok, "korch_initialize")
  call check(korch_bundle_create("fluxes", flux_bundle) == korch_ok, "korch_bundle_create")
  call check(korch_bundle_add(flux_bundle, "A", c_funloc(fluxes)) == korch_ok, "korch_bundle_add fluxes")
  call check(korch_bundle_create("update", update_bundle) == korch_ok, "korch_bundle_create")
  call check(korch_bundle_add(update_bundle, "A", c_funloc(update)) == korch_ok, "korch_bundle_add update")
  do c = 1, 2
    call reset()
    call check(korch_blocks_create("faces", 2, blocks, n_face_vars=1) == korch_ok, "korch_blocks_create with faces")
    call check(korch_add_block(blocks, u1, cells=[nx(1), ny, 1], guard=[g, g, 0], tile_cells=[4, 3, 0], &
                               face_x=fx1, face_y=fy1) == korch_ok, "add block 1: " // korch_last_error())
    call check(korch_add_block(blocks, u2, cells=[nx(2), ny, 1], guard=[g, g, 0], tile_cells=[4, 3, 0], &
                               face_x=fx2, face_y=fy2) == korch_ok, "add block 2: " // korch_last_error())
    call check(korch_configuration_builtin(trim(names(c)), configuration) == korch_ok, "korch_configuration_builtin")
    call check(korch_execute(flux_bundle, configuration, blocks, korch_all_blocks, 0) == korch_ok, &
               "the fluxes on " // trim(names(c)) // ": " // korch_last_error())
    call check(korch_execute(update_bundle, configuration, blocks, korch_all_blocks, 0) == korch_ok, &
               "the update on " // trim(names(c)) // ": " // korch_last_error())
    call check(same_as_loop(u1, fx1, fy1, nx(1)), "block 1 equals the plain loop on " // trim(names(c)))
    call check(same_as_loop(u2, fx2, fy2, nx(2)), "block 2 equals the plain loop on " // trim(names(c)))
    call check(korch_configuration_destroy(configuration) == korch_ok, "destroy configuration")
    call check(korch_blocks_destroy(blocks) == korch_ok, "destroy blocks")
  end do

  call check(korch_blocks_create("faces", 2, blocks, n_face_vars=1) == korch_ok, "korch_blocks_create with faces")
  call check(korch_add_block(blocks, u1, cells=[nx(1), ny, 1], guard=[g, g, 0]) /= korch_ok, &
             "a block without faces in a list with face variables is refused")
  call check(index(korch_last_error(), "korch_blocks_add_with_faces") > 0, "naming the fix: " // korch_last_error())
  call check(korch_add_block(blocks, u1, cells=[nx(1), ny, 1], guard=[g, g, 0], face_x=wrong, face_y=fy1) /= korch_ok, &
             "faces of the cells' shape are refused")
  call check(index(korch_last_error(), "face array across x") > 0, "naming the axis: " // korch_last_error())
  call check(korch_blocks_create("plain", 2, plain) == korch_ok, "korch_blocks_create")
  call check(korch_add_block(plain, u1, cells=[nx(1), ny, 1], guard=[g, g, 0], face_x=fx1, face_y=fy1) /= korch_ok, &
             "faces in a list without face variables are refused")
  call check(index(korch_last_error(), "korch_blocks_create_with_faces") > 0, "naming the fix: " // korch_last_error())

  call check(korch_blocks_destroy(plain) == korch_ok, "destroy plain")
  call check(korch_blocks_destroy(blocks) == korch_ok, "destroy blocks")
  call check(korch_bundle_destroy(flux_bundle) == korch_ok, "destroy bundle")
  call check(korch_bundle_destroy(update_bundle) == korch_ok, "destroy bundle")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  print '(a)', "test_fortran_faces: all checks passed"

contains
  subroutine reset()
    integer :: i, j
    fx1 = -7
    fy1 = -7
    fx2 = -7
    fy2 = -7
    u1 = 0
    u2 = 0
    do j = 1 - g, ny + g
      do i = 1 - g, nx(1) + g
        u1(i, j, 1) = initial(1, i, j)
      end do
      do i = 1 - g, nx(2) + g
        u2(i, j, 1) = initial(2, i, j)
      end do
    end do
  end subroutine

  logical function same_as_loop(u, fx, fy, n) result(same)
    real(c_double), intent(in) :: u(1-g:, 1-g:, :), fx(1-g:, 1-g:, :), fy(1-g:, 1-g:, :)
    integer, intent(in) :: n
    real(c_double) :: want
    integer :: i, j
    same = .true.
    do j = 1, ny
      do i = 1, n
        want = u(i, j, 1) + (0.5d0 * (u(i + 1, j, 1) - u(i, j, 1)) - 0.5d0 * (u(i, j, 1) - u(i - 1, j, 1))) + &
               (0.5d0 * (u(i, j + 1, 1) - u(i, j, 1)) - 0.5d0 * (u(i, j, 1) - u(i, j - 1, 1)))
        same = same .and. u(i, j, 2) == want
        same = same .and. fx(i, j, 1) == 0.5d0 * (u(i, j, 1) - u(i - 1, j, 1))
        same = same .and. fy(i, j, 1) == 0.5d0 * (u(i, j, 1) - u(i, j - 1, 1))
      end do
    end do
    same = same .and. fx(1 - g, 1, 1) == -7 .and. fy(1, 1 - g, 1) == -7  ! guard faces untouched
  end function
end program
