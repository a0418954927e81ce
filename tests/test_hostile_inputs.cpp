// The hostile-input catalogue (spec/validation.md, "Hostile inputs"): one table, one test.
// Every row is one hostile input with its expected ErrorCode and a piece of the message.
// Import rows count the producer's deleter (exactly once; zero times when it is NULL);
// export rows check that a failed export keeps the caller's hold and that dropping the
// Tensor afterwards releases exactly once.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "counting.h"

using dlbridge::ErrorCode;
using dlbridge::ExportOptions;
using dlbridge::FromDLPack;
using dlbridge::ImportOptions;
using dlbridge::Tensor;
using dlbridge::TensorLayout;
using namespace dlbtest;

namespace {

constexpr ErrorCode kAccepted = static_cast<ErrorCode>(0);  // the input is legal
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

enum Forms : int { kVersioned = 1, kLegacy = 2, kBoth = 3 };

// Metal handles are small integers: 1 private, 2 shared (16 bytes), 3 managed; others unknown.
struct HostileResolver : dlbridge::MetalResolver {
  unsigned char bytes[16] = {};
  bool Resolve(void* buffer, dlbridge::MetalBufferInfo& info) const override {
    switch (reinterpret_cast<uintptr_t>(buffer)) {
      case 1: info = {dlbridge::MetalStorageMode::kPrivate, nullptr, 4096}; return true;
      case 2:
        info = {dlbridge::MetalStorageMode::kShared, const_cast<unsigned char*>(bytes), 16};
        return true;
      case 3:
        info = {dlbridge::MetalStorageMode::kManaged, const_cast<unsigned char*>(bytes), 4096};
        return true;
      default: return false;
    }
  }
};
const HostileResolver g_resolver;

// ---- Import ---------------------------------------------------------------------------------

// A valid C-contiguous float32 {4, 4} host tensor, versioned 1.DLPACK_MINOR_VERSION or legacy.
struct ImportFixture {
  explicit ImportFixture(bool isLegacy) : legacy(isLegacy) {}
  Buffer buf;
  Versioned v{buf.bytes, {4, 4}};
  Legacy l{buf.bytes, {4, 4}};
  bool legacy;
  bool pass_null = false;  // hand FromDLPack a null pointer
  ImportOptions options;

  DLTensor& T() { return legacy ? l.T() : v.T(); }
  DLManagedTensorVersioned& V() { return v.managed; }
  void NullDeleter() {
    v.managed.deleter = nullptr;
    l.managed.deleter = nullptr;
  }
  bool HasDeleter() const {
    return legacy ? l.managed.deleter != nullptr : v.managed.deleter != nullptr;
  }
  int Deletes() const { return legacy ? l.deletes : v.deletes; }
  Tensor Run() {
    if (legacy) return FromDLPack(pass_null ? nullptr : &l.managed, options);
    return FromDLPack(pass_null ? nullptr : &v.managed, options);
  }
  void OneDim(int64_t extent, int64_t stride) {
    T().ndim = 1;
    T().shape[0] = extent;
    T().strides[0] = stride;
  }
};

struct ImportRow {
  const char* id;
  const char* input;
  int forms;
  void (*mutate)(ImportFixture&);
  ErrorCode code;
  const char* text;
};

using F = ImportFixture;
const ImportRow kImportRows[] = {
    {"HOST-1", "major version 0", kVersioned, [](F& f) { f.V().version.major = 0; },
     ErrorCode::kUnsupportedVersion, "DLPack version 0."},
    {"HOST-2", "major version 2", kVersioned, [](F& f) { f.V().version.major = 2; },
     ErrorCode::kUnsupportedVersion, "DLPack version 2."},
    {"HOST-3", "major version 0xFFFFFFFF over a garbage DLTensor", kVersioned,
     [](F& f) {
       f.V().version.major = 0xFFFFFFFFu;
       f.T().ndim = -7;
       f.T().shape = reinterpret_cast<int64_t*>(uintptr_t{0x10});
       f.T().dtype = {250, 1, 0};
     },
     ErrorCode::kUnsupportedVersion, "DLPack version 4294967295."},
    {"HOST-4", "ndim -1", kBoth, [](F& f) { f.T().ndim = -1; }, ErrorCode::kInvalidShape,
     "ndim is -1; accepted: 0..64"},
    {"HOST-5", "ndim 65", kBoth, [](F& f) { f.T().ndim = 65; }, ErrorCode::kInvalidShape,
     "ndim is 65; accepted: 0..64"},
    {"HOST-6", "ndim INT32_MIN", kBoth,
     [](F& f) { f.T().ndim = std::numeric_limits<int32_t>::min(); }, ErrorCode::kInvalidShape,
     "ndim is -2147483648"},
    {"HOST-7", "NULL shape with ndim 2", kBoth, [](F& f) { f.T().shape = nullptr; },
     ErrorCode::kInvalidShape, "shape is NULL with ndim 2"},
    {"HOST-8", "extent -1", kBoth, [](F& f) { f.T().shape[1] = -1; }, ErrorCode::kInvalidShape,
     "shape[1] is -1; extents must be >= 0"},
    {"HOST-9", "extent INT64_MIN", kBoth, [](F& f) { f.T().shape[0] = kI64Min; },
     ErrorCode::kInvalidShape, "shape[0] is -9223372036854775808"},
    {"HOST-10", "element count overflows (2^40 x 2^40)", kBoth,
     [](F& f) {
       f.T().shape[0] = int64_t{1} << 40;
       f.T().shape[1] = int64_t{1} << 40;
     },
     ErrorCode::kOverflow, "the element count overflows int64 at shape[1]"},
    {"HOST-11", "stride INT64_MAX reaches past int64", kBoth,
     [](F& f) { f.T().strides[0] = kI64Max; }, ErrorCode::kOverflow,
     "strides[0] = 9223372036854775807 with shape[0] = 4 reaches past int64"},
    {"HOST-12", "stride INT64_MIN reaches below int64", kBoth,
     [](F& f) { f.T().strides[1] = kI64Min; }, ErrorCode::kOverflow,
     "strides[1] = -9223372036854775808 with shape[1] = 4 reaches past int64"},
    {"HOST-13", "element extent INT64_MAX + 1", kBoth, [](F& f) { f.OneDim(2, kI64Max); },
     ErrorCode::kOverflow, "the layout's extent overflows int64"},
    {"HOST-14", "byte size overflows (2^62 float32)", kBoth,
     [](F& f) { f.OneDim(int64_t{1} << 62, 1); }, ErrorCode::kOverflow,
     "the layout's extent in bytes overflows int64"},
    {"HOST-15", "NULL strides from a 1.3 producer", kVersioned,
     [](F& f) { f.T().strides = nullptr; }, ErrorCode::kInvalidStrides,
     "strides is NULL with ndim 2; DLPack >= 1.2 requires strides"},
    {"HOST-16", "NULL data with 16 elements", kBoth, [](F& f) { f.T().data = nullptr; },
     ErrorCode::kNullData, "data is NULL but the tensor has 16 elements"},
    {"HOST-17", "dtype code 18 (first unknown)", kBoth,
     [](F& f) {
       f.T().dtype = {18, 8, 1};
     },
     ErrorCode::kUnsupportedDtype, "dtype.code 18 is unknown to this build"},
    {"HOST-18", "dtype code 255", kBoth,
     [](F& f) {
       f.T().dtype = {255, 32, 1};
     },
     ErrorCode::kUnsupportedDtype, "dtype.code 255 is unknown to this build"},
    {"HOST-19", "float with 8 bits", kBoth,
     [](F& f) {
       f.T().dtype = {kDLFloat, 8, 1};
     },
     ErrorCode::kInvalidDtype,
     "dtype.bits 8 does not match code 2 (float); accepted bits: 16, 32, 64"},
    {"HOST-20", "bool with 1 bit", kBoth,
     [](F& f) {
       f.T().dtype = {kDLBool, 1, 1};
     },
     ErrorCode::kInvalidDtype, "dtype.bits 1 does not match code 6 (bool); accepted bits: 8"},
    {"HOST-21", "fp8 (float8_e4m3fn) with 16 bits", kBoth,
     [](F& f) {
       f.T().dtype = {10, 16, 1};
     },
     ErrorCode::kInvalidDtype, "dtype.bits 16 does not match code 10 (float8_e4m3fn)"},
    {"HOST-22", "fp6 (float6_e2m3fn) with 8 bits", kBoth,
     [](F& f) {
       f.T().dtype = {15, 8, 1};
     },
     ErrorCode::kInvalidDtype,
     "dtype.bits 8 does not match code 15 (float6_e2m3fn); accepted bits: 6"},
    {"HOST-23", "fp4 (float4_e2m1fn) with 8 bits", kBoth,
     [](F& f) {
       f.T().dtype = {17, 8, 1};
     },
     ErrorCode::kInvalidDtype,
     "dtype.bits 8 does not match code 17 (float4_e2m1fn); accepted bits: 4"},
    {"HOST-24", "lanes 0", kBoth, [](F& f) { f.T().dtype.lanes = 0; }, ErrorCode::kInvalidDtype,
     "dtype.lanes is 0; lanes must be >= 1"},
    {"HOST-25", "int with 0 bits", kBoth,
     [](F& f) {
       f.T().dtype = {kDLInt, 0, 1};
     },
     ErrorCode::kInvalidDtype, "dtype.bits 0 does not match code 0 (int)"},
    {"HOST-26", "complex with 32 bits", kBoth,
     [](F& f) {
       f.T().dtype = {kDLComplex, 32, 1};
     },
     ErrorCode::kInvalidDtype, "dtype.bits 32 does not match code 5 (complex)"},
    {"HOST-27", "device type 0", kBoth,
     [](F& f) { f.T().device.device_type = static_cast<DLDeviceType>(0); },
     ErrorCode::kUnsupportedDevice, "device_type 0 is unknown to this build"},
    {"HOST-28", "device type -1", kBoth,
     [](F& f) { f.T().device.device_type = static_cast<DLDeviceType>(-1); },
     ErrorCode::kUnsupportedDevice, "device_type -1 is unknown to this build"},
    {"HOST-29", "device type 42", kBoth,
     [](F& f) { f.T().device.device_type = static_cast<DLDeviceType>(42); },
     ErrorCode::kUnsupportedDevice, "device_type 42 is unknown to this build"},
    {"HOST-30", "OpenCL (cl_mem handle)", kBoth,
     [](F& f) {
       f.T().device = {kDLOpenCL, 0};
     },
     ErrorCode::kUnsupportedDevice, "device_type 4 (kDLOpenCL) is not supported"},
    {"HOST-31", "Vulkan (buffer handle)", kBoth,
     [](F& f) {
       f.T().device = {kDLVulkan, 0};
     },
     ErrorCode::kUnsupportedDevice, "device_type 7 (kDLVulkan) is not supported"},
    {"HOST-32", "ExtDev (reserved)", kBoth,
     [](F& f) {
       f.T().device = {kDLExtDev, 0};
     },
     ErrorCode::kUnsupportedDevice, "device_type 12 (kDLExtDev) is not supported"},
    {"HOST-33", "Metal without a resolver", kBoth,
     [](F& f) {
       f.T().device = {kDLMetal, 0};
     },
     ErrorCode::kMissingContext, "kDLMetal holds an id<MTLBuffer>, not an address"},
    {"HOST-34", "Level Zero (kDLOneAPI) without a context", kBoth,
     [](F& f) {
       f.T().device = {kDLOneAPI, 0};
     },
     ErrorCode::kMissingContext, "device_type kDLOneAPI needs ImportOptions::level_zero_context"},
    {"HOST-35", "CUDA with device_id -1", kBoth,
     [](F& f) {
       f.T().device = {kDLCUDA, -1};
     },
     ErrorCode::kDeviceMismatch, "device_id is -1 for kDLCUDA; accepted: >= 0"},
    {"HOST-36", "unknown flag bit 3", kVersioned, [](F& f) { f.V().flags = uint64_t{1} << 3; },
     ErrorCode::kInvalidFlags, "flags has bits 0x8 that DLPack"},
    {"HOST-37", "unknown flag bit 63 beside READ_ONLY", kVersioned,
     [](F& f) { f.V().flags = (uint64_t{1} << 63) | DLPACK_FLAG_BITMASK_READ_ONLY; },
     ErrorCode::kInvalidFlags, "flags has bits 0x8000000000000000 that DLPack"},
    {"HOST-38", "byte_offset past INT64_MAX", kBoth,
     [](F& f) { f.T().byte_offset = uint64_t{1} << 63; }, ErrorCode::kOverflow,
     "byte_offset 9223372036854775808 overflows int64"},
    {"HOST-39", "byte_offset INT64_MAX past the address space", kBoth,
     [](F& f) { f.T().byte_offset = static_cast<uint64_t>(kI64Max); }, ErrorCode::kOverflow,
     "and this layout wraps around the address space"},
    {"HOST-40", "data at the top of the address space", kBoth,
     [](F& f) { f.T().data = reinterpret_cast<void*>(~uintptr_t{0} - 15); }, ErrorCode::kOverflow,
     "and this layout wraps around the address space"},
    {"HOST-41", "negative stride reaching below address 0", kBoth,
     [](F& f) {
       f.T().data = reinterpret_cast<void*>(uintptr_t{16});
       f.OneDim(100, -1);
     },
     ErrorCode::kOverflow, "and this layout wraps around the address space"},
    {"HOST-42", "packed fp4 whose lowest element is mid-byte", kBoth,
     [](F& f) {
       f.T().dtype = {17, 4, 1};
       f.OneDim(2, -1);
     },
     ErrorCode::kInvalidStrides, "does not start on a byte boundary"},
    {"HOST-43", "READ_ONLY input where writable is required", kVersioned,
     [](F& f) {
       f.V().flags = DLPACK_FLAG_BITMASK_READ_ONLY;
       f.options.require_writable = true;
     },
     ErrorCode::kReadOnly, "the tensor is read-only and ImportOptions::require_writable is set"},
    {"HOST-44", "legacy input treated read-only where writable is required", kLegacy,
     [](F& f) {
       f.options.legacy_read_only = true;
       f.options.require_writable = true;
     },
     ErrorCode::kReadOnly, "the tensor is read-only and ImportOptions::require_writable is set"},
    {"HOST-45", "Metal buffer the resolver does not know", kBoth,
     [](F& f) {
       f.T().device = {kDLMetal, 0};
       f.T().data = reinterpret_cast<void*>(uintptr_t{0x99});
       f.options.metal_resolver = &g_resolver;
     },
     ErrorCode::kInvalidArgument, "the MetalResolver does not know buffer 0x99"},
    {"HOST-46", "Metal private storage", kBoth,
     [](F& f) {
       f.T().device = {kDLMetal, 0};
       f.T().data = reinterpret_cast<void*>(uintptr_t{1});
       f.options.metal_resolver = &g_resolver;
     },
     ErrorCode::kUnsupportedDevice, "has private storage"},
    {"HOST-47", "Metal managed storage", kBoth,
     [](F& f) {
       f.T().device = {kDLMetal, 0};
       f.T().data = reinterpret_cast<void*>(uintptr_t{3});
       f.options.metal_resolver = &g_resolver;
     },
     ErrorCode::kUnsupportedDevice, "has managed storage"},
    {"HOST-48", "tensor larger than its Metal buffer", kBoth,
     [](F& f) {
       f.T().device = {kDLMetal, 0};
       f.T().data = reinterpret_cast<void*>(uintptr_t{2});
       f.options.metal_resolver = &g_resolver;
     },
     ErrorCode::kOutOfBounds, "reaches past the 16-byte Metal buffer"},
    {"HOST-49", "a null managed pointer", kBoth, [](F& f) { f.pass_null = true; },
     ErrorCode::kInvalidArgument, "the managed tensor is null"},
    {"HOST-50", "NULL deleter on a bad tensor (nothing to call)", kBoth,
     [](F& f) {
       f.NullDeleter();
       f.T().ndim = 65;
     },
     ErrorCode::kInvalidShape, "ndim is 65"},
    {"HOST-51", "NULL deleter on a good tensor", kBoth, [](F& f) { f.NullDeleter(); }, kAccepted,
     ""},
    {"HOST-52", "garbage data with zero elements", kBoth,
     [](F& f) {
       f.T().data = reinterpret_cast<void*>(~uintptr_t{0});
       f.T().shape[0] = 0;
     },
     kAccepted, ""},
    {"HOST-53", "a newer minor (1.99)", kVersioned, [](F& f) { f.V().version.minor = 99; },
     kAccepted, ""},
    {"HOST-54", "stride INT64_MIN over extent 2 (lowest reach INT64_MIN)", kBoth,
     [](F& f) { f.OneDim(2, kI64Min); }, ErrorCode::kOverflow,
     "the layout's extent overflows int64"},
};

// ---- Export ---------------------------------------------------------------------------------

// A float32 {4, 4} host tensor over a 4096-byte buffer; its hold (a counted release, or an
// owner reference when the row asks) is installed after the row's mutation.
struct ExportFixture {
  explicit ExportFixture(bool isLegacy) : legacy(isLegacy) {
    tensor.descriptor.Set(buf.Address(), 4096, "host");
    tensor.layout = F32({4, 4});
  }
  Buffer buf;
  ReleaseCounter counter;
  std::shared_ptr<int> owner = std::make_shared<int>(7);
  bool use_owner = false;
  bool legacy;
  Tensor tensor;
  ExportOptions options;

  void Hold() {
    if (use_owner) {
      tensor.descriptor.SetOwner(owner);
    } else {
      tensor.descriptor.SetRelease(&ReleaseCounter::Release, &counter);
    }
  }
  // How many times the hold has been dropped so far.
  long Drops() const { return use_owner ? 2 - owner.use_count() : counter.calls; }
  void Layout(DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {},
              uint64_t offset = 0) {
    tensor.layout = TensorLayout(dtype, std::move(shape), std::move(strides), offset);
  }
  void Space(const char* space) { tensor.descriptor.Set(buf.Address(), 4096, space); }
};

struct ExportRow {
  const char* id;
  const char* input;
  int forms;
  void (*mutate)(ExportFixture&);
  ErrorCode code;
  const char* text;
};

using E = ExportFixture;
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kFp4{17, 4, 1};
const ExportRow kExportRows[] = {
    {"HOST-55", "layout larger than the descriptor", kBoth, [](E& f) { f.Layout(kF32, {2000}); },
     ErrorCode::kOutOfBounds,
     "the layout reaches bytes [0, 8000) from the pointer (byte offset 0) but the descriptor "
     "describes [0, 4096)"},
    {"HOST-56", "layout one byte past the end", kBoth, [](E& f) { f.Layout(kF32, {1024}, {}, 1); },
     ErrorCode::kOutOfBounds, "reaches bytes [1, 4097)"},
    {"HOST-57", "byte offset at the end of the buffer", kBoth,
     [](E& f) { f.Layout(kF32, {1}, {}, 4096); }, ErrorCode::kOutOfBounds,
     "reaches bytes [4096, 4100)"},
    {"HOST-58", "byte offset past INT64_MAX", kBoth,
     [](E& f) { f.Layout(kF32, {1}, {}, uint64_t{1} << 63); }, ErrorCode::kOutOfBounds,
     "reaches bytes [overflow)"},
    {"HOST-59", "negative stride reaching before the pointer", kBoth,
     [](E& f) { f.Layout(kF32, {4}, {-1}); }, ErrorCode::kOutOfBounds, "reaches bytes [-12, 4)"},
    {"HOST-60", "elements over a null zero-byte descriptor", kBoth,
     [](E& f) { f.tensor.descriptor.Set(0, 0, "host"); }, ErrorCode::kOutOfBounds,
     "but the descriptor describes [0, 0)"},
    {"HOST-61", "stride INT64_MAX", kBoth, [](E& f) { f.Layout(kF32, {3}, {kI64Max}); },
     ErrorCode::kOverflow, "strides[0] = 9223372036854775807 with shape[0] = 3 reaches past int64"},
    {"HOST-62", "element count overflows (2^40 x 2^40)", kBoth,
     [](E& f) {
       f.Layout(kF32, {int64_t{1} << 40, int64_t{1} << 40}, {1, 1});
     },
     ErrorCode::kOverflow, "the element count overflows int64 at shape[1]"},
    {"HOST-63", "byte size overflows (2^62 float32)", kBoth,
     [](E& f) { f.Layout(kF32, {int64_t{1} << 62}, {1}); }, ErrorCode::kOverflow,
     "the layout's extent in bytes overflows int64"},
    {"HOST-64", "unknown bits in Tensor::flags", kBoth,
     [](E& f) { f.tensor.flags = uint64_t{1} << 5; }, ErrorCode::kInvalidFlags,
     "the tensor's flag word has bits 0x20 that DLPack"},
    {"HOST-65", "legacy export asked to be read-only", kLegacy,
     [](E& f) { f.options.read_only = true; }, ErrorCode::kReadOnly,
     "the tensor is read-only and a legacy DLManagedTensor cannot say so"},
    {"HOST-66", "legacy export of a READ_ONLY tensor", kLegacy,
     [](E& f) { f.tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY; }, ErrorCode::kReadOnly,
     "the tensor is read-only and a legacy DLManagedTensor cannot say so"},
    {"HOST-67", "legacy export of padded fp4", kLegacy,
     [](E& f) {
       f.Layout(kFp4, {4});
       f.tensor.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
     },
     ErrorCode::kInvalidFlags, "padded sub-byte"},
    {"HOST-68", "lanes 0", kBoth,
     [](E& f) {
       f.Layout({kDLFloat, 32, 0}, {4});
     },
     ErrorCode::kInvalidDtype, "dtype.lanes is 0; lanes must be >= 1"},
    {"HOST-69", "dtype code 99", kBoth,
     [](E& f) {
       f.Layout({99, 8, 1}, {4});
     },
     ErrorCode::kUnsupportedDtype, "dtype.code 99 is unknown to this build"},
    {"HOST-70", "bool with 16 bits", kBoth,
     [](E& f) {
       f.Layout({kDLBool, 16, 1}, {4});
     },
     ErrorCode::kInvalidDtype, "dtype.bits 16 does not match code 6 (bool)"},
    {"HOST-71", "fp8 (float8_e5m2) with 4 bits", kBoth,
     [](E& f) {
       f.Layout({12, 4, 1}, {4});
     },
     ErrorCode::kInvalidDtype, "dtype.bits 4 does not match code 12 (float8_e5m2)"},
    {"HOST-72", "packed fp4 whose lowest element is mid-byte", kBoth,
     [](E& f) { f.Layout(kFp4, {2}, {-1}, 1); }, ErrorCode::kInvalidStrides,
     "does not start on a byte boundary"},
    {"HOST-73", "cuda without a device ordinal", kBoth, [](E& f) { f.Space("cuda"); },
     ErrorCode::kMissingDeviceId, "memory space \"cuda\" needs a device ordinal"},
    {"HOST-74", "hip without a device ordinal", kBoth, [](E& f) { f.Space("hip"); },
     ErrorCode::kMissingDeviceId, "memory space \"hip\" needs a device ordinal"},
    {"HOST-75", "level_zero without a context", kBoth,
     [](E& f) {
       f.Space("level_zero");
       f.options.device_id = 0;
       f.options.level_zero_device = &f.counter;
     },
     ErrorCode::kMissingContext, "needs ExportOptions::level_zero_context and level_zero_device"},
    {"HOST-76", "level_zero with a context but no device", kBoth,
     [](E& f) {
       f.Space("level_zero");
       f.options.device_id = 0;
       f.options.level_zero_context = &f.counter;
     },
     ErrorCode::kMissingContext, "needs ExportOptions::level_zero_context and level_zero_device"},
    {"HOST-77", "Tensor::device kDLMetal on host memory", kBoth,
     [](E& f) {
       f.tensor.device = {kDLMetal, 0};
     },
     ErrorCode::kDeviceMismatch,
     "the tensor's device type 8 (kDLMetal) contradicts memory space \"host\""},
    {"HOST-78", "Tensor::device kDLCUDA on host memory", kBoth,
     [](E& f) {
       f.tensor.device = {kDLCUDA, 0};
     },
     ErrorCode::kDeviceMismatch,
     "the tensor's device type 2 (kDLCUDA) contradicts memory space \"host\""},
    {"HOST-79", "Tensor::device of an unknown type (42)", kBoth,
     [](E& f) {
       f.tensor.device = {static_cast<DLDeviceType>(42), 0};
     },
     ErrorCode::kDeviceMismatch, "the tensor's device type 42 (unknown) contradicts"},
    {"HOST-80", "host memory with device_id 3", kBoth, [](E& f) { f.options.device_id = 3; },
     ErrorCode::kDeviceMismatch, "device_id 3 for kDLCPU; DLPack requires device_id 0"},
    {"HOST-81", "ExportOptions::device_id contradicting Tensor::device", kBoth,
     [](E& f) {
       f.Space("cuda");
       f.tensor.device = {kDLCUDA, 1};
       f.options.device_id = 2;
     },
     ErrorCode::kDeviceMismatch, "ExportOptions::device_id 2 contradicts the tensor's device id 1"},
    {"HOST-82", "CUDA managed memory with device_id 1", kBoth,
     [](E& f) {
       f.Space("cuda");
       f.tensor.device = {kDLCUDAManaged, 1};
     },
     ErrorCode::kDeviceMismatch, "device_id 1 for kDLCUDAManaged"},
    {"HOST-83", "owner hold with a layout larger than the descriptor", kBoth,
     [](E& f) {
       f.use_owner = true;
       f.Layout(kF32, {1025});
     },
     ErrorCode::kOutOfBounds, "reaches bytes [0, 4100)"},
    {"HOST-84", "zero elements over a null zero-byte descriptor", kBoth,
     [](E& f) {
       f.tensor.descriptor.Set(0, 0, "host");
       f.Layout(kF32, {0, 4});
     },
     kAccepted, ""},
    {"HOST-85", "stride INT64_MIN over extent 2 (lowest reach INT64_MIN)", kBoth,
     [](E& f) { f.Layout(kF32, {2}, {kI64Min}); }, ErrorCode::kOverflow,
     "the layout's extent overflows int64"},
    {"HOST-86", "descriptor pointer at 2^63", kBoth,
     [](E& f) { f.tensor.descriptor.Set(kI64Min, 4096, "host"); }, ErrorCode::kOverflow,
     "the descriptor's pointer 0x8000000000000000 with byte_offset 0 and this layout wraps around "
     "the address space"},
    {"HOST-87", "byte offset putting element zero at 2^63", kBoth,
     [](E& f) {
       f.tensor.descriptor.Set(kI64Max - 2047, 4096, "host");
       f.Layout(kF32, {4}, {}, 2048);
     },
     ErrorCode::kOverflow, "the descriptor's pointer 0x7ffffffffffff800 with byte_offset 2048"},
    {"HOST-88", "the last 4096 bytes below 2^63", kBoth,
     [](E& f) { f.tensor.descriptor.Set(kI64Max - 4095, 4096, "host"); }, kAccepted, ""},
};

template <class Fixture, class Row>
void ExpectError(Fixture& f, const Row& row, const dlbridge::Error& e) {
  INFO(row.id << " " << row.input << ": " << e.what());
  CHECK(e.code() == row.code);
  CHECK(std::string(e.what()).find(row.text) != std::string::npos);
  (void)f;
}

void RunImport(const ImportRow& row, bool legacy) {
  ImportFixture f(legacy);
  row.mutate(f);
  const int expectedDeletes = (f.pass_null || !f.HasDeleter()) ? 0 : 1;
  INFO(row.id << " (" << (legacy ? "legacy" : "versioned") << " import) " << row.input);
  bool accepted = false;
  try {
    Tensor t = f.Run();
    accepted = true;
    CHECK(f.Deletes() == 0);  // a successful import holds the tensor until the drop
    CHECK(t.descriptor.HasOwnership() == (expectedDeletes == 1));
  } catch (const dlbridge::Error& e) {
    ExpectError(f, row, e);
  }
  CHECK(accepted == (row.code == kAccepted));
  CHECK(f.Deletes() == expectedDeletes);
}

void RunExport(const ExportRow& row, bool legacy) {
  ExportFixture f(legacy);
  row.mutate(f);
  f.Hold();
  INFO(row.id << " (" << (legacy ? "legacy" : "versioned") << " export) " << row.input);
  bool accepted = false;
  try {
    if (legacy) {
      DLManagedTensor* m = dlbridge::ToDLPack(std::move(f.tensor), f.options);
      accepted = true;
      CHECK_FALSE(f.tensor.descriptor.HasOwnership());
      m->deleter(m);
    } else {
      DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(f.tensor), f.options);
      accepted = true;
      CHECK_FALSE(f.tensor.descriptor.HasOwnership());
      m->deleter(m);
    }
    CHECK(f.Drops() == 1);
  } catch (const dlbridge::Error& e) {
    ExpectError(f, row, e);
    CHECK(f.tensor.descriptor.HasOwnership());  // the hold is kept
    CHECK(f.Drops() == 0);
    f.tensor = Tensor{};  // dropping it now releases exactly once
    CHECK(f.Drops() == 1);
  }
  CHECK(accepted == (row.code == kAccepted));
}

template <class Row, size_t N>
bool IdsInOrder(const Row (&rows)[N], int first) {
  for (size_t i = 0; i < N; ++i) {
    if (std::string(rows[i].id) != "HOST-" + std::to_string(first + static_cast<int>(i)))
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE(
    "HOST-1..HOST-88 every catalogued hostile input gives its code, deleters run once, holds are "
    "kept") {
  const dlbridge::LedgerCounts before = dlbridge::GetLedgerCounts();
  REQUIRE(dlbridge::GetMetalResolver() == nullptr);
  CHECK(IdsInOrder(kImportRows, 1));
  CHECK(
      IdsInOrder(kExportRows, 1 + static_cast<int>(sizeof(kImportRows) / sizeof(kImportRows[0]))));
  for (const ImportRow& row : kImportRows) {
    if (row.forms & kVersioned) RunImport(row, false);
    if (row.forms & kLegacy) RunImport(row, true);
  }
  for (const ExportRow& row : kExportRows) {
    if (row.forms & kVersioned) RunExport(row, false);
    if (row.forms & kLegacy) RunExport(row, true);
  }
  const dlbridge::LedgerCounts after = dlbridge::GetLedgerCounts();
  CHECK(after.descriptor_holds == before.descriptor_holds);
  CHECK(after.exports == before.exports);
  CHECK(after.double_deletes == before.double_deletes);
}
