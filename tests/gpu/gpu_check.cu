// GPU check (spec/device-map.md GPU-*): on a machine with an NVIDIA GPU, allocates device,
// pinned, registered-host, managed and pool memory, exports each as "cuda" without a device
// id, imports it back, and checks what the CUDA backend resolved. Then the race case
// (spec/streams.md STR-9): a slow writer on a non-blocking stream, the buffer handed over
// through dlbridge with OrderStreams, a copy on another stream that must see the final values.
// Prints summary tables and exits non-zero on any failure (2 when there is no GPU at all).
// Built by tests/gpu/run.sh, with nvcc (the slow writer is a kernel) or with a C++ compiler
// against the CUDA runtime (the slow writer is a sleeping host function, then a memset).
//
//   gpu_check                 every check, the race case ordered by OrderStreams
//   DLBRIDGE_GPU_RACE_ORDERING=off gpu_check --race-only
//                             the race case alone with the ordering left out: it must see
//                             stale values (exit 0), else it says "race not observed, check
//                             inconclusive" (exit 3)
#include <cuda_runtime.h>
#include <dlbridge/dlbridge.h>
#include <dlbridge/testing.h>  // testing/include: PointerQueryCount

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using dlbridge::ErrorCode;
using dlbridge::PointerKind;

struct Row {
  std::string name;
  std::string kind;  // what QueryPointer said
  int ordinal = -1;
  std::string exported;  // device type and id
  std::string imported;  // memory space and device after FromDLPack
  std::string checks;    // negative checks that ran
  bool ok = true;
  std::string why;
};

std::vector<Row> g_rows;

const char* KindName(PointerKind k) {
  switch (k) {
    case PointerKind::kUnknown: return "unknown";
    case PointerKind::kUnregisteredHost: return "unregistered-host";
    case PointerKind::kPinnedHost: return "pinned-host";
    case PointerKind::kDevice: return "device";
    case PointerKind::kManaged: return "managed";
  }
  return "?";
}

std::string DeviceText(DLDevice d) {
  return std::string(dlbridge::DeviceTypeName(d.device_type)) + ":" + std::to_string(d.device_id);
}

void Fail(Row& row, const std::string& why) {
  row.ok = false;
  if (!row.why.empty()) row.why += "; ";
  row.why += why;
}

#define CUDA_OR_DIE(call)                                                        \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                     \
      std::printf("gpu_check: FAIL: %s: %s (%s)\n", #call, cudaGetErrorName(e_), \
                  cudaGetErrorString(e_));                                       \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

// A producer-side DLPack tensor over `data` whose deleter counts its calls.
struct Producer {
  DLManagedTensorVersioned managed{};
  int64_t shape[1] = {256};
  int64_t strides[1] = {1};
  int deletes = 0;
  Producer(void* data, DLDevice device) {
    managed.version = {1, DLPACK_MINOR_VERSION};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deletes;
    };
    DLTensor& t = managed.dl_tensor;
    t.data = data;
    t.device = device;
    t.ndim = 1;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
    t.strides = strides;
  }
};

// Imports a hand-built tensor and expects `code` (0 = success).
bool ImportExpect(void* data, DLDevice device, dlbridge::DeviceVerification verify, int code,
                  std::string* what) {
  Producer p(data, device);
  dlbridge::ImportOptions io;
  io.verify_device = verify;
  int got = 0;
  try {
    dlbridge::Tensor t = dlbridge::FromDLPack(&p.managed, io);
  } catch (const dlbridge::Error& e) {
    got = static_cast<int>(e.code());
    *what = e.what();
  }
  if (p.deletes != 1) {
    *what = "deleter ran " + std::to_string(p.deletes) + " times";
    return false;
  }
  return got == code;
}

// The main case: a 1 KiB buffer described as "cuda" without a device id.
void Check(const char* name, void* pointer, PointerKind expectKind, int expectOrdinal,
           DLDevice expectExport, const char* expectSpace) {
  Row row;
  row.name = name;
  try {
    const dlbridge::PointerInfo info =
        dlbridge::QueryPointer(dlbridge::MemorySpace::kCuda, pointer);
    row.kind = KindName(info.kind);
    row.ordinal = info.device_ordinal;
    if (info.kind != expectKind) Fail(row, std::string("kind: expected ") + KindName(expectKind));
    if (expectOrdinal >= 0 && info.device_ordinal != expectOrdinal) {
      Fail(row, "ordinal: expected " + std::to_string(expectOrdinal));
    }
    dlbridge::Tensor t;
    t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer)), 1024, "cuda");
    t.layout = dlbridge::TensorLayout({kDLFloat, 32, 1}, {256});
    dlbridge::ExportOptions unowned;  // EXP-3: the check frees the memory after the deleter
    unowned.allow_unowned = true;
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t), unowned);
    row.exported = DeviceText(m->dl_tensor.device);
    if (m->dl_tensor.device.device_type != expectExport.device_type ||
        m->dl_tensor.device.device_id != expectExport.device_id) {
      Fail(row, "export: expected " + DeviceText(expectExport));
    }
    if (m->dl_tensor.data != pointer) Fail(row, "export: data pointer changed");
    dlbridge::Tensor back = dlbridge::FromDLPack(m);  // default verification: runs here
    row.imported = std::string(back.descriptor.GetMemorySpace()) + " " + DeviceText(back.device);
    if (std::strcmp(back.descriptor.GetMemorySpace(), expectSpace) != 0) {
      Fail(row, std::string("import: expected space ") + expectSpace);
    }
    if (back.descriptor.GetPointer() != static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer))) {
      Fail(row, "import: pointer changed");
    }
    // Negative checks: contradicting labels are caught, and pass unchecked with kOff.
    std::string what;
    const auto on = dlbridge::DeviceVerification::kWhereAvailable;
    const auto off = dlbridge::DeviceVerification::kOff;
    if (expectKind == PointerKind::kDevice) {
      const DLDevice wrong{kDLCUDA, expectOrdinal + 1};
      if (!ImportExpect(pointer, wrong, on, static_cast<int>(ErrorCode::kDeviceMismatch), &what)) {
        Fail(row, "wrong ordinal not rejected: " + what);
      }
      const uint64_t before = dlbridge::testing::PointerQueryCount();
      if (!ImportExpect(pointer, wrong, off, 0, &what)) Fail(row, "kOff rejected: " + what);
      if (dlbridge::testing::PointerQueryCount() != before) Fail(row, "kOff ran a query");
      if (!ImportExpect(pointer, {kDLCUDAManaged, 0}, on,
                        static_cast<int>(ErrorCode::kDeviceMismatch), &what)) {
        Fail(row, "device memory as kDLCUDAManaged not rejected: " + what);
      }
      row.checks = "wrong-id, kOff, as-managed";
    } else if (expectKind == PointerKind::kPinnedHost) {
      if (!ImportExpect(pointer, {kDLCUDA, 0}, on, static_cast<int>(ErrorCode::kDeviceMismatch),
                        &what)) {
        Fail(row, "pinned as kDLCUDA not rejected: " + what);
      }
      if (!ImportExpect(pointer, {kDLCUDAHost, 0}, on, 0, &what)) Fail(row, "kDLCUDAHost: " + what);
      row.checks = "as-kDLCUDA, as-kDLCUDAHost";
    } else if (expectKind == PointerKind::kManaged) {
      if (!ImportExpect(pointer, {kDLCUDA, 0}, on, 0, &what))
        Fail(row, "managed as kDLCUDA: " + what);
      if (!ImportExpect(pointer, {kDLCUDAManaged, 0}, on, 0, &what))
        Fail(row, "as managed: " + what);
      row.checks = "as-kDLCUDA, as-kDLCUDAManaged";
    } else if (expectKind == PointerKind::kUnknown) {
      if (!ImportExpect(pointer, {kDLCUDA, 0}, on, static_cast<int>(ErrorCode::kUnknownPointer),
                        &what)) {
        Fail(row, "unknown pointer as kDLCUDA not rejected: " + what);
      }
      row.checks = "as-kDLCUDA";
    }
  } catch (const dlbridge::Error& e) {
    if (expectKind == PointerKind::kUnknown && e.code() == ErrorCode::kUnknownPointer) {
      row.exported = "rejected (kUnknownPointer)";  // what an unregistered pointer must give
      std::string what;
      if (!ImportExpect(pointer, {kDLCUDA, 0}, dlbridge::DeviceVerification::kWhereAvailable,
                        static_cast<int>(ErrorCode::kUnknownPointer), &what)) {
        Fail(row, "unknown pointer as kDLCUDA not rejected: " + what);
      }
      row.checks = "as-kDLCUDA";
    } else {
      Fail(row, std::string(dlbridge::ErrorCodeName(e.code())) + ": " + e.what());
    }
  }
  g_rows.push_back(row);
}

// Data written through the CUDA runtime is what the imported pointer reads: zero copy.
void CheckData(int device) {
  Row row;
  row.name = "data round trip (device " + std::to_string(device) + ")";
  CUDA_OR_DIE(cudaSetDevice(device));
  void* p = nullptr;
  CUDA_OR_DIE(cudaMalloc(&p, 1024));
  CUDA_OR_DIE(cudaMemset(p, 0x5a, 1024));
  try {
    dlbridge::Tensor t;
    t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(p)), 1024, "cuda");
    t.layout = dlbridge::TensorLayout({kDLUInt, 8, 1}, {1024});
    dlbridge::ExportOptions unowned;  // EXP-3: cudaFree below, after the import is dropped
    unowned.allow_unowned = true;
    dlbridge::Tensor back =
        dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(t), unowned));
    row.exported = DeviceText(back.device);
    row.imported = back.descriptor.GetMemorySpace();
    std::vector<unsigned char> host(1024);
    CUDA_OR_DIE(cudaMemcpy(
        host.data(), reinterpret_cast<void*>(static_cast<intptr_t>(back.descriptor.GetPointer())),
        1024, cudaMemcpyDeviceToHost));
    for (unsigned char b : host) {
      if (b != 0x5a) {
        Fail(row, "bytes differ");
        break;
      }
    }
    if (back.device.device_id != device) Fail(row, "device id");
    row.kind = "device";
    row.ordinal = device;
    row.checks = "memset/memcpy";
  } catch (const dlbridge::Error& e) {
    Fail(row, e.what());
  }
  CUDA_OR_DIE(cudaFree(p));
  g_rows.push_back(row);
}

// ---- The race case (spec/streams.md STR-9) ----

constexpr int kRaceValue = 0x2a2a2a2a;             // what the slow writer leaves in every element
constexpr long long kRaceDelayNs = 200000000LL;    // how long it takes: 200 ms before it writes
constexpr size_t kRaceElements = size_t{1} << 22;  // 16 MiB of int32

#ifdef __CUDACC__
// Spins on the global timer, then writes: the buffer is stale for kRaceDelayNs after launch.
__global__ void SlowFill(int* data, size_t n, int value, long long delay_ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (static_cast<long long>(now - start) < delay_ns);
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = value;
  }
}
#else
void CUDART_CB SleepOnStream(void*) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(kRaceDelayNs));
}
#endif

// Queues the slow write of `data` on `stream` and returns at once.
void QueueSlowWrite(int* data, size_t n, cudaStream_t stream) {
#ifdef __CUDACC__
  SlowFill<<<64, 256, 0, stream>>>(data, n, kRaceValue, kRaceDelayNs);
  CUDA_OR_DIE(cudaGetLastError());
#else
  CUDA_OR_DIE(cudaLaunchHostFunc(stream, SleepOnStream, nullptr));
  CUDA_OR_DIE(cudaMemsetAsync(data, 0x2a, n * sizeof(int), stream));  // 0x2a in every byte
#endif
}

struct RaceRow {
  std::string name;
  std::string writer;
  std::string ordering;  // what OrderStreams returned, or "off"
  size_t stale = 0;      // elements the consumer saw before the writer's value
  size_t after = 0;      // elements still not final once the producer stream is drained
  std::string verdict;
  bool ok = true;
};

// One exchange: the producer's slow write is pending on a non-blocking stream when the buffer
// crosses dlbridge; the consumer copies it on another non-blocking stream and counts the
// elements that do not hold the final value yet.
RaceRow RunRace(bool ordering) {
  RaceRow row;
  row.name = ordering ? "slow writer -> dlbridge (OrderStreams) -> copy"
                      : "slow writer -> dlbridge (ordering OFF) -> copy";
#ifdef __CUDACC__
  row.writer = "kernel, 200 ms";
#else
  row.writer = "host func 200 ms + memset";
#endif
  CUDA_OR_DIE(cudaSetDevice(0));
  cudaStream_t producer = nullptr, consumer = nullptr;
  CUDA_OR_DIE(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CUDA_OR_DIE(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  const size_t bytes = kRaceElements * sizeof(int);
  int* data = nullptr;
  int* host = nullptr;
  CUDA_OR_DIE(cudaMalloc(&data, bytes));
  CUDA_OR_DIE(cudaMallocHost(&host, bytes));
  CUDA_OR_DIE(cudaMemset(data, 0, bytes));
  CUDA_OR_DIE(cudaDeviceSynchronize());  // the stale value, 0, is in place everywhere

  QueueSlowWrite(data, kRaceElements, producer);
  try {
    // The producer's side of a bridge: the tensor says which stream its pending write is on.
    dlbridge::Tensor t;
    t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(data)),
                     static_cast<int64_t>(bytes), "cuda");
    t.layout = dlbridge::TensorLayout({kDLInt, 32, 1}, {static_cast<int64_t>(kRaceElements)});
    t.device = {kDLCUDA, 0};
    t.stream = static_cast<int64_t>(reinterpret_cast<intptr_t>(producer));
    const int64_t consumer_value = static_cast<int64_t>(reinterpret_cast<intptr_t>(consumer));
    if (ordering) {
      row.ordering =
          dlbridge::OrderStreams(t.device, *t.stream, consumer_value) ? "ordered" : "NOT ordered";
      if (row.ordering != "ordered") row.ok = false;
    } else {
      row.ordering = "off";
    }
    dlbridge::ExportOptions unowned;  // EXP-3: freed below, after the deleter
    unowned.allow_unowned = true;
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t), unowned);
    // The consumer: reads on its own stream, right away.
    CUDA_OR_DIE(cudaMemcpyAsync(host, m->dl_tensor.data, bytes, cudaMemcpyDeviceToHost, consumer));
    CUDA_OR_DIE(cudaStreamSynchronize(consumer));
    for (size_t i = 0; i < kRaceElements; ++i) row.stale += host[i] != kRaceValue ? 1 : 0;
    m->deleter(m);
  } catch (const dlbridge::Error& e) {
    row.ok = false;
    row.verdict = std::string("FAIL: ") + dlbridge::ErrorCodeName(e.code()) + ": " + e.what();
  }
  // The writer does finish: what it leaves is the final value (else the check proves nothing).
  CUDA_OR_DIE(cudaStreamSynchronize(producer));
  CUDA_OR_DIE(cudaMemcpy(host, data, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < kRaceElements; ++i) row.after += host[i] != kRaceValue ? 1 : 0;
  if (row.after != 0) {
    row.ok = false;
    if (row.verdict.empty()) row.verdict = "FAIL: the writer did not write the final value";
  }
  if (row.verdict.empty()) {
    if (ordering) {
      row.ok = row.ok && row.stale == 0;
      row.verdict = row.stale == 0 ? "PASS: consumer saw the final values"
                                   : "FAIL: consumer read before the writer finished";
    } else {
      row.verdict = row.stale != 0 ? "race observed: the check can see a race"
                                   : "race not observed, check inconclusive";
    }
  }
  CUDA_OR_DIE(cudaFreeHost(host));
  CUDA_OR_DIE(cudaFree(data));
  CUDA_OR_DIE(cudaStreamDestroy(producer));
  CUDA_OR_DIE(cudaStreamDestroy(consumer));
  return row;
}

// Runs the race case (ordered unless DLBRIDGE_GPU_RACE_ORDERING=off) and prints its table.
// Returns 0 (ordered: the consumer saw the final values; unordered: the race was seen),
// 3 (unordered, no race seen: inconclusive) or 1 (failure).
int RaceCase() {
  const char* env = std::getenv("DLBRIDGE_GPU_RACE_ORDERING");
  const bool ordering = env == nullptr || std::strcmp(env, "off") != 0;
  const RaceRow r = RunRace(ordering);
  std::printf("\n| %-48s | %-26s | %-11s | %-17s | %-14s | %s\n", "race case", "writer",
              "OrderStreams", "stale at consumer", "stale at end", "verdict");
  std::printf("|%s|%s|%s|%s|%s|%s\n", std::string(50, '-').c_str(), std::string(28, '-').c_str(),
              std::string(13, '-').c_str(), std::string(19, '-').c_str(),
              std::string(16, '-').c_str(), std::string(20, '-').c_str());
  const std::string stale = std::to_string(r.stale) + "/" + std::to_string(kRaceElements);
  const std::string after = std::to_string(r.after) + "/" + std::to_string(kRaceElements);
  std::printf("| %-48s | %-26s | %-11s | %-17s | %-14s | %s\n", r.name.c_str(), r.writer.c_str(),
              r.ordering.c_str(), stale.c_str(), after.c_str(), r.verdict.c_str());
  std::printf("gpu_check: race case (%s): %s\n", ordering ? "ordered" : "ordering off",
              r.verdict.c_str());
  if (!r.ok) return 1;
  if (!ordering && r.stale == 0) return 3;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool race_only = argc > 1 && std::strcmp(argv[1], "--race-only") == 0;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("gpu_check: FAIL: no CUDA device (%s: %s)\n", cudaGetErrorName(e),
                cudaGetErrorString(e));
    return 2;
  }
  const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(dlbridge::GpuRuntime::kCuda);
  std::printf(
      "gpu_check: %d CUDA device(s); dlbridge CUDA backend: status %d, library %s, "
      "driver version %d%s%s\n",
      count, static_cast<int>(info.status), info.library.c_str(), info.version,
      info.message.empty() ? "" : "; ", info.message.c_str());
  if (info.status != dlbridge::RuntimeStatus::kReady) {
    std::printf(
        "gpu_check: FAIL: the CUDA backend is not ready although the CUDA runtime sees a "
        "device\n");
    return 1;
  }
  if (race_only) return RaceCase();
  const int last = count - 1;
  CUDA_OR_DIE(cudaSetDevice(0));

  void* device = nullptr;
  CUDA_OR_DIE(cudaMalloc(&device, 1024));
  Check("cudaMalloc (device 0)", device, PointerKind::kDevice, 0, {kDLCUDA, 0}, "cuda");

  void* pinned = nullptr;
  CUDA_OR_DIE(cudaHostAlloc(&pinned, 1024, cudaHostAllocDefault));
  Check("cudaHostAlloc (pinned)", pinned, PointerKind::kPinnedHost, -1, {kDLCUDAHost, 0}, "host");

  void* registered = std::malloc(1 << 16);
  CUDA_OR_DIE(cudaHostRegister(registered, 1 << 16, cudaHostRegisterDefault));
  Check("malloc + cudaHostRegister", registered, PointerKind::kPinnedHost, -1, {kDLCUDAHost, 0},
        "host");

  void* managed = nullptr;
  CUDA_OR_DIE(cudaMallocManaged(&managed, 1024));
  Check("cudaMallocManaged", managed, PointerKind::kManaged, -1, {kDLCUDAManaged, 0}, "cuda");

  cudaStream_t stream = nullptr;
  CUDA_OR_DIE(cudaStreamCreate(&stream));
  void* pool = nullptr;
  CUDA_OR_DIE(cudaMallocAsync(&pool, 1024, stream));
  CUDA_OR_DIE(cudaStreamSynchronize(stream));
  Check("cudaMallocAsync (pool, NULL context)", pool, PointerKind::kDevice, 0, {kDLCUDA, 0},
        "cuda");

  void* pageable = std::malloc(1024);
  Check("malloc (pageable, unknown to CUDA)", pageable, PointerKind::kUnknown, -1, {kDLCUDA, 0},
        "cuda");

  // Another thread, with no context made current on it: the ordinal still comes from the pointer.
  std::thread([&] {
    Check("cudaMalloc, queried from a new thread", device, PointerKind::kDevice, 0, {kDLCUDA, 0},
          "cuda");
  }).join();

  void* other = nullptr;
  if (last > 0) {
    CUDA_OR_DIE(cudaSetDevice(last));
    CUDA_OR_DIE(cudaMalloc(&other, 1024));
    const std::string name = "cudaMalloc (device " + std::to_string(last) + ")";
    Check(name.c_str(), other, PointerKind::kDevice, last, {kDLCUDA, last}, "cuda");
    CUDA_OR_DIE(cudaSetDevice(0));
  }
  CheckData(0);
  if (last > 0) CheckData(last);

  std::printf("\n| %-40s | %-17s | %-3s | %-26s | %-20s | %-30s | %-4s |\n", "allocation",
              "query kind", "ord", "exported as", "imported as", "checks", "ok");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|\n", std::string(42, '-').c_str(),
              std::string(19, '-').c_str(), std::string(5, '-').c_str(),
              std::string(28, '-').c_str(), std::string(22, '-').c_str(),
              std::string(32, '-').c_str(), std::string(6, '-').c_str());
  int failures = 0;
  for (const Row& r : g_rows) {
    std::printf("| %-40s | %-17s | %3d | %-26s | %-20s | %-30s | %-4s |\n", r.name.c_str(),
                r.kind.c_str(), r.ordinal, r.exported.c_str(), r.imported.c_str(), r.checks.c_str(),
                r.ok ? "PASS" : "FAIL");
    if (!r.ok) {
      std::printf("|   -> %s\n", r.why.c_str());
      ++failures;
    }
  }
  std::printf("\ngpu_check: %zu rows, %d failed; %llu pointer queries\n", g_rows.size(), failures,
              static_cast<unsigned long long>(dlbridge::testing::PointerQueryCount()));

  cudaFree(device);
  cudaFreeHost(pinned);
  cudaHostUnregister(registered);
  std::free(registered);
  cudaFree(managed);
  cudaFreeAsync(pool, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  std::free(pageable);
  if (other != nullptr) cudaFree(other);
  const int race = RaceCase();
  return failures == 0 && race == 0 ? 0 : 1;
}
