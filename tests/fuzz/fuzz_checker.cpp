// Fuzz target: bytes -> a versioned or legacy DLPack tensor with arbitrary fields -> the
// conformance checker. Never crashes, never reads outside the harness's arrays (shape and
// strides are heap arrays of exactly clamp(ndim, 0, 64) elements; a wrong-major tensor's
// DLTensor is poisoned under ASan), never calls the deleter, and every finding names a rule
// the checker lists. spec/reliability.md FUZZ-4.
#include <algorithm>
#include <memory>
#include <string>

#include "dlbridge/checker.h"
#include "fuzz_common.h"

namespace {

int g_deletes = 0;
void DeleteVersioned(DLManagedTensorVersioned*) { ++g_deletes; }
void DeleteLegacy(DLManagedTensor*) { ++g_deletes; }

bool KnownRule(const std::string& id) {
  int count = 0;
  const dlbridge::CheckerRule* rules = dlbridge::CheckerRules(&count);
  for (int i = 0; i < count; ++i) {
    if (id == rules[i].id) return true;
  }
  return false;
}

void FillTensor(dlbfuzz::Input& in, DLTensor& t, std::unique_ptr<int64_t[]>& shape,
                std::unique_ptr<int64_t[]>& strides) {
  static unsigned char buffer[4096];
  t.ndim = in.Bit() ? static_cast<int32_t>(in.Int64()) : static_cast<int32_t>(in.Byte() % 10);
  const int32_t n = std::clamp(t.ndim, 0, 64);
  shape.reset(new int64_t[static_cast<size_t>(n) + 1]);
  strides.reset(new int64_t[static_cast<size_t>(n) + 1]);
  for (int32_t i = 0; i < n; ++i) {
    shape[i] = in.Bit() ? in.Int64() : in.Extent();
    strides[i] = in.Int64();
  }
  // Arrays of exactly n elements as far as ASan is concerned.
  DLB_FUZZ_POISON(shape.get() + n, sizeof(int64_t));
  DLB_FUZZ_POISON(strides.get() + n, sizeof(int64_t));
  t.shape = in.Bit() ? nullptr : shape.get();
  t.strides = in.Bit() ? nullptr : strides.get();
  t.data = in.Bit() ? nullptr : buffer + in.Byte();
  t.dtype = DLDataType{in.Byte(), in.Byte(), static_cast<uint16_t>(in.Byte() % 5)};
  t.device = DLDevice{static_cast<DLDeviceType>(static_cast<int8_t>(in.Byte()) % 24),
                      static_cast<int32_t>(static_cast<int8_t>(in.Byte()))};
  t.byte_offset = in.Bit() ? static_cast<uint64_t>(in.Int64()) : in.Byte();
}

void Unpoison(int32_t ndim, std::unique_ptr<int64_t[]>& shape,
              std::unique_ptr<int64_t[]>& strides) {
  const int32_t n = std::clamp(ndim, 0, 64);
  DLB_FUZZ_UNPOISON(shape.get() + n, sizeof(int64_t));
  DLB_FUZZ_UNPOISON(strides.get() + n, sizeof(int64_t));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dlbfuzz::Input in(data, size);
  std::unique_ptr<int64_t[]> shape, strides;
  g_deletes = 0;
  std::vector<dlbridge::Finding> findings;
  if (in.Bit()) {
    auto managed = std::make_unique<DLManagedTensor>();
    managed->deleter = in.Bit() ? nullptr : &DeleteLegacy;
    FillTensor(in, managed->dl_tensor, shape, strides);
    findings = dlbridge::CheckDLPack(managed.get());
    Unpoison(managed->dl_tensor.ndim, shape, strides);
  } else {
    auto managed = std::make_unique<DLManagedTensorVersioned>();
    managed->version = {in.Byte() % 3u, in.Byte() % 6u};
    managed->flags = in.Bit() ? static_cast<uint64_t>(in.Int64()) : in.Byte() % 8u;
    managed->deleter = in.Bit() ? nullptr : &DeleteVersioned;
    FillTensor(in, managed->dl_tensor, shape, strides);
    const bool otherMajor = managed->version.major != 1;
    // A different major: the checker may read version, flags and deleter only.
    if (otherMajor) DLB_FUZZ_POISON(&managed->dl_tensor, sizeof(DLTensor));
    findings = dlbridge::CheckDLPack(managed.get());
    if (otherMajor) {
      DLB_FUZZ_UNPOISON(&managed->dl_tensor, sizeof(DLTensor));
      FUZZ_CHECK(!findings.empty());
    }
    Unpoison(managed->dl_tensor.ndim, shape, strides);
  }
  FUZZ_CHECK(g_deletes == 0);  // the checker never consumes
  for (const dlbridge::Finding& f : findings) {
    FUZZ_CHECK(KnownRule(f.rule));
    FUZZ_CHECK(!f.message.empty());
  }
  return 0;
}
