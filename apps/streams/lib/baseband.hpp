// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An 802.11a-style baseband chain as a stream program (the korch-baseband app, its tests and its
// benchmark use it).
//
// Transmitter, per frame: the input holds 16 length bits (the payload length in bytes, LSB first)
// and then the payload bits (double Items, 0 or 1); output: complex baseband samples (Items holding
// a Sample, std::complex<float>). The receiver takes those samples and emits the payload bits.
//   repeat { len <- header_tx ; payload_tx len }
//   header_tx    = fmt_header(16 -> one 90-bit block) >>> encode >>> interleave >>> bpsk
//   payload_tx n = take_payload(8n bits, zero-padded to 90-bit blocks) >>> scramble >>> encode
//                  |>>>| interleave >>> qpsk
// Receiver (the inverse), with |>>>| before the Viterbi decoder, where Ziria put it (and, in the
// payload, after it too, so the decoder gets a thread of its own):
//   repeat { len <- header_rx ; payload_rx len }
//   header_rx    = bpsk_demap >>> deinterleave |>>>| viterbi >>> parse_header
//   payload_rx n = qpsk_demap >>> deinterleave |>>>| viterbi |>>>| descramble >>> emit_payload(8n bits)
// With parallel == false every |>>>| is a >>> (the same program, one task).
// Codec: scrambler x^7+x^4+1 (seed 0x5D per frame), K=7 rate-1/2 convolutional code with generators
// 133/171 (octal), each 90-bit block terminated by 6 zero tail bits (192 coded bits, cardinality
// 90/192 and 192/90), 802.11a's first interleaver permutation over 192 bits, soft-decision Viterbi.
#pragma once

#include <korch/streams/program.hpp>

#include <complex>
#include <cstdint>
#include <vector>

namespace korch::streams::baseband {

constexpr std::size_t kBlockBits = 90;  // data bits per trellis block
constexpr std::size_t kTailBits = 6;
constexpr std::size_t kCodedBits = 2 * (kBlockBits + kTailBits);  // 192
constexpr std::size_t kLengthBits = 16;

using Sample = std::complex<float>;  // one complex baseband sample: the transmitter's output items

// ---- kernels (exposed for tests) ----
// Additive scrambler x^7+x^4+1 over n bits (0/1 Items), state updated in place.
void scramble(const Item* in, Item* out, std::size_t n, unsigned& state);
// 90 data bits -> 192 coded bits (tail appended).
void conv_encode(const Item* bits, Item* coded);
// 192 soft values (bit 1 ~ +1, bit 0 ~ -1) -> 90 bits, maximum-likelihood over the terminated trellis.
void viterbi_decode(const Item* soft, Item* bits);
std::size_t interleave_index(std::size_t k);  // position of coded bit k after interleaving

// ---- the chain ----
Comp transmitter(bool parallel);  // takes double bits, emits Samples
Comp receiver(bool parallel);     // takes Samples, emits double bits

// The transmitter's input for these frames (length field then payload bits, per frame).
std::vector<Item> tx_input(const std::vector<std::vector<std::uint8_t>>& frames);
// The payload bits the receiver should output for these frames.
std::vector<Item> payload_bits(const std::vector<std::vector<std::uint8_t>>& frames);
// Adds white Gaussian noise of standard deviation sigma to both components of every Sample.
void add_noise(std::vector<Item>& samples, double sigma, std::uint64_t seed);
// Random frames with payload lengths in [min_len, max_len] bytes.
std::vector<std::vector<std::uint8_t>> random_frames(std::size_t count, std::size_t min_len, std::size_t max_len,
                                                     std::uint64_t seed);

}  // namespace korch::streams::baseband
