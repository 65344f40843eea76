// Step 08, one process per GPU: the nccl variant of step08_multi_grid.cu the way real programs
// run it (MPI codes, PyTorch's distributed training): each process drives one GPU with its own
// communicator (ncclCommInitRank). Each rank reduces its shard with step 07's grid_sync
// kernel (shard_sum.cuh) into a device scalar, then ncclAllReduce of the K scalars: every
// rank gets the total (checked bitwise equal on all ranks). Variant nccl_mp; its rows carry
// step08_multi_grid in the CSV's step column, beside the one-process variants they are set
// against. Timed on each rank's own clock (common/nccl_ranks.cuh): rank 0 writes the row.
#include <cstdio>
#include <string>
#include <vector>

#include "nccl_ranks.cuh"
#include "shard_sum.cuh"
#include "variant_list.cuh"

static const char* kStep = "step08_nccl_ranks";
[[maybe_unused]] static const char* kCsvStep = "step08_multi_grid";  // the step column of its rows
// Its flags beyond the core ones: --rank R --nranks K --id-file PATH, all three required.
static constexpr unsigned kFlags = harness::kRanks;

static const std::vector<harness::VariantName> kVariants = {
    {"nccl_mp", "this rank's shard: grid_sync into a device scalar, then ncclAllReduce over the ranks "
                "(ncclCommInitRank, one process per GPU)", true},
};

// [docs:one-process-per-gpu]
// ---- one process per GPU (NCCL) ----------------------------------------------------------------------
// scripts/nccl_launch.sh K ./step08_nccl_ranks [flags] starts K of these, one per GPU
// (CUDA_VISIBLE_DEVICES=r, so each sees its GPU as device 0). Rank 0 writes ncclGetUniqueId's
// bytes to --id-file (to PATH.tmp, then rename: the others never read half a file); the
// others wait for the file, then all call ncclCommInitRank. Across nodes the same code works
// once every process gets its rank and the id: the file on a shared file system, or, as
// mpirun/torchrun do, rank 0's id broadcast (MPI_Bcast, a TCP store) with rank and size
// from the launcher's environment (OMPI_COMM_WORLD_RANK, SLURM_PROCID, RANK/WORLD_SIZE).
// NCCL then goes over the network between nodes; nothing here is measured across nodes.
// [/docs:one-process-per-gpu]

#if HAVE_NCCL
// [docs:init-communicator]
// ncclCommInitRank synchronizes with the other ranks: it returns once all K have called it
// with the same id (and this process's GPU current, as open_device left it).
static ncclComm_t init_communicator(const harness::Options& opt) {
  ncclUniqueId id{};
  if (opt.rank == 0) {
    harness::require_fresh_id_file(opt.id_file);
    NCCL_CHECK(ncclGetUniqueId(&id));
    harness::write_id_file(opt.id_file, id);
  } else {
    id = harness::wait_for_id_file(opt.id_file);
  }
  ncclComm_t comm{};
  NCCL_CHECK(ncclCommInitRank(&comm, opt.nranks, id, opt.rank));
  return comm;
}
// [/docs:init-communicator]

// This rank's shard of every n, reduced and all-reduced; `small` holds this rank's sum at [16]
// and the total at [0].
template <typename T>
bool rank_dtype(const char* dtype, const harness::Options& opt, harness::Rank& rank) {
  const int R = opt.rank, K = opt.nranks;
  T* out = static_cast<T*>(rank.small);
  bool all_ok = true;
  for (size_t n : opt.sizes) {
    for (size_t offset : opt.offsets) {
      const size_t count = harness::shard_size(n, K, R);
      const T* in = harness::place_input<T>(rank.in, count, offset, opt.seed, rank.stream, harness::shard_begin(n, K, R));
      auto launch = [&] {
        launch_on_shard(reduce_shard<T>, rank.stream, in, count, static_cast<T*>(rank.scratch), out + 16);
        NCCL_CHECK(ncclAllReduce(out + 16, out, 1, harness::nccl_type<T>(), ncclSum, rank.comm, rank.stream));
      };
      all_ok &= rank.check_and_time<T>(kCsvStep, "nccl_mp", dtype, n, offset, launch);
    }
  }
  return all_ok;
}
#endif

int main(int argc, char** argv) {
  harness::turn_off_nvls(kStep);
  harness::Options opt;
  const int usage = harness::parse_flags(argc, argv, kStep, kFlags, kVariants, opt, [](const harness::Options& o) {
    if (!o.help && o.rank < 0)
      throw harness::UsageError("--rank: missing (one rank of K processes: scripts/nccl_launch.sh K ./" +
                                std::string(kStep) + " [flags] starts them)");
  });
  if (usage >= 0) return usage;
  if (opt.help) {
    std::printf("%s: one rank of step 08's sum over K GPUs, one process per GPU (NCCL: %s); start K of them with\n"
                "scripts/nccl_launch.sh K ./%s [flags]. ", kStep, HAVE_NCCL ? "built in" : "not found at configure time",
                kStep);
    harness::print_variant_list(kVariants);
    std::printf("%s", harness::usage_text(kFlags).c_str());
    return 0;
  }
  const std::string who = std::string(kStep) + ": rank " + std::to_string(opt.rank);
  return harness::exit_code_of(who.c_str(), [&] {
    if (int code = harness::open_device(opt.device, kStep); code >= 0) return code;
#if !HAVE_NCCL
    std::printf("%s: needs NCCL, and this build has none; skipping.\n", kStep);
    return 77;
#else
    size_t max_shard = 0;
    for (size_t n : opt.sizes) max_shard = std::max(max_shard, harness::shard_size(n, opt.nranks, opt.rank));
    harness::Rank rank(opt, init_communicator(opt), max_shard);
    if (!opt.check_only) rank.allreduce_cost();
    const bool ok = harness::for_each_dtype(opt, [&](auto zero, const char* dtype) {
      return rank_dtype<decltype(zero)>(dtype, opt, rank);
    });
    rank.finish();
    return harness::verdict_code(who.c_str(), ok);
#endif
  });
}
