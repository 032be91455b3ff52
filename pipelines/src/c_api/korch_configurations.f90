! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The configurations of the Fortran module `korch`: included by korch.f90 after its `contains`, so
! that `use korch` brings them (docs/c-api.md, "Built-in configurations"). Not a source of its own.

  ! A built-in configuration by name (cpu_only, gpu_only, ...); its teams apply actions A, B, C.
  integer function korch_configuration_builtin(name, configuration) result(status)
    character(len=*), intent(in) :: name
    type(korch_configuration), intent(out) :: configuration
    interface
      integer(c_int) function c_configuration_builtin(name, out) bind(c, name="korch_configuration_builtin")
        import :: c_int, c_char, c_ptr
        character(kind=c_char), intent(in) :: name(*)
        type(c_ptr), intent(out) :: out
      end function
    end interface
    status = c_configuration_builtin(c_string(name), configuration%handle)
  end function

  ! The built-in `name` with its slots (A, B, C) renamed to the code's action names, in slot order:
  !   korch_configuration_builtin_bound("cpu_gpu_action_parallel", [character(8) :: "advect", "diffuse"], c)
  ! A wrong number of names is an error naming the built-in's slots.
  integer function korch_configuration_builtin_bound(name, actions, configuration) result(status)
    character(len=*), intent(in) :: name
    character(len=*), intent(in) :: actions(:)
    type(korch_configuration), intent(out) :: configuration
    character(kind=c_char), allocatable, target :: text(:)   ! the names, each NUL-terminated
    type(c_ptr), allocatable :: names(:)
    integer :: a, c, at
    interface
      integer(c_int) function c_builtin_bound(name, actions, n_actions, out) &
          bind(c, name="korch_configuration_builtin_bound")
        import :: c_int, c_char, c_ptr, c_int32_t
        character(kind=c_char), intent(in) :: name(*)
        type(c_ptr), intent(in) :: actions(*)
        integer(c_int32_t), value :: n_actions
        type(c_ptr), intent(out) :: out
      end function
    end interface
    allocate(text(size(actions) * (len(actions) + 1) + 1), names(max(1, size(actions))))
    at = 1
    do a = 1, size(actions)
      names(a) = c_loc(text(at))
      do c = 1, len_trim(actions(a))
        text(at) = actions(a)(c:c)
        at = at + 1
      end do
      text(at) = c_null_char
      at = at + 1
    end do
    status = c_builtin_bound(c_string(name), names, int(size(actions), c_int32_t), configuration%handle)
  end function

  integer function korch_configuration_json(json, configuration) result(status)
    character(len=*), intent(in) :: json
    type(korch_configuration), intent(out) :: configuration
    interface
      integer(c_int) function c_configuration_json(json, out) bind(c, name="korch_configuration_json")
        import :: c_int, c_char, c_ptr
        character(kind=c_char), intent(in) :: json(*)
        type(c_ptr), intent(out) :: out
      end function
    end interface
    status = c_configuration_json(c_string(json), configuration%handle)
  end function

  ! The variables (1-based, as the code declares them) that `action` reads and writes: the packets
  ! that reach the teams applying it carry them in (reads) and in and back out (writes).
  integer function korch_configuration_packet_variables(configuration, action, reads, writes) result(status)
    type(korch_configuration), intent(in) :: configuration
    character(len=*), intent(in) :: action
    integer, intent(in) :: reads(:), writes(:)
    integer(c_int32_t) :: r(max(1, size(reads))), w(max(1, size(writes)))
    interface
      integer(c_int) function c_packet_variables(configuration, action, reads, n_reads, writes, n_writes) &
          bind(c, name="korch_configuration_packet_variables")
        import :: c_int, c_char, c_ptr, c_int32_t
        type(c_ptr), value :: configuration
        character(kind=c_char), intent(in) :: action(*)
        integer(c_int32_t), intent(in) :: reads(*), writes(*)
        integer(c_int32_t), value :: n_reads, n_writes
      end function
    end interface
    r = 0
    w = 0
    r(1:size(reads)) = int(reads - 1, c_int32_t)
    w(1:size(writes)) = int(writes - 1, c_int32_t)
    status = c_packet_variables(configuration%handle, c_string(action), r, int(size(reads), c_int32_t), w, &
                                int(size(writes), c_int32_t))
  end function

  integer function korch_configuration_destroy(configuration) result(status)
    type(korch_configuration), intent(inout) :: configuration
    interface
      integer(c_int) function c_configuration_destroy(configuration) bind(c, name="korch_configuration_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: configuration
      end function
    end interface
    status = c_configuration_destroy(configuration%handle)
    if (status == korch_ok) configuration%handle = c_null_ptr  ! one in use stays valid
  end function
