! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The C functions of korch/korch_c.h as the Fortran module `korch` calls them: included by korch.f90
! in its specification part, so they stay private to the module. Not a source of its own.
  interface
    integer(c_int) function c_initialize(options) bind(c, name="korch_initialize")
      import :: c_int, c_options
      type(c_options), intent(in) :: options
    end function
    integer(c_int) function c_finalize() bind(c, name="korch_finalize")
      import :: c_int
    end function
    integer(c_int) function c_blocks_create(name, n_vars, out) bind(c, name="korch_blocks_create")
      import :: c_int, c_char, c_int32_t, c_ptr
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t), value :: n_vars
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function c_blocks_add(blocks, shape, data, extent, order, id) bind(c, name="korch_blocks_add")
      import :: c_int, c_ptr, c_block_shape, c_int64_t, c_int32_t
      type(c_ptr), value :: blocks
      type(c_block_shape), intent(in) :: shape
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: extent(4)
      integer(c_int32_t), value :: order
      integer(c_int32_t), intent(out) :: id
    end function
    integer(c_int) function c_blocks_add_global(blocks, shape, global_id, data, extent, order, id) &
        bind(c, name="korch_blocks_add_global")
      import :: c_int, c_ptr, c_block_shape, c_int64_t, c_int32_t
      type(c_ptr), value :: blocks
      type(c_block_shape), intent(in) :: shape
      integer(c_int32_t), value :: global_id
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: extent(4)
      integer(c_int32_t), value :: order
      integer(c_int32_t), intent(out) :: id
    end function
    integer(c_int) function c_blocks_add_device(blocks, shape, global_id, data, extent, order, id) &
        bind(c, name="korch_blocks_add_device")
      import :: c_int, c_ptr, c_block_shape, c_int64_t, c_int32_t
      type(c_ptr), value :: blocks
      type(c_block_shape), intent(in) :: shape
      integer(c_int32_t), value :: global_id
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: extent(4)
      integer(c_int32_t), value :: order
      integer(c_int32_t), intent(out) :: id
    end function
    integer(c_int) function c_blocks_create_with_faces(name, n_vars, n_face_vars, out) &
        bind(c, name="korch_blocks_create_with_faces")
      import :: c_int, c_char, c_int32_t, c_ptr
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t), value :: n_vars, n_face_vars
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function c_blocks_add_with_faces(blocks, shape, global_id, data, extent, face_data, face_extent, &
        order, id) bind(c, name="korch_blocks_add_with_faces")
      import :: c_int, c_ptr, c_block_shape, c_int64_t, c_int32_t
      type(c_ptr), value :: blocks
      type(c_block_shape), intent(in) :: shape
      integer(c_int32_t), value :: global_id
      type(c_ptr), value :: data
      integer(c_int64_t), intent(in) :: extent(4)
      type(c_ptr), intent(in) :: face_data(3)
      integer(c_int64_t), intent(in) :: face_extent(4, 3)
      integer(c_int32_t), value :: order
      integer(c_int32_t), intent(out) :: id
    end function
    integer(c_int) function c_blocks_clear(blocks) bind(c, name="korch_blocks_clear")
      import :: c_int, c_ptr
      type(c_ptr), value :: blocks
    end function
    integer(c_int) function c_start_mpi() bind(c, name="korch_start_mpi")
      import :: c_int
    end function
    integer(c_int) function c_use_communicator(handle) bind(c, name="korch_use_communicator")
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: handle
    end function
    integer(c_int) function c_ranks(rank, size) bind(c, name="korch_ranks")
      import :: c_int, c_int32_t
      integer(c_int32_t), intent(out) :: rank, size
    end function
    integer(c_int) function c_neighbours_create(dims, out) bind(c, name="korch_neighbours_create")
      import :: c_int, c_int32_t, c_ptr
      integer(c_int32_t), value :: dims
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function c_neighbours_set(neighbours, block, direction, kind, global_id, rank) &
        bind(c, name="korch_neighbours_set")
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: neighbours
      integer(c_int32_t), value :: block
      integer(c_int32_t), intent(in) :: direction(3)
      integer(c_int32_t), value :: kind, global_id, rank
    end function
    integer(c_int) function c_neighbours_destroy(neighbours) bind(c, name="korch_neighbours_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: neighbours
    end function
    integer(c_int) function c_exchange_create(blocks, neighbours, width, out) bind(c, name="korch_exchange_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: blocks, neighbours, width
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function c_exchange_fill(exchange, first_var, n_vars) bind(c, name="korch_exchange_fill")
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int32_t), value :: first_var, n_vars
    end function
    integer(c_int) function c_exchange_start(exchange, first_var, n_vars) bind(c, name="korch_exchange_start")
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int32_t), value :: first_var, n_vars
    end function
    integer(c_int) function c_exchange_next(exchange, block) bind(c, name="korch_exchange_next")
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int32_t), intent(out) :: block
    end function
    integer(c_int) function c_exchange_destroy(exchange) bind(c, name="korch_exchange_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: exchange
    end function
    integer(c_int) function c_exchange_set_boundary_fill(exchange, fill, user) &
        bind(c, name="korch_exchange_set_boundary_fill")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: exchange
      type(c_funptr), value :: fill
      type(c_ptr), value :: user
    end function
    integer(c_int) function c_execute_filled(bundle, configuration, exchange, first_var, n_vars) &
        bind(c, name="korch_execute_filled")
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: bundle, configuration, exchange
      integer(c_int32_t), value :: first_var, n_vars
    end function
    integer(c_int) function c_blocks_destroy(blocks) bind(c, name="korch_blocks_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: blocks
    end function
    integer(c_int) function c_bundle_create(name, out) bind(c, name="korch_bundle_create")
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function c_bundle_add(bundle, action, routine, user) bind(c, name="korch_bundle_add")
      import :: c_int, c_ptr, c_char, c_funptr
      type(c_ptr), value :: bundle
      character(kind=c_char), intent(in) :: action(*)
      type(c_funptr), value :: routine
      type(c_ptr), value :: user
    end function
    integer(c_int) function c_bundle_destroy(bundle) bind(c, name="korch_bundle_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: bundle
    end function
    integer(c_int) function c_execute(bundle, configuration, blocks, iterator, level) bind(c, name="korch_execute")
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: bundle, configuration, blocks
      integer(c_int32_t), value :: iterator, level
    end function
    integer(c_size_t) function c_copy_last_error(buffer, capacity) bind(c, name="korch_copy_last_error")
      import :: c_size_t, c_char
      character(kind=c_char), intent(out) :: buffer(*)
      integer(c_size_t), value :: capacity
    end function
    subroutine c_routine_message(message) bind(c, name="korch_routine_message")
      import :: c_char
      character(kind=c_char), intent(in) :: message(*)
    end subroutine
  end interface
