// TensorLayout: storage, contiguous strides, validation (spec/validation.md LAY-*).
#include <doctest/doctest.h>

#include <limits>

#include "counting.h"

using dlbridge::ErrorCode;
using dlbridge::TensorLayout;

TEST_CASE("LAY-1 default layout is 0-d float32 with one element") {
  TensorLayout l;
  CHECK(l.Ndim() == 0);
  CHECK(l.ElementCount() == 1);
  CHECK(l.Dtype().code == kDLFloat);
  CHECK(l.Dtype().bits == 32);
  CHECK(l.Dtype().lanes == 1);
  CHECK(l.ByteOffset() == 0);
}

TEST_CASE("LAY-2 empty strides mean C-contiguous") {
  TensorLayout l({kDLInt, 16, 1}, {2, 3, 4}, {}, 8);
  REQUIRE(l.Ndim() == 3);
  CHECK(l.Strides()[0] == 12);
  CHECK(l.Strides()[1] == 4);
  CHECK(l.Strides()[2] == 1);
  CHECK(l.ByteOffset() == 8);
  CHECK(l.IsContiguous());
  CHECK(l.ElementCount() == 24);
  TensorLayout t({kDLInt, 16, 1}, {2, 3}, {1, 2});
  CHECK_FALSE(t.IsContiguous());
}

TEST_CASE("LAY-3 more than 8 dimensions live on the heap and copy/move correctly") {
  std::vector<int64_t> shape(20, 1);
  shape[19] = 5;
  TensorLayout a({kDLFloat, 64, 1}, shape);
  TensorLayout b = a;
  CHECK(b == a);
  TensorLayout c = std::move(b);
  CHECK(c == a);
  CHECK(c.Shape()[19] == 5);
  TensorLayout small({kDLFloat, 64, 1}, {3});
  c = small;
  CHECK(c.Ndim() == 1);
  c = std::move(a);
  CHECK(c.Ndim() == 20);
}

TEST_CASE("LAY-4 bad layouts are rejected naming the field") {
  CHECK_DLB_ERROR(TensorLayout({kDLFloat, 32, 1}, {2, -1}), ErrorCode::kInvalidShape,
                  "shape[1] is -1; extents must be >= 0");
  CHECK_DLB_ERROR(TensorLayout({kDLFloat, 32, 1}, {2, 3}, {1}), ErrorCode::kInvalidStrides,
                  "strides has 1 entries but shape has 2");
  CHECK_DLB_ERROR(TensorLayout({kDLFloat, 32, 1}, std::vector<int64_t>(65, 1)),
                  ErrorCode::kInvalidShape, "ndim is 65; accepted: 0..64");
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  CHECK_DLB_ERROR(TensorLayout({kDLFloat, 32, 1}, {3, big, 4}), ErrorCode::kOverflow,
                  "contiguous strides overflow");
  CHECK_DLB_ERROR(TensorLayout::FromArrays({kDLFloat, 32, 1}, 2, nullptr, nullptr),
                  ErrorCode::kInvalidShape, "shape is null");
}

TEST_CASE("LAY-5 a failed assignment leaves the layout as it was, empty tensors never overflow") {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  TensorLayout l =
      TensorLayout::FromArrays({kDLFloat, 32, 1}, 2, std::vector<int64_t>{3, 4}.data(), nullptr);
  const int64_t huge[3] = {3, big, 4};
  CHECK_DLB_ERROR(l = TensorLayout::FromArrays({kDLFloat, 32, 1}, 3, huge, nullptr),
                  ErrorCode::kOverflow, "contiguous strides overflow");
  CHECK(l.Ndim() == 2);
  CHECK(l.Shape()[0] == 3);
  CHECK(l.Strides()[0] == 4);
  const int64_t emptyHuge[4] = {2, int64_t{1} << 40, int64_t{1} << 40, 0};
  TensorLayout e = TensorLayout::FromArrays({kDLFloat, 32, 1}, 4, emptyHuge, nullptr);
  CHECK(e.ElementCount() == 0);
}
