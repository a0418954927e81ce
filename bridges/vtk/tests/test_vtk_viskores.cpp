// VTK-13: tensors adopted as vtkmDataArray (VTK 9.6's vtkDataArray over a Viskores
// ArrayHandle): the values VTK reads are the producer's, the producer is released once when
// VTK and Viskores let go, and a refusal leaves the hold with the caller.
#include <doctest/doctest.h>
#include <vtkDataArray.h>
#include <vtkSmartPointer.h>

#include <numeric>
#include <vector>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/vtk_viskores.h"

namespace {

struct Producer {
  std::vector<float> values;
  int releases = 0;
  explicit Producer(std::size_t n) : values(n) { std::iota(values.begin(), values.end(), 0.0f); }
  static void Release(void* self) { ++static_cast<Producer*>(self)->releases; }
  dlbridge::Tensor Make(std::vector<int64_t> shape, DLDataType dtype = {kDLFloat, 32, 1}) {
    dlbridge::Tensor t;
    t.descriptor.Set(values.data(), static_cast<int64_t>(values.size() * sizeof(float)));
    t.descriptor.SetRelease(&Release, this);
    t.layout = dlbridge::TensorLayout(dtype, std::move(shape));
    return t;
  }
};

}  // namespace

TEST_CASE("VTK-13 a tensor adopted as a vtkmDataArray is read by VTK and released once") {
  Producer p(6);
  {
    vtkSmartPointer<vtkDataArray> rows = dlbridge::vtk::AdoptViskores(p.Make({3, 2}));
    REQUIRE(rows != nullptr);
    CHECK(dynamic_cast<vtkmDataArray<float>*>(rows.Get()) != nullptr);
    CHECK(rows->GetDataType() == VTK_FLOAT);
    CHECK(rows->GetNumberOfTuples() == 3);
    CHECK(rows->GetNumberOfComponents() == 2);
    CHECK(rows->GetComponent(2, 1) == doctest::Approx(5.0));
    p.values[5] = 50.0f;  // one memory: VTK reads the producer's values
    CHECK(rows->GetComponent(2, 1) == doctest::Approx(50.0));
    vtkSmartPointer<vtkDataArray> copy = rows;
    rows = nullptr;
    CHECK(p.releases == 0);
  }
  CHECK(p.releases == 1);

  Producer q(4);
  {
    vtkSmartPointer<vtkDataArray> scalars = dlbridge::vtk::AdoptViskores(q.Make({4}));
    CHECK(scalars->GetNumberOfComponents() == 1);
    CHECK(scalars->GetTuple1(3) == doctest::Approx(3.0));
  }
  CHECK(q.releases == 1);
}

TEST_CASE("VTK-13 refusals leave the hold with the caller") {
  Producer p(8);
  dlbridge::Tensor cube = p.Make({2, 2, 2});
  CHECK_THROWS_AS(dlbridge::vtk::AdoptViskores(std::move(cube)), dlbridge::Error);
  dlbridge::Tensor halves = p.Make({8}, {kDLFloat, 16, 1});
  CHECK_THROWS_AS(dlbridge::vtk::AdoptViskores(std::move(halves)), dlbridge::Error);
  dlbridge::Tensor read_only = p.Make({8});
  read_only.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  CHECK_THROWS_AS(dlbridge::vtk::AdoptViskores(std::move(read_only)), dlbridge::Error);
  CHECK(cube.descriptor.HasOwnership());
  CHECK(halves.descriptor.HasOwnership());
  CHECK(read_only.descriptor.HasOwnership());
  CHECK(p.releases == 0);
}
