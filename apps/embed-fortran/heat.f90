! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! A small Fortran physics code that embeds an installed korch: a 2-D heat problem, periodic in x
! between walls in y held at fixed temperatures, on blocks of several widths that the code owns
! (u(0:nx+1, 0:ny+1, 2), one guard cell, variables 1 and 2 alternating as old and new temperature),
! spread over the MPI ranks it was started with (one process, or mpirun -np 2; korch starts MPI).
! The code names each block's neighbours, marks the walls korch_neighbour_user and fills their guard
! cells in its own bind(c) boundary fill; korch fills the rest inside each step's cycle and calls
! the boundary fill there. Each step is a bundle of one bind(c) action
! routine run by korch's runtime on the blocks' tiles, or on each block of the packets of device
! teams. The steps run on four built-in configurations (cpu_only, gpu_only, cpu_gpu_data_parallel,
! split_itor), each bound to the code's action names, and each result must equal a plain loop over
! one global array bitwise (the same expression per cell); five bad calls must come back as a
! non-zero status with a message naming the problem.
module heat_routines
  use, intrinsic :: iso_c_binding
  use korch
  implicit none
  integer, parameter :: ny = 24, steps = 20
  real(c_double), parameter :: nu = 0.2d0
  real(c_double), parameter :: t_bottom = 1.0d0, t_top = 0.25d0  ! the walls' temperatures
  integer, parameter :: widths(4) = [16, 24, 8, 12]
  type block_data
    real(c_double), allocatable :: u(:, :, :)
  end type
contains
  pure real(c_double) function heat(c, w, e, s, n)
    real(c_double), intent(in) :: c, w, e, s, n
    heat = c + nu * (w + e + s + n - 4.0d0 * c)
  end function

  ! The guard cell beyond a wall at temperature t, from the interior cell across it: the wall's
  ! face lies halfway between them.
  pure real(c_double) function beyond_wall(t, inside)
    real(c_double), intent(in) :: t, inside
    beyond_wall = 2.0d0 * t - inside
  end function

  ! The boundary fill of the walls (below y's first cells, above its last ones), on the region korch
  ! gives: its faces in y and the corners beyond them, for the variables of this fill.
  recursive integer(c_int) function walls(region, direction, first_var, n_vars, u, user) bind(c) result(status)
    type(korch_item), intent(in) :: region
    integer(c_int32_t), intent(in) :: direction(3)
    integer(c_int32_t), value :: first_var, n_vars
    real(c_double), intent(inout) :: u(1-region%guard(1):region%cells(1)+region%guard(1), &
                                       1-region%guard(2):region%cells(2)+region%guard(2), region%n_vars)
    type(c_ptr), value :: user
    integer :: i, j, v, across
    real(c_double) :: t
    t = merge(t_bottom, t_top, direction(2) < 0)
    across = merge(1, 2 * region%cells(2) + 1, direction(2) < 0)  ! j + mirror(j)
    do v = first_var + 1, first_var + n_vars
      do j = region%lo(2), region%hi(2)
        do i = region%lo(1), region%hi(1)
          u(i, j, v) = beyond_wall(t, u(i, across - j, v))
        end do
      end do
    end do
    status = 0
  end function

  ! Actions "forward" and "backward": new (variable `to`) from old on the item's cells; `to` comes
  ! through `user`.
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
  type(korch_neighbours) :: near
  type(korch_exchange) :: guards, broken
  real(c_double), allocatable :: a(:, :), b(:, :), wrong(:, :, :)
  integer(c_int), target :: to_two = 2, to_one = 1
  integer, allocatable :: global(:), x0(:)
  integer :: n, nx, i, j, s, k, g, c, dx, dy, status, ip, im, rank, ranks, mine
  real(c_double) :: south, north
  character(len=*), parameter :: builtins(4) = [character(len=24) :: "cpu_only", "gpu_only", "cpu_gpu_data_parallel", &
                                                                     "split_itor"]

  call check(korch_start_mpi() == korch_ok, "korch_start_mpi: " // korch_last_error())
  call check(korch_initialize() == korch_ok, "korch_initialize")
  call check(korch_ranks(rank, ranks) == korch_ok, "korch_ranks")
  n = size(widths)
  nx = sum(widths)
  ! This rank's blocks: global ids g (0-based) with g * ranks / n == rank.
  mine = count([(g * ranks / n == rank, g = 0, n - 1)])
  allocate(mesh(mine), global(mine), x0(mine))
  call check(korch_blocks_create("heat", 2, blocks) == korch_ok, "korch_blocks_create")
  k = 0
  do g = 0, n - 1
    if (g * ranks / n /= rank) cycle
    k = k + 1
    global(k) = g
    x0(k) = sum(widths(1:g))
    allocate(mesh(k)%u(0:widths(g+1)+1, 0:ny+1, 2))
    mesh(k)%u = 0
    do j = 1, ny
      do i = 1, widths(g+1)
        mesh(k)%u(i, j, 1) = initial(x0(k) + i - 1, j - 1)
      end do
    end do
    call check(korch_add_block(blocks, mesh(k)%u, cells=[widths(g+1), ny, 1], guard=[1, 1, 0], tile_cells=[8, 8, 0], &
                               global_id=g) == korch_ok, "korch_add_block: " // korch_last_error())
  end do
  ! Periodic in x over the blocks: direction (dx, 0) is block g + dx; beyond y's edges, the walls.
  call check(korch_neighbours_create(2, near) == korch_ok, "korch_neighbours_create")
  do k = 1, mine
    do dy = -1, 1
      do dx = -1, 1
        if (dx == 0 .and. dy == 0) cycle
        g = modulo(global(k) + dx, n)
        if (dy /= 0) then
          status = korch_set_neighbour(near, k - 1, [dx, dy, 0], korch_neighbour_user)
        else
          status = korch_set_neighbour(near, k - 1, [dx, dy, 0], korch_neighbour_block, g, g * ranks / n)
        end if
        call check(status == korch_ok, "korch_set_neighbour: " // korch_last_error())
      end do
    end do
  end do
  call check(korch_exchange_create(blocks, near, guards) == korch_ok, "korch_exchange_create: " // korch_last_error())
  call check(korch_exchange_set_boundary_fill(guards, c_funloc(walls)) == korch_ok, "korch_exchange_set_boundary_fill")
  call check(korch_bundle_create("heat forward", forward) == korch_ok, "bundle")
  call check(korch_bundle_add(forward, "forward", c_funloc(step), c_loc(to_two)) == korch_ok, "bundle add")
  call check(korch_bundle_create("heat backward", backward) == korch_ok, "bundle")
  call check(korch_bundle_add(backward, "backward", c_funloc(step), c_loc(to_one)) == korch_ok, "bundle add")

  ! The plain loop over one global array, periodic in x, between the walls in y.
  allocate(a(0:nx-1, 0:ny-1), b(0:nx-1, 0:ny-1))
  do j = 0, ny - 1
    do i = 0, nx - 1
      a(i, j) = initial(i, j)
    end do
  end do
  do s = 1, steps
    do j = 0, ny - 1
      do i = 0, nx - 1
        im = modulo(i - 1, nx)
        ip = modulo(i + 1, nx)
        if (j == 0) then
          south = beyond_wall(t_bottom, a(i, j))
        else
          south = a(i, j - 1)
        end if
        if (j == ny - 1) then
          north = beyond_wall(t_top, a(i, j))
        else
          north = a(i, j + 1)
        end if
        b(i, j) = heat(a(i, j), a(im, j), a(ip, j), south, north)
      end do
    end do
    a = b
  end do

  ! The same steps through korch on built-in configurations, each bound to the code's action names;
  ! on the ones with device teams the routine runs on each block of the packets, in its own layout.
  do c = 1, size(builtins)
    call run_steps(trim(builtins(c)))
  end do
  call check(korch_configuration_builtin("cpu_only", cpu) == korch_ok, "configuration")

  ! Bad calls: each a non-zero status and a message naming the problem. A neighbour that no rank
  ! has is the same error on every rank.
  call check(korch_set_neighbour(near, 0, [1, 0, 0], korch_neighbour_block, 99, 0) == korch_ok, "set")
  status = korch_exchange_create(blocks, near, broken)
  call check(status /= korch_ok, "an unknown neighbour fails")
  call check(index(korch_last_error(), "names block 99") > 0, "the unknown neighbour is named: " // korch_last_error())
  if (rank == 0) print '(2a)', "embed-fortran: unknown neighbour -> ", korch_last_error()
  status = korch_configuration_builtin("cpu_onyl", other)
  call check(status /= korch_ok, "an unknown configuration fails")
  call check(index(korch_last_error(), "cpu_onyl") > 0, "an unknown configuration is named: " // korch_last_error())
  if (rank == 0) print '(2a)', "embed-fortran: unknown configuration -> ", korch_last_error()
  status = korch_configuration_builtin_bound("cpu_gpu_action_parallel", [character(8) :: "advect", "diffuse", "react"], &
                                             other)
  call check(status /= korch_ok, "more names than slots fails")
  call check(index(korch_last_error(), "2 slots (A, B)") > 0, "the slots are named: " // korch_last_error())
  if (rank == 0) print '(2a)', "embed-fortran: three names for two slots -> ", korch_last_error()
  call check(korch_bundle_create("failing", failing) == korch_ok, "bundle")
  call check(korch_bundle_add(failing, "A", c_funloc(refuse)) == korch_ok, "bundle add")
  status = korch_execute(failing, cpu, blocks)
  call check(status /= korch_ok, "a failing routine fails the cycle")
  call check(index(korch_last_error(), "the temperature went negative") > 0, &
             "a failing routine's message comes back: " // korch_last_error())
  if (rank == 0) print '(2a)', "embed-fortran: failing routine -> ", korch_last_error()
  allocate(wrong(0:16, 0:ny+1, 2))
  status = korch_add_block(blocks, wrong, cells=[16, ny, 1], guard=[1, 1, 0])
  call check(status /= korch_ok, "a block of the wrong shape is refused")
  call check(index(korch_last_error(), "shape (17, 26, 1, 2)") > 0, "its shape is named: " // korch_last_error())
  if (rank == 0) print '(2a)', "embed-fortran: wrong block shape -> ", korch_last_error()

  call check(korch_bundle_destroy(forward) == korch_ok, "destroy")
  call check(korch_bundle_destroy(backward) == korch_ok, "destroy")
  call check(korch_bundle_destroy(failing) == korch_ok, "destroy")
  call check(korch_configuration_destroy(cpu) == korch_ok, "destroy")
  call check(korch_exchange_destroy(guards) == korch_ok, "destroy")
  call check(korch_neighbours_destroy(near) == korch_ok, "destroy")
  call check(korch_blocks_destroy(blocks) == korch_ok, "destroy")
  call check(korch_finalize() == korch_ok, "korch_finalize")
  ! A main program's arrays live until the end; freed here so that LeakSanitizer sees no leak.
  deallocate(mesh, a, b, wrong, global, x0)
  if (rank == 0) print '(a)', "embed-fortran: ok"

contains
  ! `steps` heat steps from the initial state on the built-in `name`, compared with the plain loop.
  subroutine run_steps(name)
    character(len=*), intent(in) :: name
    type(korch_configuration) :: to_new, to_old
    integer :: from
    real(c_double) :: diff
    call check(korch_configuration_builtin_bound(name, ["forward"], to_new) == korch_ok, &
               "korch_configuration_builtin_bound: " // korch_last_error())
    call check(korch_configuration_builtin_bound(name, ["backward"], to_old) == korch_ok, "bound")
    ! What each action reads and writes, so that packets carry both its variables.
    call check(korch_configuration_packet_variables(to_new, "forward", [1], [2]) == korch_ok, &
               "korch_configuration_packet_variables: " // korch_last_error())
    call check(korch_configuration_packet_variables(to_old, "backward", [2], [1]) == korch_ok, "packet variables")
    do k = 1, mine
      mesh(k)%u = 0
      do j = 1, ny
        do i = 1, widths(global(k)+1)
          mesh(k)%u(i, j, 1) = initial(x0(k) + i - 1, j - 1)
        end do
      end do
    end do
    ! Each step: korch fills the guard cells of variable `from` inside the cycle.
    do s = 1, steps
      from = 1
      if (mod(s, 2) == 0) from = 2
      if (from == 1) then
        status = korch_execute_filled(forward, to_new, guards, from, 1)
      else
        status = korch_execute_filled(backward, to_old, guards, from, 1)
      end if
      ! A GPU build keeps packets in device memory, which a Fortran routine cannot read: refused.
      if (s == 1 .and. status /= korch_ok .and. index(korch_last_error(), "device memory") > 0) then
        if (rank == 0) print '(4a)', "embed-fortran: ", name, " refused on this build -> ", korch_last_error()
        exit
      end if
      call check(status == korch_ok, "korch_execute_filled on " // name // ": " // korch_last_error())
    end do
    if (s <= steps) then
      call check(korch_configuration_destroy(to_new) == korch_ok, "destroy")
      call check(korch_configuration_destroy(to_old) == korch_ok, "destroy")
      return
    end if
    diff = 0
    from = 1
    if (mod(steps, 2) == 1) from = 2
    do k = 1, mine
      g = global(k) + 1
      diff = max(diff, maxval(abs(mesh(k)%u(1:widths(g), 1:ny, from) - a(x0(k):x0(k)+widths(g)-1, :))))
    end do
    print '(a,i0,a,i0,a,i0,a,i0,3a,es10.3)', "embed-fortran: rank ", rank, " of ", ranks, ": ", steps, &
      " heat steps on ", mine, " of the blocks of widths 16/24/8/12 between walls, ", name, ": max |korch - plain loop| = ", diff
    call check(diff == 0, "korch equals the plain loop on " // name)
    call check(korch_configuration_destroy(to_new) == korch_ok, "destroy")
    call check(korch_configuration_destroy(to_old) == korch_ok, "destroy")
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
