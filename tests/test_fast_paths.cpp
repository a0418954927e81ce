// RT-5: the fast paths of import, export and re-export (issue 17) agree with the full rule
// sequence: a seeded matrix of valid and hostile tensors gives the same result or the same
// error with the fast paths on and off (testing::SetFastPaths), and every deleter and release
// runs exactly once either way.
#include <dlbridge/testing.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "counting.h"

using namespace dlbtest;

namespace {

// IS_SUBBYTE_TYPE_PADDED changes the layout of sub-byte elements (IMP-13): every recogniser must
// leave such tensors to the rules, so the matrix draws it too (0 where the header lacks it).
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
constexpr uint64_t kPadded = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
#else
constexpr uint64_t kPadded = 0;
#endif

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Turns the fast paths off for one scope.
struct FastPathsOff {
  FastPathsOff() { dlbridge::testing::SetFastPaths(false); }
  ~FastPathsOff() { dlbridge::testing::SetFastPaths(true); }
};

template <class T>
T Pick(std::mt19937_64& rng, const std::vector<T>& pool) {
  return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
}

// Everything a result says, as text, so that one CHECK compares it and prints it.
std::string Describe(const dlbridge::Tensor& t) {
  std::ostringstream out;
  const dlbridge::TensorLayout& l = t.layout;
  out << "pointer " << t.descriptor.GetPointer() << " size " << t.descriptor.GetSizeInBytes()
      << " space " << t.descriptor.GetMemorySpace() << " dtype " << int(l.Dtype().code) << "/"
      << int(l.Dtype().bits) << "/" << l.Dtype().lanes << " offset " << l.ByteOffset() << " device "
      << t.device.device_type << ":" << t.device.device_id << " flags " << t.flags << " dims";
  for (int i = 0; i < l.Ndim(); ++i) out << " " << l.Shape()[i] << ":" << l.Strides()[i];
  return out.str();
}

std::string Describe(const DLTensor& t) {
  std::ostringstream out;
  out << "data " << t.data << " offset " << t.byte_offset << " device " << t.device.device_type
      << ":" << t.device.device_id << " dtype " << int(t.dtype.code) << "/" << int(t.dtype.bits)
      << "/" << t.dtype.lanes << " dims";
  for (int i = 0; i < t.ndim; ++i) out << " " << t.shape[i] << ":" << t.strides[i];
  return out.str();
}

std::string ErrorText(const dlbridge::Error& e) {
  return "error " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
}

// A producer tensor drawn from pools of ordinary and hostile values.
template <class Managed>
void Draw(std::mt19937_64& rng, HandBuilt<Managed>& h, Buffer& buffer) {
  DLTensor& t = h.managed.dl_tensor;
  const int ndim = Pick<int>(rng, {0, 1, 2, 3, 4, 5, 8, 9, 16, 64, 65, -1});
  t.ndim = ndim;
  const bool contiguous = rng() % 2 == 0;
  int64_t step = 1;
  for (int k = (ndim > 0 ? ndim : 0) - 1; k >= 0; --k) {
    h.shape[k] = rng() % 4 == 0 ? Pick<int64_t>(rng, {0, -1, kMax, int64_t{1} << 32, 3, 7})
                                : Pick<int64_t>(rng, {1, 2, 3});
    h.strides[k] =
        contiguous
            ? step
            : Pick<int64_t>(rng, {0, 1, -1, 2, -3, 5, kMax, kMin, int64_t{1} << 40, step, -step});
    // Contiguous strides grow with the extents; past int64 the step stays (the layout is then
    // not contiguous, which the rules judge too) rather than overflowing here.
    if (h.shape[k] > 0 && h.shape[k] < (int64_t{1} << 20) && step <= kMax / h.shape[k]) {
      step *= h.shape[k];
    }
  }
  t.shape = rng() % 16 == 0 ? nullptr : h.shape;
  t.strides = rng() % 12 == 0 ? nullptr : h.strides;
  t.dtype = Pick<DLDataType>(rng, {{kDLFloat, 32, 1},
                                   {kDLUInt, 8, 1},
                                   {kDLInt, 4, 1},
                                   {kDLComplex, 128, 1},
                                   {kDLBool, 8, 1},
                                   {kDLFloat, 16, 4},
                                   {kDLFloat, 8, 1},
                                   {kDLFloat, 32, 0},
                                   {99, 32, 1}});
  t.byte_offset = Pick<uint64_t>(rng, {0, 0, 4, 12, uint64_t{1} << 62, ~uint64_t{0}});
  t.data = Pick<void*>(rng, {buffer.bytes, buffer.bytes, nullptr, reinterpret_cast<void*>(1),
                             reinterpret_cast<void*>(uintptr_t{0x7ffffffffffffff0})});
  t.device = Pick<DLDevice>(rng, {{kDLCPU, 0},
                                  {kDLCPU, 0},
                                  {kDLCPU, 3},
                                  {kDLCUDAHost, 0},
                                  {kDLROCMHost, 0},
                                  {kDLCUDA, 0},
                                  {static_cast<DLDeviceType>(999), 0}});
  if constexpr (HandBuilt<Managed>::kVersioned) {
    h.managed.version = Pick<DLPackVersion>(rng, {{1, DLPACK_MINOR_VERSION}, {1, 1}, {2, 0}});
    h.managed.flags =
        Pick<uint64_t>(rng, {0, 0, DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_IS_COPIED,
                             kPadded, kPadded | DLPACK_FLAG_BITMASK_READ_ONLY, uint64_t{1} << 40});
  }
}

template <class Managed>
std::string ImportOnce(HandBuilt<Managed>& h, const dlbridge::ImportOptions& options) {
  try {
    return Describe(dlbridge::FromDLPack(&h.managed, options));
  } catch (const dlbridge::Error& e) {
    return ErrorText(e);
  }
}

// The one-argument import, whose options the library holds (the default ImportOptions).
template <class Managed>
std::string ImportPlain(HandBuilt<Managed>& h) {
  try {
    return Describe(dlbridge::FromDLPack(&h.managed));
  } catch (const dlbridge::Error& e) {
    return ErrorText(e);
  }
}

template <class Managed>
void ImportAgrees(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer buffer;
  int accepted = 0;
  int plainAccepted = 0;
  for (int i = 0; i < 3000; ++i) {
    HandBuilt<Managed> h(buffer.bytes, {});
    Draw(rng, h, buffer);
    dlbridge::ImportOptions options;
    options.verify_device = dlbridge::DeviceVerification::kOff;
    options.require_writable = rng() % 8 == 0;
    options.allow_null_strides = rng() % 2 == 0;
    options.legacy_read_only = rng() % 4 == 0;  // IMP-15: the flags a legacy import carries
    const std::string fast = ImportOnce(h, options);
    std::string full;
    {
      FastPathsOff off;
      full = ImportOnce(h, options);
    }
    // The one-argument form is the default options' (fast or full, wherever it goes).
    const std::string plain = ImportPlain(h);
    const std::string defaults = ImportOnce(h, dlbridge::ImportOptions{});
    CAPTURE(i);
    CHECK(fast == full);
    CHECK(plain == defaults);
    CHECK(h.deletes == 4);  // once per import, result dropped or failure consumed
    accepted += fast.rfind("error", 0) != 0;
    plainAccepted += plain.rfind("error", 0) != 0;
  }
  CHECK(accepted > 100);  // the matrix reaches the fast path, not only its refusals
  CHECK(plainAccepted > 100);
}

// A tensor to export, drawn from pools; false when the layout itself is refused (LAY-*).
bool DrawExport(std::mt19937_64& rng, Buffer& buffer, ReleaseCounter& counter,
                dlbridge::Tensor* out) {
  const int ndim = Pick<int>(rng, {0, 1, 2, 3, 4, 8, 9});
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  std::vector<int64_t> strides(static_cast<size_t>(ndim));
  const bool contiguous = rng() % 2 == 0;
  int64_t step = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    shape[k] = rng() % 5 == 0 ? Pick<int64_t>(rng, {0, kMax, int64_t{1} << 33}) : rng() % 3 + 1;
    strides[k] = contiguous ? step : Pick<int64_t>(rng, {0, 1, -1, 3, -2, kMax, kMin, step});
    if (shape[k] > 0 && shape[k] < 8) step *= shape[k];
  }
  const DLDataType dtype = Pick<DLDataType>(
      rng, {{kDLFloat, 32, 1}, {kDLUInt, 8, 1}, {kDLInt, 4, 1}, {kDLFloat, 32, 0}, {42, 8, 1}});
  const uint64_t offset = Pick<uint64_t>(rng, {0, 0, 8, 64, uint64_t{1} << 62});
  try {
    out->layout = dlbridge::TensorLayout::FromArrays(
        dtype, ndim, shape.data(), rng() % 6 == 0 ? nullptr : strides.data(), offset);
  } catch (const dlbridge::Error&) {
    return false;
  }
  const int64_t pointer = Pick<int64_t>(rng, {buffer.Address(), buffer.Address(), 0, kMax - 16});
  const int64_t size = pointer == 0 ? 0 : Pick<int64_t>(rng, {4096, 4096, 64, 0, kMax - pointer});
  out->descriptor.Set(pointer, size, "host");
  if (rng() % 8 != 0) out->descriptor.SetRelease(&ReleaseCounter::Release, &counter);
  out->device = Pick<DLDevice>(rng, {{static_cast<DLDeviceType>(0), 0},
                                     {static_cast<DLDeviceType>(0), 0},
                                     {kDLCPU, 0},
                                     {kDLCPU, 2},
                                     {kDLCUDAHost, 0},
                                     {kDLROCMHost, 0},
                                     {kDLCUDA, 0}});
  out->flags = Pick<uint64_t>(rng, {0, 0, DLPACK_FLAG_BITMASK_READ_ONLY,
                                    DLPACK_FLAG_BITMASK_IS_COPIED, kPadded, uint64_t{1} << 50});
  return true;
}

// `options` null: the one-argument export, whose options the library holds (the defaults).
template <class Managed>
std::string ExportOnce(dlbridge::Tensor&& tensor, const dlbridge::ExportOptions* options) {
  try {
    Managed* m = nullptr;
    std::string text;
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
      m = options != nullptr ? dlbridge::ToDLPackVersioned(std::move(tensor), *options)
                             : dlbridge::ToDLPackVersioned(std::move(tensor));
      text = "flags " + std::to_string(m->flags) + " ";
    } else {
      m = options != nullptr ? dlbridge::ToDLPack(std::move(tensor), *options)
                             : dlbridge::ToDLPack(std::move(tensor));
    }
    text += Describe(m->dl_tensor);
    m->deleter(m);
    return text;
  } catch (const dlbridge::Error& e) {
    return ErrorText(e);
  }
}

template <class Managed>
void ExportAgrees(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer buffer;
  int accepted = 0;
  int plainAccepted = 0;
  for (int i = 0; i < 3000; ++i) {
    ReleaseCounter counter;
    dlbridge::Tensor a;
    const uint64_t state = rng();
    std::mt19937_64 twin(state);  // the same draw twice: one tensor for each way
    if (!DrawExport(twin, buffer, counter, &a)) continue;
    dlbridge::Tensor b;
    twin.seed(state);
    DrawExport(twin, buffer, counter, &b);
    const int held = int(a.descriptor.HasOwnership()) + int(b.descriptor.HasOwnership());
    dlbridge::ExportOptions options;
    options.read_only = rng() % 6 == 0;
    options.keep_byte_offset = rng() % 4 == 0;
    options.allow_unowned = rng() % 3 == 0;
    options.device_id = Pick<int32_t>(rng, {-1, -1, 0, 1});
    const std::string fast = ExportOnce<Managed>(std::move(a), &options);
    std::string full;
    {
      FastPathsOff off;
      full = ExportOnce<Managed>(std::move(b), &options);
    }
    // The one-argument form is the default options' (fast or full, wherever it goes).
    dlbridge::Tensor c;
    dlbridge::Tensor d;
    twin.seed(state);
    DrawExport(twin, buffer, counter, &c);
    twin.seed(state);
    DrawExport(twin, buffer, counter, &d);
    const dlbridge::ExportOptions defaults;
    const std::string plain = ExportOnce<Managed>(std::move(c), nullptr);
    const std::string given = ExportOnce<Managed>(std::move(d), &defaults);
    CAPTURE(i);
    CHECK(fast == full);
    CHECK(plain == given);
    a = dlbridge::Tensor();  // a failed export keeps the hold: drop them all now
    b = dlbridge::Tensor();
    c = dlbridge::Tensor();
    d = dlbridge::Tensor();
    CHECK(counter.calls == 2 * held);  // each hold's release ran once, exported or not
    accepted += fast.rfind("error", 0) != 0;
    plainAccepted += plain.rfind("error", 0) != 0;
  }
  CHECK(accepted > 100);
  CHECK(plainAccepted > 100);
}

// Re-export: the original handed back (or a wrapper) the same way with the fast paths on and off.
void ReexportAgrees(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer buffer;
  int handedBack = 0;
  for (int i = 0; i < 2000; ++i) {
    HandBuilt<DLManagedTensorVersioned> h(buffer.bytes, {});
    Draw(rng, h, buffer);
    const bool change = rng() % 3 == 0;
    dlbridge::ExportOptions options;  // what IsUnchangedImport compares besides the tensor
    options.read_only = rng() % 6 == 0;
    options.device_id = Pick<int32_t>(rng, {-1, -1, -1, 0, 1});
    options.keep_byte_offset = rng() % 4 == 0;
    std::string outcome[2];
    for (int way = 0; way < 2; ++way) {
      if (way == 1) dlbridge::testing::SetFastPaths(false);
      try {
        dlbridge::Tensor t = dlbridge::FromDLPack(&h.managed);
        if (change) t.layout.SetByteOffset(t.layout.ByteOffset() + 4);
        DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t), options);
        outcome[way] = (m == &h.managed ? "original " : "wrapped ") + Describe(m->dl_tensor);
        m->deleter(m);
      } catch (const dlbridge::Error& e) {
        outcome[way] = ErrorText(e);
      }
      dlbridge::testing::SetFastPaths(true);
    }
    CAPTURE(i);
    CHECK(outcome[0] == outcome[1]);
    CHECK(h.deletes == 2);
    handedBack += outcome[0].rfind("original", 0) == 0;
  }
  CHECK(handedBack > 50);
}

}  // namespace

TEST_CASE("RT-5 fast paths agree with the full rules") {
  SUBCASE("import, versioned") { ImportAgrees<DLManagedTensorVersioned>(17); }
  SUBCASE("import, legacy") { ImportAgrees<DLManagedTensor>(18); }
  SUBCASE("export, versioned") { ExportAgrees<DLManagedTensorVersioned>(19); }
  SUBCASE("export, legacy") { ExportAgrees<DLManagedTensor>(20); }
  SUBCASE("re-export") { ReexportAgrees(21); }
}

namespace {

using dlbridge::TensorLayout;

// Exports `layout` over exactly `size` bytes with the fast paths on, then off: whether the export
// succeeded (both ways must agree); the release runs once either way.
bool ExportsOver(const TensorLayout& layout, int64_t size) {
  bool results[2] = {};
  for (int fast = 0; fast < 2; ++fast) {
    dlbridge::testing::SetFastPaths(fast == 0);
    Buffer buffer;
    ReleaseCounter counter;
    {
      dlbridge::Tensor t = HostTensor(buffer, counter, TensorLayout(), size);
      t.layout = layout;  // copy-assigned over a float32 layout: the span must be layout's
      try {
        DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t));
        results[fast] = true;
        m->deleter(m);
      } catch (const dlbridge::Error& e) {
        CHECK_MESSAGE(e.code() == dlbridge::ErrorCode::kOutOfBounds, e.what());
      }
    }
    CHECK(counter.calls == 1);
  }
  dlbridge::testing::SetFastPaths(true);
  CHECK(results[0] == results[1]);
  return results[0];
}

}  // namespace

// The span a layout keeps (the export's fast path reads it) must be its own dtype's after every
// way a layout is made: a stale one would let an export reach past its buffer (silent wrong data).
TEST_CASE("RT-5 the span a layout keeps follows every way the layout is built or replaced") {
  const DLDataType f64{kDLFloat, 64, 1};
  const DLDataType u8{kDLUInt, 8, 1};
  // {4, 3} column-major, and 9 dimensions (past the inline storage) C-contiguous.
  const std::vector<std::vector<int64_t>> shapes = {{4, 3}, {1, 2, 1, 2, 1, 2, 1, 2, 3}};
  const std::vector<std::vector<int64_t>> strides = {{1, 4}, {}};
  const int64_t counts[] = {12, 48};
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    CAPTURE(s);
    const int64_t bytes = 8 * counts[s];
    const TensorLayout wide(f64, shapes[s], strides[s]);
    const TensorLayout narrow(u8, shapes[s], strides[s]);
    TensorLayout assigned = narrow;  // copy-assigned over a layout of another dtype
    assigned = wide;
    CHECK(ExportsOver(assigned, bytes));
    CHECK_FALSE(ExportsOver(assigned, bytes - 1));
    assigned = narrow;
    CHECK(ExportsOver(assigned, counts[s]));
    CHECK_FALSE(ExportsOver(assigned, counts[s] - 1));
    TensorLayout moved = narrow;  // move-assigned, then moved and copied
    moved = TensorLayout(wide);
    TensorLayout movedAgain(std::move(moved));
    CHECK_FALSE(ExportsOver(movedAgain, bytes - 1));
    const TensorLayout copied(movedAgain);
    CHECK(ExportsOver(copied, bytes));
    CHECK_FALSE(ExportsOver(copied, bytes - 1));
    const TensorLayout arrays =
        TensorLayout::FromArrays(f64, static_cast<int32_t>(shapes[s].size()), shapes[s].data(),
                                 strides[s].empty() ? nullptr : strides[s].data());
    CHECK(ExportsOver(arrays, bytes));
    CHECK_FALSE(ExportsOver(arrays, bytes - 1));
  }
}

// ---- RT-6: an own export taken back ----

namespace {

template <class M>
M* ExportAs(dlbridge::Tensor&& t, const dlbridge::ExportOptions& options = {}) {
  if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) {
    return dlbridge::ToDLPackVersioned(std::move(t), options);
  } else {
    return dlbridge::ToDLPack(std::move(t), options);
  }
}

// What a holder of an own export may change before handing it to import: each changes the
// managed tensor in place (shape and strides in the block's public copy), or nothing.
enum class Tamper {
  kNone,
  kExtent,
  kStride,
  kLastStride,  // the last word the taking back compares (CopyPairsIfSame's final pair)
  kNdim,
  kDtype,
  kData,
  kOffset,
  kDevice,
  kFlags,
  kVersion,
  kShapeElsewhere,
  kStridesElsewhere,
  kCount
};

// Whether it changed anything (a 0-d tensor has no extent to change, a legacy one no flags).
template <class M>
bool Apply(Tamper what, M* m, std::vector<int64_t>& elsewhere) {
  DLTensor& t = m->dl_tensor;
  const int last = t.ndim - 1;
  constexpr bool kVersioned = std::is_same_v<M, DLManagedTensorVersioned>;
  const bool dims = t.ndim > 0;
  switch (what) {
    case Tamper::kExtent:
      if (dims) t.shape[last] ^= 1;  // no overflow, whatever the value
      return dims;
    case Tamper::kStride:
      if (dims) t.strides[0] ^= 1;
      return dims;
    case Tamper::kLastStride:
      if (dims) t.strides[last] ^= 1;
      return dims;
    case Tamper::kNdim: t.ndim = dims ? last : 1; return true;
    case Tamper::kDtype:
      t.dtype.bits = static_cast<uint8_t>(t.dtype.bits == 8 ? 16 : 8);
      return true;
    case Tamper::kData:  // by address: a tensor without elements may have NULL data
      t.data = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(t.data) + 4);
      return true;
    case Tamper::kOffset: t.byte_offset += 4; return true;
    case Tamper::kDevice: {
      const bool differs = t.device.device_type != kDLCUDAHost || t.device.device_id != 0;
      t.device = DLDevice{kDLCUDAHost, 0};
      return differs;
    }
    case Tamper::kFlags:
      if constexpr (kVersioned) m->flags ^= DLPACK_FLAG_BITMASK_READ_ONLY;
      return kVersioned;
    case Tamper::kVersion:
      if constexpr (kVersioned) m->version.minor += 1;
      return kVersioned;
    case Tamper::kShapeElsewhere:  // the same values, in the holder's memory
      if (dims) {
        elsewhere.assign(t.shape, t.shape + t.ndim);
        t.shape = elsewhere.data();
      }
      return dims;
    case Tamper::kStridesElsewhere:
      if (dims) {
        elsewhere.assign(t.strides, t.strides + t.ndim);
        t.strides = elsewhere.data();
      }
      return dims;
    default: return false;
  }
}

// Own exports of a drawn tensor, changed (or not) by a holder, then imported twice over: with
// the fast paths on (RT-6 may take it back) and off (the full way). Both must describe the
// same tensor or give the same error, each hold's release must run once, and only an unchanged
// export with a hold is taken back.
template <class M>
void TakeBackAgrees(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer buffer;
  int takenBack = 0;
  int changed = 0;
  for (int i = 0; i < 3000; ++i) {
    ReleaseCounter counter;
    const uint64_t state = rng();
    std::mt19937_64 twin(state);
    dlbridge::Tensor a;
    if (!DrawExport(twin, buffer, counter, &a)) continue;
    dlbridge::Tensor b;
    twin.seed(state);
    DrawExport(twin, buffer, counter, &b);
    const int held = int(a.descriptor.HasOwnership()) + int(b.descriptor.HasOwnership());
    dlbridge::ExportOptions exportOptions;
    exportOptions.allow_unowned = true;
    exportOptions.read_only = rng() % 6 == 0;
    M* ma = nullptr;
    M* mb = nullptr;
    try {
      ma = ExportAs<M>(std::move(a), exportOptions);
      mb = ExportAs<M>(std::move(b), exportOptions);  // both with the fast paths on
    } catch (const dlbridge::Error&) {
      if (ma != nullptr) ma->deleter(ma);
      a = dlbridge::Tensor();
      b = dlbridge::Tensor();
      CHECK(counter.calls == held);
      continue;
    }
    const auto what = rng() % 3 == 0
                          ? Tamper::kNone
                          : static_cast<Tamper>(rng() % static_cast<uint64_t>(Tamper::kCount));
    std::vector<int64_t> elsewhereA;
    std::vector<int64_t> elsewhereB;
    const bool changes = Apply(what, ma, elsewhereA);
    Apply(what, mb, elsewhereB);
    dlbridge::ImportOptions importOptions;
    importOptions.verify_device = dlbridge::DeviceVerification::kOff;
    importOptions.require_writable = rng() % 6 == 0;
    importOptions.legacy_read_only = rng() % 4 == 0;
    std::string fast;
    bool back = false;
    try {
      dlbridge::Tensor t = dlbridge::FromDLPack(ma, importOptions);
      back = t.descriptor.GetRelease() == &ReleaseCounter::Release;
      fast = Describe(t);
    } catch (const dlbridge::Error& e) {
      fast = ErrorText(e);
    }
    std::string full;
    {
      FastPathsOff off;
      try {
        full = Describe(dlbridge::FromDLPack(mb, importOptions));
      } catch (const dlbridge::Error& e) {
        full = ErrorText(e);
      }
    }
    CAPTURE(i);
    CAPTURE(static_cast<int>(what));
    CHECK(fast == full);
    CHECK(counter.calls == held);    // every import dropped or failed: each hold released once
    CHECK_FALSE((back && changes));  // a changed export is never taken back
    takenBack += back;
    changed += changes && fast.rfind("error", 0) != 0;
  }
  CHECK(takenBack > 30);  // the matrix reaches the taking back, not only its refusals
  CHECK(changed > 100);   // and changed exports that import still accepts, the full way
}

}  // namespace

TEST_CASE("RT-6 an own export changed by its holder is imported as with the fast paths off") {
  SUBCASE("versioned") { TakeBackAgrees<DLManagedTensorVersioned>(22); }
  SUBCASE("legacy") { TakeBackAgrees<DLManagedTensor>(23); }
}

TEST_CASE_TEMPLATE("RT-6 an own export imported unchanged is taken back with its hold", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buffer;
  SUBCASE("a release: the import holds it, not the export block") {
    ReleaseCounter counter;
    M* m = ExportAs<M>(HostTensor(buffer, counter, F32({3, 5}, {-5, 1}, 40)));
    dlbridge::Tensor t = dlbridge::FromDLPack(m);
    CHECK((t.descriptor.GetRelease() == &ReleaseCounter::Release));
    CHECK(t.descriptor.GetReleaseContext() == &counter);
    // As the full import describes it: the reachable bytes, element zero 40 bytes in.
    CHECK(t.descriptor.GetPointer() == buffer.Address());
    CHECK(t.descriptor.GetSizeInBytes() == 60);
    CHECK(t.layout.ByteOffset() == 40);
    CHECK(t.layout.Strides()[0] == -5);
    CHECK(counter.calls == 0);
    t = dlbridge::Tensor();
    CHECK(counter.calls == 1);
  }
  SUBCASE("an owner: the same reference comes back") {
    auto owner = std::make_shared<int>(7);
    dlbridge::Tensor source;
    source.descriptor.Set(buffer.Address(), 64, "host");
    source.descriptor.SetOwner(owner);
    source.layout = F32({4, 4});
    M* m = ExportAs<M>(std::move(source));
    CHECK(owner.use_count() == 2);
    dlbridge::Tensor t = dlbridge::FromDLPack(m);
    CHECK(t.descriptor.GetOwner() == owner);
    t = dlbridge::Tensor();
    CHECK(owner.use_count() == 1);
  }
  SUBCASE("no hold (allow_unowned): the import holds the block, as for any producer") {
    dlbridge::Tensor source;
    source.descriptor.Set(buffer.Address(), 64, "host");
    source.layout = F32({16});
    dlbridge::ExportOptions options;
    options.allow_unowned = true;
    M* m = ExportAs<M>(std::move(source), options);
    dlbridge::Tensor t = dlbridge::FromDLPack(m);
    CHECK(t.descriptor.HasOwnership());
    CHECK(t.descriptor.GetReleaseContext() == m);
  }
  SUBCASE("the fast paths off: the import holds the block") {
    ReleaseCounter counter;
    M* m = ExportAs<M>(HostTensor(buffer, counter, F32({2, 3})));
    FastPathsOff off;
    dlbridge::Tensor t = dlbridge::FromDLPack(m);
    CHECK(t.descriptor.GetReleaseContext() == m);
    t = dlbridge::Tensor();
    CHECK(counter.calls == 1);
  }
  SUBCASE("require_writable still refuses a read-only export, and the hold is released") {
    if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) {
      ReleaseCounter counter;
      dlbridge::ExportOptions readOnly;
      readOnly.read_only = true;
      M* m = ExportAs<M>(HostTensor(buffer, counter, F32({4})), readOnly);
      dlbridge::ImportOptions writable;
      writable.require_writable = true;
      CHECK_THROWS_AS(dlbridge::FromDLPack(m, writable), dlbridge::Error);
      CHECK(counter.calls == 1);
    }
  }
}

// ---- RT-5, RT-6: the result of every import path is written whole ----

namespace {

// A pointer as DescribeWithHold writes it.
std::string Text(const void* pointer) {
  std::ostringstream out;
  out << pointer;
  return out.str();
}

// Everything a result says, its hold included, as text.
std::string DescribeWithHold(dlbridge::Tensor& t) {
  const dlbridge::MemoryDescriptor& d = t.descriptor;
  std::ostringstream out;
  out << Describe(t) << " role " << d.GetRole() << " holds " << d.HasOwnership() << " release "
      << (d.GetRelease() != nullptr) << " context " << d.GetReleaseContext() << " owner "
      << (d.GetOwner() != nullptr) << " stream " << t.stream.has_value();
  return out.str();
}

// FromDLPack(m)'s result built in storage first filled with 0xAB bytes (through a volatile
// pointer, so that the fill is not dropped as dead): the import writes straight into it
// (guaranteed copy elision), and a field no path writes would show as 0xAB...
template <class M>
std::string ImportOverGarbage(M* m) {
  alignas(dlbridge::Tensor) unsigned char storage[sizeof(dlbridge::Tensor)];
  volatile unsigned char* fill = storage;
  for (size_t i = 0; i < sizeof storage; ++i) fill[i] = 0xAB;
  auto* t = new (storage) dlbridge::Tensor(dlbridge::FromDLPack(m));
  std::string text = DescribeWithHold(*t);
  t->~Tensor();
  return text;
}

// The same import into a Tensor built the ordinary way, with the fast paths off.
template <class M>
std::string ImportFullWay(M* m) {
  FastPathsOff off;
  dlbridge::Tensor t = dlbridge::FromDLPack(m);
  return DescribeWithHold(t);
}

}  // namespace

TEST_CASE_TEMPLATE("RT-5 an import's result is written whole on every path", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buffer;
  SUBCASE("a producer's tensor, with a deleter and without") {
    for (bool deleter : {true, false}) {
      CAPTURE(deleter);
      HandBuilt<M> h(buffer.bytes, {3, 4});
      if (!deleter) h.managed.deleter = nullptr;
      const std::string fast = ImportOverGarbage(&h.managed);
      CHECK(fast == ImportFullWay(&h.managed));
      const std::string hold = deleter ? " holds 1 release 1 context " + Text(&h.managed)
                                       : " holds 0 release 0 context " + Text(nullptr);
      CHECK(fast.find(hold + " owner 0 stream 0") != std::string::npos);
      CHECK(h.deletes == (deleter ? 2 : 0));
    }
  }
  SUBCASE("a producer's tensor that the fast path declines (a zero extent)") {
    HandBuilt<M> h(buffer.bytes, {3, 0});
    CHECK(ImportOverGarbage(&h.managed) == ImportFullWay(&h.managed));
    CHECK(h.deletes == 2);
  }
  SUBCASE("an own export taken back: a release hold") {
    ReleaseCounter counter;
    M* m = ExportAs<M>(HostTensor(buffer, counter, F32({2, 3})));
    const std::string text = ImportOverGarbage(m);
    CHECK(text.find(" role data holds 1 release 1 context " + Text(&counter) +
                    " owner 0 stream 0") != std::string::npos);
    CHECK(text.rfind("pointer " + std::to_string(buffer.Address()) + " size 24 ", 0) == 0);
    CHECK(counter.calls == 1);
  }
  SUBCASE("an own export taken back: an owner hold") {
    auto owner = std::make_shared<int>(7);
    dlbridge::Tensor source;
    source.descriptor.Set(buffer.Address(), 64, "host");
    source.descriptor.SetOwner(owner);
    source.layout = F32({4, 4});
    M* m = ExportAs<M>(std::move(source));
    const std::string text = ImportOverGarbage(m);
    CHECK(text.find(" role data holds 1 release 0 context " + Text(nullptr) +
                    " owner 1 stream 0") != std::string::npos);
    CHECK(owner.use_count() == 1);
  }
}
