// korch-mesh-gen: writes an O-grid airfoil mesh (NACA0012, circular far field) of NI x NJ cells in
// the airfoil-162 format, with constants.txt, for benchmarks: korch-mesh-gen NI NJ OUTDIR [--far R]
// e.g. korch-mesh-gen 400 250 /tmp/airfoil-100k  (100 000 cells).
#include <korch/error.hpp>
#include <korch/mesh/airfoil.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  namespace af = korch::mesh::airfoil;
  try {
    if (argc < 4) {
      std::fputs("usage: korch-mesh-gen NI NJ OUTDIR [--far R]\n  NI cells around the profile, NJ outwards, far field at radius R (default 10)\n", stderr);
      return 2;
    }
    const int ni = std::stoi(argv[1]), nj = std::stoi(argv[2]);
    const std::string out = argv[3];
    double far = 10.0;
    for (int i = 4; i + 1 < argc; i += 2)
      if (std::string(argv[i]) == "--far") far = std::stod(argv[i + 1]);
    std::filesystem::create_directories(out);
    const af::MeshData m = af::generate_ogrid(ni, nj, far);
    af::write_mesh(m, out + "/mesh.dat");
    af::write_constants(af::reference_constants(), out + "/constants.txt");
    fmt::print("wrote {}/mesh.dat: {} nodes, {} cells, {} edges, {} boundary edges\n", out, m.nnode, m.ncell, m.nedge, m.nbedge);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "korch-mesh-gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
