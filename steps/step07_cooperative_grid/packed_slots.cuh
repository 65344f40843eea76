// Step 07's lighter wait: when what a block waits for is ONE 32-bit value from each other
// block, the value can carry its own arrival. Each block stores (launch number, value) as one
// 64-bit word; a reader that sees this launch's number in a word has the value in the same
// load: no barrier, no counter, no fence. One store and one load per block, instead of
// grid.sync()'s fence + atomic + poll + the read of the slots that comes after it.
//
// CUB's decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back", 2016) packs a tile's status flag with its value in one word for the
// same reason: a flag in another word would need a fence between the two stores.
//
// The reader spins until every word it needs arrives. That is only safe when every block it
// waits for is resident at the same time, so kernels using these slots are launched as
// cooperative kernels (the runtime then refuses a grid that cannot be co-resident).
// Used by both of step 07's programs; each includes it once.
#pragma once

#include <cuda/atomic>

#include <cstdint>
#include <cstring>

#include "launch.cuh"

namespace packed_slots {

// Up to this many blocks per launch. One word per 128-byte line: when every block polls every
// slot (the normalization), the polls spread over many L2 lines instead of queuing on a few.
constexpr unsigned kMaxSlots = 4096;
constexpr unsigned kStride = 128 / sizeof(unsigned long long);
__device__ unsigned long long g_words[kMaxSlots * kStride];  // zero at load: launch number 0

// What a kernel gets by value: where the words are and which launch it is. Numbers start at 1,
// so a word still holding launch 0 (never written) or an earlier launch is "not yet".
struct Board {
  unsigned long long* words;
  unsigned launch;
};

__device__ inline void publish(Board b, unsigned slot, unsigned bits) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(b.words[size_t(slot) * kStride]);
  word.store((static_cast<unsigned long long>(b.launch) << 32) | bits, cuda::memory_order_relaxed);
}

// Spins until the slot holds this launch's word; returns its value. A relaxed load is enough:
// nothing but the word itself is read on the strength of it.
__device__ inline unsigned wait_for(Board b, unsigned slot) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(b.words[size_t(slot) * kStride]);
  unsigned long long w = word.load(cuda::memory_order_relaxed);
  while (unsigned(w >> 32) != b.launch) w = word.load(cuda::memory_order_relaxed);
  return unsigned(w);
}

// The 32 bits of a value, and back (float or unsigned).
template <typename T>
__host__ __device__ inline unsigned bits_of(T v) {
  static_assert(sizeof(T) == 4, "slots carry 32-bit values");
  unsigned u;
  memcpy(&u, &v, 4);
  return u;
}
template <typename T>
__host__ __device__ inline T value_of(unsigned u) {
  T v;
  memcpy(&v, &u, 4);
  return v;
}

// The board for the next launch (host), for grids of up to `max_blocks` (the kernel's
// co-resident count: a cooperative launch refuses anything larger). One numbering for every
// kernel of the program: the launches run one after another in one stream, and none can
// mistake an older launch's word for its own. After 2^32 - 1 launches the numbers would come
// round again: the words are cleared first, so an old word cannot match a reused number.
inline Board next_board(unsigned max_blocks, cudaStream_t stream) {
  static unsigned long long* words = harness::symbol_address(g_words);
  static unsigned launch = 0;
  if (max_blocks > kMaxSlots)
    throw std::runtime_error("packed_slots: " + std::to_string(max_blocks) + " co-resident blocks, room for " +
                             std::to_string(kMaxSlots));
  if (++launch == 0) {
    CUDA_CHECK(cudaMemsetAsync(words, 0, size_t(kMaxSlots) * kStride * sizeof(unsigned long long), stream));
    launch = 1;
  }
  return {words, launch};
}

}  // namespace packed_slots
