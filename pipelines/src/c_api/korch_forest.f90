! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! A code's own adaptive mesh, in the Fortran module `korch`: included by korch.f90 after its
! `contains`, so that `use korch` brings it (docs/c-api.md, "A code's own adaptive mesh"). Not a
! source of its own. Each block is added with its level and position (korch_add_block(...,
! level=l, position=p), p 0-based among the blocks of level l); korch fills the guard cells across
! levels and ranks:
!
!   status = korch_forest_create(blocks, 2, [4, 4, 1], [.true., .true., .false.], 3, forest)
!   status = korch_execute_forest(bundle, configuration, forest)   ! or korch_forest_fill(forest)

  ! Collective: every rank lists its own leaves first. roots: root blocks per axis (1 beyond dims);
  ! periodic: per axis; max_level: the finest level the code refines to.
  integer function korch_forest_create(blocks, dims, roots, periodic, max_level, forest) result(status)
    type(korch_blocks), intent(in) :: blocks
    integer, intent(in) :: dims, roots(3), max_level
    logical, intent(in) :: periodic(3)
    type(korch_forest), intent(out) :: forest
    integer(c_int32_t) :: flags(3)
    interface
      integer(c_int) function c_forest_create(blocks, dims, roots, periodic, max_level, out) &
          bind(c, name="korch_forest_create")
        import :: c_int, c_int32_t, c_ptr
        type(c_ptr), value :: blocks
        integer(c_int32_t), value :: dims, max_level
        integer(c_int32_t), intent(in) :: roots(3), periodic(3)
        type(c_ptr), intent(out) :: out
      end function
    end interface
    flags = merge(1_c_int32_t, 0_c_int32_t, periodic)
    status = c_forest_create(blocks%handle, int(dims, c_int32_t), int(roots, c_int32_t), flags, &
                             int(max_level, c_int32_t), forest%handle)
  end function

  ! After the code's own regrid and korch_blocks_clear, korch_add_block anew (collective).
  integer function korch_forest_relist(forest) result(status)
    type(korch_forest), intent(in) :: forest
    interface
      integer(c_int) function c_forest_relist(forest) bind(c, name="korch_forest_relist")
        import :: c_int, c_ptr
        type(c_ptr), value :: forest
      end function
    end interface
    status = c_forest_relist(forest%handle)
  end function

  ! Fills every leaf's guard cells, every variable (collective).
  integer function korch_forest_fill(forest) result(status)
    type(korch_forest), intent(in) :: forest
    interface
      integer(c_int) function c_forest_fill(forest) bind(c, name="korch_forest_fill")
        import :: c_int, c_ptr
        type(c_ptr), value :: forest
      end function
    end interface
    status = c_forest_fill(forest%handle)
  end function

  ! One cycle whose leaves reach the teams with their guard cells of variables first_var ..
  ! first_var + n_vars - 1 filled (0-based; default every variable).
  integer function korch_execute_forest(bundle, configuration, forest, first_var, n_vars) result(status)
    type(korch_bundle), intent(in) :: bundle
    type(korch_configuration), intent(in) :: configuration
    type(korch_forest), intent(in) :: forest
    integer, intent(in), optional :: first_var, n_vars
    integer(c_int32_t) :: first, count
    interface
      integer(c_int) function c_execute_forest(bundle, configuration, forest, first_var, n_vars) &
          bind(c, name="korch_execute_forest")
        import :: c_int, c_int32_t, c_ptr
        type(c_ptr), value :: bundle, configuration, forest
        integer(c_int32_t), value :: first_var, n_vars
      end function
    end interface
    first = 0
    if (present(first_var)) first = int(first_var, c_int32_t)
    count = -1
    if (present(n_vars)) count = int(n_vars, c_int32_t)
    status = c_execute_forest(bundle%handle, configuration%handle, forest%handle, first, count)
  end function

  integer function korch_forest_destroy(forest) result(status)
    type(korch_forest), intent(inout) :: forest
    interface
      integer(c_int) function c_forest_destroy(forest) bind(c, name="korch_forest_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: forest
      end function
    end interface
    status = c_forest_destroy(forest%handle)
    if (status == korch_ok) forest%handle = c_null_ptr  ! one in use stays valid
  end function
