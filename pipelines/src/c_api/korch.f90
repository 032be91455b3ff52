! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The Fortran module `korch` over korch's C API (korch/korch_c.h, docs/c-api.md).
!
! Every function returns an integer status: korch_ok (0) or non-zero, with the reason in
! korch_last_error(). Handles are checked (docs/c-api.md, "Handles and lifetimes"): using or
! destroying a destroyed one is an error; a destroy resets the handle only when it succeeded.
! A block is a Fortran array u(nx+2gx, ny+2gy, nz+2gz, nvar) (or, in 2-D,
! u(nx+2gx, ny+2gy, nvar)), contiguous and `target`, that must outlive the cycles that use it.
! An action routine is a bind(c) function, reentrant (several team threads call it at once); it gets
! tiles and blocks, and each block or tile of a device team's packets copied into the same layout:
!
!   recursive integer(c_int) function step(item, u, user) bind(c)
!     type(korch_item), intent(in) :: item
!     real(c_double), intent(inout) :: u(1-item%guard(1):item%cells(1)+item%guard(1), &
!                                        1-item%guard(2):item%cells(2)+item%guard(2), &
!                                        1-item%guard(3):item%cells(3)+item%guard(3), item%n_vars)
!     type(c_ptr), value :: user
!     ! update u(item%lo(1):item%hi(1), item%lo(2):item%hi(2), item%lo(3):item%hi(3), :)
!   end function
!
! A boundary fill (korch_exchange_set_boundary_fill, for neighbours korch_neighbour_user) is a
! bind(c) function too; region describes the block as an item does, with region%lo..region%hi the
! guard cells to fill; the variables are first_var + 1 .. first_var + n_vars (first_var counts from 0,
! as in C):
!
!   recursive integer(c_int) function wall(region, direction, first_var, n_vars, u, user) bind(c)
!     type(korch_item), intent(in) :: region
!     integer(c_int32_t), intent(in) :: direction(3)     ! each -1, 0 or +1
!     integer(c_int32_t), value :: first_var, n_vars
!     real(c_double), intent(inout) :: u(...)            ! declared as in an action routine
!     type(c_ptr), value :: user
!   end function
module korch
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! What a code needs from iso_c_binding to write action routines, so that `use korch` suffices.
  public :: c_double, c_int, c_ptr, c_funloc, c_loc, c_null_ptr, c_f_pointer, c_int32_t, c_null_funptr

  integer, parameter, public :: korch_ok = 0
  integer, parameter, public :: korch_all_blocks = 0, korch_leaf_blocks = 1, korch_level_blocks = 2
  integer, parameter, public :: korch_neighbour_block = 0, korch_neighbour_outflow = 1, korch_neighbour_none = 2
  integer, parameter, public :: korch_neighbour_user = 3

  type, bind(c), public :: korch_item
    integer(c_int64_t) :: stride(4)   ! (var, i, j, k) in doubles
    real(c_double) :: delta(3)
    real(c_double) :: lo_coord(3)
    integer(c_int32_t) :: block       ! 0-based, in the order of korch_add_block
    integer(c_int32_t) :: tile        ! 0-based; -1 for a whole block
    integer(c_int32_t) :: level
    integer(c_int32_t) :: n_vars
    integer(c_int32_t) :: cells(3)
    integer(c_int32_t) :: guard(3)
    integer(c_int32_t) :: lo(3)       ! the cells to update, inclusive, interior numbered 1..n
    integer(c_int32_t) :: hi(3)
    integer(c_int32_t) :: n_face_vars ! face variables (korch_blocks_create with n_face_vars)
    type(c_ptr) :: face_data(3)       ! the faces across x, y, z (c_null_ptr: none), as given
    integer(c_int64_t) :: face_stride(4, 3)  ! (var, i, j, k) in doubles, per axis
  end type

  type, bind(c) :: c_options
    integer(c_int32_t) :: n_teams, threads_per_team, n_helpers, helper_threads
  end type

  type, bind(c) :: c_block_shape
    integer(c_int32_t) :: cells(3), guard(3), tile_cells(3)
    integer(c_int32_t) :: level, leaf
    real(c_double) :: lo_coord(3), delta(3)
    integer(c_int32_t) :: position(3)
  end type

  type, public :: korch_blocks
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: korch_bundle
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: korch_configuration
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: korch_neighbours
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: korch_exchange
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: korch_ready
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: korch_forest
    type(c_ptr) :: handle = c_null_ptr
  end type

  public :: korch_initialize, korch_finalize, korch_blocks_create, korch_add_block, korch_blocks_destroy
  public :: korch_add_device_block, korch_blocks_clear
  public :: korch_bundle_create, korch_bundle_add, korch_bundle_destroy
  public :: korch_configuration_builtin, korch_configuration_builtin_bound, korch_configuration_json
  public :: korch_configuration_packet_variables, korch_configuration_destroy
  public :: korch_execute, korch_last_error, korch_routine_message
  public :: korch_start_mpi, korch_use_communicator, korch_ranks
  public :: korch_neighbours_create, korch_set_neighbour, korch_neighbours_destroy
  public :: korch_exchange_create, korch_exchange_fill, korch_exchange_start, korch_exchange_next
  public :: korch_exchange_destroy, korch_execute_filled, korch_exchange_set_boundary_fill
  public :: korch_ready_create, korch_ready_mark, korch_ready_clear, korch_execute_ready, korch_ready_destroy
  public :: korch_forest_create, korch_forest_relist, korch_forest_fill, korch_execute_forest, korch_forest_destroy

  interface korch_add_block
    module procedure add_block_3d, add_block_2d
  end interface

  ! The C functions the wrappers below call (korch/korch_c.h).
  include 'korch_c_interfaces.f90'

contains

  function c_string(text) result(s)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=len_trim(text) + 1) :: s
    s = trim(text) // c_null_char
  end function

  ! Creates the runtime (initializing Kokkos unless the code did). Omitted sizes take korch's defaults.
  integer function korch_initialize(n_teams, threads_per_team, n_helpers, helper_threads) result(status)
    integer, intent(in), optional :: n_teams, threads_per_team, n_helpers, helper_threads
    type(c_options) :: o
    o = c_options(0, 0, 0, 0)
    if (present(n_teams)) o%n_teams = n_teams
    if (present(threads_per_team)) o%threads_per_team = threads_per_team
    if (present(n_helpers)) o%n_helpers = n_helpers
    if (present(helper_threads)) o%helper_threads = helper_threads
    status = c_initialize(o)
  end function

  integer function korch_finalize() result(status)
    status = c_finalize()
  end function

  ! n_face_vars: variables on the blocks' faces (fluxes, face-centred fields); the blocks then come
  ! with their face arrays (korch_add_block's face_x, face_y, face_z).
  integer function korch_blocks_create(name, n_vars, blocks, n_face_vars) result(status)
    character(len=*), intent(in) :: name
    integer, intent(in) :: n_vars
    type(korch_blocks), intent(out) :: blocks
    integer, intent(in), optional :: n_face_vars
    if (present(n_face_vars)) then
      status = c_blocks_create_with_faces(c_string(name), int(n_vars, c_int32_t), int(n_face_vars, c_int32_t), &
                                          blocks%handle)
    else
      status = c_blocks_create(c_string(name), int(n_vars, c_int32_t), blocks%handle)
    end if
  end function

  integer function add_block(blocks, data, extent, cells, guard, level, leaf, tile_cells, lo_coord, delta, id, global_id, &
      device, position, face_data, face_extent) result(status)
    type(korch_blocks), intent(in) :: blocks
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: extent(4)
    integer, intent(in) :: cells(3), guard(3)
    integer, intent(in), optional :: level, tile_cells(3)
    logical, intent(in), optional :: leaf
    real(c_double), intent(in), optional :: lo_coord(3), delta(3)
    integer, intent(out), optional :: id
    integer, intent(in), optional :: global_id
    logical, intent(in), optional :: device
    integer, intent(in), optional :: position(3)
    type(c_ptr), intent(in), optional :: face_data(3)
    integer(c_int64_t), intent(in), optional :: face_extent(4, 3)
    type(c_block_shape) :: s
    integer(c_int32_t) :: added, global
    s%cells = cells
    s%guard = guard
    s%tile_cells = 0
    if (present(tile_cells)) s%tile_cells = tile_cells
    s%level = 0
    if (present(level)) s%level = level
    s%leaf = 1
    if (present(leaf)) then
      if (.not. leaf) s%leaf = 0
    end if
    s%lo_coord = 0
    if (present(lo_coord)) s%lo_coord = lo_coord
    s%delta = 1
    if (present(delta)) s%delta = delta
    s%position = 0
    if (present(position)) s%position = position
    added = -1
    global = -1
    if (present(global_id)) global = int(global_id, c_int32_t)
    if (present(face_data)) then
      status = c_blocks_add_with_faces(blocks%handle, s, global, data, extent, face_data, face_extent, 0_c_int32_t, added)
      if (present(id)) id = added
      return
    end if
    if (present(device)) then
      if (device) then
        status = c_blocks_add_device(blocks%handle, s, global, data, extent, 0_c_int32_t, added)
        if (present(id)) id = added
        return
      end if
    end if
    if (present(global_id)) then
      status = c_blocks_add_global(blocks%handle, s, int(global_id, c_int32_t), data, extent, 0_c_int32_t, added)
    else
      status = c_blocks_add(blocks%handle, s, data, extent, 0_c_int32_t, added)
    end if
    if (present(id)) id = added
  end function

  ! A 3-D block u(nx+2gx, ny+2gy, nz+2gz, nvar); its shape is checked against cells, guard and nvar.
  ! In a list with face variables, its faces too: face_x(nx+2gx+1, ny+2gy, nz+2gz, n_face_vars),
  ! face_y and face_z likewise with the extra face along y and z.
  integer function add_block_3d(blocks, u, cells, guard, level, leaf, tile_cells, lo_coord, delta, id, global_id, &
      position, face_x, face_y, face_z) result(status)
    type(korch_blocks), intent(in) :: blocks
    real(c_double), intent(inout), target, contiguous :: u(:, :, :, :)
    integer, intent(in) :: cells(3), guard(3)
    integer, intent(in), optional :: level, tile_cells(3)
    logical, intent(in), optional :: leaf
    real(c_double), intent(in), optional :: lo_coord(3), delta(3)
    integer, intent(out), optional :: id
    integer, intent(in), optional :: global_id
    integer, intent(in), optional :: position(3)
    real(c_double), intent(inout), target, contiguous, optional :: face_x(:, :, :, :), face_y(:, :, :, :), &
                                                                   face_z(:, :, :, :)
    type(c_ptr) :: faces(3)
    integer(c_int64_t) :: face_extent(4, 3)
    if (.not. (present(face_x) .or. present(face_y) .or. present(face_z))) then
      status = add_block(blocks, c_loc(u), int(shape(u), c_int64_t), cells, guard, level, leaf, tile_cells, lo_coord, &
                         delta, id, global_id, position=position)
      return
    end if
    faces = c_null_ptr
    face_extent = 0
    if (present(face_x)) call put_face(faces, face_extent, 1, c_loc(face_x), int(shape(face_x), c_int64_t))
    if (present(face_y)) call put_face(faces, face_extent, 2, c_loc(face_y), int(shape(face_y), c_int64_t))
    if (present(face_z)) call put_face(faces, face_extent, 3, c_loc(face_z), int(shape(face_z), c_int64_t))
    status = add_block(blocks, c_loc(u), int(shape(u), c_int64_t), cells, guard, level, leaf, tile_cells, lo_coord, &
                       delta, id, global_id, position=position, face_data=faces, face_extent=face_extent)
  end function

  ! A 2-D block u(nx+2gx, ny+2gy, nvar): cells(3) and guard(3) must be 1 and 0. In a list with face
  ! variables, its faces too: face_x(nx+2gx+1, ny+2gy, n_face_vars) and face_y(nx+2gx, ny+2gy+1, ...).
  integer function add_block_2d(blocks, u, cells, guard, level, leaf, tile_cells, lo_coord, delta, id, global_id, &
      position, face_x, face_y) result(status)
    type(korch_blocks), intent(in) :: blocks
    real(c_double), intent(inout), target, contiguous :: u(:, :, :)
    integer, intent(in) :: cells(3), guard(3)
    integer, intent(in), optional :: level, tile_cells(3)
    logical, intent(in), optional :: leaf
    real(c_double), intent(in), optional :: lo_coord(3), delta(3)
    integer, intent(out), optional :: id
    integer, intent(in), optional :: global_id
    integer, intent(in), optional :: position(3)
    real(c_double), intent(inout), target, contiguous, optional :: face_x(:, :, :), face_y(:, :, :)
    integer(c_int64_t) :: extent(4)
    type(c_ptr) :: faces(3)
    integer(c_int64_t) :: face_extent(4, 3)
    extent = extent_2d(shape(u))
    if (.not. (present(face_x) .or. present(face_y))) then
      status = add_block(blocks, c_loc(u), extent, cells, guard, level, leaf, tile_cells, lo_coord, delta, id, &
                         global_id, position=position)
      return
    end if
    faces = c_null_ptr
    face_extent = 0
    if (present(face_x)) call put_face(faces, face_extent, 1, c_loc(face_x), extent_2d(shape(face_x)))
    if (present(face_y)) call put_face(faces, face_extent, 2, c_loc(face_y), extent_2d(shape(face_y)))
    status = add_block(blocks, c_loc(u), extent, cells, guard, level, leaf, tile_cells, lo_coord, delta, id, global_id, &
                       position=position, face_data=faces, face_extent=face_extent)
  end function

  ! One face array's address and its extents (i, j, k, var) into add_block's arguments.
  subroutine put_face(faces, face_extent, axis, data, extent)
    type(c_ptr), intent(inout) :: faces(3)
    integer(c_int64_t), intent(inout) :: face_extent(4, 3)
    integer, intent(in) :: axis
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: extent(4)
    faces(axis) = data
    face_extent(:, axis) = extent
  end subroutine

  ! The extents (i, j, k, var) of a 2-D array (i, j, var).
  function extent_2d(array_shape) result(extent)
    integer, intent(in) :: array_shape(3)
    integer(c_int64_t) :: extent(4)
    extent = [int(array_shape(1), c_int64_t), int(array_shape(2), c_int64_t), 1_c_int64_t, &
              int(array_shape(3), c_int64_t)]
  end function

  ! A block whose array u(nx+2gx, ny+2gy, nz+2gz, n_vars) is in device memory: `data` is its device
  ! address (OpenACC acc_deviceptr, OpenMP use_device_addr, CUDA Fortran c_devloc). korch keeps it
  ! there between cycles; routines on the host get a host copy (docs/c-api.md).
  integer function korch_add_device_block(blocks, data, n_vars, cells, guard, level, leaf, tile_cells, lo_coord, delta, &
      id, global_id, position) result(status)
    type(korch_blocks), intent(in) :: blocks
    type(c_ptr), intent(in) :: data
    integer, intent(in) :: n_vars, cells(3), guard(3)
    integer, intent(in), optional :: level, tile_cells(3)
    logical, intent(in), optional :: leaf
    real(c_double), intent(in), optional :: lo_coord(3), delta(3)
    integer, intent(out), optional :: id
    integer, intent(in), optional :: global_id
    integer, intent(in), optional :: position(3)
    integer(c_int64_t) :: extent(4)
    extent(1:3) = int(cells, c_int64_t) + 2 * int(guard, c_int64_t)
    extent(4) = int(n_vars, c_int64_t)
    status = add_block(blocks, data, extent, cells, guard, level, leaf, tile_cells, lo_coord, delta, id, global_id, &
                       .true., position)
  end function

  ! Forgets every block, for a code that lists its blocks anew after changing its mesh.
  integer function korch_blocks_clear(blocks) result(status)
    type(korch_blocks), intent(in) :: blocks
    status = c_blocks_clear(blocks%handle)
  end function

  integer function korch_blocks_destroy(blocks) result(status)
    type(korch_blocks), intent(inout) :: blocks
    status = c_blocks_destroy(blocks%handle)
    if (status == korch_ok) blocks%handle = c_null_ptr  ! one in use stays valid
  end function

  integer function korch_bundle_create(name, bundle) result(status)
    character(len=*), intent(in) :: name
    type(korch_bundle), intent(out) :: bundle
    status = c_bundle_create(c_string(name), bundle%handle)
  end function

  ! routine: c_funloc of a bind(c) action routine; user: passed to every call (default c_null_ptr).
  integer function korch_bundle_add(bundle, action, routine, user) result(status)
    type(korch_bundle), intent(in) :: bundle
    character(len=*), intent(in) :: action
    type(c_funptr), value :: routine   ! by value: a constant c_funloc(...) needs no relocated copy
    type(c_ptr), intent(in), optional :: user
    type(c_ptr) :: u
    u = c_null_ptr
    if (present(user)) u = user
    status = c_bundle_add(bundle%handle, c_string(action), routine, u)
  end function

  integer function korch_bundle_destroy(bundle) result(status)
    type(korch_bundle), intent(inout) :: bundle
    status = c_bundle_destroy(bundle%handle)
    if (status == korch_ok) bundle%handle = c_null_ptr  ! one in use stays valid
  end function

  include 'korch_configurations.f90'
  include 'korch_ready.f90'
  include 'korch_forest.f90'

  ! One cycle over the blocks that `iterator` picks (default korch_all_blocks; korch_level_blocks
  ! with `level`).
  integer function korch_execute(bundle, configuration, blocks, iterator, level) result(status)
    type(korch_bundle), intent(in) :: bundle
    type(korch_configuration), intent(in) :: configuration
    type(korch_blocks), intent(in) :: blocks
    integer, intent(in), optional :: iterator, level
    integer(c_int32_t) :: it, lv
    it = korch_all_blocks
    if (present(iterator)) it = iterator
    lv = 0
    if (present(level)) lv = level
    status = c_execute(bundle%handle, configuration%handle, blocks%handle, it, lv)
  end function

  ! The message of the calling thread's last failed call.
  function korch_last_error() result(message)
    character(len=:), allocatable :: message
    character(kind=c_char) :: buffer(4096)
    integer(c_size_t) :: n
    integer :: i, m
    n = c_copy_last_error(buffer, int(size(buffer), c_size_t))
    m = int(min(n, int(size(buffer) - 1, c_size_t)))
    allocate(character(len=m) :: message)
    do i = 1, m
      message(i:i) = buffer(i)
    end do
  end function

  ! From inside an action routine: the reason it is about to return non-zero.
  subroutine korch_routine_message(message)
    character(len=*), intent(in) :: message
    call c_routine_message(c_string(message))
  end subroutine

  ! Starts MPI when an MPI launcher started this process (korch_finalize ends it).
  integer function korch_start_mpi() result(status)
    status = c_start_mpi()
  end function

  ! The code's own communicator: its integer handle (mpi module) or comm%MPI_VAL (mpi_f08).
  integer function korch_use_communicator(handle) result(status)
    integer, intent(in) :: handle
    status = c_use_communicator(int(handle, c_int32_t))
  end function

  ! This process's rank (0-based) and the number of ranks korch works with.
  integer function korch_ranks(rank, size) result(status)
    integer, intent(out) :: rank, size
    integer(c_int32_t) :: r, n
    status = c_ranks(r, n)
    rank = r
    size = n
  end function

  integer function korch_neighbours_create(dims, neighbours) result(status)
    integer, intent(in) :: dims
    type(korch_neighbours), intent(out) :: neighbours
    status = c_neighbours_create(int(dims, c_int32_t), neighbours%handle)
  end function

  ! What lies next to block `block` (0-based id from korch_add_block) in `direction` (each -1, 0 or
  ! +1): kind korch_neighbour_block (global_id on rank), korch_neighbour_outflow, korch_neighbour_none
  ! or korch_neighbour_user (the exchange's boundary fill).
  integer function korch_set_neighbour(neighbours, block, direction, kind, global_id, rank) result(status)
    type(korch_neighbours), intent(in) :: neighbours
    integer, intent(in) :: block, direction(3), kind
    integer, intent(in), optional :: global_id, rank
    integer(c_int32_t) :: g, r
    g = -1
    if (present(global_id)) g = global_id
    r = 0
    if (present(rank)) r = rank
    status = c_neighbours_set(neighbours%handle, int(block, c_int32_t), int(direction, c_int32_t), int(kind, c_int32_t), &
                              g, r)
  end function

  integer function korch_neighbours_destroy(neighbours) result(status)
    type(korch_neighbours), intent(inout) :: neighbours
    status = c_neighbours_destroy(neighbours%handle)
    if (status == korch_ok) neighbours%handle = c_null_ptr  ! one in use stays valid
  end function

  ! Collective: every rank creates its exchange at once. width: guard cells filled per side
  ! (default every block's own).
  integer function korch_exchange_create(blocks, neighbours, exchange, width) result(status)
    type(korch_blocks), intent(in) :: blocks
    type(korch_neighbours), intent(in) :: neighbours
    type(korch_exchange), intent(out) :: exchange
    integer, intent(in), optional :: width(3)
    integer(c_int32_t), target :: w(3)
    if (present(width)) then
      w = width
      status = c_exchange_create(blocks%handle, neighbours%handle, c_loc(w), exchange%handle)
    else
      status = c_exchange_create(blocks%handle, neighbours%handle, c_null_ptr, exchange%handle)
    end if
  end function

  ! Variables first_var .. first_var + n_vars - 1 (1-based, as the code declares them).
  integer function korch_exchange_fill(exchange, first_var, n_vars) result(status)
    type(korch_exchange), intent(in) :: exchange
    integer, intent(in) :: first_var, n_vars
    status = c_exchange_fill(exchange%handle, int(first_var - 1, c_int32_t), int(n_vars, c_int32_t))
  end function

  integer function korch_exchange_start(exchange, first_var, n_vars) result(status)
    type(korch_exchange), intent(in) :: exchange
    integer, intent(in) :: first_var, n_vars
    status = c_exchange_start(exchange%handle, int(first_var - 1, c_int32_t), int(n_vars, c_int32_t))
  end function

  ! The next block (0-based) whose guard cells are valid, or -1 when the fill is over.
  integer function korch_exchange_next(exchange, block) result(status)
    type(korch_exchange), intent(in) :: exchange
    integer, intent(out) :: block
    integer(c_int32_t) :: b
    status = c_exchange_next(exchange%handle, b)
    block = b
  end function

  integer function korch_exchange_destroy(exchange) result(status)
    type(korch_exchange), intent(inout) :: exchange
    status = c_exchange_destroy(exchange%handle)
    if (status == korch_ok) exchange%handle = c_null_ptr  ! one in use stays valid
  end function

  ! The code's boundary condition for the guard cells marked korch_neighbour_user: fill is c_funloc of
  ! a bind(c) boundary fill (see the top of this module; c_null_funptr removes it), user is passed to
  ! every call (default c_null_ptr). It returns 0, or non-zero (after korch_routine_message) to fail
  ! the fill, which the filling call then returns once the fill has ended (docs/c-api.md).
  integer function korch_exchange_set_boundary_fill(exchange, fill, user) result(status)
    type(korch_exchange), intent(in) :: exchange
    type(c_funptr), value :: fill
    type(c_ptr), intent(in), optional :: user
    type(c_ptr) :: u
    u = c_null_ptr
    if (present(user)) u = user
    status = c_exchange_set_boundary_fill(exchange%handle, fill, u)
  end function

  ! One cycle whose blocks reach the teams as their guard cells of first_var .. first_var + n_vars - 1
  ! (1-based) become valid.
  integer function korch_execute_filled(bundle, configuration, exchange, first_var, n_vars) result(status)
    type(korch_bundle), intent(in) :: bundle
    type(korch_configuration), intent(in) :: configuration
    type(korch_exchange), intent(in) :: exchange
    integer, intent(in) :: first_var, n_vars
    status = c_execute_filled(bundle%handle, configuration%handle, exchange%handle, int(first_var - 1, c_int32_t), &
                              int(n_vars, c_int32_t))
  end function

end module korch
