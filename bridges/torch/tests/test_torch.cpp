// The libtorch bridge (spec/bridges.md, "libtorch": TOR-*). This translation unit includes
// libtorch's C++ API, dlbridge's DLPack 1.x headers and the bridge together (TOR-7): compiling
// it is part of the test.
#include <torch/torch.h>
// doctest after libtorch: its CHECK replaces glog's, which libtorch's headers define.
// clang-format off
#include <dlbridge/dlbridge.h>
#include <dlbridge/torch.h>
#include <doctest/doctest.h>
// clang-format on

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "aten_dlpack_internal.h"
#include "torch_side.h"  // libtorch's own DLPack functions, for TORCH-1 and TORCH-2

// TOR-7: the DLPack header seen here is dlbridge's 1.x, not ATen's 0.6 (which would define
// DLPACK_VERSION and no DLPACK_MAJOR_VERSION).
static_assert(DLPACK_MAJOR_VERSION == 1, "dlbridge's DLPack 1.x header is the one included");
#if defined(DLPACK_VERSION)
#error "ATen/dlpack.h (DLPack 0.6) reached this translation unit"
#endif

namespace {

// Counts a dlbridge descriptor's release calls and the thread of the last one.
struct ReleaseCounter {
  std::atomic<int> calls{0};
  std::thread::id thread;
  static void Release(void* context) {
    auto* self = static_cast<ReleaseCounter*>(context);
    self->thread = std::this_thread::get_id();
    ++self->calls;
  }
};

// A libtorch tensor over `data` whose storage counts its frees in `frees`.
at::Tensor CountedTorchTensor(float* data, std::vector<int64_t> sizes, std::atomic<int>* frees) {
  return torch::from_blob(
      data, sizes, [frees](void*) { ++*frees; }, at::kFloat);
}

// A host dlbridge tensor over `buffer` with a counted release.
dlbridge::Tensor CountedDlbridgeTensor(std::vector<float>& buffer, ReleaseCounter& counter,
                                       dlbridge::TensorLayout layout) {
  dlbridge::Tensor t;
  t.descriptor.Set(buffer.data(), static_cast<int64_t>(buffer.size() * sizeof(float)));
  t.descriptor.SetRelease(&ReleaseCounter::Release, &counter);
  t.layout = std::move(layout);
  return t;
}

std::vector<int64_t> Values(dlbridge::IndexSpan span) { return {span.begin(), span.end()}; }

}  // namespace

TEST_CASE("TOR-1 FromAten shares the storage: element zero, sizes, strides, storage offset") {
  at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  struct Case {
    const char* name;
    at::Tensor view;
  };
  const Case cases[] = {
      {"contiguous", base},
      {"transposed", base.t()},
      {"sliced with an offset", base.slice(0, 1, 3).slice(1, 2, 6)},
      {"stepped", base.slice(1, 1, 6, 2)},
      {"expanded (stride 0)", at::arange(3, at::kFloat).expand({2, 3})},
      {"0-d", base[2][3]},
      {"zero-size, at the end of its storage", base.reshape({24}).slice(0, 24, 24)},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.name));
    const dlbridge::Tensor t = dlbridge::torch::FromAten(c.view);
    const auto storage = reinterpret_cast<intptr_t>(c.view.storage().data_ptr().get());
    CHECK(t.descriptor.GetPointer() == storage);
    // libtorch's data_ptr() is null for a zero-size tensor; element zero is still in storage.
    CHECK(t.Data<float>() == (c.view.numel() == 0 ? reinterpret_cast<float*>(storage) + 24
                                                  : c.view.data_ptr<float>()));
    CHECK(t.descriptor.GetSizeInBytes() == static_cast<int64_t>(c.view.storage().nbytes()));
    CHECK(t.layout.ByteOffset() == static_cast<uint64_t>(c.view.storage_offset()) * 4);
    CHECK(Values(t.layout.Shape()) == c.view.sizes().vec());
    CHECK(Values(t.layout.Strides()) == c.view.strides().vec());
    CHECK(std::string(t.descriptor.GetMemorySpace()) == "host");
    CHECK(t.descriptor.GetOwner() != nullptr);
  }
}

TEST_CASE("TOR-1 the storage is freed exactly when the last of the at::Tensor and the hold drops") {
  std::vector<float> data(6, 1.0f);
  std::atomic<int> frees{0};
  SUBCASE("the at::Tensor first") {
    at::Tensor torchSide = CountedTorchTensor(data.data(), {2, 3}, &frees);
    dlbridge::Tensor t = dlbridge::torch::FromAten(torchSide);
    torchSide = at::Tensor();
    CHECK(frees == 0);
    t.descriptor = dlbridge::MemoryDescriptor();
    CHECK(frees == 1);
  }
  SUBCASE("the dlbridge hold first, then the at::Tensor") {
    at::Tensor torchSide = CountedTorchTensor(data.data(), {2, 3}, &frees);
    { dlbridge::Tensor t = dlbridge::torch::FromAten(torchSide); }
    CHECK(frees == 0);
    torchSide = at::Tensor();
    CHECK(frees == 1);
  }
  SUBCASE("exported on to DLPack: the consumer's deleter is the last") {
    DLManagedTensorVersioned* managed = nullptr;
    {
      at::Tensor torchSide = CountedTorchTensor(data.data(), {2, 3}, &frees);
      managed = dlbridge::ToDLPackVersioned(dlbridge::torch::FromAten(torchSide.t()));
      CHECK(managed->dl_tensor.data == torchSide.data_ptr());
      CHECK(managed->dl_tensor.strides[0] == 1);
      CHECK(managed->dl_tensor.strides[1] == 3);
    }
    CHECK(frees == 0);
    managed->deleter(managed);
    CHECK(frees == 1);
  }
  SUBCASE("dropped on another thread") {
    at::Tensor torchSide = CountedTorchTensor(data.data(), {2, 3}, &frees);
    dlbridge::Tensor t = dlbridge::torch::FromAten(torchSide);
    torchSide = at::Tensor();
    std::thread([held = std::move(t)]() mutable { held = dlbridge::Tensor(); }).join();
    CHECK(frees == 1);
  }
}

namespace {
struct DtypeCase {
  at::ScalarType scalar;
  DLDataType dtype;
};
// What spec/bridges.md TOR-2 lists, row by row.
const DtypeCase kBothName[] = {
    {at::kBool, {kDLBool, 8, 1}},
    {at::kByte, {kDLUInt, 8, 1}},
    {at::kChar, {kDLInt, 8, 1}},
    {at::kShort, {kDLInt, 16, 1}},
    {at::kInt, {kDLInt, 32, 1}},
    {at::kLong, {kDLInt, 64, 1}},
    {at::kHalf, {kDLFloat, 16, 1}},
    {at::kFloat, {kDLFloat, 32, 1}},
    {at::kDouble, {kDLFloat, 64, 1}},
    {at::kBFloat16, {kDLBfloat, 16, 1}},
    {at::kComplexFloat, {kDLComplex, 64, 1}},
    {at::kComplexDouble, {kDLComplex, 128, 1}},
};
}  // namespace

TEST_CASE("TOR-2 every dtype libtorch and DLPack both name goes both ways, zero copy") {
  for (const DtypeCase& c : kBothName) {
    CAPTURE(c10::toString(c.scalar));
    at::Tensor original = at::zeros({3, 2}, c.scalar).t();
    dlbridge::Tensor t = dlbridge::torch::FromAten(original);
    CHECK(dlbridge::SameDataType(t.layout.Dtype(), c.dtype));
    at::Tensor back = dlbridge::torch::ToAten(std::move(t));
    CHECK((back.scalar_type() == c.scalar));
    CHECK(back.data_ptr() == original.data_ptr());
    CHECK(back.strides().vec() == original.strides().vec());
  }
}

TEST_CASE("TOR-2 a dlbridge bool tensor reaches libtorch as bool with its values") {
  std::vector<uint8_t> values = {1, 0, 0, 1};
  ReleaseCounter counter;
  dlbridge::Tensor t;
  t.descriptor.Set(values.data(), 4);
  t.descriptor.SetRelease(&ReleaseCounter::Release, &counter);
  t.layout = dlbridge::TensorLayout({kDLBool, 8, 1}, {2, 2});
  {
    at::Tensor b = dlbridge::torch::ToAten(std::move(t));
    CHECK((b.scalar_type() == at::kBool));
    CHECK(b.data_ptr() == values.data());
    CHECK(b.sum().item<int64_t>() == 2);
    CHECK(b[1][1].item<bool>());
    CHECK(counter.calls == 0);
  }
  CHECK(counter.calls == 1);
}

TEST_CASE("TOR-3 FromAten refuses what it cannot share without a copy, holding nothing") {
  const auto refused = [](const at::Tensor& tensor, dlbridge::ErrorCode code) {
    try {
      (void)dlbridge::torch::FromAten(tensor);
      FAIL("FromAten accepted it");
    } catch (const dlbridge::Error& e) {
      CHECK(e.code() == code);
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refused(at::Tensor(), dlbridge::ErrorCode::kInvalidArgument) ==
        "dlbridge::torch::FromAten: the at::Tensor is undefined (it holds no memory); pass a "
        "defined tensor");
  CHECK(refused(at::eye(3).to_sparse(), dlbridge::ErrorCode::kInvalidArgument) ==
        "dlbridge::torch::FromAten: the tensor's layout is Sparse; only strided (dense) tensors "
        "share their "
        "memory: call to_dense() first");
  CHECK(refused(at::empty({2}, at::device(at::kMeta)), dlbridge::ErrorCode::kUnsupportedDevice) ==
        "dlbridge::torch::FromAten: the tensor is on device meta; accepted: cpu (call .cpu() "
        "first, which copies)");
  CHECK(refused(at::ones({2}, at::kComplexFloat).conj(), dlbridge::ErrorCode::kInvalidArgument) ==
        "dlbridge::torch::FromAten: the tensor has its conjugate bit set, so its memory does not "
        "hold its values; "
        "call resolve_conj() and resolve_neg() first");
  CHECK(refused(at::ones({2}, at::kComplexHalf), dlbridge::ErrorCode::kUnsupportedDtype)
            .find("ComplexHalf has no DLPack dtype") != std::string::npos);
  CHECK(refused(at::_neg_view(at::ones({2})), dlbridge::ErrorCode::kInvalidArgument)
            .find("negative bit set") != std::string::npos);
  const std::string quantized = refused(at::quantize_per_tensor(at::ones({2}), 0.5, 0, at::kQInt8),
                                        dlbridge::ErrorCode::kUnsupportedDtype);
  CHECK(quantized ==
        "dlbridge::torch::FromAten: libtorch's dtype QInt8 has no DLPack dtype; accepted: bool, "
        "uint8, int8, "
        "int16, int32, int64, float16, float32, float64, bfloat16, complex64, complex128");
}

TEST_CASE("TOR-4 ToAten hands memory to libtorch zero copy, the release runs once, at the end") {
  std::vector<float> buffer(9);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  ReleaseCounter counter;
  // A column-major 2x4 view whose element zero is buffer[1].
  dlbridge::Tensor t = CountedDlbridgeTensor(
      buffer, counter, dlbridge::TensorLayout({kDLFloat, 32, 1}, {2, 4}, {1, 2}, sizeof(float)));
  SUBCASE("the last of two at::Tensors sharing the storage releases") {
    at::Tensor a = dlbridge::torch::ToAten(std::move(t));
    CHECK_FALSE(t.descriptor.HasOwnership());
    CHECK(a.data_ptr() == buffer.data() + 1);
    CHECK(a.sizes().vec() == std::vector<int64_t>{2, 4});
    CHECK(a.strides().vec() == std::vector<int64_t>{1, 2});
    CHECK(a[1][3].item<float>() == 8.0f);   // buffer[1 + 1 * 1 + 3 * 2]
    CHECK(a.sum().item<double>() == 36.0);  // 1 + ... + 8
    at::Tensor b = a.slice(1, 1, 3);
    a = at::Tensor();
    CHECK(counter.calls == 0);
    b = at::Tensor();
    CHECK(counter.calls == 1);
  }
  SUBCASE("dropped on another thread") {
    at::Tensor a = dlbridge::torch::ToAten(std::move(t));
    std::thread([held = std::move(a)]() mutable { held = at::Tensor(); }).join();
    CHECK(counter.calls == 1);
    CHECK(counter.thread != std::this_thread::get_id());
  }
  SUBCASE("an owner hold drops once too") {
    std::atomic<int> frees{0};
    t.descriptor.SetOwner(
        std::shared_ptr<const void>(buffer.data(), [&frees](const void*) { ++frees; }));
    CHECK(counter.calls == 1);  // SetOwner dropped the release
    { at::Tensor a = dlbridge::torch::ToAten(std::move(t)); }
    CHECK(frees == 1);
  }
}

TEST_CASE(
    "TOR-8 a zero-size tensor reaches libtorch with a placeholder address and releases once") {
  std::vector<float> buffer(1);
  ReleaseCounter counter;
  at::Tensor a = dlbridge::torch::ToAten(
      CountedDlbridgeTensor(buffer, counter, dlbridge::TensorLayout({kDLFloat, 32, 1}, {0, 3})));
  CHECK(a.numel() == 0);
  CHECK(a.sizes().vec() == std::vector<int64_t>{0, 3});
  CHECK(counter.calls == 0);
  a = at::Tensor();
  CHECK(counter.calls == 1);  // libtorch 1.13 never frees a storage whose data is null
}

TEST_CASE("TOR-4 at::Tensor to dlbridge and back: the same storage, freed once at the end") {
  std::vector<float> data(12, 2.0f);
  std::atomic<int> frees{0};
  at::Tensor original = CountedTorchTensor(data.data(), {3, 4}, &frees).slice(1, 1, 3);
  at::Tensor back = dlbridge::torch::ToAten(dlbridge::torch::FromAten(original));
  CHECK(back.data_ptr() == original.data_ptr());
  CHECK(back.sizes().vec() == original.sizes().vec());
  CHECK(back.strides().vec() == original.strides().vec());
  back.fill_(5.0f);
  CHECK(original.sum().item<double>() == 30.0);  // writes through: one memory
  original = at::Tensor();
  CHECK(frees == 0);
  back = at::Tensor();
  CHECK(frees == 1);
}

TEST_CASE("TOR-5 ToAten refuses what libtorch 1.13 cannot take, the tensor keeps its hold") {
  std::vector<float> buffer(8);
  ReleaseCounter counter;
  dlbridge::Tensor t =
      CountedDlbridgeTensor(buffer, counter, dlbridge::TensorLayout({kDLFloat, 32, 1}, {8}));
  dlbridge::ErrorCode code{};
  std::string message;
  SUBCASE("negative strides") {
    t.layout = dlbridge::TensorLayout({kDLFloat, 32, 1}, {2, 4}, {4, -1}, 3 * sizeof(float));
    code = dlbridge::ErrorCode::kInvalidStrides;
    message =
        "dlbridge::torch::ToAten: strides[1] is -1 (shape [2, 4], strides [4, -1]); a libtorch "
        "tensor takes no negative strides: copy the tensor first (CopyToHost gives a "
        "C-contiguous copy)";
  }
  SUBCASE("unsigned integers wider than 8 bits") {
    t.layout = dlbridge::TensorLayout({kDLUInt, 16, 1}, {16});
    code = dlbridge::ErrorCode::kUnsupportedDtype;
    message =
        "dlbridge::torch::ToAten: dtype uint16 has no libtorch type; accepted: bool, uint8, int8, "
        "int16, int32, "
        "int64, float16, float32, float64, bfloat16, complex64, complex128";
  }
  SUBCASE("lanes") {
    t.layout = dlbridge::TensorLayout({kDLFloat, 32, 2}, {4});
    code = dlbridge::ErrorCode::kUnsupportedDtype;
  }
  SUBCASE("lanes, element zero not aligned to the whole vector: the dtype is what is refused") {
    t.layout = dlbridge::TensorLayout({kDLFloat, 32, 2}, {3}, {}, sizeof(float));
    code = dlbridge::ErrorCode::kUnsupportedDtype;
  }
  SUBCASE("float8") {
    t.layout = dlbridge::TensorLayout({kDLFloat8_e4m3fn, 8, 1}, {32});
    code = dlbridge::ErrorCode::kUnsupportedDtype;
  }
  SUBCASE("GPU memory") {
    t.descriptor.SetMemorySpace("cuda");
    code = dlbridge::ErrorCode::kUnsupportedDevice;
    message =
        "dlbridge::torch::ToAten: memory space \"cuda\" (device type kDLCUDA) is not "
        "host-readable; Data gives pointers only to memory the CPU may read (space \"host\": "
        "kDLCPU, kDLCUDAHost, kDLROCMHost); copy it to the host first";
  }
  SUBCASE("a host space with a GPU device type") {
    t.device = {kDLCUDA, 0};
    code = dlbridge::ErrorCode::kUnsupportedDevice;
  }
  SUBCASE("read-only") {
    t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    code = dlbridge::ErrorCode::kReadOnly;
  }
  SUBCASE("what dlbridge's export refuses: out of bounds") {
    t.layout = dlbridge::TensorLayout({kDLFloat, 32, 1}, {9});
    code = dlbridge::ErrorCode::kOutOfBounds;
  }
  SUBCASE("what dlbridge's export refuses, of pinned memory: its device stays") {
    t.layout = dlbridge::TensorLayout({kDLFloat, 32, 1}, {9});
    t.device = {kDLCUDAHost, 0};
    code = dlbridge::ErrorCode::kOutOfBounds;
  }
  const DLDevice device = t.device;
  try {
    (void)dlbridge::torch::ToAten(std::move(t));
    FAIL("ToAten accepted it");
  } catch (const dlbridge::Error& e) {
    CHECK(e.code() == code);
    if (!message.empty()) CHECK(std::string(e.what()) == message);
  }
  CHECK(counter.calls == 0);
  CHECK(t.descriptor.HasOwnership());
  CHECK(t.device.device_type == device.device_type);  // a refused tensor is unchanged
  t = dlbridge::Tensor();
  CHECK(counter.calls == 1);
}

namespace {
DLManagedTensor* CountedExport(std::vector<float>& buffer, ReleaseCounter& counter) {
  return dlbridge::ToDLPack(
      CountedDlbridgeTensor(buffer, counter, dlbridge::TensorLayout({kDLFloat, 32, 1}, {4})));
}
}  // namespace

TEST_CASE("TOR-6 a libtorch failure after the hand-off releases the hold exactly once") {
  std::vector<float> buffer(4);
  ReleaseCounter counter;
  DLManagedTensor* exported = CountedExport(buffer, counter);
  dlbridge::torch::detail::AtenImporter importer = nullptr;
  dlbridge::ErrorCode code = dlbridge::ErrorCode::kInvalidArgument;
  std::string message =
      "dlbridge::torch::ToAten: libtorch failed to take the tensor (its hold has been released): "
      "libtorch says "
      "no";
  SUBCASE("libtorch throws before it takes the tensor over") {
    importer = [](void*) -> at::Tensor { TORCH_CHECK(false, "libtorch says no"); };
  }
  SUBCASE("libtorch throws after its storage ran the deleter") {
    importer = [](void* managed) -> at::Tensor {
      auto* m = static_cast<DLManagedTensor*>(managed);
      m->deleter(m);
      TORCH_CHECK(false, "libtorch says no");
    };
  }
  SUBCASE("libtorch throws after it built a tensor, which dies in the unwinding") {
    importer = [](void* managed) -> at::Tensor {
      auto* m = static_cast<DLManagedTensor*>(managed);
      at::Tensor taken = torch::from_blob(
          m->dl_tensor.data, {4}, [m](void*) { m->deleter(m); }, at::kFloat);
      TORCH_CHECK(false, "libtorch says no");
    };
  }
  SUBCASE("out of memory") {
    importer = [](void*) -> at::Tensor { throw std::bad_alloc(); };
    code = dlbridge::ErrorCode::kOutOfMemory;
    message =
        "dlbridge::torch::ToAten: libtorch failed to take the tensor (its hold has been released): "
        "out of memory";
  }
  try {
    (void)dlbridge::torch::detail::ImportLegacy(exported, false, importer);
    FAIL("ImportLegacy succeeded");
  } catch (const dlbridge::Error& e) {
    CHECK(e.code() == code);
    CHECK(std::string(e.what()) == message);
  }
  CHECK(counter.calls == 1);
}

TEST_CASE("TOR-7 the bridge's header, libtorch's and dlbridge's meet in one translation unit") {
  // The static_assert and #if at the top of this file are the check; this runs the three
  // together once.
  std::vector<float> buffer(2, 3.0f);
  ReleaseCounter counter;
  at::Tensor a = dlbridge::torch::ToAten(
      CountedDlbridgeTensor(buffer, counter, dlbridge::TensorLayout({kDLFloat, 32, 1}, {2})));
  CHECK(a.sum().item<float>() == 6.0f);
}

// Raw legacy DLPack with libtorch's own functions, no bridge in between (spec/conformance.md,
// TORCH-*): at::toDLPack's tensor into FromDLPack, ToDLPack's into at::fromDLPack. libtorch's
// DLPack 0.6 header stays in torch_side.cpp, which passes managed tensors as void*.

TEST_CASE("TORCH-1 a libtorch tensor imports zero-copy with its strides, deleter once") {
  int64_t torchData = 0;
  auto* managed = static_cast<DLManagedTensor*>(torch_side::ExportTransposed(&torchData));
  {
    dlbridge::Tensor t = dlbridge::FromDLPack(managed);
    const auto* values = reinterpret_cast<const float*>(
        t.descriptor.GetPointer() + static_cast<int64_t>(t.layout.ByteOffset()));
    CHECK(t.descriptor.GetPointer() + static_cast<int64_t>(t.layout.ByteOffset()) == torchData);
    REQUIRE(t.layout.Ndim() == 2);
    CHECK(t.layout.Shape()[0] == 4);
    CHECK(t.layout.Shape()[1] == 3);
    CHECK(t.layout.Strides()[0] == 1);
    CHECK(t.layout.Strides()[1] == 4);
    CHECK(t.descriptor.GetSizeInBytes() == 12 * 4);
    // Element [i][j] of the transpose is original [j][i] = 4 * j + i.
    CHECK(values[2 * 1 + 1 * 4] == 6.0f);   // [2][1]
    CHECK(values[3 * 1 + 2 * 4] == 11.0f);  // [3][2]
    CHECK(torch_side::DeleterCalls() == 0);
  }
  CHECK(torch_side::DeleterCalls() == 1);
}

TEST_CASE("TORCH-2 a dlbridge export imports into libtorch zero-copy, release once") {
  std::vector<float> buffer(8);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  ReleaseCounter counter;
  dlbridge::Tensor t;
  t.descriptor.Set(reinterpret_cast<intptr_t>(buffer.data()), 32, "host");
  t.descriptor.SetRelease(&ReleaseCounter::Release, &counter);
  t.layout = dlbridge::TensorLayout({kDLFloat, 32, 1}, {2, 4}, {1, 2});  // a column-major view
  DLManagedTensor* managed = dlbridge::ToDLPack(std::move(t));
  double sum = 0;
  int64_t sizes[2] = {}, strides[2] = {};
  const int64_t data = torch_side::Import(managed, &sum, sizes, strides);
  CHECK(data == reinterpret_cast<intptr_t>(buffer.data()));
  CHECK(sum == 28.0);
  CHECK(sizes[0] == 2);
  CHECK(sizes[1] == 4);
  CHECK(strides[0] == 1);
  CHECK(strides[1] == 2);
  CHECK(counter.calls == 0);
  torch_side::DropImported();
  CHECK(counter.calls == 1);
}

TEST_CASE("TOR-5 pinned host memory goes to libtorch as a CPU tensor, zero copy (see HLP-4)") {
  std::vector<float> buffer(8, 2.0f);
  ReleaseCounter counter;
  dlbridge::Tensor t =
      CountedDlbridgeTensor(buffer, counter, dlbridge::TensorLayout({kDLFloat, 32, 1}, {8}));
  t.device = {kDLCUDAHost, 0};  // CUDA pinned memory: the CPU reads it at its own address
  {
    at::Tensor a = dlbridge::torch::ToAten(std::move(t));
    CHECK(a.device().is_cpu());
    CHECK(a.data_ptr() == buffer.data());
    CHECK(a.sum().item<float>() == 16.0f);
    CHECK(counter.calls == 0);
  }
  CHECK(counter.calls == 1);
}

TEST_CASE("KIT-6 the libtorch bridge answers to ToTensor and Adopt") {
  std::vector<float> data(6, 3.0f);
  std::atomic<int> frees{0};
  at::Tensor original = CountedTorchTensor(data.data(), {2, 3}, &frees);
  dlbridge::Tensor described = dlbridge::torch::ToTensor(original);
  CHECK(described.Data<float>() == data.data());
  at::Tensor back = dlbridge::torch::Adopt(std::move(described));
  CHECK(back.data_ptr() == original.data_ptr());
  CHECK_FALSE(described.descriptor.HasOwnership());  // the hold moved into libtorch
  original = at::Tensor();
  back = at::Tensor();
  CHECK(frees == 1);
}
