! SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
! The Fortran tests' one check: prints the failed check's description and stops with status 1.
module fortran_checks
  implicit none
contains
  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      print '(2a)', "FAILED: ", what
      stop 1
    end if
  end subroutine
end module
