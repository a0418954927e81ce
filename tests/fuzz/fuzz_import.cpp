// Fuzz target: bytes -> a versioned or legacy DLPack tensor with arbitrary fields -> FromDLPack,
// sometimes followed by a re-export. Never crashes, never reads outside the harness's arrays
// (shape and strides are heap arrays of exactly clamp(ndim, 0, 64) elements; a wrong-major
// tensor's DLTensor is poisoned under ASan), the deleter runs exactly once per input (never
// when it is NULL), and an accepted import describes exactly the bytes the tensor reaches.
// spec/reliability.md FUZZ-1.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <utility>

#include "fuzz_common.h"

namespace {

using dlbfuzz::i128;
using dlbfuzz::Input;

struct Counter {
  int deletes = 0;
};

void DeleteVersioned(DLManagedTensorVersioned* self) {
  ++static_cast<Counter*>(self->manager_ctx)->deletes;
}
void DeleteLegacy(DLManagedTensor* self) { ++static_cast<Counter*>(self->manager_ctx)->deletes; }

// Metal handles 1..4 name the four buffers the input describes; others are unknown.
struct FuzzResolver : dlbridge::MetalResolver {
  dlbridge::MetalBufferInfo buffers[4];
  bool Resolve(void* buffer, dlbridge::MetalBufferInfo& info) const override {
    const uintptr_t handle = reinterpret_cast<uintptr_t>(buffer);
    if (handle < 1 || handle > 4) return false;
    info = buffers[handle - 1];
    return true;
  }
};

constexpr int32_t kDeviceTypes[] = {1, 2,  3,  10, 11, 13, 14, 8,  4,  7,
                                    9, 12, 15, 16, 17, 18, 0,  19, -1, 42};
constexpr DLDataType kDtypes[] = {
    {0, 8, 1},  {0, 32, 1},  {1, 8, 1},  {2, 16, 1}, {2, 32, 1}, {2, 64, 1}, {4, 16, 1},
    {5, 64, 1}, {5, 128, 1}, {6, 8, 1},  {10, 8, 1}, {15, 6, 1}, {16, 6, 1}, {17, 4, 1},
    {2, 32, 4}, {17, 4, 2},  {15, 6, 3}, {3, 64, 1}, {2, 32, 0}, {6, 1, 1},  {18, 8, 1}};

struct Fields {
  bool legacy, null_deleter, null_shape, null_strides, reexport, reexport_legacy;
  int data_mode;
  dlbridge::ImportOptions options;
  FuzzResolver resolver;
  uint32_t major = 1, minor = DLPACK_MINOR_VERSION;
  uint64_t flags = 0;
  int32_t ndim = 0;
  DLDataType dtype{};
  DLDevice device{};
  uint64_t byte_offset = 0;
  size_t buffer_size = 0;
  uint64_t raw_pointer = 0;
  uint8_t data_shift = 0;
  dlbridge::ExportOptions export_options;
};

// The independent oracle for an accepted import (validation.md IMP-14, IMP-11).
void CheckAccepted(const Fields& f, const DLTensor& t, const void* base, const dlbridge::Tensor& r,
                   bool hasDeleter) {
  FUZZ_CHECK(f.ndim >= 0 && f.ndim <= dlbridge::TensorLayout::kMaxDims);
  if (!f.legacy) FUZZ_CHECK(f.major == 1);
  FUZZ_CHECK(r.layout.Ndim() == f.ndim);
  FUZZ_CHECK(r.descriptor.HasOwnership() == hasDeleter);
  const uint64_t expectedFlags =
      f.legacy ? (f.options.legacy_read_only ? uint64_t{DLPACK_FLAG_BITMASK_READ_ONLY} : 0)
               : f.flags;
  FUZZ_CHECK(r.flags == expectedFlags);
  // Strides: the producer's, or C-contiguous (extents saturate at 1) when NULL. An empty
  // tensor's contiguous strides mean nothing (and may pass int64, LAY-5): not compared.
  bool empty = false;
  for (int32_t i = 0; i < f.ndim; ++i) empty = empty || t.shape[i] == 0;
  int64_t strides[64];
  i128 step = 1;
  for (int32_t i = f.ndim - 1; i >= 0; --i) {
    if (t.strides != nullptr) {
      strides[i] = t.strides[i];
    } else {
      FUZZ_CHECK(empty || step <= std::numeric_limits<int64_t>::max());
      strides[i] = step <= std::numeric_limits<int64_t>::max() ? static_cast<int64_t>(step) : 0;
      step *= std::max<int64_t>(t.shape[i], 1);
      if (step > (i128{1} << 64)) step = i128{1} << 64;
    }
    FUZZ_CHECK(r.layout.Shape()[static_cast<size_t>(i)] == t.shape[i]);
    if (!empty || t.strides != nullptr) {
      FUZZ_CHECK(r.layout.Strides()[static_cast<size_t>(i)] == strides[i]);
    }
  }
  const dlbfuzz::Span span =
      dlbfuzz::ComputeSpan(f.dtype, expectedFlags, f.ndim, f.ndim > 0 ? t.shape : nullptr, strides);
  if (span.count == 0) {
    FUZZ_CHECK(r.descriptor.GetPointer() == 0 && r.descriptor.GetSizeInBytes() == 0);
    return;
  }
  FUZZ_CHECK(base != nullptr);
  const i128 pointer =
      static_cast<i128>(reinterpret_cast<uintptr_t>(base)) + t.byte_offset + span.low;
  FUZZ_CHECK(pointer > 0 && pointer <= std::numeric_limits<int64_t>::max());
  FUZZ_CHECK(r.descriptor.GetPointer() == pointer);
  FUZZ_CHECK(r.descriptor.GetSizeInBytes() == span.bytes);
  FUZZ_CHECK(static_cast<i128>(r.layout.ByteOffset()) == -span.low);
}

template <class Managed>
void Run(Fields& f, Input& in) {
  constexpr bool kLegacy = std::is_same_v<Managed, DLManagedTensor>;
  const size_t n = static_cast<size_t>(std::clamp<int32_t>(f.ndim, 0, 64));
  // Exactly n elements each, so any read past ndim (or of a rejected ndim) trips ASan.
  std::unique_ptr<int64_t[]> shape(new int64_t[n]);
  std::unique_ptr<int64_t[]> strides(new int64_t[n]);
  for (size_t i = 0; i < n; ++i) {
    shape[i] = in.Extent();
    strides[i] = in.Int64();
  }
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[std::max<size_t>(f.buffer_size, 1)]);
  for (dlbridge::MetalBufferInfo& info : f.resolver.buffers) {
    info.storage = static_cast<dlbridge::MetalStorageMode>(in.Byte() % 4);
    info.contents = in.Bit() ? buffer.get() : nullptr;
    info.length = in.Bit() ? f.buffer_size : static_cast<uint64_t>(in.Int64());
  }

  Counter counter;
  auto* managed = new Managed{};
  DLTensor& t = managed->dl_tensor;
  if constexpr (!kLegacy) {
    managed->version = {f.major, f.minor};
    managed->flags = f.flags;
  }
  managed->manager_ctx = &counter;
  if (!f.null_deleter) {
    if constexpr (kLegacy)
      managed->deleter = &DeleteLegacy;
    else
      managed->deleter = &DeleteVersioned;
  }
  switch (f.data_mode) {
    case 0: t.data = buffer.get(); break;
    case 1: t.data = nullptr; break;
    case 2: t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(f.raw_pointer)); break;
    default: t.data = buffer.get() + f.data_shift; break;
  }
  t.device = f.device;
  t.ndim = f.ndim;
  t.dtype = f.dtype;
  t.shape = f.null_shape ? nullptr : shape.get();
  t.strides = f.null_strides ? nullptr : strides.get();
  t.byte_offset = f.byte_offset;
  const bool hasDeleter = managed->deleter != nullptr;

  // A consumer must not read anything past `flags` of a tensor of another major version.
  bool poisoned = false;
  if constexpr (!kLegacy) {
    if (f.major != 1) {
      DLB_FUZZ_POISON(&managed->dl_tensor, sizeof(DLTensor));
      poisoned = true;
    }
  }

  dlbfuzz::LedgerBaseline ledger;
  {
    dlbridge::Tensor result;
    bool accepted = false;
    try {
      result = dlbridge::FromDLPack(managed, f.options);
      accepted = true;
    } catch (const dlbridge::Error&) {
      FUZZ_CHECK(counter.deletes == (hasDeleter ? 1 : 0));
    }
    if (accepted) {
      FUZZ_CHECK(!poisoned);
      FUZZ_CHECK(counter.deletes == 0);
      const bool metal = f.device.device_type == kDLMetal;
      const void* base = t.data;
      if (metal) {
        const uintptr_t handle = reinterpret_cast<uintptr_t>(t.data);
        if (handle >= 1 && handle <= 4) base = f.resolver.buffers[handle - 1].contents;
      }
      CheckAccepted(f, t, base, result, hasDeleter);
      if (f.reexport) {
        const dlbridge::TensorLayout layout = result.layout;
        const int64_t pointer = result.descriptor.GetPointer();
        const int64_t size = result.descriptor.GetSizeInBytes();
        const uint64_t flags =
            result.flags | (f.export_options.read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
        try {
          if (f.reexport_legacy) {
            DLManagedTensor* out = dlbridge::ToDLPack(std::move(result), f.export_options);
            FUZZ_CHECK(!result.descriptor.HasOwnership());
            if (static_cast<void*>(out) != static_cast<void*>(managed)) {
              dlbfuzz::CheckExportedInside(out->dl_tensor, layout, flags, pointer, size);
            }
            FUZZ_CHECK(counter.deletes == 0);
            out->deleter(out);
          } else {
            DLManagedTensorVersioned* out =
                dlbridge::ToDLPackVersioned(std::move(result), f.export_options);
            FUZZ_CHECK(!result.descriptor.HasOwnership());
            if (static_cast<void*>(out) != static_cast<void*>(managed)) {
              dlbfuzz::CheckExportedInside(out->dl_tensor, layout, flags, pointer, size);
            }
            FUZZ_CHECK(counter.deletes == 0);
            out->deleter(out);
          }
          FUZZ_CHECK(counter.deletes == (hasDeleter ? 1 : 0));
        } catch (const dlbridge::Error&) {
          FUZZ_CHECK(result.descriptor.HasOwnership() == hasDeleter);  // the hold is kept
          FUZZ_CHECK(counter.deletes == 0);
        }
      }
    }
  }  // dropping the result runs the deleter of an accepted import
  if (poisoned) DLB_FUZZ_UNPOISON(&managed->dl_tensor, sizeof(DLTensor));
  FUZZ_CHECK(counter.deletes == (hasDeleter ? 1 : 0));
  ledger.Check();
  delete managed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Fields f{};
  const uint8_t shapeBits = in.Byte();
  f.legacy = shapeBits & 1;
  f.null_deleter = (shapeBits & 0x2) != 0;
  f.data_mode = (shapeBits >> 2) & 3;
  f.null_shape = (shapeBits & 0x10) != 0;
  f.null_strides = (shapeBits & 0x20) != 0;
  f.reexport = (shapeBits & 0x40) != 0;
  f.reexport_legacy = (shapeBits & 0x80) != 0;
  const uint8_t optionBits = in.Byte();
  f.options.require_writable = optionBits & 1;
  f.options.legacy_read_only = (optionBits & 0x2) != 0;
  f.options.allow_null_strides = (optionBits & 0x4) != 0;
  static int level_zero_context;
  if (optionBits & 0x8) f.options.level_zero_context = &level_zero_context;
  if (optionBits & 0x10) f.options.metal_resolver = &f.resolver;
  const bool rawDtype = (optionBits & 0x20) != 0;
  const bool rawDevice = (optionBits & 0x40) != 0;
  if (optionBits & 0x80) {
    f.export_options.level_zero_context = &level_zero_context;
    f.export_options.level_zero_device = &level_zero_context;
  }

  uint8_t sel = in.Byte();
  f.major = sel < 224 ? 1u : in.Raw<uint32_t>();
  sel = in.Byte();
  f.minor = sel < 200 ? sel % 5u : in.Raw<uint32_t>();
  sel = in.Byte();
  f.flags = sel < 192 ? uint64_t{sel & 7u} : in.Raw<uint64_t>();
  sel = in.Byte();
  f.ndim = sel < 200 ? sel % 9 : sel < 232 ? 60 + sel % 8 : in.Raw<int32_t>();
  if (rawDtype) {
    f.dtype.code = in.Byte();
    f.dtype.bits = in.Byte();
    f.dtype.lanes = in.Raw<uint16_t>();
  } else {
    f.dtype = kDtypes[in.Byte() % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
  }
  f.device.device_type = static_cast<DLDeviceType>(
      rawDevice ? in.Raw<int32_t>()
                : kDeviceTypes[in.Byte() % (sizeof(kDeviceTypes) / sizeof(kDeviceTypes[0]))]);
  f.device.device_id = static_cast<int8_t>(in.Byte()) % 4;
  sel = in.Byte();
  f.byte_offset = sel < 200 ? uint64_t{in.Byte()} : static_cast<uint64_t>(in.Int64());
  f.buffer_size = size_t{in.Byte()} * 16;
  f.raw_pointer = static_cast<uint64_t>(in.Int64());
  f.data_shift = in.Byte();
  f.export_options.read_only = in.Bit();
  f.export_options.device_id = static_cast<int8_t>(in.Byte()) % 3;

  if (f.legacy) {
    Run<DLManagedTensor>(f, in);
  } else {
    Run<DLManagedTensorVersioned>(f, in);
  }
  return 0;
}
