// Peer access for the variants that reach another GPU's memory from a kernel (step 08's
// peer_atomic and peer_barrier): every GPU must reach GPU 0's memory with native atomics.
#pragma once

#include <string>

#include "multi_gpu.cuh"

namespace harness {

struct PeerAccess {
  bool ok = false;
  std::string why_not;  // why the peer variants are skipped
};

// Prints every link (cudaDeviceGetP2PAttribute), and where every GPU reaches GPU 0 with
// native atomics enables peer access between every pair that supports it.
inline PeerAccess setup_peers(MultiGpu& mg) {
  const int K = mg.size();
  PeerAccess p;
  std::printf("peer links (cudaDeviceGetP2PAttribute; run nvidia-smi topo -m for the link type):\n");
  p.ok = true;
  for (int a = 0; a < K; ++a)
    for (int b = 0; b < K; ++b) {
      if (a == b) continue;
      const PeerLink l = peer_link(mg[a].device, mg[b].device);
      std::printf("  GPU %d -> GPU %d: access %s, native atomics %s, performance rank %d\n", mg[a].device,
                  mg[b].device, l.access ? "yes" : "no", l.native_atomics ? "yes" : "no", l.perf_rank);
      if (b == 0 && (!l.access || !l.native_atomics) && p.ok) {
        p.ok = false;
        p.why_not = "GPU " + std::to_string(mg[a].device) + " cannot " + (l.access ? "do native atomics on" : "access") +
                    " GPU " + std::to_string(mg[0].device) + "'s memory (peer access)";
      }
    }
  if (!p.ok) return p;
  for (int a = 0; a < K; ++a)
    for (int b = 0; b < K; ++b) {
      if (a == b) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, mg[a].device, mg[b].device));
      if (!can) continue;  // only a -> 0 is needed, checked above
      mg.use(a);
      const cudaError_t e = cudaDeviceEnablePeerAccess(mg[b].device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUDA_CHECK(e);
    }
  mg.use(0);
  return p;
}

}  // namespace harness
