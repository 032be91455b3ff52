! A small Fortran physics code that embeds an installed korch: a 2-D periodic heat problem on
! blocks of several widths that the code owns (u(0:nx+1, 0:ny+1, 2), one guard cell, variables 1
! and 2 alternating as old and new temperature). The code fills guard cells between steps; each
! step is a bundle of one bind(c) action routine run by korch's runtime on the blocks' tiles. The
! result must equal a plain loop over one global array bitwise (the same expression per cell), and
! three bad calls must come back as a non-zero status with a message naming the problem.
module heat_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
  integer, parameter :: ny = 24, steps = 20
  real(c_double), parameter :: nu = 0.2d0
  integer, parameter :: widths(4) = [16, 24, 8, 12]
  type block_data
    real(c_double), allocatable :: u(:, :, :)
  end type
contains
  pure real(c_double) function heat(c, w, e, s, n)
    real(c_double), intent(in) :: c, w, e, s, n
    heat = c + nu * (w + e + s + n - 4.0d0 * c)
  end function

  ! Action "A": new (variable `to`) from old on the item's cells; `to` comes through `user`.
  recursive integer(c_int) function step(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(1-item%guard(1):item%cells(1)+item%guard(1), &
                                       1-item%guard(2):item%cells(2)+item%guard(2), item%n_vars)
    type(c_ptr), value :: user
    integer(c_int), pointer :: to
    integer :: i, j, from
    call c_f_pointer(user, to)
    from = 3 - to
    do j = item%lo(2), item%hi(2)
      do i = item%lo(1), item%hi(1)
        u(i, j, to) = heat(u(i, j, from), u(i-1, j, from), u(i+1, j, from), u(i, j-1, from), u(i, j+1, from))
      end do
    end do
    status = 0
  end function

  recursive integer(c_int) function refuse(item, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: item
    real(c_double), intent(inout) :: u(*)
    type(c_ptr), value :: user
    call korch_routine_message("the temperature went negative")
    status = 5
  end function

  real(c_double) function initial(gi, j)
    integer, intent(in) :: gi, j
    if (mod(gi * 7 + j * 3, 11) == 0) then
      initial = 1.0d0
    else
      initial = 0.1d0 * mod(gi + 2 * j, 5)
    end if
  end function
end module

program heat_on_korch
  use, intrinsic :: iso_c_binding
  use korch
  use heat_routines
  implicit none
  type(block_data), allocatable, target :: mesh(:)
  type(korch_blocks) :: blocks
  type(korch_bundle) :: forward, backward, failing
  type(korch_configuration) :: cpu, other
  real(c_double), allocatable :: a(:, :), b(:, :), wrong(:, :, :)
  integer(c_int), target :: to_two = 2, to_one = 1
  integer :: n, nx, x0, i, j, s, status, from, ip, im, jp, jm
  real(c_double) :: diff

  call check(korch_initialize() == korch_ok, "korch_initialize")
  n = size(widths)
  nx = sum(widths)
  allocate(mesh(n))
  call check(korch_blocks_create("heat", 2, blocks) == korch_ok, "korch_blocks_create")
  x0 = 0
  do s = 1, n
    allocate(mesh(s)%u(0:widths(s)+1, 0:ny+1, 2))
    mesh(s)%u = 0
    do j = 1, ny
      do i = 1, widths(s)
        mesh(s)%u(i, j, 1) = initial(x0 + i - 1, j - 1)
      end do
    end do
    x0 = x0 + widths(s)
    call check(korch_add_block(blocks, mesh(s)%u, cells=[widths(s), ny, 1], guard=[1, 1, 0], tile_cells=[8, 8, 0]) &
               == korch_ok, "korch_add_block: " // korch_last_error())
  end do
  call check(korch_bundle_create("heat forward", forward) == korch_ok, "bundle")
  call check(korch_bundle_add(forward, "A", c_funloc(step), c_loc(to_two)) == korch_ok, "bundle add")
  call check(korch_bundle_create("heat backward", backward) == korch_ok, "bundle")
  call check(korch_bundle_add(backward, "A", c_funloc(step), c_loc(to_one)) == korch_ok, "bundle add")
  call check(korch_configuration_builtin("cpu_only", cpu) == korch_ok, "configuration")

  do s = 1, steps
    from = 1
    if (mod(s, 2) == 0) from = 2
    call fill_guards(from)
    if (from == 1) then
      status = korch_execute(forward, cpu, blocks)
    else
      status = korch_execute(backward, cpu, blocks)
    end if
    call check(status == korch_ok, "korch_execute: " // korch_last_error())
  end do

  ! The plain loop over one global periodic array.
  allocate(a(0:nx-1, 0:ny-1), b(0:nx-1, 0:ny-1))
  do j = 0, ny - 1
    do i = 0, nx - 1
      a(i, j) = initial(i, j)
    end do
  end do
  do s = 1, steps
    do j = 0, ny - 1
      jm = modulo(j - 1, ny)
      jp = modulo(j + 1, ny)
      do i = 0, nx - 1
        im = modulo(i - 1, nx)
        ip = modulo(i + 1, nx)
        b(i, j) = heat(a(i, j), a(im, j), a(ip, j), a(i, jm), a(i, jp))
      end do
    end do
    a = b
  end do
  diff = 0
  x0 = 0
  from = 1
  if (mod(steps, 2) == 1) from = 2
  do s = 1, n
    diff = max(diff, maxval(abs(mesh(s)%u(1:widths(s), 1:ny, from) - a(x0:x0+widths(s)-1, :))))
    x0 = x0 + widths(s)
  end do
  print '(a,i0,a,i0,a,es10.3)', "embed-fortran: ", steps, " heat steps on ", n, &
    " blocks of widths 16/24/8/12, cpu_only: max |korch - plain loop| = ", diff
  call check(diff == 0, "korch equals the plain loop")

  ! Bad calls: each a non-zero status and a message naming the problem.
  status = korch_configuration_builtin("cpu_onyl", other)
  call check(status /= korch_ok, "an unknown configuration fails")
  call check(index(korch_last_error(), "cpu_onyl") > 0, "an unknown configuration is named: " // korch_last_error())
  print '(2a)', "embed-fortran: unknown configuration -> ", korch_last_error()
  call check(korch_bundle_create("failing", failing) == korch_ok, "bundle")
  call check(korch_bundle_add(failing, "A", c_funloc(refuse)) == korch_ok, "bundle add")
  status = korch_execute(failing, cpu, blocks)
  call check(status /= korch_ok, "a failing routine fails the cycle")
  call check(index(korch_last_error(), "the temperature went negative") > 0, &
             "a failing routine's message comes back: " // korch_last_error())
  print '(2a)', "embed-fortran: failing routine -> ", korch_last_error()
  allocate(wrong(0:16, 0:ny+1, 2))
  status = korch_add_block(blocks, wrong, cells=[16, ny, 1], guard=[1, 1, 0])
  call check(status /= korch_ok, "a block of the wrong shape is refused")
  call check(index(korch_last_error(), "shape (17, 26, 1, 2)") > 0, "its shape is named: " // korch_last_error())
  print '(2a)', "embed-fortran: wrong block shape -> ", korch_last_error()

  call check(korch_bundle_destroy(forward) == korch_ok, "destroy")
  call check(korch_bundle_destroy(backward) == korch_ok, "destroy")
  call check(korch_bundle_destroy(failing) == korch_ok, "destroy")
  call check(korch_configuration_destroy(cpu) == korch_ok, "destroy")
  call check(korch_blocks_destroy(blocks) == korch_ok, "destroy")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  ! A main program's arrays live until the end; freed here so that LeakSanitizer sees no leak.
  deallocate(mesh, a, b, wrong)
  print '(a)', "embed-fortran: ok"

contains
  ! Periodic guard cells of variable v: x from the neighbouring blocks, y from the block itself.
  subroutine fill_guards(v)
    integer, intent(in) :: v
    integer :: k, left, right
    do k = 1, n
      left = modulo(k - 2, n) + 1
      right = modulo(k, n) + 1
      mesh(k)%u(0, 1:ny, v) = mesh(left)%u(widths(left), 1:ny, v)
      mesh(k)%u(widths(k) + 1, 1:ny, v) = mesh(right)%u(1, 1:ny, v)
    end do
    do k = 1, n
      mesh(k)%u(:, 0, v) = mesh(k)%u(:, ny, v)
      mesh(k)%u(:, ny + 1, v) = mesh(k)%u(:, 1, v)
    end do
  end subroutine

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      print '(2a)', "embed-fortran: FAILED: ", what
      stop 1
    end if
  end subroutine
end program
