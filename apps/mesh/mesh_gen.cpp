// korch-mesh-gen: writes an O-grid airfoil mesh (NACA0012, circular far field) of NI x NJ cells in
// the airfoil-162 format, with constants.txt, for benchmarks: korch-mesh-gen NI NJ OUTDIR [--far R]
// e.g. korch-mesh-gen 400 250 /tmp/airfoil-100k  (100 000 cells).
#include <korch/error.hpp>
#include <korch/mesh/airfoil.hpp>

#include <fmt/format.h>

#include <cmath>
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
    // The reference's constants: single-precision literals widened to double, free stream at Mach 0.4.
    af::Constants c;
    c.gam = static_cast<double>(1.4f);
    c.gm1 = static_cast<double>(0.4f);
    c.cfl = static_cast<double>(0.9f);
    c.eps = static_cast<double>(0.05f);
    c.mach = static_cast<double>(0.4f);
    c.alpha = 3.0 * std::atan(1.0) / 45.0;
    const double p = 1.0, r = 1.0, u = std::sqrt(c.gam * p / r) * c.mach, e = p / (r * c.gm1) + 0.5 * u * u;
    c.qinf = {r, r * u, 0.0, r * e};
    af::write_constants(c, out + "/constants.txt");
    fmt::print("wrote {}/mesh.dat: {} nodes, {} cells, {} edges, {} boundary edges\n", out, m.nnode, m.ncell, m.nedge, m.nbedge);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "korch-mesh-gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
