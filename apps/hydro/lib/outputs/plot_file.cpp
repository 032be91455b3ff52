// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The HDF5 half of the plot files (plot_file.hpp); builds without HDF5 compile the stub at the end.
#include "plot_file.hpp"

#include "plot_options.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#if defined(KORCH_HYDRO_HDF5)
#include <hdf5.h>
#if defined(KORCH_HYDRO_HDF5_PARALLEL)
#include <mpi.h>
#endif
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

namespace korch::hydro {

#if defined(KORCH_HYDRO_HDF5)

bool plot_files_supported() noexcept { return true; }

namespace {

// HDF5's own message for the last failure (the innermost entry of its error stack), which the
// error names next to the file; HDF5's printing to stderr is turned off once.
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason.empty() ? std::string("HDF5 gave no reason") : reason;
}

void quiet_hdf5() {
  static const bool once = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)once;
}

// An HDF5 identifier closed by its own close function at the end of its scope.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t), const std::string& path, const char* what) : id_(id), close_(close) {
    if (id_ < 0) throw Error::format("plot file '{}': {} failed: {}", path, what, hdf5_reason());
  }
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  // Closes now and reports a failure (closing the file flushes it).
  void close(const std::string& path, const char* what) {
    const herr_t rc = close_(std::exchange(id_, -1));
    if (rc < 0) throw Error::format("plot file '{}': {} failed: {}", path, what, hdf5_reason());
  }
  operator hid_t() const noexcept { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t rc, const std::string& path, const std::string& what) {
  if (rc < 0) throw Error::format("plot file '{}': {} failed: {}", path, what, hdf5_reason());
}

void write_attribute(hid_t object, const char* name, hid_t type, const void* value, std::size_t count,
                     const std::string& path) {
  const hsize_t n = count;
  Id space(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose, path, "a dataspace");
  Id attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, path,
               fmt::format("creating attribute '{}'", name).c_str());
  check(H5Awrite(attribute, type, value), path, fmt::format("writing attribute '{}'", name));
}

void write_text_attribute(hid_t object, const char* name, const std::string& text, const std::string& path) {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose, path, "a string type");
  check(H5Tset_size(type, text.size() + 1), path, "a string type");  // with its terminating null
  check(H5Tset_strpad(type, H5T_STR_NULLTERM), path, "a string type");
  write_attribute(object, name, type, text.c_str(), 1, path);
}

// The file's dimensions, slowest first: [ny][nx] or [nz][ny][nx].
std::vector<hsize_t> file_dims(const PlotFrame& f) {
  std::vector<hsize_t> dims;
  for (int d = f.dim - 1; d >= 0; --d) dims.push_back(static_cast<hsize_t>(f.cells[static_cast<std::size_t>(d)]));
  return dims;
}

// This rank's boxes as one selection of the file's dataspace. HDF5 transfers the elements of a
// union of hyperslabs in ascending file order, the order of PlotVariable::values.
void select_boxes(hid_t space, const PlotFrame& f, const std::string& path) {
  check(H5Sselect_none(space), path, "selecting the rank's cells");
  for (const PlotBox& b : f.boxes) {
    std::vector<hsize_t> start, count;
    for (int d = f.dim - 1; d >= 0; --d) {
      const auto D = static_cast<std::size_t>(d);
      start.push_back(static_cast<hsize_t>(b.lo[D]));
      count.push_back(static_cast<hsize_t>(b.hi[D] - b.lo[D]));
    }
    check(H5Sselect_hyperslab(space, H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr), path,
          "selecting a block's cells");
  }
}

// MPI-IO over every rank (`parallel`: the ranks are MPI processes and the library is parallel), or
// HDF5's default driver for one process.
void choose_driver(hid_t fapl, bool parallel, const std::string& path) {
#if defined(KORCH_HYDRO_HDF5_PARALLEL)
  if (parallel) check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), path, "choosing MPI-IO");
#else
  (void)fapl, (void)parallel, (void)path;
#endif
}

// Chunks of a dataset of `dims` (slowest first) with at most `max_values` values each: whole rows of
// the faster dimensions, as many as fit.
std::vector<hsize_t> chunk_dims(const std::vector<hsize_t>& dims, hsize_t max_values) {
  std::vector<hsize_t> chunk(dims.size(), 1);
  hsize_t values = 1;
  for (std::size_t d = dims.size(); d-- > 0;) {
    const hsize_t extent = std::max<hsize_t>(dims[d], 1);
    chunk[d] = std::max<hsize_t>(1, std::min(extent, max_values / values));
    if (chunk[d] < extent) break;
    values *= extent;
  }
  return chunk;
}

// Dataset creation: chunked, each chunk with HDF5's Fletcher-32 checksum, which every HDF5 reader
// verifies when it reads the chunk (a damaged file fails to read instead of giving wrong values).
void add_checksums(hid_t dcpl, const std::vector<hsize_t>& dims, const std::string& path) {
  constexpr hsize_t max_chunk_values = hsize_t{1} << 17;  // 1 MiB: a chunk fits HDF5's default chunk cache
  const std::vector<hsize_t> chunk = chunk_dims(dims, max_chunk_values);
  check(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), path, "choosing the chunks");
  check(H5Pset_fletcher32(dcpl), path, "adding the Fletcher-32 checksum");
}

void write_contents(const std::string& temporary, const std::string& path, const PlotFrame& f, bool parallel) {
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path, "file access properties");
  choose_driver(fapl, parallel, path);
  Id file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose, path,
          fmt::format("creating '{}'", temporary).c_str());
  write_attribute(file, "time", H5T_NATIVE_DOUBLE, &f.time, 1, path);
  const std::int64_t cycle = f.cycle;
  write_attribute(file, "cycle", H5T_NATIVE_INT64, &cycle, 1, path);
  write_text_attribute(file, "problem", f.problem, path);
  const std::int32_t dim = f.dim;
  write_attribute(file, "dimensions", H5T_NATIVE_INT32, &dim, 1, path);
  // Slowest first, as the datasets (and XDMF) count them.
  std::vector<double> origin, spacing;
  for (int d = f.dim - 1; d >= 0; --d) {
    origin.push_back(f.origin[static_cast<std::size_t>(d)]);
    spacing.push_back(f.spacing[static_cast<std::size_t>(d)]);
  }
  write_attribute(file, "origin", H5T_NATIVE_DOUBLE, origin.data(), origin.size(), path);
  write_attribute(file, "spacing", H5T_NATIVE_DOUBLE, spacing.data(), spacing.size(), path);

  const auto dims = file_dims(f);
  Id dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, path, "transfer properties");
#if defined(KORCH_HYDRO_HDF5_PARALLEL)
  if (parallel) check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "choosing collective MPI-IO");
#endif
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, path, "dataset creation properties");
  add_checksums(dcpl, dims, path);
  for (const PlotVariable& v : f.variables) {
    Id file_space(H5Screate_simple(f.dim, dims.data(), nullptr), H5Sclose, path, "a dataspace");
    Id dataset(H5Dcreate2(file, v.name.c_str(), H5T_IEEE_F64LE, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose,
               path, fmt::format("creating dataset '{}'", v.name).c_str());
    write_text_attribute(dataset, "long_name", v.long_name, path);
    write_text_attribute(dataset, "units", v.units, path);
    write_text_attribute(dataset, "centering", "cell", path);
    select_boxes(file_space, f, path);
    const hssize_t selected = H5Sget_select_npoints(file_space);
    if (selected != static_cast<hssize_t>(v.values.size()))
      throw Error::format("plot file '{}': variable '{}' has {} values for the rank's {} cells", path, v.name,
                          v.values.size(), selected);
    const hsize_t n = v.values.size();
    Id memory_space(H5Screate_simple(1, &n, nullptr), H5Sclose, path, "a dataspace");
    check(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory_space, file_space, dxpl, v.values.data()), path,
          fmt::format("writing dataset '{}'", v.name));
  }
  file.close(path, "closing the file");
}

}  // namespace

void write_plot_file(const std::string& path, const PlotFrame& f, const Communicator& ranks) {
  quiet_hdf5();
  bool parallel = false;
#if defined(KORCH_HYDRO_HDF5_PARALLEL)
  parallel = ranks.uses_mpi();
#endif
  if (!parallel && ranks.size() > 1)
    throw Error::format(
        "plot file '{}': {} ranks, but this HDF5 library is not parallel: build with "
        "libhdf5-openmpi-dev",
        path, ranks.size());
  if (!parallel) {
    write_file_atomically(path, [&](const std::string& temporary) { write_contents(temporary, path, f, false); });
    return;
  }
  // All ranks write rank 0's temporary; rank 0 alone flushes and renames it once every rank is done
  // (closing the file is collective), and every rank learns whether that worked.
  const std::string temporary = ranks.all_gather(temporary_path(path))[0];
  std::string failure;
  try {
    write_contents(temporary, path, f, true);
  } catch (const Error& e) {
    failure = e.what();
  }
  const bool failed_somewhere = ranks.max(failure.empty() ? 0 : 1) != 0;
  if (ranks.rank() == 0) {
    if (failed_somewhere) {
      std::remove(temporary.c_str());
    } else {
      try {
        // The file already lies under rank 0's temporary name, the one write_file_atomically
        // flushes and renames: nothing is left to write.
        write_file_atomically(path, [](const std::string&) {});
      } catch (const Error& e) {
        failure = e.what();
      }
    }
  }
  const bool failed = ranks.max(failure.empty() ? 0 : 1) != 0;  // before any rank throws
  if (!failure.empty()) throw Error(failure);
  if (failed) throw Error::format("plot file '{}': writing failed on another rank (its error names the reason)", path);
}

#else  // no HDF5 in this build

bool plot_files_supported() noexcept { return false; }

void write_plot_file(const std::string& path, const PlotFrame&, const Communicator&) {
  throw Error::format(
      "plot file '{}': this korch-hydro was built without HDF5; install libhdf5-dev and configure again", path);
}

#endif

}  // namespace korch::hydro
