// Fuzz target: random layouts against random buffer sizes -> ToDLPackVersioned / ToDLPack.
// On success the exported layout must lie inside the described buffer (which lies inside the
// harness's allocation), the hold must have moved into the export, and the deleter must
// release exactly once; on failure the Tensor must keep its hold, and dropping it must release
// exactly once. Sometimes the export is imported back (FromDLPack) and dropped instead.
// spec/reliability.md FUZZ-2.
#include <memory>
#include <utility>
#include <vector>

#include "fuzz_common.h"

namespace {

using dlbfuzz::Input;

constexpr const char* kSpaces[] = {"host", "cuda", "hip", "level_zero"};
constexpr int32_t kDeviceTypes[] = {0, 1, 2, 3, 10, 11, 13, 14, 8, 4, 42, -1};
constexpr DLDataType kDtypes[] = {{0, 8, 1},  {0, 32, 1}, {1, 16, 1},  {2, 16, 1}, {2, 32, 1},
                                  {2, 64, 1}, {4, 16, 1}, {5, 128, 1}, {6, 8, 1},  {12, 8, 1},
                                  {15, 6, 1}, {17, 4, 1}, {2, 32, 4},  {17, 4, 3}, {15, 6, 5},
                                  {2, 32, 0}, {6, 16, 1}, {99, 8, 1}};

enum class Hold { kNone, kRelease, kOwner };

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t modeBits = in.Byte();
  const bool legacy = modeBits & 1;
  const bool roundTrip = (modeBits & 0x2) != 0;
  const bool contiguous = (modeBits & 0x4) != 0;
  const bool rawDtype = (modeBits & 0x8) != 0;
  const bool withDevice = (modeBits & 0x10) != 0;
  const bool nullDescriptor = (modeBits & 0x20) != 0;
  const Hold hold = static_cast<Hold>(in.Byte() % 3);

  // The harness's allocation and the part of it the descriptor describes.
  const size_t allocationHigh = in.Byte();  // separate reads: operand order is unspecified
  const size_t allocation = (allocationHigh << 4) | (in.Byte() & 0xFu);  // 0..4095
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[allocation == 0 ? 1 : allocation]);
  const int64_t described = nullDescriptor
                                ? 0
                                : static_cast<int64_t>(allocation) -
                                      static_cast<int64_t>(in.Byte() % 4 == 0 ? in.Byte() % 17 : 0);
  const int64_t length = described < 0 ? 0 : described;
  const int64_t pointer =
      nullDescriptor ? 0 : static_cast<int64_t>(reinterpret_cast<intptr_t>(buffer.get()));

  DLDataType dtype{};
  if (rawDtype) {
    dtype.code = in.Byte();
    dtype.bits = in.Byte();
    dtype.lanes = in.Raw<uint16_t>();
  } else {
    dtype = kDtypes[in.Byte() % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
  }
  const uint8_t ndimSelector = in.Byte();
  const size_t ndim = ndimSelector < 240 ? ndimSelector % 10 : 60 + ndimSelector % 8;
  std::vector<int64_t> shape(ndim);
  std::vector<int64_t> strides(contiguous ? 0 : ndim);
  for (size_t i = 0; i < ndim; ++i) {
    shape[i] = in.Byte() < 240 ? in.Byte() % 9 : in.Int64();
    if (!contiguous) strides[i] = in.Int64();
  }
  const uint8_t offsetSelector = in.Byte();
  const uint64_t byteOffset = offsetSelector < 200 ? uint64_t{in.Byte()} * (offsetSelector % 17)
                                                   : static_cast<uint64_t>(in.Int64());

  dlbridge::Tensor tensor;
  try {
    tensor.layout = dlbridge::TensorLayout(dtype, shape, strides, byteOffset);
  } catch (const dlbridge::Error&) {
    return 0;  // a layout dlbridge refuses to build; nothing was held yet
  }
  try {
    tensor.descriptor.Set(pointer, length, kSpaces[in.Byte() % 4]);
  } catch (const dlbridge::Error&) {
    FUZZ_CHECK(false);  // every pointer/size pair above is valid
  }
  if (withDevice) {
    tensor.device.device_type = static_cast<DLDeviceType>(
        kDeviceTypes[in.Byte() % (sizeof(kDeviceTypes) / sizeof(kDeviceTypes[0]))]);
    tensor.device.device_id = static_cast<int8_t>(in.Byte()) % 3;
  }
  const uint8_t flagSelector = in.Byte();
  tensor.flags = flagSelector < 224 ? uint64_t{flagSelector & 7u} : in.Raw<uint64_t>();

  dlbridge::ExportOptions options;
  const uint8_t optionBits = in.Byte();
  static int context;
  options.read_only = optionBits & 1;
  if (optionBits & 0x2) options.level_zero_context = &context;
  if (optionBits & 0x4) options.level_zero_device = &context;
  options.device_id = static_cast<int8_t>(in.Byte()) % 3;
  options.allow_unowned = hold == Hold::kNone;  // EXP-3: hold-less inputs reach every check

  dlbfuzz::LedgerBaseline ledger;
  dlbfuzz::ReleaseCount releases;
  auto owner = std::make_shared<int>(0);
  if (hold == Hold::kRelease)
    tensor.descriptor.SetRelease(&dlbfuzz::ReleaseCount::Release, &releases);
  if (hold == Hold::kOwner) tensor.descriptor.SetOwner(owner);
  // How many times the hold has been dropped.
  auto drops = [&] { return hold == Hold::kOwner ? 2 - owner.use_count() : releases.calls; };
  const dlbridge::TensorLayout layout = tensor.layout;
  const uint64_t flags =
      tensor.flags | (options.read_only ? uint64_t{DLPACK_FLAG_BITMASK_READ_ONLY} : 0);

  try {
    if (legacy) {
      DLManagedTensor* out = dlbridge::ToDLPack(std::move(tensor), options);
      FUZZ_CHECK(!tensor.descriptor.HasOwnership());
      FUZZ_CHECK(out->deleter != nullptr);
      FUZZ_CHECK((flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
      dlbfuzz::CheckExportedInside(out->dl_tensor, layout, flags, pointer, length);
      if (hold == Hold::kRelease) FUZZ_CHECK(out->manager_ctx == &releases);
      if (hold == Hold::kNone) FUZZ_CHECK(out->manager_ctx == nullptr);
      FUZZ_CHECK(drops() == 0);
      if (roundTrip) {
        try {
          dlbridge::Tensor back = dlbridge::FromDLPack(out);
        } catch (const dlbridge::Error&) {
        }
      } else {
        out->deleter(out);
      }
    } else {
      DLManagedTensorVersioned* out = dlbridge::ToDLPackVersioned(std::move(tensor), options);
      FUZZ_CHECK(!tensor.descriptor.HasOwnership());
      FUZZ_CHECK(out->deleter != nullptr);
      FUZZ_CHECK(out->version.major == 1);
      FUZZ_CHECK((out->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0);
      FUZZ_CHECK(out->flags == (flags & ~uint64_t{DLPACK_FLAG_BITMASK_IS_COPIED}));
      dlbfuzz::CheckExportedInside(out->dl_tensor, layout, out->flags, pointer, length);
      if (hold == Hold::kRelease) FUZZ_CHECK(out->manager_ctx == &releases);
      if (hold == Hold::kNone) FUZZ_CHECK(out->manager_ctx == nullptr);
      FUZZ_CHECK(drops() == 0);
      if (roundTrip) {
        try {
          dlbridge::Tensor back = dlbridge::FromDLPack(out);
        } catch (const dlbridge::Error&) {
        }
      } else {
        out->deleter(out);
      }
    }
    FUZZ_CHECK(drops() == (hold == Hold::kNone ? 0 : 1));
  } catch (const dlbridge::Error&) {
    FUZZ_CHECK(tensor.descriptor.HasOwnership() == (hold != Hold::kNone));  // the hold is kept
    FUZZ_CHECK(drops() == 0);
    tensor = dlbridge::Tensor{};
    FUZZ_CHECK(drops() == (hold == Hold::kNone ? 0 : 1));
  }
  ledger.Check();
  return 0;
}
