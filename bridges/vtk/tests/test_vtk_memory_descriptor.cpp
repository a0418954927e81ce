// VTK's own vtkMemoryDescriptor and dlbridge's, converted both ways (spec/bridges.md, VTK-19):
// against VTK's class where this VTK has it, else against the tests' stand-in with its
// interface (tests/standin/), so the conversion is tested before a VTK release ships it.
#include <doctest/doctest.h>
#include <vtkFloatArray.h>
#include <vtkNew.h>

#include <cstdint>
#include <string>

#include "counting.h"
#include "dlbridge/vtk_memory_descriptor.h"

#if DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR
using dlbridge::ErrorCode;
using dlbridge::MemoryDescriptor;
using dlbtest::ReleaseCounter;

TEST_CASE("VTK-19 a VTK descriptor's release moves into dlbridge's and runs once") {
  float values[4] = {};
  ReleaseCounter counter;
  vtkNew<vtkMemoryDescriptor> vtk;
  vtk->Set(reinterpret_cast<vtkTypeInt64>(values), sizeof values, "host", "component_1");
  vtk->SetRelease(&ReleaseCounter::Release, &counter);
  {
    MemoryDescriptor ours = dlbridge::vtk::FromVtkMemoryDescriptor(vtk);
    CHECK(ours.GetPointer() == reinterpret_cast<intptr_t>(values));
    CHECK(ours.GetSizeInBytes() == 16);
    CHECK(std::string(ours.GetRole()) == "component_1");
    CHECK(ours.HasOwnership());
    CHECK_FALSE(vtk->HasOwnership());  // taken, not shared
  }
  CHECK(counter.calls == 1);
}

TEST_CASE("VTK-19 a VTK descriptor's owner is registered once more, and kept by both") {
  vtkNew<vtkFloatArray> array;
  array->SetNumberOfValues(8);
  const int references = array->GetReferenceCount();
  vtkNew<vtkMemoryDescriptor> vtk;
  vtk->Set(reinterpret_cast<vtkTypeInt64>(array->GetPointer(0)), 32, nullptr, nullptr);
  vtk->SetOwner(array);
  {
    MemoryDescriptor ours = dlbridge::vtk::FromVtkMemoryDescriptor(vtk);
    CHECK(std::string(ours.GetMemorySpace()) == "host");  // null reads as host
    CHECK(std::string(ours.GetRole()) == "data");
    CHECK(array->GetReferenceCount() == references + 2);
    CHECK(vtk->GetOwner() == array.GetPointer());
  }
  CHECK(array->GetReferenceCount() == references + 1);
}

TEST_CASE("VTK-19 a VTK descriptor dlbridge cannot take keeps its hold") {
  float values[4] = {};
  ReleaseCounter counter;
  vtkNew<vtkMemoryDescriptor> vtk;
  vtk->Set(reinterpret_cast<vtkTypeInt64>(values), sizeof values, "metal");
  vtk->SetRelease(&ReleaseCounter::Release, &counter);
  CHECK_THROWS_AS(dlbridge::vtk::FromVtkMemoryDescriptor(vtk), dlbridge::Error);
  vtk->SetMemorySpace("host");
  vtk->SetSizeInBytes(-1);
  CHECK_THROWS_AS(dlbridge::vtk::FromVtkMemoryDescriptor(vtk), dlbridge::Error);
  CHECK_THROWS_AS(dlbridge::vtk::FromVtkMemoryDescriptor(nullptr), dlbridge::Error);
  CHECK(vtk->HasOwnership());
  CHECK(counter.calls == 0);
}

TEST_CASE("VTK-19 dlbridge's hold moves into a VTK descriptor, release or owner, once") {
  float values[4] = {};
  ReleaseCounter counter;
  MemoryDescriptor ours;
  ours.Set(values, sizeof values, "host", "component_0");
  ours.SetRelease(&ReleaseCounter::Release, &counter);
  {
    vtkSmartPointer<vtkMemoryDescriptor> vtk =
        dlbridge::vtk::ToVtkMemoryDescriptor(std::move(ours));
    CHECK(vtk->GetPointer() == reinterpret_cast<vtkTypeInt64>(values));
    CHECK(std::string(vtk->GetRole()) == "component_0");
    CHECK(vtk->HasOwnership());
    CHECK_FALSE(ours.HasOwnership());
  }
  CHECK(counter.calls == 1);
  // An owner hold goes over as the one call of TakeRelease's pair.
  auto owner = std::make_shared<int>(7);
  MemoryDescriptor owned;
  owned.Set(values, sizeof values, "host");
  owned.SetOwner(owner);
  {
    vtkSmartPointer<vtkMemoryDescriptor> vtk =
        dlbridge::vtk::ToVtkMemoryDescriptor(std::move(owned));
    CHECK(owner.use_count() == 2);
  }
  CHECK(owner.use_count() == 1);
  // No hold: none on either side.
  MemoryDescriptor bare;
  bare.Set(values, sizeof values, "host");
  CHECK_FALSE(dlbridge::vtk::ToVtkMemoryDescriptor(std::move(bare))->HasOwnership());
}
#else
TEST_CASE("VTK-19 is compiled where vtkMemoryDescriptor is found") {
  CHECK(DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR == 0);
}
#endif
