// NCCL for the programs that use it (step 08): whether the build has it (HAVE_NCCL, set by
// CMake where it found NCCL; HAVE_NCCL_DEVICE_API from NCCL 2.28 on), the error check, the
// element types, and NVLink multicast turned off.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "run_step.cuh"

#ifndef HAVE_NCCL
#define HAVE_NCCL 0
#endif
#if HAVE_NCCL
#include <nccl.h>
#if NCCL_VERSION_CODE >= 22800
// nccl_device.h 2.28.9 has unused parameters (gin__funcs.h): not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop
#define HAVE_NCCL_DEVICE_API 1
#endif
#endif
#ifndef HAVE_NCCL_DEVICE_API
#define HAVE_NCCL_DEVICE_API 0
#endif

namespace harness {

#if HAVE_NCCL
inline void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess && r != ncclInProgress)
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + ncclGetErrorString(r));
}
#define NCCL_CHECK(call) ::harness::check_nccl((call), #call, __FILE__, __LINE__)

template <typename T> ncclDataType_t nccl_type();
template <> inline ncclDataType_t nccl_type<unsigned>() { return ncclUint32; }
template <> inline ncclDataType_t nccl_type<float>() { return ncclFloat32; }
#endif

// Never NVLink multicast (NVLS): set before any NCCL call, in this process and (through the
// environment) in anything it starts.
inline void turn_off_nvls(const char* step) {
  if (const char* v = std::getenv("NCCL_NVLS_ENABLE"); v && std::strcmp(v, "0") != 0)
    std::fprintf(stderr, "%s: note: NCCL_NVLS_ENABLE=%s overridden to 0\n", step, v);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
}

}  // namespace harness
