// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh files that lie about their size, paths that are folders, and meshes whose state turns
// non-finite: each is a korch::Error that says what is wrong, never an allocation the size of the
// header's claim, a misleading message, or a run that ends in "rms -nan".
#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

using korch::test::contains;
using korch::test::error_of;
namespace af = korch::mesh::airfoil;

namespace {

class TempDir {
 public:
  TempDir() : dir_(std::filesystem::temp_directory_path() / ("korch_mesh_input_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace

TEST_CASE(
    "Mesh input: a header claiming more entries than the file can hold fails before allocating, naming the field") {
  TempDir dir;
  std::string body;
  for (int i = 0; i < 1500; ++i) body += "0.5 0.25\n";  // about 13 KB of nodes
  struct Case {
    std::string header;
    std::string field;
  };
  for (const Case& c :
       {Case{"100000000 1 0 0", "nnode"}, Case{"1073741823 1 0 0", "nnode"}, Case{"1500 1073741823 0 0", "ncell"},
        Case{"1500 0 1073741823 0", "nedge"}, Case{"1500 0 0 1073741823", "nbedge"}}) {
    CAPTURE(c.header);
    const std::string path = dir.write("big.dat", c.header + "\n" + body);
    const std::string message = error_of([&] { af::read_mesh(path); });
    CHECK(contains(message, "file '" + path + "', line 1: field '" + c.field + "'"));
    CHECK(contains(message, "the file has"));
  }
  // A header whose counts fit the file still reads (and fails later on its content, by line).
  const std::string short_path = dir.write("short.dat", "1500 1 0 0\n" + body);
  CHECK(contains(error_of([&] { af::read_mesh(short_path); }), "line 1502"));
}

TEST_CASE("Mesh input: a folder given as a file is reported as a folder") {
  TempDir dir;
  for (auto read :
       {+[](const std::string& p) { af::read_mesh(p); }, +[](const std::string& p) { af::read_constants(p); },
        +[](const std::string& p) { af::read_state(p, 4); }}) {
    const std::string message = error_of([&] { read(dir.path()); });
    CHECK(contains(message, "'" + dir.path() + "' is a folder"));
    CHECK(!contains(message, "end of file"));
  }
}

TEST_CASE("Mesh input: a non-finite state stops the solver with an error naming the iteration and the cell") {
  af::MeshData mesh = af::generate_ogrid(8, 2);
  for (double& coordinate : mesh.x) coordinate = 0.0;  // every cell collapsed to a point
  af::Problem problem(mesh, af::reference_constants());
  korch::mesh::SequentialExecutor executor;
  const std::string message = error_of([&] { problem.iterate(executor); });
  CHECK(contains(message, "iteration 1"));
  CHECK(contains(message, "cell 0"));
  CHECK(contains(message, "not finite"));

  // A mesh whose one cell has zero area fails the same way, in the iteration where it happens.
  af::MeshData dented = af::generate_ogrid(8, 2);
  const int cell = 5;
  for (int k = 0; k < 4; ++k) {
    const int node = dented.cell[4 * cell + k];
    dented.x[2 * node] = dented.x[2 * dented.cell[4 * cell]];
    dented.x[2 * node + 1] = dented.x[2 * dented.cell[4 * cell] + 1];
  }
  af::Problem dented_problem(dented, af::reference_constants());
  const std::string dented_message = error_of([&] {
    for (int it = 0; it < 100; ++it) dented_problem.iterate(executor);
  });
  CHECK(contains(dented_message, "iteration "));
  CHECK(contains(dented_message, "not finite"));
}
