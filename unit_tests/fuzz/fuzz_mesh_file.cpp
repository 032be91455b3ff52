// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: the airfoil file readers (mesh, constants, cell states) on any bytes. Rules checked:
// the only exception is korch::Error, and an accepted mesh has the sizes its header announced,
// indices inside their sets, and reads back unchanged from what write_mesh() makes of it.
#include "airfoil_files.hpp"

#include <korch/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace af = korch::mesh::airfoil;

namespace {

[[noreturn]] void broken(const char* rule) {
  std::fprintf(stderr, "rule broken: %s\n", rule);
  std::abort();
}

// A folder of this process for the input and the round trip, removed when the fuzzer exits.
const std::string& scratch_dir() {
  // Never destroyed, so that the exit handler can still read it.
  static const std::string* const dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("korch_fuzz_mesh_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return new std::string(d.string());
  }();
  return *dir;
}

bool indices_below(const std::vector<int>& v, int n, int lo = 0) {
  for (int i : v)
    if (i < lo || i >= n) return false;
  return true;
}

void check_mesh(const af::MeshData& m) {
  const auto sz = [](int n, int per) { return static_cast<std::size_t>(n) * static_cast<std::size_t>(per); };
  if (m.x.size() != sz(m.nnode, 2) || m.cell.size() != sz(m.ncell, 4) || m.edge.size() != sz(m.nedge, 2) ||
      m.ecell.size() != sz(m.nedge, 2) || m.bedge.size() != sz(m.nbedge, 2) || m.becell.size() != sz(m.nbedge, 1) ||
      m.bound.size() != sz(m.nbedge, 1)) {
    broken("an accepted mesh has the sizes its header announced");
  }
  if (!indices_below(m.cell, m.nnode) || !indices_below(m.edge, m.nnode) || !indices_below(m.bedge, m.nnode) ||
      !indices_below(m.ecell, m.ncell) || !indices_below(m.becell, m.ncell) || !indices_below(m.bound, 3, 1)) {
    broken("an accepted mesh's indices lie inside their sets");
  }
  const std::string again = scratch_dir() + "/again.dat";
  af::write_mesh(m, again);
  const af::MeshData r = af::read_mesh(again);
  if (r.x != m.x || r.cell != m.cell || r.edge != m.edge || r.ecell != m.ecell || r.bedge != m.bedge ||
      r.becell != m.becell || r.bound != m.bound) {
    broken("write_mesh() of an accepted mesh reads back unchanged");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch_dir() + "/input.dat";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    check_mesh(af::read_mesh(path));
  } catch (const korch::Error&) {
  }
  try {
    af::read_constants(path);
  } catch (const korch::Error&) {
  }
  try {
    af::read_state(path, 3);
  } catch (const korch::Error&) {
  }
  return 0;
}
