// The bridge kit (spec/bridges.md, KIT-*): Describe, the checked reach, CheckView.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "counting.h"
#include "dlbridge/bridge_kit.h"
#include "dlbridge/dlbridge.h"

using dlbridge::DataTypeOf;
using dlbridge::Error;
using dlbridge::ErrorCode;
using dlbridge::Tensor;
using dlbridge::TensorLayout;
namespace kit = dlbridge::kit;

namespace {

const kit::Site kSite{"kit_test", "Call"};

// The code and message of what `fn` throws; code kOk and "" when it does not throw.
template <class Fn>
std::pair<ErrorCode, std::string> Thrown(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ErrorCode::kInvalidArgument, "(nothing thrown)"};
}

Tensor Over(float* data, int64_t bytes, std::vector<int64_t> shape, std::vector<int64_t> strides,
            uint64_t offset = 0) {
  Tensor t;
  t.descriptor.Set(data, bytes);
  t.layout = TensorLayout(DataTypeOf<float>(), std::move(shape), std::move(strides), offset);
  return t;
}

}  // namespace

TEST_CASE("KIT-1 Describe spans the lowest to the highest element, negative strides too") {
  float values[12] = {};
  const int64_t shape[2] = {3, 4};
  const int64_t strides[2] = {-4, 1};  // rows reversed: element zero is the last row
  kit::StridedArray array;
  array.data = values + 8;
  array.dtype = DataTypeOf<float>();
  array.ndim = 2;
  array.shape = shape;
  array.strides = strides;
  auto owner = std::make_shared<int>(1);
  Tensor t = kit::Describe(array, owner, kSite);
  CHECK(t.descriptor.GetPointer() == reinterpret_cast<intptr_t>(values));
  CHECK(t.descriptor.GetSizeInBytes() == 48);
  CHECK(t.layout.ByteOffset() == 32);
  CHECK(t.Data<float>() == values + 8);
  CHECK(t.descriptor.HasOwnership());
  CHECK(owner.use_count() == 2);
  CHECK((t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);

  array.read_only = true;
  array.shape = shape;
  const int64_t empty[2] = {0, 4};
  array.shape = empty;
  Tensor none = kit::Describe(array, nullptr, kSite);
  CHECK(none.descriptor.GetSizeInBytes() == 0);
  CHECK(none.layout.ByteOffset() == 0);
  CHECK((none.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK_FALSE(none.descriptor.HasOwnership());
}

TEST_CASE("KIT-1 Describe refuses a device no space exports, naming the bridge and the call") {
  float value = 0;
  const int64_t shape[1] = {1};
  const int64_t strides[1] = {1};
  kit::StridedArray array;
  array.data = &value;
  array.ndim = 1;
  array.shape = shape;
  array.strides = strides;
  array.device = DLDevice{kDLMetal, 0};
  auto owner = std::make_shared<int>(1);
  const auto thrown = Thrown([&] { kit::Describe(array, owner, kSite); });
  CHECK(thrown.first == ErrorCode::kUnsupportedDevice);
  CHECK(thrown.second.rfind("dlbridge::kit_test::Call: device type 8 (kDLMetal)", 0) == 0);
  CHECK(thrown.second.find("kDLCPU") != std::string::npos);
  CHECK(owner.use_count() == 1);  // nothing kept
}

TEST_CASE("KIT-2 a reach past int64 is refused as kOverflow, never wrapped") {
  float value = 0;
  const int64_t shape[2] = {3, int64_t{1} << 40};
  const int64_t strides[2] = {int64_t{1} << 62, 1};
  kit::StridedArray array;
  array.data = &value;
  array.ndim = 2;
  array.shape = shape;
  array.strides = strides;
  auto thrown = Thrown([&] { kit::Describe(array, nullptr, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
  CHECK(thrown.second.find("dimension 0") != std::string::npos);
  // Offsets that fit as elements but not as bytes.
  const int64_t wide[1] = {int64_t{1} << 62};
  const int64_t one[1] = {1};
  array.ndim = 1;
  array.shape = wide;
  array.strides = one;
  thrown = Thrown([&] { kit::Describe(array, nullptr, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
  CHECK(thrown.second.find("INT64_MAX bytes") != std::string::npos);
  const int64_t mixed[2] = {int64_t{1} << 62, -(int64_t{1} << 62)};
  const int64_t two[2] = {2, 2};
  array.ndim = 2;
  array.shape = two;
  array.strides = mixed;
  thrown = Thrown([&] { kit::Describe(array, nullptr, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
}

TEST_CASE("KIT-2 a reach down to INT64_MIN elements is refused, never negated") {
  // One-byte elements: the span's bytes equal its elements, so only -low can overflow.
  int8_t value = 0;
  const int64_t two[1] = {2};
  const int64_t lowest[1] = {INT64_MIN};
  auto thrown = Thrown([&] { kit::ReachOf(1, two, lowest, 1, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
  CHECK(thrown.second.find("INT64_MAX bytes") != std::string::npos);
  const int64_t three[1] = {3};
  const int64_t half[1] = {-(int64_t{1} << 62)};  // 2 * -2^62 is INT64_MIN exactly
  thrown = Thrown([&] { kit::ReachOf(1, three, half, 1, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
  kit::StridedArray array;
  array.data = &value;
  array.dtype = DataTypeOf<int8_t>();
  array.ndim = 1;
  array.shape = two;
  array.strides = lowest;
  thrown = Thrown([&] { kit::Describe(array, nullptr, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
}

TEST_CASE("KIT-3 CheckView checks rank, dtype and read-only first, in that order") {
  float values[6] = {};
  Tensor t = Over(values, sizeof values, {2, 3}, {});
  kit::ViewNeeds needs;
  needs.view = "a test view";
  needs.max_ndim = 1;
  needs.dtype = DataTypeOf<double>();
  needs.writes = true;
  t.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  auto thrown = Thrown([&] { kit::CheckView(t, needs, kSite); });
  CHECK(thrown.first == ErrorCode::kInvalidShape);
  CHECK(
      thrown.second.find("ndim 2 (shape [2, 3], strides [3, 1]); a test view takes ndim 0 to 1") !=
      std::string::npos);
  needs.max_ndim = 2;
  thrown = Thrown([&] { kit::CheckView(t, needs, kSite); });
  CHECK(thrown.first == ErrorCode::kInvalidDtype);
  CHECK(thrown.second.find("float32 but a test view reads float64") != std::string::npos);
  needs.dtype = DataTypeOf<float>();
  needs.read_only_advice = "ask for a const view";
  thrown = Thrown([&] { kit::CheckView(t, needs, kSite); });
  CHECK(thrown.first == ErrorCode::kReadOnly);
  CHECK(thrown.second.find("ask for a const view") != std::string::npos);
  needs.writes = false;
  const kit::CheckedView view = kit::CheckView(t, needs, kSite);
  CHECK(view.data == values);
  CHECK(view.elements == 6);
  CHECK(view.reach.high == 5);
}

TEST_CASE("KIT-3 CheckView's stride rules leave extent-1 dimensions and empty tensors free") {
  float values[12] = {};
  kit::ViewNeeds needs;
  needs.strides = kit::StrideRule::kNonNegative;
  // A reversed axis of length 1 (NumPy's x[::-1] of one row) steps nowhere: accepted.
  CHECK_NOTHROW(kit::CheckView(Over(values, sizeof values, {1, 3}, {-3, 1}), needs, kSite));
  auto thrown = Thrown([&] {
    kit::CheckView(Over(values, sizeof values, {2, 3}, {-3, 1}, 12), needs, kSite);
  });
  CHECK(thrown.first == ErrorCode::kInvalidStrides);
  CHECK(thrown.second.find("strides[0] is -3") != std::string::npos);
  needs.strides = kit::StrideRule::kRowMajor;
  CHECK_NOTHROW(kit::CheckView(Over(values, sizeof values, {3, 1, 4}, {4, 99, 1}), needs, kSite));
  CHECK_NOTHROW(kit::CheckView(Over(values, 0, {0, 4}, {7, 7}), needs, kSite));
  thrown = Thrown([&] {
    kit::CheckView(Over(values, sizeof values, {3, 4}, {1, 3}), needs, kSite);
  });
  CHECK(thrown.first == ErrorCode::kInvalidStrides);
  CHECK(thrown.second.find("C-contiguous strides (1 here)") != std::string::npos);
  needs.strides = kit::StrideRule::kColMajor;
  CHECK_NOTHROW(kit::CheckView(Over(values, sizeof values, {3, 4}, {1, 3}), needs, kSite));
  needs.strides = kit::StrideRule::kPositiveUnique;
  CHECK_NOTHROW(kit::CheckView(Over(values, sizeof values, {3, 2}, {1, 6}), needs, kSite));
  thrown = Thrown([&] {
    kit::CheckView(Over(values, sizeof values, {3, 2}, {2, 3}), needs, kSite);
  });
  CHECK(thrown.first == ErrorCode::kInvalidStrides);
  CHECK(thrown.second.find("do not overlap") != std::string::npos);
  thrown = Thrown([&] {
    kit::CheckView(Over(values, sizeof values, {3, 2}, {0, 1}), needs, kSite);
  });
  CHECK(thrown.first == ErrorCode::kInvalidStrides);
  CHECK(thrown.second.find("no zero strides") != std::string::npos);
}

TEST_CASE("KIT-3 CheckView refuses memory the CPU cannot read and misaligned element zero") {
  float values[4] = {};
  Tensor t = Over(values, sizeof values, {4}, {});
  t.device = DLDevice{kDLCUDA, 0};
  kit::ViewNeeds needs;
  auto thrown = Thrown([&] { kit::CheckView(t, needs, kSite); });
  CHECK(thrown.first == ErrorCode::kUnsupportedDevice);
  CHECK(thrown.second.rfind("dlbridge::kit_test::Call: memory space", 0) == 0);
  needs.any_device = true;  // the caller reads it where it lives
  CHECK(kit::CheckView(t, needs, kSite).data == values);
  Tensor odd = Over(values, sizeof values, {2}, {}, 2);
  needs.any_device = false;
  thrown = Thrown([&] { kit::CheckView(odd, needs, kSite); });
  CHECK(thrown.first == ErrorCode::kInvalidArgument);
  CHECK(thrown.second.find("not aligned to 4 bytes") != std::string::npos);
  needs.alignment = 2;
  CHECK_NOTHROW(kit::CheckView(odd, needs, kSite));
}

TEST_CASE("KIT-3 an element count past int64 is refused through the site, naming the layout") {
  // Broadcast strides: the reach is one element, the element count 2^64.
  float value = 0;
  Tensor t = Over(&value, sizeof value, {int64_t{1} << 32, int64_t{1} << 32}, {0, 0});
  kit::ViewNeeds needs;
  auto thrown = Thrown([&] { kit::CheckView(t, needs, kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
  CHECK(thrown.second.rfind("dlbridge::kit_test::Call: ", 0) == 0);
  CHECK(thrown.second.find("shape [4294967296, 4294967296], strides [0, 0]") != std::string::npos);
  thrown = Thrown(
      [&] { kit::CheckStrides(t.layout, kit::StrideRule::kRowMajor, nullptr, "a view", kSite); });
  CHECK(thrown.first == ErrorCode::kOverflow);
  CHECK(thrown.second.rfind("dlbridge::kit_test::Call: ", 0) == 0);
}

TEST_CASE("KIT-3 DtypeText names dtypes DtypeName refuses") {
  CHECK(kit::DtypeText(DataTypeOf<float>()) == "float32");
  CHECK(kit::DtypeText(DLDataType{kDLFloat, 24, 1}) == "(code 2, bits 24, lanes 1)");
}

TEST_CASE("KIT-4 CheckStrides takes the exact strides a layout computes, extent-1 aside") {
  float values[12] = {};
  Tensor t = Over(values, sizeof values, {3, 1, 4}, {1, 5, 3});
  const int64_t mine[3] = {1, 3, 3};  // a column-major mapping of (3, 1, 4)
  CHECK_NOTHROW(kit::CheckStrides(t.layout, kit::StrideRule::kExact, mine, "a view", kSite));
  const int64_t other[3] = {4, 4, 1};
  const auto thrown =
      Thrown([&] { kit::CheckStrides(t.layout, kit::StrideRule::kExact, other, "a view", kSite); });
  CHECK(thrown.first == ErrorCode::kInvalidStrides);
  CHECK(thrown.second.find("strides[0] is 1 (shape [3, 1, 4], strides [1, 5, 3]); a view needs "
                           "strides [4, 4, 1]") != std::string::npos);
  // No element: nothing steps, any stride goes.
  Tensor none = Over(values, 0, {0, 3}, {-9, 0});
  CHECK_NOTHROW(
      kit::CheckStrides(none.layout, kit::StrideRule::kPositiveUnique, nullptr, "a view", kSite));
}
