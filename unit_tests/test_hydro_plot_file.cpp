// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Plot files of the hydro app (plot_file.hpp, plot_writer.hpp): --plot-every's two forms, and,
// where the build has HDF5, files that read back through the HDF5 API equal to the simulation's
// state, with their attributes, XDMF beside them, and the schedule in steps and in time.
#include <doctest/doctest.h>

#include <korch/error.hpp>

#include <fmt/format.h>

#include "amr_simulation.hpp"
#include "options.hpp"
#include "plot_options.hpp"
#include "plot_writer.hpp"
#include "simulation.hpp"

#if defined(KORCH_HYDRO_HDF5)
#include <hdf5.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

using namespace korch::hydro;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("korch-test-hydro-plots-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Options plotted(Problem problem, int dim, const fs::path& dir) {
  Options o;
  o.problem = problem;
  o.dim = dim;
  o.threads = 2;
  o.blocks = 2;
  o.cells_per_block = dim == 3 ? 8 : 16;
  o.quiet = true;
  o.write_output = false;
  o.out = dir.string();
  return o;
}

std::string error_of(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const korch::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("hydro plots: --plot-every N counts steps, Tt counts simulation time, anything else names the option") {
  CHECK(parse_plot_every("10").every_steps == 10);
  CHECK(parse_plot_every("10").every_time == 0.0);
  CHECK(parse_plot_every("0.01t").every_time == 0.01);
  CHECK(parse_plot_every("2e-3t").every_time == 2e-3);
  CHECK(parse_plot_every("0.01t").every_steps == 0);
  for (const char* bad :
       {"0", "-3", "1.5", "t", "0t", "-0.1t", "abc", "10s", "", "nant", "1e999t", "1et", "0x1pt", " 5"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_plot_every(bad), doctest::Contains("--plot-every"), korch::Error);
  }
  CHECK(error_of({"--plot-every", "0.5x"}).find("--plot-every") != std::string::npos);
  CHECK(error_of({"--plot-every", "4", "--plot-prefix", "a/b"}).find("--plot-prefix") != std::string::npos);
}

TEST_CASE("hydro plots: the schedule takes the first state, every interval, and shortens the step onto a plot time") {
  PlotOptions by_time;
  by_time.every_time = 0.25;
  PlotSchedule s(by_time, 0, 0.0);
  CHECK(s.max_dt(0.1) == doctest::Approx(0.15));
  CHECK_FALSE(s.due(1, 0.1));
  CHECK(s.due(2, 0.25));
  CHECK(s.max_dt(0.25) == doctest::Approx(0.25));
  CHECK(s.due(3, 0.8));  // a step past two plot times gives one plot, then the next is 1.0
  CHECK(s.max_dt(0.8) == doctest::Approx(0.2));
  PlotOptions by_steps;
  by_steps.every_steps = 3;
  PlotSchedule t(by_steps, 5, 1.0);  // a restart at step 5 counts from there
  CHECK(t.max_dt(1.0) == 1e300);
  CHECK_FALSE(t.due(7, 1.1));
  CHECK(t.due(8, 1.2));
}

#if !defined(KORCH_HYDRO_HDF5)

TEST_CASE("hydro plots: a build without HDF5 refuses --plot-every and names the package to install") {
  CHECK_FALSE(plot_files_supported());
  CHECK(error_of({"--plot-every", "5"}).find("libhdf5") != std::string::npos);
}

#else

namespace {

std::vector<double> read_dataset(const fs::path& file, const std::string& name, std::vector<hsize_t>* dims = nullptr) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  std::vector<hsize_t> extent(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, extent.data(), nullptr);
  if (dims) *dims = extent;
  std::vector<double> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

// A numeric attribute of the root group ("/") or of a dataset.
double read_number(const fs::path& file, const std::string& object, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t a = H5Aopen_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(a >= 0);
  double v = 0;
  CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
  H5Aclose(a);
  H5Fclose(f);
  return v;
}

std::string read_text(const fs::path& file, const std::string& object, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t a = H5Aopen_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(a >= 0);
  const hid_t type = H5Aget_type(a);
  std::string v(H5Tget_size(type), '\0');
  CHECK(H5Aread(a, type, v.data()) >= 0);
  H5Tclose(type);
  H5Aclose(a);
  H5Fclose(f);
  return v.c_str();
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("hydro plots: read back through HDF5, a plot holds the simulation's state, its units, time and cycle") {
  for (const int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path dir = scratch(fmt::format("state{}", dim));
    Options o = plotted(dim == 3 ? Problem::sod_z : Problem::sedov, dim, dir);
    o.steps = 3;
    o.plot.every_steps = 2;
    Simulation sim(o);
    sim.run();
    // Steps 0 and 2 by the schedule, 3 as the last state; the file of the last one is the state now.
    for (const char* name : {"plot_000000", "plot_000002", "plot_000003"}) {
      CHECK(fs::exists(dir / (std::string(name) + ".h5")));
      CHECK(fs::exists(dir / (std::string(name) + ".xmf")));
    }
    CHECK_FALSE(fs::exists(dir / "plot_000001.h5"));
    const fs::path file = dir / "plot_000003.h5";
    const auto n = sim.global_cells();
    std::vector<hsize_t> dims;
    const std::vector<double> rho = sim.gather(0), mx = sim.gather(1), my = sim.gather(2), mz = sim.gather(3),
                              E = sim.gather(4);
    CHECK(read_dataset(file, "density", &dims) == rho);
    const std::vector<hsize_t> slowest_first = dim == 3
                                                   ? std::vector<hsize_t>{hsize_t(n[2]), hsize_t(n[1]), hsize_t(n[0])}
                                                   : std::vector<hsize_t>{hsize_t(n[1]), hsize_t(n[0])};
    CHECK(dims == slowest_first);
    CHECK(read_dataset(file, "energy") == E);
    const auto vx = read_dataset(file, "velocity_x"), vy = read_dataset(file, "velocity_y"),
               p = read_dataset(file, "pressure");
    std::vector<double> vz = dim == 3 ? read_dataset(file, "velocity_z") : std::vector<double>(rho.size(), 0.0);
    REQUIRE(vx.size() == rho.size());
    int wrong = 0;
    for (std::size_t c = 0; c < rho.size(); ++c) {
      const double kinetic = 0.5 * (mx[c] * mx[c] + my[c] * my[c] + mz[c] * mz[c]) / rho[c];
      const double expected_p = (o.gamma - 1.0) * (E[c] - kinetic);
      wrong += std::fabs(vx[c] - mx[c] / rho[c]) > 1e-14 * (1 + std::fabs(vx[c]));
      wrong += std::fabs(vy[c] - my[c] / rho[c]) > 1e-14 * (1 + std::fabs(vy[c]));
      wrong += std::fabs(vz[c] - mz[c] / rho[c]) > 1e-14 * (1 + std::fabs(vz[c]));
      wrong += std::fabs(p[c] - expected_p) > 1e-12 * std::fabs(expected_p);
    }
    CHECK(wrong == 0);
    CHECK(read_number(file, "/", "time") == sim.time());
    CHECK(read_number(file, "/", "cycle") == 3);
    CHECK(read_text(file, "/", "problem") == to_string(o.problem));
    CHECK(read_text(file, "density", "units") == "M L^-3");
    CHECK(read_text(file, "pressure", "units") == "M L^-1 T^-2");
    CHECK(read_text(file, "velocity_x", "long_name") == "velocity, x component");
    // The XDMF beside it points at each dataset with the file's shape; the series lists all three.
    const std::string xmf = file_text(dir / "plot_000003.xmf");
    for (const char* v : {"density", "velocity_x", "velocity_y", "pressure", "energy"})
      CHECK(xmf.find(std::string("plot_000003.h5:/") + v) != std::string::npos);
    CHECK((xmf.find("velocity_z") != std::string::npos) == (dim == 3));
    // 3-D meshes only (a 2-D run is its one-cell slab): ParaView lays 2-D ones in the y-z plane.
    CHECK(xmf.find(fmt::format("\"3DCoRectMesh\" Dimensions=\"{} {} {}\"", n[2] + 1, n[1] + 1, n[0] + 1)) !=
          std::string::npos);
    CHECK(xmf.find(fmt::format("Dimensions=\"{} {} {}\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\"", n[2],
                               n[1], n[0])) != std::string::npos);
    const std::string series = file_text(dir / "plot.xmf");
    CHECK(occurrences(series, "<Time Value=") == 3);
    CHECK(series.find("CollectionType=\"Temporal\"") != std::string::npos);
    fs::remove_all(dir);
  }
}

namespace {

// The first chunk of `name`: its address in the file and its size in bytes.
std::pair<haddr_t, hsize_t> first_chunk(const fs::path& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  hsize_t offset[3] = {0, 0, 0}, size = 0;
  unsigned filters = 0;
  haddr_t address = 0;
  const hid_t space = H5Dget_space(d);
  CHECK(H5Dget_chunk_info(d, space, 0, offset, &filters, &address, &size) >= 0);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return {address, size};
}

// Whether HDF5 reads every value of `name`; its error stack is cleared either way.
bool reads(const fs::path& file, const std::string& name) {
  H5E_auto2_t handler = nullptr;
  void* data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &handler, &data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = f >= 0 ? H5Dopen2(f, name.c_str(), H5P_DEFAULT) : -1;
  std::vector<double> v(1 << 16);
  const bool ok = d >= 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0;
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, handler, data);
  return ok;
}

}  // namespace

TEST_CASE("hydro plots: every chunk of a plot carries a checksum, so a flipped bit fails to read") {
  const fs::path dir = scratch("checksum");
  Options o = plotted(Problem::sedov, 2, dir);
  o.steps = 1;
  o.plot.every_steps = 1;
  Simulation(o).run();
  const fs::path file = dir / "plot_000001.h5";
  REQUIRE(reads(file, "pressure"));
  const auto [address, size] = first_chunk(file, "pressure");
  REQUIRE(size >= 8 * 32 * 32);  // the values and their checksum
  for (const hsize_t at : {hsize_t{0}, size / 2, size - 1}) {
    CAPTURE(at);
    const fs::path damaged = dir / "damaged.h5";
    fs::copy_file(file, damaged, fs::copy_options::overwrite_existing);
    std::fstream bytes(damaged, std::ios::in | std::ios::out | std::ios::binary);
    bytes.seekg(static_cast<std::streamoff>(address + at));
    const char c = static_cast<char>(bytes.get());
    bytes.seekp(static_cast<std::streamoff>(address + at));
    bytes.put(static_cast<char>(c ^ 0x04));
    bytes.close();
    CHECK_FALSE(reads(damaged, "pressure"));
    CHECK(reads(damaged, "density"));  // the other datasets' chunks are whole
  }
  fs::remove_all(dir);
}

TEST_CASE("hydro plots: --plot-every Tt writes at each multiple of T, the steps shortened to land on it") {
  const fs::path dir = scratch("time");
  Options o = plotted(Problem::sod_x, 2, dir);
  o.tmax = 0.05;
  o.plot.every_time = 0.02;
  o.plot.dir = (dir / "plots").string();
  o.plot.prefix = "sod";
  Simulation sim(o);
  sim.run();
  std::vector<double> times;
  for (const auto& e : fs::directory_iterator(dir / "plots"))
    if (e.path().extension() == ".h5") times.push_back(read_number(e.path(), "/", "time"));
  std::sort(times.begin(), times.end());
  REQUIRE(times.size() == 4);
  CHECK(times[0] == 0.0);
  CHECK(times[1] == doctest::Approx(0.02).epsilon(1e-12));
  CHECK(times[2] == doctest::Approx(0.04).epsilon(1e-12));
  CHECK(times[3] == doctest::Approx(0.05).epsilon(1e-12));
  CHECK(fs::exists(dir / "plots" / "sod.xmf"));
  fs::remove_all(dir);
}

TEST_CASE("hydro plots: a plot folder that cannot be made fails before the first step, naming it") {
  const fs::path dir = scratch("blocked");
  { std::ofstream(dir / "file") << "x"; }
  Options o = plotted(Problem::sedov, 2, dir);
  o.steps = 2;
  o.plot.every_steps = 1;
  o.plot.dir = (dir / "file" / "plots").string();
  Simulation sim(o);
  CHECK_THROWS_WITH_AS(sim.run(), doctest::Contains((dir / "file").c_str()), korch::Error);
  CHECK(sim.steps_done() == 0);
  fs::remove_all(dir);
}

TEST_CASE("hydro plots: a failed write names the file and leaves no file behind") {
  const fs::path dir = scratch("failed");
  PlotFrame f;
  f.cells = {4, 4, 1};
  f.boxes.push_back({{0, 0, 0}, {4, 4, 1}});
  f.variables.push_back({"density", "mass density", "M L^-3", std::vector<double>(15, 1.0)});  // one short
  const std::string path = (dir / "short.h5").string();
  CHECK_THROWS_WITH_AS(write_plot_file(path, f, korch::Communicator::world()), doctest::Contains(path.c_str()),
                       korch::Error);
  CHECK(fs::is_empty(dir));
  // HDF5's own failure (here: no such folder) names the file and HDF5's reason.
  f.variables[0].values.push_back(1.0);
  const std::string missing = (dir / "missing" / "plot.h5").string();
  CHECK_THROWS_WITH_AS(write_plot_file(missing, f, korch::Communicator::world()),
                       doctest::Contains(fmt::format("plot file '{}': creating", missing).c_str()), korch::Error);
  CHECK_THROWS_WITH_AS(write_plot_file(missing, f, korch::Communicator::world()), doctest::Contains("No such file"),
                       korch::Error);
  fs::remove_all(dir);
}

TEST_CASE("hydro plots: an adaptive mesh's plot holds every leaf's cells, their levels, and one XDMF grid per leaf") {
  const fs::path dir = scratch("adaptive");
  Options o = plotted(Problem::sedov, 2, dir);
  o.max_level = 2;
  o.blocks = 2;
  o.cells_per_block = 8;
  o.steps = 2;
  o.plot.every_steps = 2;
  AmrSimulation sim(o);
  sim.run();
  const korch::ForestMesh& mesh = sim.mesh();
  const auto& leaves = mesh.forest().leaves();
  std::vector<double> rho, level;
  for (int b = 0; b < static_cast<int>(leaves.size()); ++b) {
    const korch::BlockArray& a = mesh.array(b);
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 8; ++i) {
        rho.push_back(a.data[sim.state() * a.stride[0] + (i + 2) * a.stride[1] + (j + 2) * a.stride[2]]);
        level.push_back(leaves[static_cast<std::size_t>(b)].level);
      }
  }
  std::vector<hsize_t> dims;
  CHECK(read_dataset(dir / "plot_000002.h5", "density", &dims) == rho);
  CHECK(dims == std::vector<hsize_t>{hsize_t(8 * leaves.size()), hsize_t(8)});
  CHECK(read_dataset(dir / "plot_000002.h5", "level") == level);
  std::ifstream in(dir / "plot_000002.xmf");
  const std::string xmf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t grids = 0;
  for (auto at = xmf.find("<Grid Name=\"leaf "); at != std::string::npos; at = xmf.find("<Grid Name=\"leaf ", at + 1))
    ++grids;
  CHECK(grids == leaves.size());
  // The last leaf reads its rows of the stacked datasets.
  CHECK(xmf.find(fmt::format(">{} 0 1 1 8 8<", 8 * (leaves.size() - 1))) != std::string::npos);
  fs::remove_all(dir);
}

#endif
