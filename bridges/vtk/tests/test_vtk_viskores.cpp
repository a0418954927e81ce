// VTK-13: tensors adopted as vtkmDataArray (VTK 9.6's vtkDataArray over a Viskores
// ArrayHandle): the values VTK reads are the producer's, the producer is released once when
// VTK and Viskores let go, and a refusal leaves the hold with the caller.
#include <doctest/doctest.h>
#include <viskores/cont/ArrayHandleIndex.h>
#include <vtkDataArray.h>
#include <vtkFloatArray.h>
#include <vtkNew.h>
#include <vtkSmartPointer.h>

#include <array>
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

TEST_CASE("VTK-18 a vtkmDataArray exports where Viskores holds it, without a host copy") {
  Producer p(12);
  vtkSmartPointer<vtkDataArray> rows = dlbridge::vtk::AdoptViskores(p.Make({4, 3}));
  std::vector<dlbridge::Tensor> out = dlbridge::vtk::ExportViskores(rows);
  REQUIRE(out.size() == 1);
  CHECK(std::string(out[0].descriptor.GetRole()) == "data");
  CHECK(out[0].layout.Shape()[0] == 4);
  CHECK(out[0].layout.Shape()[1] == 3);
  CHECK(out[0].Data<const float>() == p.values.data());  // the producer's memory, no copy
  rows = nullptr;
  CHECK(p.releases == 0);  // the export holds the Viskores buffer, and so the producer
  out.clear();
  CHECK(p.releases == 1);

  // Struct-of-arrays: one tensor per component, each the component's own memory.
  Producer x(5), y(5);
  std::array<dlbridge::Tensor, 2> parts{x.Make({5}), y.Make({5})};
  auto soa = dlbridge::viskores::AdoptSOA<float, 2>(std::move(parts));
  vtkSmartPointer<vtkDataArray> pair = vtkSmartPointer<vtkDataArray>::Take(make_vtkmDataArray(soa));
  std::vector<dlbridge::Tensor> components = dlbridge::vtk::ExportViskores(pair);
  REQUIRE(components.size() == 2);
  CHECK(std::string(components[1].descriptor.GetRole()) == "component_1");
  CHECK(components[1].Data<const float>() == y.values.data());

  // Computed values have no storage: nothing to describe, never a flattened temporary.
  viskores::cont::ArrayHandleIndex index(7);
  vtkSmartPointer<vtkDataArray> implicit =
      vtkSmartPointer<vtkDataArray>::Take(make_vtkmDataArray(index));
  CHECK(dlbridge::vtk::ExportViskores(implicit).empty());

  vtkNew<vtkFloatArray> plain;
  CHECK_THROWS_AS(dlbridge::vtk::ExportViskores(plain), dlbridge::Error);
}
