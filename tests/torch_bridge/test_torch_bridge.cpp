// C++ framework bridge with libtorch, both ways through legacy DLPack (spec/conformance.md
// TORCH-1, TORCH-2). Also the example for users who write such bridges: keep the framework's
// DLPack 0.6 header in its own translation unit (torch_side.cpp) and pass void* across.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <dlbridge/dlbridge.h>

#include <vector>

#include "torch_side.h"

namespace {
struct ReleaseCounter {
  int calls = 0;
  static void Release(void* context) { ++static_cast<ReleaseCounter*>(context)->calls; }
};
}  // namespace

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
    CHECK(values[2 * 1 + 1 * 4] == 6.0f);  // [2][1]
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
