// Copies through the GPU runtimes (spec/copies.md CPY-*) against the fake CUDA driver and HIP
// runtime (tests/fakes), which dlbridge loads by path through its real backends: their
// "device memory" is host memory in a range they report as device memory, so every copy can
// be checked byte by byte, and their logs show each runtime call.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/testing.h"
#include "fake_runtime.h"

using dlbridge::CopyOptions;
using dlbridge::CopyTo;
using dlbridge::ErrorCode;
using dlbridge::GpuRuntime;
using dlbridge::Tensor;
using dlbridge::TensorLayout;
using namespace dlbtest;

namespace {

constexpr bool kCudaBuilt = DLBRIDGE_TEST_WITH_CUDA != 0;
constexpr bool kHipBuilt = DLBRIDGE_TEST_WITH_HIP != 0;

bool Aligned(const Tensor& t) { return t.descriptor.GetPointer() % 256 == 0; }

const float* Floats(const Tensor& t) {
  return reinterpret_cast<const float*>(static_cast<intptr_t>(t.descriptor.GetPointer()));
}

// A non-owning view of `bytes` bytes at `pointer` in `space`, on `device`, laid out as `layout`.
Tensor View(int64_t pointer, int64_t bytes, const char* space, DLDevice device,
            TensorLayout layout) {
  Tensor t;
  t.descriptor.Set(pointer, bytes, space);
  t.layout = std::move(layout);
  t.device = device;
  return t;
}

// 0, 1, 2, ... as float32 in a host buffer.
void Iota(Buffer& buf, int n) {
  for (int i = 0; i < n; ++i) {
    const float v = static_cast<float>(i);
    std::memcpy(buf.bytes + 4 * i, &v, 4);
  }
}

#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
// Floats 0..n-1 copied into new fake device memory (CUDA device 0).
Tensor DeviceIota(int n, DLDevice device = {kDLCUDA, 0}) {
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, n);
  return CopyTo(HostTensor(buf, c, F32({n})), device);
}
#endif

}  // namespace

TEST_CASE("CPY-1 host to host: CopyTo copies what the CPU reads, and refuses other targets") {
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 12);
  // A transposed (3, 4) view: C order of the transpose.
  Tensor t = HostTensor(buf, c, F32({4, 3}, {1, 4}));
  Tensor copy = CopyTo(t, {kDLCPU, 0});
  CHECK(copy.device.device_type == kDLCPU);
  CHECK(std::string(copy.descriptor.GetMemorySpace()) == "host");
  CHECK(copy.layout.IsContiguous());
  CHECK(Aligned(copy));
  const float expected[] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
  CHECK(std::memcmp(Floats(copy), expected, sizeof expected) == 0);
  CHECK(c.calls == 0);  // the source's hold is not touched
  // Pinned and managed memory is read by the host as it is (no runtime is loaded).
  dlbridge::ExportOptions off;
  off.verify_device = dlbridge::DeviceVerification::kOff;
  Tensor managed = View(buf.Address(), 48, "cuda", {kDLCUDAManaged, 0}, F32({12}));
  Tensor from_managed = CopyTo(managed, {kDLCPU, 0}, {}, off);
  CHECK(std::memcmp(Floats(from_managed), buf.bytes, 48) == 0);
  Tensor pinned = View(buf.Address(), 48, "host", {kDLCUDAHost, 0}, F32({12}));
  CHECK(std::memcmp(Floats(CopyTo(pinned, {kDLCPU, 0})), buf.bytes, 48) == 0);
  // Targets CopyTo cannot make, and a device id kDLCPU does not have.
  CHECK_DLB_ERROR(CopyTo(t, {kDLMetal, 0}), ErrorCode::kUnsupportedDevice,
                  "CopyTo: cannot copy to kDLMetal; accepted targets: kDLCPU, kDLCUDA, "
                  "kDLROCM, kDLOneAPI");
  CHECK_DLB_ERROR(CopyTo(t, {kDLCPU, 1}), ErrorCode::kDeviceMismatch,
                  "CopyTo: target kDLCPU device 1 is not a device; kDLCPU is device 0");
  CHECK_DLB_ERROR(CopyTo(t, {kDLCUDA, -1}), ErrorCode::kDeviceMismatch, "target kDLCUDA device -1");
  // A host source has no stream: a producer stream is refused by CheckStreamValue's rule.
  CopyOptions producer;
  producer.producer_stream = 5;
  CHECK_DLB_ERROR(CopyTo(t, {kDLCPU, 0}, producer), ErrorCode::kInvalidArgument,
                  "CopyTo: producer_stream 5 is illegal for kDLCPU");
  CHECK(c.calls == 0);
}

TEST_CASE("CPY-6 every buffer dlbridge allocates is 256-byte aligned") {
  for (int64_t n : {0, 1, 3, 17, 255, 256, 257, 4097}) {
    CAPTURE(n);
    const DLDataType u8{kDLUInt, 8, 1};
    Tensor t = dlbridge::AllocateHostTensor(u8, 1, &n);
    CHECK(Aligned(t));
    const DLDataType i4{kDLInt, 4, 1};
    CHECK(Aligned(dlbridge::AllocateHostTensor(i4, 1, &n)));
  }
  Buffer buf;
  ReleaseCounter c;
  Tensor odd = HostTensor(buf, c, F32({5}, {}, 4));  // element zero at buf + 4
  CHECK(Aligned(dlbridge::CopyToHost(odd)));
  CHECK(Aligned(CopyTo(odd, {kDLCPU, 0})));
  if (!kHaveFakes) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  if (kCudaBuilt) {
    CudaFake cuda;
    Tensor a = CopyTo(odd, {kDLCUDA, 0});
    Tensor b = CopyTo(odd, {kDLCUDA, 0});
    CHECK(Aligned(a));
    CHECK(Aligned(b));
    CHECK(a.descriptor.GetPointer() != b.descriptor.GetPointer());
  }
#endif
}

TEST_CASE("CPY-2 host to device, device to host and device to device through the CUDA driver") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 12);
  // Host to device, contiguous: one copy from element zero, synchronised on the default stream.
  Tensor dev = CopyTo(HostTensor(buf, c, F32({3, 4})), {kDLCUDA, 0});
  CHECK(dev.device.device_type == kDLCUDA);
  CHECK(dev.device.device_id == 0);
  CHECK(std::string(dev.descriptor.GetMemorySpace()) == "cuda");
  CHECK(dev.descriptor.GetSizeInBytes() == 48);
  CHECK_FALSE(dev.stream.has_value());
  std::string log = cuda.Log();
  CHECK(log.find("cuMemAlloc bytes=48 -> dev+0x0\n") != std::string::npos);
  CHECK(log.find("cuMemcpyHtoDAsync dev+0x0 <- host bytes=48 stream=0x1\n"
                 "cuStreamSynchronize stream=0x1\n") != std::string::npos);
  CHECK(std::memcmp(Floats(dev), buf.bytes, 48) == 0);  // the fake's device bytes
  CHECK(cuda.live_allocations() == 1);
  CHECK(cuda.depth() == 0);
  CHECK(cuda.retained() == 1);  // the allocation keeps its primary context
  // Device to host, contiguous, on the caller's stream.
  size_t mark = cuda.Log().size();
  CopyOptions on;
  on.stream = 0x77;
  Tensor back = CopyTo(dev, {kDLCPU, 0}, on);
  CHECK(cuda.Since(mark).find("cuMemcpyDtoHAsync host <- dev+0x0 bytes=48 stream=0x77\n"
                              "cuStreamSynchronize stream=0x77\n") != std::string::npos);
  CHECK(std::memcmp(Floats(back), buf.bytes, 48) == 0);
  CHECK(back.device.device_type == kDLCPU);
  // Device to device on one device.
  Tensor twin = CopyTo(dev, {kDLCUDA, 0});
  CHECK(twin.descriptor.GetPointer() != dev.descriptor.GetPointer());
  CHECK(cuda.Log().find("cuMemcpyDtoDAsync dev+0x100 <- dev+0x0 bytes=48 stream=0x1\n") !=
        std::string::npos);
  CHECK(std::memcmp(Floats(twin), buf.bytes, 48) == 0);
  // Strided device source (the transpose): every reachable byte comes down once, the host
  // gathers, then a GPU target gets the gathered bytes.
  Tensor transposed =
      View(dev.descriptor.GetPointer(), 48, "cuda", {kDLCUDA, 0}, F32({4, 3}, {1, 4}));
  const float expected[] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
  Tensor gathered = CopyTo(transposed, {kDLCPU, 0});
  CHECK(std::memcmp(Floats(gathered), expected, sizeof expected) == 0);
  mark = cuda.Log().size();
  Tensor on_device = CopyTo(transposed, {kDLCUDA, 0});
  log = cuda.Since(mark);
  CHECK(log.find("cuMemcpyDtoHAsync host <- dev+0x0 bytes=48") != std::string::npos);
  CHECK(log.find("cuMemcpyHtoDAsync dev+0x200 <- host bytes=48") != std::string::npos);
  CHECK(std::memcmp(Floats(on_device), expected, sizeof expected) == 0);
  // A reversed (negative stride) slice: the staging starts at the lowest byte reached.
  Tensor reversed =
      View(dev.descriptor.GetPointer() + 44, 4, "cuda", {kDLCUDA, 0}, F32({12}, {-1}));
  reversed.descriptor.Set(dev.descriptor.GetPointer(), 48, "cuda");
  reversed.layout = F32({12}, {-1}, 44);
  Tensor r = CopyTo(reversed, {kDLCPU, 0});
  for (int i = 0; i < 12; ++i) CHECK(Floats(r)[i] == static_cast<float>(11 - i));
  // Strided host source to the device: gathered on the host first.
  Tensor host_t = HostTensor(buf, c, F32({4, 3}, {1, 4}));
  Tensor up = CopyTo(host_t, {kDLCUDA, 0});
  CHECK(std::memcmp(Floats(up), expected, sizeof expected) == 0);
  // CopyToHost takes device memory through the same path.
  Tensor via_host_copy = dlbridge::CopyToHost(transposed);
  CHECK(std::memcmp(Floats(via_host_copy), expected, sizeof expected) == 0);
  // GPU to GPU across devices is refused, naming the way through the host.
  CHECK_DLB_ERROR(CopyTo(dev, {kDLCUDA, 1}), ErrorCode::kUnsupportedDevice,
                  "GPU to GPU copies stay on one device");
  CHECK(cuda.depth() == 0);
#endif
}

TEST_CASE("CPY-2 sub-byte elements cross the device packed, strided ones through staging") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  Buffer buf;
  ReleaseCounter c;
  // 8 int4 elements 0..7 packed little bit-endian: bytes 0x10, 0x32, 0x54, 0x76.
  const unsigned char packed[] = {0x10, 0x32, 0x54, 0x76};
  std::memcpy(buf.bytes, packed, 4);
  const DLDataType i4{kDLInt, 4, 1};
  Tensor dev = CopyTo(HostTensor(buf, c, TensorLayout(i4, {8})), {kDLCUDA, 0});
  CHECK(dev.descriptor.GetSizeInBytes() == 4);
  CHECK(
      std::memcmp(reinterpret_cast<const void*>(static_cast<intptr_t>(dev.descriptor.GetPointer())),
                  packed, 4) == 0);
  // Every second element of the device copy: 0, 2, 4, 6 packed into two bytes.
  Tensor every_other =
      View(dev.descriptor.GetPointer(), 4, "cuda", {kDLCUDA, 0}, TensorLayout(i4, {4}, {2}));
  Tensor down = CopyTo(every_other, {kDLCPU, 0});
  const unsigned char evens[] = {0x20, 0x64};
  CHECK(down.descriptor.GetSizeInBytes() == 2);
  CHECK(std::memcmp(
            reinterpret_cast<const void*>(static_cast<intptr_t>(down.descriptor.GetPointer())),
            evens, 2) == 0);
  Tensor kept = CopyTo(every_other, {kDLCUDA, 0});
  CHECK(std::memcmp(
            reinterpret_cast<const void*>(static_cast<intptr_t>(kept.descriptor.GetPointer())),
            evens, 2) == 0);
#endif
}

TEST_CASE(
    "CPY-3 a device result owns its allocation: freed through the driver once, on any thread") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  {
    Tensor dev = DeviceIota(16);
    CHECK(cuda.live_allocations() == 1);
    // Exported and imported, the allocation still belongs to one hold.
    Tensor again = dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(dev)));
    CHECK(cuda.live_allocations() == 1);
    const size_t mark = cuda.Log().size();
    std::thread([moved = std::move(again)]() mutable { moved = Tensor(); }).join();
    const std::string log = cuda.Since(mark);
    CHECK(Count(log, "cuMemFree dev+0x0\n") == 1);
    CHECK(Count(log, "not allocated") == 0);
    CHECK(Count(log, "cuDevicePrimaryCtxRelease dev0") == 2);  // its context reference too
  }
  CHECK(cuda.live_allocations() == 0);
  CHECK(cuda.retained() == 0);
  CHECK(cuda.depth() == 0);
#endif
}

TEST_CASE("CPY-4 a failed runtime call is named and leaves nothing allocated") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 12);
  Tensor dev = DeviceIota(12);
  Tensor strided = View(dev.descriptor.GetPointer(), 48, "cuda", {kDLCUDA, 0}, F32({4, 3}, {1, 4}));
  struct Case {
    const char* call;
    int direction;  // 0: host to device, 1: device to host, 2: device to device (strided)
  };
  const Case cases[] = {
      {"cuDeviceGet", 0},
      {"cuDevicePrimaryCtxRetain", 0},
      {"cuCtxPushCurrent", 0},
      {"cuMemAlloc", 0},
      {"cuMemcpyHtoDAsync", 0},
      {"cuStreamSynchronize", 0},
      {"cuMemcpyDtoHAsync", 1},
      {"cuStreamSynchronize", 1},
      {"cuMemcpyDtoHAsync", 2},
      {"cuMemcpyHtoDAsync", 2},
      {"cuMemAlloc", 2},
      // Last: the context it could not pop stays current on this thread (as in STR-5).
      {"cuCtxPopCurrent", 0},
  };
  for (const Case& k : cases) {
    CAPTURE(k.call);
    CAPTURE(k.direction);
    const int before = cuda.live_allocations();
    const int retained = cuda.retained();
    cuda.fail(k.call, 2);  // CUDA_ERROR_OUT_OF_MEMORY
    const std::string text = std::string("CopyTo: ") + k.call +
                             " failed: CUDA_ERROR_OUT_OF_MEMORY (kDLCUDA device 0); nothing was "
                             "copied or kept";
    if (k.direction == 0) {
      CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({12})), {kDLCUDA, 0}),
                      ErrorCode::kRuntimeUnavailable, text);
    } else if (k.direction == 1) {
      CHECK_DLB_ERROR(CopyTo(dev, {kDLCPU, 0}), ErrorCode::kRuntimeUnavailable, text);
    } else {
      CHECK_DLB_ERROR(CopyTo(strided, {kDLCUDA, 0}), ErrorCode::kRuntimeUnavailable, text);
    }
    CHECK(cuda.live_allocations() == before);
    CHECK(cuda.retained() == retained);
    CHECK(cuda.depth() == (std::string(k.call) == "cuCtxPopCurrent" ? 1 : 0));
  }
  // A driver without the copy entry points still answers pointer queries and orders streams.
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, DLBRIDGE_TEST_FAKE_CUDA);
  cuda.fail("cuGetProcAddress:cuMemcpyDtoDAsync", 500);
  CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({12})), {kDLCUDA, 0}),
                  ErrorCode::kRuntimeUnavailable, "lacks a driver entry point for copies");
  CHECK(dlbridge::OrderStreams({kDLCUDA, 0}, 0x1234, 1));
#endif
}

TEST_CASE("CPY-3 a result's release balances the primary context even when a pop fails") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  {
    Tensor dev = DeviceIota(4);
    CHECK(cuda.retained() == 1);      // the allocation's reference
    cuda.fail("cuCtxPopCurrent", 2);  // the pop after cuMemFree, when `dev` is released
  }
  CHECK(Count(cuda.Log(), "cuCtxPopCurrent -> error 2 (injected)") == 1);
  CHECK(cuda.live_allocations() == 0);  // cuMemFree ran
  CHECK(cuda.retained() == 0);          // and the allocation's reference was released
#endif
}

TEST_CASE("CPY-5 the copy is ordered after the producer, and may be left pending") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  Tensor dev = DeviceIota(8);
  dev.stream = 0x5000;  // its writes may still be pending there
  size_t mark = cuda.Log().size();
  CopyOptions async;
  async.stream = 0x6000;
  async.synchronous = false;
  Tensor back = CopyTo(dev, {kDLCPU, 0}, async);
  const std::string log = cuda.Since(mark);
  const size_t record = log.find("cuEventRecord ev1 stream=0x5000\n");
  const size_t wait = log.find("cuStreamWaitEvent stream=0x6000 ev1\n");
  const size_t copy = log.find("cuMemcpyDtoHAsync host <- dev+0x0 bytes=32 stream=0x6000\n");
  CHECK(record != std::string::npos);
  CHECK(wait > record);
  CHECK(copy > wait);
  CHECK(Floats(back)[7] == 7.0f);  // the fake copies at once
  // A GPU result is left pending, as asked: its Tensor::stream says where.
  mark = cuda.Log().size();
  Tensor up = CopyTo(back, {kDLCUDA, 0}, async);
  CHECK(Count(cuda.Since(mark), "cuStreamSynchronize") == 0);
  REQUIRE(up.stream.has_value());
  CHECK(*up.stream == 0x6000);
  // options.producer_stream wins over Tensor::stream; -1 orders nothing.
  mark = cuda.Log().size();
  CopyOptions none;
  none.producer_stream = -1;
  (void)CopyTo(dev, {kDLCPU, 0}, none);
  CHECK(Count(cuda.Since(mark), "cuEventRecord") == 0);
  // A host-read source (pinned memory) with a producer: the host waits for that stream.
  Buffer buf;
  Iota(buf, 4);
  Tensor pinned = View(buf.Address(), 16, "host", {kDLCUDAHost, 0}, F32({4}));
  mark = cuda.Log().size();
  CopyOptions pending;
  pending.producer_stream = 0x5000;
  Tensor host = CopyTo(pinned, {kDLCPU, 0}, pending);
  CHECK(cuda.Since(mark).find("cuStreamSynchronize stream=0x5000\n") != std::string::npos);
  CHECK(Floats(host)[3] == 3.0f);
  // Stream values are checked by the protocol's rule; -1 is no stream to copy on.
  CopyOptions bad;
  bad.stream = 0;
  CHECK_DLB_ERROR(CopyTo(dev, {kDLCPU, 0}, bad), ErrorCode::kInvalidArgument,
                  "CopyTo: stream 0 is illegal for kDLCUDA");
  bad.stream = -1;
  CHECK_DLB_ERROR(CopyTo(dev, {kDLCPU, 0}, bad), ErrorCode::kInvalidArgument,
                  "CopyTo: stream -1 is no stream to queue a copy on");
#endif
}

TEST_CASE("CPY-5 a copy to host memory is complete when CopyTo returns, even asked not to wait") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  CudaFake cuda;
  Tensor dev = DeviceIota(8);
  CopyOptions async;
  async.stream = 0x6000;
  async.synchronous = false;
  const size_t mark = cuda.Log().size();
  Tensor back = CopyTo(dev, {kDLCPU, 0}, async);
  // The host reads the result and no stream orders the host: the copy is synchronised and
  // the kDLCPU result carries no stream (before: stream 0x6000, which CopyTo and OrderStreams
  // then refused or ignored for kDLCPU).
  CHECK(cuda.Since(mark).find("cuStreamSynchronize stream=0x6000\n") != std::string::npos);
  CHECK_FALSE(back.stream.has_value());
  CHECK(back.device.device_type == kDLCPU);
  // So it is a valid source, as every host tensor is.
  Tensor again = CopyTo(back, {kDLCUDA, 0});
  Tensor check = CopyTo(again, {kDLCPU, 0});
  CHECK(Floats(check)[7] == 7.0f);
#endif
}

TEST_CASE("CPY-3 HIP: hipMalloc, hipMemcpyAsync and hipFree with the device selected") {
  if (!kHaveFakes || !kHipBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  HipFake hip;
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 6);
  {
    Tensor dev = CopyTo(HostTensor(buf, c, F32({6})), {kDLROCM, 1});
    CHECK(std::string(dev.descriptor.GetMemorySpace()) == "hip");
    CHECK(dev.device.device_type == kDLROCM);
    CHECK(dev.device.device_id == 1);
    CHECK(Aligned(dev));
    const std::string log = hip.Log();
    CHECK(log.find("hipSetDevice 1\nhipMalloc bytes=24 device=1 -> dev+0x0\nhipSetDevice 0\n") !=
          std::string::npos);
    CHECK(log.find("hipMemcpyAsync dev+0x0 <- host bytes=24 kind=1 stream=0x0\n"
                   "hipStreamSynchronize stream=0x0\n") != std::string::npos);
    CHECK(std::memcmp(Floats(dev), buf.bytes, 24) == 0);
    CHECK(hip.current_device() == 0);
    CHECK(hip.live_allocations() == 1);
    hip.fail("hipMemcpyAsync", 2);
    CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({6})), {kDLROCM, 1}),
                    ErrorCode::kRuntimeUnavailable,
                    "CopyTo: hipMemcpyAsync failed: hipErrorOutOfMemory (kDLROCM device 1)");
    CHECK(hip.live_allocations() == 1);
    CHECK(hip.current_device() == 0);
  }
  CHECK(hip.live_allocations() == 0);
  CHECK(Count(hip.Log(), "hipFree dev+0x0\n") == 1);
#endif
}

TEST_CASE("CPY-4 HIP: a failed restore of the caller's device after hipMalloc frees the block") {
  if (!kHaveFakes || !kHipBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  HipFake hip;
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 6);
  hip.fail("hipSetDevice:0", 2);  // the restore of device 0 after hipMalloc on device 1
  CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({6})), {kDLROCM, 1}),
                  ErrorCode::kRuntimeUnavailable,
                  "CopyTo: hipSetDevice (restoring the caller's device) failed: "
                  "hipErrorOutOfMemory (kDLROCM device 1); nothing was copied or kept");
  CHECK(Count(hip.Log(), "hipMalloc bytes=24 device=1 -> dev+0x0\n") == 1);
  CHECK(hip.live_allocations() == 0);
  CHECK(Count(hip.Log(), "hipFree dev+0x0\n") == 1);
#endif
}

TEST_CASE("CPY-7 without a usable runtime a copy fails with the runtime's own error") {
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, "/nonexistent/libcuda.so.1");
  Buffer buf;
  ReleaseCounter c;
  CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({4})), {kDLCUDA, 0}),
                  ErrorCode::kRuntimeUnavailable,
                  kCudaBuilt ? "CopyTo: CUDA: the driver library /nonexistent/libcuda.so.1 is not "
                               "installed"
                             : "DLBRIDGE_WITH_CUDA=OFF");
  dlbridge::ExportOptions off;
  off.verify_device = dlbridge::DeviceVerification::kOff;
  Tensor gpu = View(buf.Address(), 16, "cuda", {kDLCUDA, 0}, F32({4}));
  CHECK_DLB_ERROR(dlbridge::CopyToHost(gpu, off), ErrorCode::kRuntimeUnavailable, "CopyTo: CUDA");
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, nullptr);
  // Level Zero needs its context and device, asked before any runtime is loaded.
  CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({4})), {kDLOneAPI, 0}), ErrorCode::kMissingContext,
                  "CopyTo: the target is Level Zero memory");
  // With handles but no Level Zero driver (or none built), the runtime's error.
  CopyOptions ze;
  int fake_context = 0;
  int fake_device = 0;
  ze.level_zero_context = &fake_context;
  ze.level_zero_device = &fake_device;
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kLevelZero, "/nonexistent/libze_loader.so.1");
  try {
    (void)CopyTo(HostTensor(buf, c, F32({4})), {kDLOneAPI, 0}, ze);
    FAIL("CopyTo to Level Zero without a driver succeeded");
  } catch (const dlbridge::Error& e) {
    CHECK(std::string(e.what()).find("CopyTo: Level Zero") != std::string::npos);
  }
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kLevelZero, nullptr);
}

#if defined(DLBRIDGE_TEST_FAKE_LEVEL_ZERO) && defined(DLBRIDGE_TEST_FAKE_CUDA) && \
    defined(DLBRIDGE_TEST_FAKE_HIP)
TEST_CASE("CPY-2 Level Zero: zeMemAllocDevice and a synchronous immediate command list") {
  if (DLBRIDGE_TEST_WITH_LEVEL_ZERO == 0) return;
  Fake ze(GpuRuntime::kLevelZero, DLBRIDGE_TEST_FAKE_LEVEL_ZERO);
  auto device_of = ze.Get<fake_driver_level_zero_device_fn>("fake_driver_level_zero_device");
  auto lists = ze.Get<fake_driver_live_command_lists_fn>("fake_driver_live_command_lists");
  int context = 0;  // any non-null handle: the fake checks only that one is given
  CopyOptions options;
  options.level_zero_context = &context;
  options.level_zero_device = device_of();
  options.synchronous = false;  // Level Zero copies complete before CopyTo returns anyway
  dlbridge::ExportOptions handles;
  handles.level_zero_context = &context;
  handles.level_zero_device = device_of();
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 12);
  {
    Tensor dev = CopyTo(HostTensor(buf, c, F32({3, 4})), {kDLOneAPI, 0}, options);
    CHECK(std::string(dev.descriptor.GetMemorySpace()) == "level_zero");
    CHECK(dev.device.device_type == kDLOneAPI);
    CHECK(Aligned(dev));
    CHECK_FALSE(dev.stream.has_value());
    CHECK(std::memcmp(Floats(dev), buf.bytes, 48) == 0);
    const std::string log = ze.Log();
    CHECK(log.find("zeMemAllocDevice size=48 alignment=256 -> dev+0x0\n") != std::string::npos);
    CHECK(log.find("zeCommandListCreateImmediate -> list\n"
                   "zeCommandListAppendMemoryCopy dev+0x0 <- host size=48\n"
                   "zeCommandListDestroy list\n") != std::string::npos);
    // Down again, strided: the reachable bytes come down, the host gathers.
    Tensor t =
        View(dev.descriptor.GetPointer(), 48, "level_zero", {kDLOneAPI, 0}, F32({4, 3}, {1, 4}));
    Tensor back = CopyTo(t, {kDLCPU, 0}, options, handles);
    const float expected[] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    CHECK(std::memcmp(Floats(back), expected, sizeof expected) == 0);
    // A failed append destroys its list and frees the allocation.
    ze.fail("zeCommandListAppendMemoryCopy", 0x70000002);
    CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({3, 4})), {kDLOneAPI, 0}, options),
                    ErrorCode::kRuntimeUnavailable,
                    "CopyTo: zeCommandListAppendMemoryCopy failed: ze_result_t 0x70000002 "
                    "(kDLOneAPI device 0)");
    CHECK(ze.live_allocations() == 1);
    CHECK(lists() == 0);
  }
  CHECK(ze.live_allocations() == 0);  // zeMemFree ran once, when the last hold dropped
  CHECK(Count(ze.Log(), "zeMemFree dev+0x0\n") == 1);
  CHECK(lists() == 0);
}

TEST_CASE("CPY-1 a Level Zero target's id is the index of the device the copy allocates on") {
  if (DLBRIDGE_TEST_WITH_LEVEL_ZERO == 0) return;
  Fake ze(GpuRuntime::kLevelZero, DLBRIDGE_TEST_FAKE_LEVEL_ZERO);
  auto device_of = ze.Get<fake_driver_level_zero_device_fn>("fake_driver_level_zero_device");
  int context = 0;
  CopyOptions options;
  options.level_zero_context = &context;
  options.level_zero_device = device_of();  // the fake's one root device: index 0
  Buffer buf;
  ReleaseCounter c;
  Iota(buf, 4);
  CHECK_DLB_ERROR(CopyTo(HostTensor(buf, c, F32({4})), {kDLOneAPI, 5}, options),
                  ErrorCode::kDeviceMismatch,
                  "CopyTo: target kDLOneAPI device 5 is not the Level Zero device the copy "
                  "allocates on (CopyOptions::level_zero_device or the registered one), which "
                  "is device 0");
  CHECK(ze.live_allocations() == 0);
  CHECK(Count(ze.Log(), "zeMemAllocDevice") == 0);
  // The same device by its index is copied to.
  Tensor dev = CopyTo(HostTensor(buf, c, F32({4})), {kDLOneAPI, 0}, options);
  CHECK(dev.device.device_id == 0);
}
#endif
