// Fuzz target: bytes -> a sequence of dlb_* calls (include/dlbridge/dlbridge_c.h) on one
// descriptor (set, setters, releases set, cleared and taken, NULL arguments), then an export
// through dlb_to_dlpack_versioned / dlb_to_dlpack with arbitrary layout, device, flags and
// options (struct_size too small, exact, or larger with zero or non-zero tail bytes), then
// deleting it or importing it back through dlb_from_dlpack*, and an import of a hand-built
// tensor with arbitrary fields. Checks: every status is DLB_OK or a DLB_ERR_* with a message;
// a failing setter changes nothing; a failed export keeps the hold and writes NULL; an export
// lies inside the described bytes with manager_ctx the release context; every release runs
// exactly once (a model of the hold predicts each call); every deleter runs exactly once
// (never when NULL); the ledger's counts come back. spec/reliability.md FUZZ-6.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dlbridge/dlbridge_c.h"
#include "fuzz_common.h"

namespace {

using dlbfuzz::i128;
using dlbfuzz::Input;

constexpr const char* kSpaces[] = {"host", "cuda", "hip", "level_zero", "metal", "gpu", nullptr};
constexpr const char* kRoles[] = {"data", "offsets", "", nullptr};
constexpr int32_t kDeviceTypes[] = {0, 1, 2, 3, 10, 11, 13, 14, 8, 4, 7, 42, -1};
constexpr DLDataType kDtypes[] = {{0, 8, 1},  {0, 32, 1},  {1, 16, 1}, {2, 32, 1}, {2, 64, 1},
                                  {4, 16, 1}, {5, 128, 1}, {6, 8, 1},  {0, 4, 1},  {1, 1, 1},
                                  {1, 2, 3},  {17, 4, 1},  {15, 6, 5}, {2, 32, 4}, {2, 32, 0},
                                  {0, 3, 1},  {99, 8, 1}};

// The model of the descriptor's hold: `held` is whether the counting release is installed.
struct Model {
  bool held = false;
  int expected = 0;  // release calls that must have happened by now
};

struct Deletes {
  int count = 0;
};
void DeleteVersioned(DLManagedTensorVersioned* self) {
  ++static_cast<Deletes*>(self->manager_ctx)->count;
}
void DeleteLegacy(DLManagedTensor* self) { ++static_cast<Deletes*>(self->manager_ctx)->count; }

// A status is DLB_OK, or a known DLB_ERR_* whose message is set.
void CheckStatus(int rc) {
  if (rc == DLB_OK) return;
  FUZZ_CHECK(rc < 0 && rc != DLB_ERR_INTERNAL);  // DLB_ERR_INTERNAL: a dlbridge bug
  FUZZ_CHECK(std::string(dlb_status_name(rc)) != "unknown");
  FUZZ_CHECK(dlb_last_error() != nullptr && dlb_last_error()[0] != '\0');
}

int64_t PickPointer(Input& in, const unsigned char* buffer) {
  const auto base = static_cast<int64_t>(reinterpret_cast<intptr_t>(buffer));
  switch (in.Byte() % 4) {
    case 0: return base;
    case 1: return base + (in.Byte() % 64);
    case 2: return 0;
    default: return in.Int64();
  }
}

// What the descriptor says, to check that a failing setter changed nothing.
struct Snapshot {
  int64_t pointer, size;
  std::string space, role;
  int owned;
  explicit Snapshot(const dlb_descriptor* d)
      : pointer(dlb_descriptor_get_pointer(d)),
        size(dlb_descriptor_get_size(d)),
        space(dlb_descriptor_get_memory_space(d)),
        role(dlb_descriptor_get_role(d)),
        owned(dlb_descriptor_has_ownership(d)) {}
  bool operator==(const Snapshot& o) const {
    return pointer == o.pointer && size == o.size && space == o.space && role == o.role &&
           owned == o.owned;
  }
};

// One call on the descriptor, chosen by the input.
void Operate(Input& in, dlb_descriptor* d, const unsigned char* buffer, size_t allocation,
             dlbfuzz::ReleaseCount& releases, Model& model) {
  const Snapshot before(d);
  int rc = DLB_OK;
  switch (in.Byte() % 11) {
    case 0: {
      const int64_t pointer = PickPointer(in, buffer);
      const int64_t size =
          in.Byte() < 200 ? static_cast<int64_t>(allocation) - in.Byte() % 8 : in.Int64();
      const char* space = kSpaces[in.Byte() % 7];
      rc = dlb_descriptor_set(d, pointer, size, space, kRoles[in.Byte() % 4]);
      break;
    }
    case 1: rc = dlb_descriptor_set_pointer(d, PickPointer(in, buffer)); break;
    case 2: rc = dlb_descriptor_set_size(d, in.Extent()); break;
    case 3: rc = dlb_descriptor_set_memory_space(d, kSpaces[in.Byte() % 7]); break;
    case 4: rc = dlb_descriptor_set_role(d, kRoles[in.Byte() % 4]); break;
    case 5:  // installing the same pair again keeps the hold (MD-14)
      rc = in.Bit() ? dlb_descriptor_set_release(d, &dlbfuzz::ReleaseCount::Release, &releases)
                    : dlb_descriptor_set_release_address(
                          d,
                          static_cast<int64_t>(
                              reinterpret_cast<intptr_t>(&dlbfuzz::ReleaseCount::Release)),
                          static_cast<int64_t>(reinterpret_cast<intptr_t>(&releases)));
      FUZZ_CHECK(rc == DLB_OK);
      model.held = true;
      break;
    case 6:
      rc = dlb_descriptor_set_release(d, nullptr, in.Bit() ? &releases : nullptr);
      FUZZ_CHECK(rc == DLB_OK);
      if (model.held) ++model.expected;
      model.held = false;
      break;
    case 7: {
      dlb_release_fn release = nullptr;
      void* context = nullptr;
      const bool nullOut = in.Byte() % 5 == 0;
      rc = dlb_descriptor_take_release(d, nullOut ? nullptr : &release, &context);
      if (nullOut) {
        FUZZ_CHECK(rc == DLB_ERR_INVALID_ARGUMENT);
        break;
      }
      FUZZ_CHECK(rc == DLB_OK);
      FUZZ_CHECK((release != nullptr) == model.held);
      if (release != nullptr) {
        FUZZ_CHECK(context == &releases);
        release(context);
        ++model.expected;
      }
      model.held = false;
      break;
    }
    case 8: {  // NULL handles: an error status, nothing touched
      FUZZ_CHECK(dlb_descriptor_set(nullptr, 0, 0, "host", "data") == DLB_ERR_INVALID_ARGUMENT);
      FUZZ_CHECK(dlb_descriptor_set_release(nullptr, &dlbfuzz::ReleaseCount::Release, &releases) ==
                 DLB_ERR_INVALID_ARGUMENT);
      FUZZ_CHECK(dlb_descriptor_get_pointer(nullptr) == 0);
      FUZZ_CHECK(dlb_descriptor_has_ownership(nullptr) == 0);
      FUZZ_CHECK(dlb_descriptor_get_release(nullptr) == nullptr);
      FUZZ_CHECK(dlb_descriptor_create(nullptr) == DLB_ERR_INVALID_ARGUMENT);
      rc = DLB_ERR_INVALID_ARGUMENT;
      break;
    }
    case 9: FUZZ_CHECK(dlb_status_name(static_cast<int>(in.Int64())) != nullptr); return;
    default: {  // the getters agree with the model
      FUZZ_CHECK(dlb_descriptor_has_ownership(d) == (model.held ? 1 : 0));
      FUZZ_CHECK((dlb_descriptor_get_release(d) != nullptr) == model.held);
      FUZZ_CHECK(dlb_descriptor_get_release_context(d) == (model.held ? &releases : nullptr));
      return;
    }
  }
  CheckStatus(rc);
  if (rc != DLB_OK) FUZZ_CHECK(Snapshot(d) == before);  // a failing call changes nothing
  FUZZ_CHECK(releases.calls == model.expected);
}

// Options structs of any struct_size: short (refused), exact, or longer with a tail that is
// zero (accepted) or not (refused). The storage outlives the call.
template <class Options>
const Options* PickOptions(Input& in, std::vector<unsigned char>& storage, const Options& base) {
  const uint8_t mode = in.Byte() % 6;
  if (mode == 0) return nullptr;
  size_t size = sizeof(Options);
  if (mode == 1) size = in.Byte() % sizeof(Options);
  if (mode == 2) size = sizeof(Options) + 8;
  storage.assign(sizeof(Options) + 16, 0);
  std::memcpy(storage.data(), &base, sizeof(Options));
  const auto structSize = static_cast<uint32_t>(size);
  std::memcpy(storage.data(), &structSize, sizeof structSize);  // struct_size comes first
  if (mode == 2 && in.Bit()) storage[sizeof(Options) + in.Byte() % 8] = 1;
  return reinterpret_cast<const Options*>(storage.data());
}

// Export the descriptor (given a hold first: hold-less exports need allow_unowned), then
// delete the export or import it back.
void Export(Input& in, dlb_descriptor* d, dlbfuzz::ReleaseCount& releases, Model& model) {
  if (!model.held) {
    FUZZ_CHECK(dlb_descriptor_set_release(d, &dlbfuzz::ReleaseCount::Release, &releases) == DLB_OK);
    model.held = true;
  }
  const uint8_t bits = in.Byte();
  const bool legacy = bits & 1;
  const bool nullStrides = bits & 2;
  const bool nullOut = (bits & 0x1C) == 0x1C;
  DLDataType dtype = kDtypes[in.Byte() % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
  if (bits & 0x20) {
    dtype.code = in.Byte();
    dtype.bits = in.Byte();
    dtype.lanes = in.Raw<uint16_t>();
  }
  const uint8_t ndimSelector = in.Byte();
  const int32_t ndim = ndimSelector < 240 ? ndimSelector % 8 : static_cast<int8_t>(in.Byte());
  const size_t n = ndim < 0 ? 0 : static_cast<size_t>(ndim > 64 ? 64 : ndim);
  // Exactly n elements: reading past them (or any for a refused ndim) is an ASan report.
  std::unique_ptr<int64_t[]> shape(n ? new int64_t[n] : nullptr);
  std::unique_ptr<int64_t[]> strides(n ? new int64_t[n] : nullptr);
  for (size_t i = 0; i < n; ++i) {
    shape[i] = in.Extent();
    strides[i] = in.Int64();
  }
  const uint8_t offsetSelector = in.Byte();
  const uint64_t byteOffset = offsetSelector < 200 ? uint64_t{in.Byte()} * (offsetSelector % 17)
                                                   : static_cast<uint64_t>(in.Int64());
  DLDevice device{};
  if (bits & 0x40) {
    device.device_type = static_cast<DLDeviceType>(
        kDeviceTypes[in.Byte() % (sizeof(kDeviceTypes) / sizeof(kDeviceTypes[0]))]);
    device.device_id = static_cast<int8_t>(in.Byte()) % 3;
  }
  const uint8_t flagSelector = in.Byte();
  const uint64_t flags = flagSelector < 224 ? uint64_t{flagSelector & 7u} : in.Raw<uint64_t>();
  dlb_export_options base = DLB_EXPORT_OPTIONS_INIT;
  static int context;
  const uint8_t optionBits = in.Byte();
  base.read_only = optionBits & 1;
  if (optionBits & 2) base.level_zero_context = &context;
  if (optionBits & 4) base.level_zero_device = &context;
  base.device_id = static_cast<int8_t>(in.Byte()) % 3 - 1;
  std::vector<unsigned char> storage;
  const dlb_export_options* options = PickOptions(in, storage, base);

  const int64_t pointer = dlb_descriptor_get_pointer(d);
  const int64_t size = dlb_descriptor_get_size(d);
  const int64_t* shapeArg = (n == 0 && (bits & 0x80)) ? nullptr : shape.get();
  const int64_t* stridesArg = nullStrides ? nullptr : strides.get();
  DLManagedTensorVersioned* versioned = nullptr;
  DLManagedTensor* old = nullptr;
  int rc = 0;
  if (legacy) {
    old = reinterpret_cast<DLManagedTensor*>(&context);  // must be overwritten
    rc = dlb_to_dlpack(d, dtype, ndim, shapeArg, stridesArg, byteOffset, device, flags, options,
                       nullOut ? nullptr : &old);
  } else {
    versioned = reinterpret_cast<DLManagedTensorVersioned*>(&context);
    rc = dlb_to_dlpack_versioned(d, dtype, ndim, shapeArg, stridesArg, byteOffset, device, flags,
                                 options, nullOut ? nullptr : &versioned);
  }
  CheckStatus(rc);
  FUZZ_CHECK(releases.calls == model.expected);
  if (rc != DLB_OK) {  // the hold stays, the output is NULL
    FUZZ_CHECK(dlb_descriptor_has_ownership(d) == 1);
    if (!nullOut) FUZZ_CHECK(legacy ? old == nullptr : versioned == nullptr);
    return;
  }
  FUZZ_CHECK(!nullOut);
  FUZZ_CHECK(dlb_descriptor_has_ownership(d) == 0);
  model.held = false;
  const DLTensor& t = legacy ? old->dl_tensor : versioned->dl_tensor;
  void* managerCtx = legacy ? old->manager_ctx : versioned->manager_ctx;
  FUZZ_CHECK(managerCtx == &releases);  // EXP-1
  FUZZ_CHECK(t.ndim == ndim && t.dtype.code == dtype.code && t.dtype.bits == dtype.bits &&
             t.dtype.lanes == dtype.lanes);
  FUZZ_CHECK(ndim == 0 || (t.shape != nullptr && t.strides != nullptr));  // EXP-5
  for (int32_t i = 0; i < ndim; ++i) {
    FUZZ_CHECK(t.shape[i] == shape[static_cast<size_t>(i)]);
    if (!nullStrides) FUZZ_CHECK(t.strides[i] == strides[static_cast<size_t>(i)]);
  }
  const uint64_t spanFlags = legacy ? flags : versioned->flags;
  const dlbfuzz::Span span = dlbfuzz::ComputeSpan(t.dtype, spanFlags, t.ndim, t.shape, t.strides);
  if (span.count != 0) {  // the reachable bytes lie in what the descriptor described
    const i128 start = i128{reinterpret_cast<uintptr_t>(t.data)} + t.byte_offset + span.low;
    FUZZ_CHECK(start >= pointer);
    FUZZ_CHECK(start + span.bytes <= i128{pointer} + size);
  }
  if (in.Bit()) {  // delete it
    if (legacy) {
      old->deleter(old);
    } else {
      versioned->deleter(versioned);
    }
    FUZZ_CHECK(releases.calls == ++model.expected);
    return;
  }
  std::vector<unsigned char> importStorage;
  const dlb_import_options importBase = DLB_IMPORT_OPTIONS_INIT;
  const dlb_import_options* importOptions = PickOptions(in, importStorage, importBase);
  dlb_descriptor* back = nullptr;
  dlb_layout layout{};
  layout.struct_size = in.Bit() ? sizeof(dlb_layout) : in.Byte();
  const int importRc =
      legacy ? dlb_from_dlpack(old, importOptions, &back, in.Bit() ? &layout : nullptr)
             : dlb_from_dlpack_versioned(versioned, importOptions, &back,
                                         in.Bit() ? &layout : nullptr);
  CheckStatus(importRc);
  if (importRc != DLB_OK) {  // consumed: the export's deleter released once
    FUZZ_CHECK(back == nullptr);
    FUZZ_CHECK(releases.calls == ++model.expected);
    return;
  }
  FUZZ_CHECK(back != nullptr && dlb_descriptor_has_ownership(back) == 1);
  FUZZ_CHECK(releases.calls == model.expected);
  dlb_descriptor_destroy(back);
  FUZZ_CHECK(releases.calls == ++model.expected);
}

// Import a hand-built tensor with arbitrary fields through the C API.
void Import(Input& in, unsigned char* buffer, size_t allocation) {
  const uint8_t bits = in.Byte();
  const bool legacy = bits & 1;
  const bool nullDeleter = (bits & 6) == 6;
  const bool nullOut = (bits & 0x18) == 0x18;
  Deletes deletes;
  const uint8_t ndimSelector = in.Byte();
  const int32_t ndim = ndimSelector < 240 ? ndimSelector % 6 : static_cast<int8_t>(in.Byte());
  const size_t n = ndim < 0 ? 0 : static_cast<size_t>(ndim > 64 ? 64 : ndim);
  std::unique_ptr<int64_t[]> shape(n ? new int64_t[n] : nullptr);
  std::unique_ptr<int64_t[]> strides(n ? new int64_t[n] : nullptr);
  for (size_t i = 0; i < n; ++i) {
    shape[i] = in.Extent();
    strides[i] = in.Int64();
  }
  DLTensor t{};
  t.data = in.Byte() % 4 == 0 ? nullptr : buffer + in.Byte() % (allocation + 1);
  t.device = {static_cast<DLDeviceType>(
                  kDeviceTypes[in.Byte() % (sizeof(kDeviceTypes) / sizeof(kDeviceTypes[0]))]),
              static_cast<int8_t>(in.Byte()) % 3};
  if (t.device.device_type == 0) t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype = kDtypes[in.Byte() % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
  t.shape = (bits & 0x20) ? nullptr : shape.get();
  t.strides = (bits & 0x40) ? nullptr : strides.get();
  t.byte_offset = in.Byte() < 240 ? in.Byte() : static_cast<uint64_t>(in.Int64());
  std::vector<unsigned char> storage;
  const dlb_import_options base = DLB_IMPORT_OPTIONS_INIT;
  const dlb_import_options* options = PickOptions(in, storage, base);
  dlb_descriptor* out = nullptr;
  dlb_layout layout{};
  layout.struct_size = in.Bit() ? sizeof(dlb_layout) : in.Byte();
  dlb_layout* layoutArg = in.Bit() ? &layout : nullptr;
  int rc = 0;
  // Both outlive the imported descriptor, whose release reads them.
  DLManagedTensor legacyTensor{};
  DLManagedTensorVersioned versionedTensor{};
  if (legacy) {
    legacyTensor.dl_tensor = t;
    legacyTensor.manager_ctx = &deletes;
    legacyTensor.deleter = nullDeleter ? nullptr : &DeleteLegacy;
    rc = dlb_from_dlpack(&legacyTensor, options, nullOut ? nullptr : &out, layoutArg);
  } else {
    DLManagedTensorVersioned& m = versionedTensor;
    m.version.major = in.Byte() < 240 ? 1 : in.Byte();
    m.version.minor = in.Byte() % (DLPACK_MINOR_VERSION + 2);
    const uint8_t flagSelector = in.Byte();
    m.flags = flagSelector < 224 ? uint64_t{flagSelector & 7u} : in.Raw<uint64_t>();
    m.dl_tensor = t;
    m.manager_ctx = &deletes;
    m.deleter = nullDeleter ? nullptr : &DeleteVersioned;
    rc = dlb_from_dlpack_versioned(&m, options, nullOut ? nullptr : &out, layoutArg);
  }
  CheckStatus(rc);
  if (rc != DLB_OK) {  // C-16: consumed, the deleter ran once
    FUZZ_CHECK(out == nullptr);
    FUZZ_CHECK(deletes.count == (nullDeleter ? 0 : 1));
    return;
  }
  FUZZ_CHECK(!nullOut && out != nullptr);
  FUZZ_CHECK(dlb_descriptor_has_ownership(out) == (nullDeleter ? 0 : 1));
  if (layoutArg != nullptr) FUZZ_CHECK(layout.ndim == ndim);
  FUZZ_CHECK(deletes.count == 0);
  dlb_descriptor_destroy(out);
  FUZZ_CHECK(deletes.count == (nullDeleter ? 0 : 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  dlbfuzz::LedgerBaseline ledger;
  const int64_t callbackExceptions = dlbridge::CallbackExceptionCount();
  const uint8_t mode = in.Byte();
  const size_t allocationHigh = in.Byte();  // separate reads: operand order is unspecified
  const size_t allocation = (allocationHigh << 4) | (in.Byte() & 0xFu);  // 0..4095
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[allocation == 0 ? 1 : allocation]);

  dlbfuzz::ReleaseCount releases;
  Model model;
  dlb_descriptor* d = nullptr;
  FUZZ_CHECK(dlb_descriptor_create(&d) == DLB_OK && d != nullptr);
  const int ops = mode & 0xF;
  for (int i = 0; i < ops; ++i) Operate(in, d, buffer.get(), allocation, releases, model);
  if (mode & 0x10) Export(in, d, releases, model);
  if (mode & 0x20) {
    for (int i = 0; i < (mode >> 6) + 1; ++i)
      Operate(in, d, buffer.get(), allocation, releases, model);
  }
  if (mode & 0x40) Import(in, buffer.get(), allocation);
  dlb_descriptor_destroy(d);  // a held release runs here, once
  if (model.held) ++model.expected;
  FUZZ_CHECK(releases.calls == model.expected);
  FUZZ_CHECK(dlbridge::CallbackExceptionCount() == callbackExceptions);
  ledger.Check();
  return 0;
}
