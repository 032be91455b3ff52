# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# HDF5 for korch-hydro's plot files (--plot-every, docs/plot-files.md): the parallel library
# (Debian libhdf5-openmpi-dev) in an MPI build, so that all ranks write one file together, the
# serial one (libhdf5-dev) otherwise. Without a fitting HDF5 the app builds without plot files and
# --plot-every says so. The C API is all the app uses.
set(KORCH_HYDRO_HDF5 OFF CACHE INTERNAL "korch-hydro writes plot files")
set(KORCH_HYDRO_HDF5_PARALLEL OFF CACHE INTERNAL "korch-hydro plot files by collective MPI-IO")
enable_language(C)  # FindHDF5 compiles a C probe against the library
set(HDF5_PREFER_PARALLEL ${KORCH_HAVE_MPI})
find_package(HDF5 QUIET COMPONENTS C)
if(NOT HDF5_FOUND)
  message(STATUS "korch-hydro: HDF5 not found, no plot files (install libhdf5-dev, or libhdf5-openmpi-dev for an MPI build)")
elseif(HDF5_IS_PARALLEL AND NOT KORCH_HAVE_MPI)
  message(STATUS "korch-hydro: the HDF5 found (${HDF5_C_INCLUDE_DIRS}) is parallel but this build has no MPI: "
                 "no plot files (install libhdf5-dev)")
elseif(NOT HDF5_IS_PARALLEL AND KORCH_HAVE_MPI)
  message(STATUS "korch-hydro: the HDF5 found (${HDF5_C_INCLUDE_DIRS}) is serial but this build uses MPI ranks: "
                 "no plot files (install libhdf5-openmpi-dev)")
else()
  set(KORCH_HYDRO_HDF5 ON CACHE INTERNAL "")
  set(KORCH_HYDRO_HDF5_PARALLEL ${HDF5_IS_PARALLEL} CACHE INTERNAL "")
  target_link_libraries(korch_hydro PUBLIC hdf5::hdf5)
  target_compile_definitions(korch_hydro PUBLIC KORCH_HYDRO_HDF5=1)
  if(HDF5_IS_PARALLEL)
    target_compile_definitions(korch_hydro PUBLIC KORCH_HYDRO_HDF5_PARALLEL=1)
    target_link_libraries(korch_hydro PUBLIC MPI::MPI_CXX)  # plot_file.cpp hands HDF5 MPI_COMM_WORLD
  endif()
  message(STATUS "korch-hydro: plot files with HDF5 ${HDF5_VERSION} (parallel: ${HDF5_IS_PARALLEL})")
endif()
