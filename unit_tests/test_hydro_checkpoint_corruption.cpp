// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A corruption campaign against the hydro checkpoint reader: 1,000 random single-bit flips and
// 1,000 random truncations of a small real checkpoint (seeded, so every run tries the same files).
// Each damaged file is either refused with a message naming it, the same from
// check_checkpoint_file as from read_checkpoint_file, or read as bitwise the checkpoint that was
// written (so that the restart continues the same state); never as another state.
#include "test_hydro_checkpoint_support.hpp"

#include <random>

using namespace korch;
using namespace korch::hydro;
using namespace korch::hydro::checkpoint_test;

namespace {

struct Tally {
  int refused = 0, read_unchanged = 0;
};

// Reads the damaged file at `path` both ways and checks the rule above.
void judge(const std::string& path, const Options& o, const CheckpointContent& original, Tally& tally) {
  std::string message;
  try {
    const CheckpointContent c = read_checkpoint_file(path, o);
    CHECK(same_content(c, original));
    ++tally.read_unchanged;
  } catch (const Error& e) {
    message = e.what();
    CHECK(message.find("'" + path + "'") != std::string::npos);
    ++tally.refused;
  }
  std::string checked;
  try {
    check_checkpoint_file(path, o);
  } catch (const Error& e) {
    checked = e.what();
  }
  CHECK(checked == message);
}

}  // namespace

TEST_CASE(
    "hydro checkpoint: 1,000 bit flips and 1,000 truncations are refused or read unchanged, never as another state") {
  const fs::path dir = scratch("corruption");
  const std::string written = (dir / "written.bin").string(), path = (dir / "damaged.bin").string();
  const Options o = small_run();
  write_real_checkpoint(o, 3, written);
  const CheckpointContent original = read_checkpoint_file(written, o);
  const std::string bytes = read_bytes(written);
  const std::size_t header = bytes.find("\nend\n") + 5;
  std::mt19937_64 random(0x6b6f726368ull);
  Tally flips, header_flips, cuts;
  for (int trial = 0; trial < 1000; ++trial) {
    const std::size_t bit = std::uniform_int_distribution<std::size_t>(0, bytes.size() * 8 - 1)(random);
    std::string damaged = bytes;
    damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
    write_bytes(path, damaged);
    INFO("flipped bit " << bit % 8 << " of byte " << bit / 8);
    judge(path, o, original, bit / 8 < header ? header_flips : flips);
  }
  for (int trial = 0; trial < 1000; ++trial) {
    const std::size_t length = std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(random);
    write_bytes(path, bytes.substr(0, length));
    INFO("cut to " << length << " bytes");
    judge(path, o, original, cuts);
  }
  MESSAGE("refused: " << flips.refused << " state flips, " << header_flips.refused << " header flips, " << cuts.refused
                      << " truncations; read unchanged: " << flips.read_unchanged + header_flips.read_unchanged);
  CHECK(header_flips.refused > 100);  // the header takes about a third of this small file
  CHECK(cuts.refused == 1000);
  fs::remove_all(dir);
}
