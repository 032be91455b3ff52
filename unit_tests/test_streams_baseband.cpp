// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 802.11a-style baseband chain: codec kernels and the transmitter/receiver round trip,
// sequential and with |>>>| before the Viterbi decoder.
#include <doctest/doctest.h>

#include <korch/streams.hpp>
#include "baseband.hpp"

#include <random>
#include <set>

using namespace korch::streams;
namespace bb = korch::streams::baseband;

TEST_CASE("Baseband: the scrambler x^7+x^4+1 has period 127 and descrambling inverts it") {
  std::vector<Item> zeros(254, 0.0), seq(254), back(254);
  unsigned s = 0x5D;
  bb::scramble(zeros.data(), seq.data(), seq.size(), s);
  for (std::size_t i = 0; i < 127; ++i) CHECK(seq[i] == seq[i + 127]);
  std::vector<Item> data(254);
  std::mt19937 rng(1);
  for (auto& d : data) d = static_cast<Item>(rng() & 1u);
  unsigned a = 0x5D, b = 0x5D;
  bb::scramble(data.data(), seq.data(), data.size(), a);
  bb::scramble(seq.data(), back.data(), seq.size(), b);
  CHECK(back == data);
}

TEST_CASE("Baseband: the interleaver is a permutation of 192 coded bits") {
  std::set<std::size_t> seen;
  for (std::size_t k = 0; k < bb::kCodedBits; ++k) seen.insert(bb::interleave_index(k));
  CHECK(seen.size() == bb::kCodedBits);
  CHECK(*seen.rbegin() == bb::kCodedBits - 1);
}

TEST_CASE("Baseband: the K=7 133/171 encoder's impulse response is the two generators; Viterbi corrects errors") {
  std::vector<Item> bits(bb::kBlockBits, 0.0), coded(bb::kCodedBits), soft(bb::kCodedBits), dec(bb::kBlockBits);
  bits[0] = 1;
  bb::conv_encode(bits.data(), coded.data());
  unsigned g0 = 0, g1 = 0;
  for (int i = 0; i < 7; ++i) {
    g0 |= static_cast<unsigned>(coded[2 * i]) << (6 - i);
    g1 |= static_cast<unsigned>(coded[2 * i + 1]) << (6 - i);
  }
  CHECK(g0 == 0133);
  CHECK(g1 == 0171);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    for (auto& b : bits) b = static_cast<Item>(rng() & 1u);
    bb::conv_encode(bits.data(), coded.data());
    for (std::size_t i = 0; i < coded.size(); ++i) soft[i] = coded[i] > 0.5 ? 1.0 : -1.0;
    for (int e = 0; e < 3; ++e) soft[(rng() % 60) * 3] *= -1;  // three well-separated hard errors
    bb::viterbi_decode(soft.data(), dec.data());
    CHECK(dec == bits);
  }
}

TEST_CASE("Baseband: transmit then receive recovers the payload bits exactly, sequential and with |>>>|") {
  const auto frames = bb::random_frames(6, 1, 40, 11);
  const auto tx_in = bb::tx_input(frames);
  const auto expect = bb::payload_bits(frames);
  CHECK(bb::transmitter(true).out_type() == ItemType::of<bb::Sample>());
  CHECK(bb::receiver(true).in_type() == ItemType::of<bb::Sample>());
  const auto tx_seq = run_sequential(bb::transmitter(false), tx_in);
  ParallelOptions o;
  o.threads = 2;
  o.commit_queue_capacity = 1024;
  o.timeout = std::chrono::seconds(30);
  const auto tx_par = run_parallel(bb::transmitter(true), tx_in, o);
  CHECK(tx_par.output == tx_seq.output);
  const auto rx_seq = run_sequential(bb::receiver(false), tx_seq.output);
  CHECK(rx_seq.output == expect);
  for (unsigned threads = 1; threads <= 3; ++threads) {
    o.threads = threads;
    const auto rx_par = run_parallel(bb::receiver(true), tx_seq.output, o);
    CHECK(rx_par.output == expect);
    CHECK(rx_par.commits.rollbacks > 0);
  }
}

TEST_CASE("Baseband: the round trip is exact with noise below the decoder's limit") {
  const auto frames = bb::random_frames(8, 10, 60, 12);
  auto samples = run_sequential(bb::transmitter(false), bb::tx_input(frames)).output;
  bb::add_noise(samples, 0.45, 99);
  ParallelOptions o;
  o.commit_queue_capacity = 1024;
  o.timeout = std::chrono::seconds(30);
  const auto rx = run_parallel(bb::receiver(true), samples, o);
  CHECK(rx.output == bb::payload_bits(frames));
  CHECK(rx.output == run_sequential(bb::receiver(false), samples).output);
}

TEST_CASE("Baseband: the receiver's commit queue below minQSize (192 samples for the header) is an error") {
  ParallelOptions o;
  o.commit_queue_capacity = 191;
  CHECK_THROWS_WITH_AS(run_parallel(bb::receiver(true), {}, o), doctest::Contains("minQSize 192"), korch::Error);
}
