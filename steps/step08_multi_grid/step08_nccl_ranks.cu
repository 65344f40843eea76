// Step 08, one process per GPU: the nccl variant of step08_multi_grid.cu the way real programs
// run it (MPI codes, PyTorch's distributed training): each process drives one GPU with its own
// communicator (ncclCommInitRank). Each rank reduces its shard with step 07's grid_sync
// kernel (shard_sum.cuh) into a device scalar, then ncclAllReduce of the K scalars: every
// rank gets the total (checked bitwise equal on all ranks). Variant nccl_mp; its rows carry
// step08_multi_grid in the CSV's step column, beside the one-process variants they are set
// against. Timed on each rank's own clock (nccl_ranks.cuh, this folder): rank 0 writes the row.
#include <cstdio>
#include <string>
#include <vector>

#include "nccl_ranks.cuh"
#include "shard_sum.cuh"

static const char* kStep = "step08_nccl_ranks";
static const char* kCsvStep = "step08_multi_grid";  // the step column of its rows

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
static ncclComm_t init_communicator(const harness::MultiGpuOptions& opt) {
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

// [docs:nccl-mp]
// This rank's shard into a device scalar (total + 16), then the all-reduce of the K scalars:
// every rank gets the total in *total.
template <typename T>
void nccl_mp(const T* in, size_t count, T* total, const harness::Rank& rank) {
  T* mine = total + 16;
  launch_on_shard(reduce_shard<T>, rank.stream, in, count, static_cast<T*>(rank.scratch), mine);
  NCCL_CHECK(ncclAllReduce(mine, total, 1, harness::nccl_type<T>(), ncclSum, rank.comm, rank.stream));
}
// [/docs:nccl-mp]
#endif

// The harness (nccl_ranks.cuh, beside this file) parses the flags (--rank, --nranks, --id-file required),
// opens this rank's GPU, then runs nccl_mp on every dtype, size and offset; rank 0 writes the rows.
int main(int argc, char** argv) {
  const char* intro = "one rank of step 08's sum over K GPUs, one process per GPU; start K of them with\n"
                      "scripts/nccl_launch.sh K ./step08_nccl_ranks [flags].";
  const harness::VariantName variant{"nccl_mp", "this rank's shard: grid_sync into a device scalar, then ncclAllReduce "
                                                "over the ranks (ncclCommInitRank, one process per GPU)"};
#if HAVE_NCCL
  return harness::run_nccl_rank(argc, argv, kStep, kCsvStep, intro, variant, init_communicator,
                                [](auto in, size_t count, auto total, const harness::Rank& rank) {
                                  nccl_mp(in, count, total, rank);
                                });
#else  // flags and --help as usual, then one line and exit 77
  return harness::run_nccl_rank(argc, argv, kStep, kCsvStep, intro, variant, nullptr, nullptr);
#endif
}
