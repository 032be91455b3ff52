! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The readiness of blocks whose guard cells the code fills itself, in the Fortran module `korch`:
! included by korch.f90 after its `contains`, so that `use korch` brings it (docs/c-api.md, "The
! code's own guard-cell fill"). Not a source of its own. The poll routine is a bind(c) function:
!
!   recursive integer(c_int) function poll(ready, user) bind(c)
!     type(c_ptr), value :: ready, user
!     ! test the code's requests (MPI_Testsome); for each block b (0-based) now filled:
!     !   status = korch_ready_mark(korch_ready(ready), b)
!   end function

  ! poll: c_funloc of the poll routine, or c_null_funptr when another thread marks the blocks; user
  ! is passed to every call (default c_null_ptr); stall_seconds: a cycle in which no block is
  ! marked for this long fails naming the blocks left (default 120).
  integer function korch_ready_create(blocks, poll, ready, user, stall_seconds) result(status)
    type(korch_blocks), intent(in) :: blocks
    type(c_funptr), value :: poll
    type(korch_ready), intent(out) :: ready
    type(c_ptr), intent(in), optional :: user
    real(c_double), intent(in), optional :: stall_seconds
    type(c_ptr) :: u
    real(c_double) :: stall
    interface
      integer(c_int) function c_ready_create(blocks, poll, user, stall_seconds, out) bind(c, name="korch_ready_create")
        import :: c_int, c_ptr, c_funptr, c_double
        type(c_ptr), value :: blocks
        type(c_funptr), value :: poll
        type(c_ptr), value :: user
        real(c_double), value :: stall_seconds
        type(c_ptr), intent(out) :: out
      end function
    end interface
    u = c_null_ptr
    if (present(user)) u = user
    stall = 0
    if (present(stall_seconds)) stall = stall_seconds
    status = c_ready_create(blocks%handle, poll, u, stall, ready%handle)
  end function

  ! Block `block` (0-based, as korch_add_block's id) has valid guard cells. Any thread.
  integer function korch_ready_mark(ready, block) result(status)
    type(korch_ready), intent(in) :: ready
    integer, intent(in) :: block
    interface
      integer(c_int) function c_ready_mark(ready, block) bind(c, name="korch_ready_mark")
        import :: c_int, c_int32_t, c_ptr
        type(c_ptr), value :: ready
        integer(c_int32_t), value :: block
      end function
    end interface
    status = c_ready_mark(ready%handle, int(block, c_int32_t))
  end function

  ! Forgets the marks made for the next cycle (after a failed cycle, before filling anew).
  integer function korch_ready_clear(ready) result(status)
    type(korch_ready), intent(in) :: ready
    interface
      integer(c_int) function c_ready_clear(ready) bind(c, name="korch_ready_clear")
        import :: c_int, c_ptr
        type(c_ptr), value :: ready
      end function
    end interface
    status = c_ready_clear(ready%handle)
  end function

  ! One cycle whose blocks reach the teams as the code marks them.
  integer function korch_execute_ready(bundle, configuration, ready) result(status)
    type(korch_bundle), intent(in) :: bundle
    type(korch_configuration), intent(in) :: configuration
    type(korch_ready), intent(in) :: ready
    interface
      integer(c_int) function c_execute_ready(bundle, configuration, ready) bind(c, name="korch_execute_ready")
        import :: c_int, c_ptr
        type(c_ptr), value :: bundle, configuration, ready
      end function
    end interface
    status = c_execute_ready(bundle%handle, configuration%handle, ready%handle)
  end function

  integer function korch_ready_destroy(ready) result(status)
    type(korch_ready), intent(inout) :: ready
    interface
      integer(c_int) function c_ready_destroy(ready) bind(c, name="korch_ready_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: ready
      end function
    end interface
    status = c_ready_destroy(ready%handle)
    if (status == korch_ok) ready%handle = c_null_ptr  ! one in use stays valid
  end function
