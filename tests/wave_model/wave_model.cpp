// The wavefront model's scheduler (see wave_model.hpp for what it models and what not).
#include "wave_model.hpp"

#include <sys/mman.h>
#include <ucontext.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

// Switching fibers: on x86-64 a few instructions (callee-saved registers and the stack
// pointer); elsewhere ucontext, whose swapcontext also saves the signal mask (a system call).
#if defined(__x86_64__) && !defined(WAVE_MODEL_UCONTEXT)
extern "C" void wave_model_switch(void** save_sp, void* load_sp);
asm(R"(
.text
.globl wave_model_switch
.type wave_model_switch,@function
wave_model_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size wave_model_switch,.-wave_model_switch
.section .note.GNU-stack,"",@progbits
.text
)");
struct Context {
  void* sp = nullptr;
};
inline void switch_to(Context& from, Context& to) { wave_model_switch(&from.sp, to.sp); }
// A new fiber's stack: six zero registers, then `entry` as the return address (with the
// stack aligned as at a call).
inline void make_context(Context& c, char* stack, size_t size, void (*entry)()) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  void** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;                              // entry's own return address: never used
  *--sp = reinterpret_cast<void*>(entry);
  for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp rbx r12-r15
  c.sp = sp;
}
#define WAVE_MODEL_OWN_SWITCH 1
#else
#define WAVE_MODEL_OWN_SWITCH 0
#endif

namespace wave_model {
namespace {

enum class State { Ready, Shuffle, Ballot, Converge, Sync, GridSync, Done };

bool at_wave_op(State s) { return s == State::Shuffle || s == State::Ballot || s == State::Converge; }

#if WAVE_MODEL_OWN_SWITCH
using Ctx = Context;
#else
using Ctx = ucontext_t;
#endif

struct Fiber {
  Ctx ctx;
  Lane lane;
  State state = State::Ready;
  uint64_t send = 0, recv = 0;  // a shuffle's value out and in; a ballot's mask in
  int src = 0;                  // the lane a shuffle reads
  bool predicate = false;
};

// The blocks of one cooperative launch meet here at grid.sync().
struct GridBarrier {
  std::mutex m;
  std::condition_variable cv;
  int live = 0, waiting = 0;
  uint64_t generation = 0;
};

struct Block {
  std::vector<Fiber> fibers;
  Ctx scheduler;
  Fiber* current = nullptr;
  unsigned width = 0;
  GridBarrier* grid = nullptr;  // null: not a cooperative launch
  const std::function<void()>* body = nullptr;
  int grid_syncs = 0;
  std::string name;
};

thread_local Block* this_block = nullptr;
std::mutex errors_mutex;
std::vector<std::string> error_list;
constexpr size_t kStack = 64 * 1024;

void swap(Ctx& from, Ctx& to) {
#if WAVE_MODEL_OWN_SWITCH
  switch_to(from, to);
#else
  swapcontext(&from, &to);
#endif
}

void lane_main() {
  Block& b = *this_block;
  (*b.body)();
  b.current->state = State::Done;
  swap(b.current->ctx, b.scheduler);  // never resumed
}

// The running lane stops in state `s` until the scheduler resumes it.
void wait_in(State s) {
  Block& b = *this_block;
  Fiber* f = b.current;
  f->state = s;
  swap(f->ctx, b.scheduler);
}

// Runs every wavefront operation that every stopped wavefront waits at. Lanes of one wavefront
// at operations of different kinds run as separate groups, one after the other, each seeing
// the others as inactive; nothing is reported. Lanes at two calls of the same kind are one
// group (lanes are grouped by kind, not call site: wave_model.hpp), so divergent shuffles merge.
bool run_wave_ops(Block& b) {
  bool any = false;
  const size_t n = b.fibers.size(), w = b.width;
  std::vector<Fiber*> group;
  for (size_t first = 0; first < n; first += w) {
    const size_t last = std::min(n, first + w);
    for (;;) {
      group.clear();
      for (size_t i = first; i < last; ++i) {
        Fiber& f = b.fibers[i];
        if (!at_wave_op(f.state)) continue;
        if (group.empty() || f.state == group[0]->state) group.push_back(&f);
      }
      if (group.empty()) break;
      any = true;
      // active[k]: lane k of this wavefront is in the group
      std::vector<Fiber*> active(w, nullptr);
      for (Fiber* f : group) active[f->lane.rank - first] = f;
      if (group[0]->state == State::Shuffle) {
        for (Fiber* f : group) {
          const Fiber* from = active[unsigned(f->src) & (w - 1)];
          f->recv = from ? from->send : 0;
        }
      } else if (group[0]->state == State::Ballot) {
        uint64_t mask = 0;
        for (Fiber* f : group)
          if (f->predicate) mask |= uint64_t(1) << (f->lane.rank - first);
        for (Fiber* f : group) f->recv = mask;
      }
      for (Fiber* f : group) f->state = State::Ready;
    }
  }
  return any;
}

void grid_arrive(Block& b) {
  GridBarrier& g = *b.grid;
  std::unique_lock<std::mutex> lock(g.m);
  const uint64_t generation = g.generation;
  if (++g.waiting == g.live) {
    g.waiting = 0;
    ++g.generation;
    g.cv.notify_all();
    return;
  }
  g.cv.wait(lock, [&] { return g.generation != generation; });
}

void grid_leave(Block& b) {
  GridBarrier& g = *b.grid;
  std::lock_guard<std::mutex> lock(g.m);
  --g.live;
  if (g.waiting > 0) {
    add_error(b.name + " returned while other blocks waited at grid.sync() (a GPU would hang)");
    if (g.waiting == g.live) {  // let the others go on, so the model finishes
      g.waiting = 0;
      ++g.generation;
      g.cv.notify_all();
    }
  }
}

void run_block(dim3 block_idx, dim3 grid, dim3 block, unsigned width, GridBarrier* barrier,
               const std::function<void()>& body, int* syncs_out) {
  Block b;
  b.width = width;
  b.grid = barrier;
  b.body = &body;
  b.name = "block " + std::to_string(block_idx.x) + (grid.y * grid.z > 1 ? "," + std::to_string(block_idx.y) + "," + std::to_string(block_idx.z) : "");
  const size_t threads = size_t(block.x) * block.y * block.z;
  b.fibers.resize(threads);
  char* stacks = static_cast<char*>(mmap(nullptr, threads * kStack, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (stacks == MAP_FAILED) {
    add_error("cannot map fiber stacks");
    return;
  }
  this_block = &b;
  for (size_t i = 0; i < threads; ++i) {
    Fiber& f = b.fibers[i];
    const uint32_t x = uint32_t(i % block.x), y = uint32_t(i / block.x % block.y), z = uint32_t(i / (size_t(block.x) * block.y));
    f.lane = Lane{dim3(x, y, z), block_idx, block, grid, unsigned(i), width};
#if WAVE_MODEL_OWN_SWITCH
    make_context(f.ctx, stacks + i * kStack, kStack, lane_main);
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks + i * kStack;
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, lane_main, 0);
#endif
  }
  for (;;) {
    for (Fiber& f : b.fibers) {
      if (f.state != State::Ready) continue;
      b.current = &f;
      swap(b.scheduler, f.ctx);
    }
    if (run_wave_ops(b)) continue;
    size_t alive = 0, at_sync = 0, at_grid = 0;
    for (const Fiber& f : b.fibers) {
      alive += f.state != State::Done;
      at_sync += f.state == State::Sync;
      at_grid += f.state == State::GridSync;
    }
    if (alive == 0) break;
    if (at_sync == alive) {
      for (Fiber& f : b.fibers) if (f.state == State::Sync) f.state = State::Ready;
      continue;
    }
    if (at_grid == alive && b.grid) {
      ++b.grid_syncs;
      grid_arrive(b);
      for (Fiber& f : b.fibers) if (f.state == State::GridSync) f.state = State::Ready;
      continue;
    }
    add_error(b.name + ": " + std::to_string(at_sync) + " threads wait at __syncthreads() and " + std::to_string(at_grid) +
              " at grid.sync() (of " + std::to_string(alive) + " still running): they never meet (a GPU would hang)");
    break;  // the lanes left are abandoned
  }
  if (b.grid) grid_leave(b);
  *syncs_out = b.grid_syncs;
  this_block = nullptr;
  munmap(stacks, threads * kStack);
}

}  // namespace

Device& device() {
  static Device d;
  return d;
}

const Lane& lane() { return this_block->current->lane; }

uint64_t bpermute(uint64_t value, int src) {
  Fiber* f = this_block->current;
  f->send = value;
  f->src = src;
  wait_in(State::Shuffle);
  return f->recv;
}

uint64_t ballot(bool predicate) {
  Fiber* f = this_block->current;
  f->predicate = predicate;
  wait_in(State::Ballot);
  return f->recv;
}

void converge() {
  wait_in(State::Converge);
}

void syncthreads() { wait_in(State::Sync); }

void grid_sync() {
  if (!this_block->grid) {
    add_error("grid.sync() in a launch that is not cooperative");
    return;
  }
  wait_in(State::GridSync);
}

int resident_blocks(int threads_per_block) {
  if (threads_per_block <= 0 || threads_per_block > device().max_block) return 0;
  return device().compute_units * (device().threads_per_cu / threads_per_block);
}

bool run_grid(dim3 grid, dim3 block, unsigned width, bool cooperative, const std::function<void()>& lane_body) {
  const size_t threads = size_t(block.x) * block.y * block.z, blocks = size_t(grid.x) * grid.y * grid.z;
  const int resident = resident_blocks(int(threads));
  if (threads == 0 || blocks == 0 || resident == 0) return false;
  if (cooperative && blocks > size_t(resident)) return false;  // hipErrorCooperativeLaunchTooLarge
  GridBarrier barrier;
  barrier.live = int(blocks);
  std::vector<int> syncs(blocks, 0);
  // A cooperative launch runs every block at once; another runs `resident` at a time. Each
  // block has its own host thread, so its __shared__ (thread_local) copy is its own and new.
  const size_t at_once = cooperative ? blocks : size_t(resident);
  for (size_t first = 0; first < blocks; first += at_once) {
    std::vector<std::thread> pool;
    for (size_t k = first; k < std::min(blocks, first + at_once); ++k) {
      const dim3 idx(uint32_t(k % grid.x), uint32_t(k / grid.x % grid.y), uint32_t(k / (size_t(grid.x) * grid.y)));
      pool.emplace_back(run_block, idx, grid, block, width, cooperative ? &barrier : nullptr, std::cref(lane_body), &syncs[k]);
    }
    for (auto& t : pool) t.join();
  }
  for (size_t k = 1; k < blocks; ++k)
    if (syncs[k] != syncs[0]) {
      add_error("blocks passed grid.sync() different numbers of times (" + std::to_string(syncs[0]) + " and " +
                std::to_string(syncs[k]) + "): a GPU would hang");
      break;
    }
  return true;
}

void add_error(const std::string& what) {
  std::lock_guard<std::mutex> lock(errors_mutex);
  if (error_list.size() < 20) error_list.push_back(what);
}

std::vector<std::string> take_errors() {
  std::lock_guard<std::mutex> lock(errors_mutex);
  std::vector<std::string> out;
  out.swap(error_list);
  return out;
}

}  // namespace wave_model
