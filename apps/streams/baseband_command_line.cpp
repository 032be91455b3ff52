// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "baseband_command_line.hpp"

namespace korch::streams::baseband {

std::unique_ptr<cli::Program> baseband_command_line(BasebandArgs& a) {
  auto program = std::make_unique<cli::Program>(
      "korch-baseband",
      "transmits random frames through the 802.11a-style chain, adds noise, receives\n"
      "them sequentially and with |>>>| before the Viterbi decoder, checks the payload bits.");
  CLI::App& app = program->app();
  cli::add_integer(app, "--frames", a.frames, "frames to transmit", 1);
  cli::add_integer(app, "--max-len", a.max_len, "longest payload in bytes; the length field has 16 bits", 1, 65535)
      ->type_name("BYTES");
  cli::add_real(app, "--sigma", a.sigma, "noise standard deviation", 0.0)->type_name("S");
  cli::add_integer(app, "--threads", a.threads, "threads of the |>>>| runs", 1, 1024);
  cli::add_integer(app, "--seed", a.seed, "seed of the frames; the noise uses seed + 1", 0, 18446744073709551614.0L);
  app.add_flag("--dump", a.dump, "print the receiver's execution map, plan and Graphviz text first");
  program->add_note("Exit status 1 also when the received payload bits differ from the sent ones.");
  return program;
}

}  // namespace korch::streams::baseband
