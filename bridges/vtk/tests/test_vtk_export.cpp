// dlbridge::vtk::Export: every numeric AOS array type, zero copy, the array held as owner
// exactly as long as the last consumer (spec/bridges.md VTK-1..VTK-3, VTK-8).
#include <doctest/doctest.h>
#include <vtkBitArray.h>
#include <vtkCharArray.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkLongArray.h>
#include <vtkLongLongArray.h>
#include <vtkSOADataArrayTemplate.h>
#include <vtkShortArray.h>
#include <vtkSignedCharArray.h>
#include <vtkSmartPointer.h>
#include <vtkStringArray.h>
#include <vtkTypeInt64Array.h>
#include <vtkTypeUInt64Array.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnsignedIntArray.h>
#include <vtkUnsignedLongArray.h>
#include <vtkUnsignedLongLongArray.h>
#include <vtkUnsignedShortArray.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/vtk.h"
#include "vtk_test_support.h"

using dlbridge::ErrorCode;
using vtktest::DeleteCounter;

TEST_CASE_TEMPLATE("VTK-1 every numeric AOS array exports with its dtype, shape and pointer",
                   ArrayT, vtkCharArray, vtkSignedCharArray, vtkUnsignedCharArray, vtkShortArray,
                   vtkUnsignedShortArray, vtkIntArray, vtkUnsignedIntArray, vtkLongArray,
                   vtkUnsignedLongArray, vtkLongLongArray, vtkUnsignedLongLongArray, vtkIdTypeArray,
                   vtkTypeInt64Array, vtkTypeUInt64Array, vtkFloatArray, vtkDoubleArray) {
  using T = typename ArrayT::ValueType;
  auto array = vtkSmartPointer<ArrayT>::New();
  array->SetNumberOfComponents(3);
  array->SetNumberOfTuples(5);
  for (vtkIdType i = 0; i < 15; ++i) array->SetValue(i, static_cast<T>(i + 1));

  dlbridge::Tensor tensor = dlbridge::vtk::Export(array);
  CHECK(vtktest::SameDtype(tensor.layout.Dtype(), vtktest::ExpectedDtype<T>()));
  REQUIRE(tensor.layout.Ndim() == 2);
  CHECK(tensor.layout.Shape()[0] == 5);
  CHECK(tensor.layout.Shape()[1] == 3);
  CHECK(tensor.layout.IsContiguous());
  CHECK(tensor.descriptor.GetPointer() ==
        static_cast<int64_t>(reinterpret_cast<intptr_t>(array->GetVoidPointer(0))));
  CHECK(tensor.descriptor.GetSizeInBytes() == static_cast<int64_t>(15 * sizeof(T)));
  CHECK(std::string(tensor.descriptor.GetMemorySpace()) == "host");

  // Through DLPack and back: the consumer reads VTK's values in VTK's memory.
  dlbridge::Tensor imported = dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
  const T* values = reinterpret_cast<const T*>(static_cast<intptr_t>(
      imported.descriptor.GetPointer() + static_cast<int64_t>(imported.layout.ByteOffset())));
  CHECK(static_cast<const void*>(values) == array->GetVoidPointer(0));
  for (vtkIdType i = 0; i < 15; ++i) CHECK(values[i] == array->GetValue(i));
}

TEST_CASE("VTK-8 one component still exports as (tuples, 1), an empty array as (0, c)") {
  vtkNew<vtkFloatArray> scalars;
  scalars->SetNumberOfTuples(4);
  dlbridge::Tensor tensor = dlbridge::vtk::Export(scalars);
  REQUIRE(tensor.layout.Ndim() == 2);
  CHECK(tensor.layout.Shape()[0] == 4);
  CHECK(tensor.layout.Shape()[1] == 1);

  vtkNew<vtkDoubleArray> empty;
  empty->SetNumberOfComponents(3);
  dlbridge::Tensor none = dlbridge::vtk::Export(empty);
  CHECK(none.layout.Shape()[0] == 0);
  CHECK(none.layout.Shape()[1] == 3);
  CHECK(none.descriptor.GetSizeInBytes() == 0);
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(none));
  CHECK(managed->dl_tensor.shape[1] == 3);
  managed->deleter(managed);
}

TEST_CASE("VTK-1 non-numeric arrays and types are refused, naming what was given") {
  vtkNew<vtkBitArray> bits;
  bits->SetNumberOfTuples(8);
  CHECK_DLB_ERROR(dlbridge::vtk::Export(bits), ErrorCode::kUnsupportedDtype,
                  "VTK_BIT (vtkBitArray) packs 8 values per byte");
  vtkNew<vtkStringArray> strings;
  strings->InsertNextValue("a");
  CHECK_DLB_ERROR(dlbridge::vtk::Export(strings), ErrorCode::kUnsupportedDtype,
                  "array is a vtkStringArray of VTK_STRING, not a numeric vtkDataArray");
  CHECK_DLB_ERROR(dlbridge::vtk::Export(nullptr), ErrorCode::kInvalidArgument, "array is null");
  CHECK_DLB_ERROR(dlbridge::vtk::DataTypeOfVtkType(VTK_STRING), ErrorCode::kUnsupportedDtype,
                  "VTK_STRING is not a numeric type; accepted: VTK_CHAR");
  // Nothing was taken: the arrays' reference counts are unchanged.
  CHECK(bits->GetReferenceCount() == 1);
  CHECK(strings->GetReferenceCount() == 1);
}

TEST_CASE("VTK-1 VTK_CHAR follows the platform char, vtkIdType its build") {
  const DLDataType c = dlbridge::vtk::DataTypeOfVtkType(VTK_CHAR);
  CHECK(c.code == (std::is_signed<char>::value ? kDLInt : kDLUInt));
  CHECK(c.bits == 8);
  CHECK(vtktest::SameDtype(dlbridge::vtk::DataTypeOfVtkType(VTK_ID_TYPE),
                           vtktest::ExpectedDtype<vtkIdType>()));
  CHECK(vtktest::SameDtype(dlbridge::vtk::DataTypeOfVtkType(VTK_LONG),
                           vtktest::ExpectedDtype<long>()));
}

TEST_CASE("VTK-2 SOA arrays are refused without a copy or a reference") {
  vtkNew<vtkSOADataArrayTemplate<float>> soa;
  soa->SetNumberOfComponents(3);
  soa->SetNumberOfTuples(4);
  CHECK_DLB_ERROR(dlbridge::vtk::Export(soa), ErrorCode::kInvalidArgument,
                  "whose values are not one interleaved (AOS) block; DeepCopy it into an "
                  "AOS array");
  CHECK(soa->GetReferenceCount() == 1);
}

TEST_CASE("VTK-14 messages name template arrays as VTK users write them") {
  vtkNew<vtkSOADataArrayTemplate<double>> soa;
  soa->SetNumberOfComponents(2);
  soa->SetNumberOfTuples(2);
  CHECK_DLB_ERROR(dlbridge::vtk::Export(soa), ErrorCode::kInvalidArgument,
                  "array is a vtkSOADataArrayTemplate<double>, whose values");
}

TEST_CASE("VTK-3 the array lives exactly as long as the last consumer") {
  DeleteCounter counter;
  vtkSmartPointer<vtkFloatArray> array = vtkSmartPointer<vtkFloatArray>::New();
  array->SetNumberOfTuples(6);
  counter.Observe(array);
  dlbridge::Tensor first = dlbridge::vtk::Export(array);
  dlbridge::Tensor second = dlbridge::vtk::Export(array);
  array = nullptr;  // the producer lets go: the two exports keep it
  CHECK(counter.deletes == 0);

  SUBCASE("through DLPack and an import, the deleter on another thread") {
    DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(first));
    DLManagedTensor* legacy = dlbridge::ToDLPack(std::move(second));
    CHECK(counter.deletes == 0);
    {
      dlbridge::Tensor imported = dlbridge::FromDLPack(managed);
      CHECK(counter.deletes == 0);
    }  // the import's release ran the versioned deleter: one hold left
    CHECK(counter.deletes == 0);
    std::thread([legacy] { legacy->deleter(legacy); }).join();
    CHECK(counter.deletes == 1);
  }
  SUBCASE("descriptors dropped one after the other") {
    first = dlbridge::Tensor();
    CHECK(counter.deletes == 0);
    second = dlbridge::Tensor();
    CHECK(counter.deletes == 1);
  }
}

TEST_CASE("VTK-15 a struct-of-arrays array exports one tensor per component, holding the array") {
  // Component arrays given with SetArray: struct-of-arrays storage in every VTK.
  std::vector<std::vector<double>> values(3, std::vector<double>(5));
  vtkNew<vtkSOADataArrayTemplate<double>> soa;
  soa->SetNumberOfComponents(3);
  for (int c = 0; c < 3; ++c) {
    for (int t = 0; t < 5; ++t) values[c][t] = 10.0 * c + t;
    soa->SetArray(c, values[c].data(), 5, /*updateMaxId=*/true, /*save=*/true);
  }
  const int references = soa->GetReferenceCount();
  std::vector<dlbridge::Tensor> parts = dlbridge::vtk::ExportComponents(soa);
  REQUIRE(parts.size() == 3);
  CHECK(soa->GetReferenceCount() == references + 1);  // one shared hold
  for (int c = 0; c < 3; ++c) {
    CAPTURE(c);
    CHECK(std::string(parts[c].descriptor.GetRole()) == "component_" + std::to_string(c));
    CHECK(parts[c].layout.Ndim() == 1);
    CHECK(parts[c].layout.Shape()[0] == 5);
    CHECK(parts[c].Data<double>() == values[c].data());  // zero copy
  }
  parts.clear();
  CHECK(soa->GetReferenceCount() == references);

  // An array VTK allocated itself: VTK 9.3 and later keep its values interleaved until
  // SetArray ("AOS mode"); each component is then a strided view of that one buffer.
  vtkNew<vtkSOADataArrayTemplate<float>> own;
  own->SetNumberOfComponents(2);
  own->SetNumberOfTuples(4);
  for (int t = 0; t < 4; ++t) {
    for (int c = 0; c < 2; ++c) own->SetTypedComponent(t, c, static_cast<float>(10 * c + t));
  }
  std::vector<dlbridge::Tensor> mine = dlbridge::vtk::ExportComponents(own);
  REQUIRE(mine.size() == 2);
  for (int c = 0; c < 2; ++c) {
    const int64_t step = mine[c].layout.Strides()[0];
    for (int t = 0; t < 4; ++t)
      CHECK(mine[c].Data<float>()[t * step] == static_cast<float>(10 * c + t));
  }

  vtkNew<vtkFloatArray> aos;
  CHECK_DLB_ERROR(dlbridge::vtk::ExportComponents(aos), ErrorCode::kInvalidArgument,
                  "array is a vtkFloatArray, not a struct-of-arrays");
}

TEST_CASE("VTK-16 DescribeBuffers gives the buffers the array owns, and nothing for the rest") {
  vtkNew<vtkFloatArray> aos;
  aos->SetNumberOfComponents(3);
  aos->SetNumberOfTuples(2);
  std::vector<dlbridge::MemoryDescriptor> one = dlbridge::vtk::DescribeBuffers(aos);
  REQUIRE(one.size() == 1);
  CHECK(std::string(one[0].GetRole()) == "data");
  CHECK(one[0].GetPointer() == reinterpret_cast<intptr_t>(aos->GetVoidPointer(0)));
  CHECK(one[0].GetSizeInBytes() == 24);
  CHECK(one[0].HasOwnership());

  std::vector<int> x(3), y(3);
  vtkNew<vtkSOADataArrayTemplate<int>> soa;
  soa->SetNumberOfComponents(2);
  soa->SetArray(0, x.data(), 3, true, true);
  soa->SetArray(1, y.data(), 3, true, true);
  std::vector<dlbridge::MemoryDescriptor> two = dlbridge::vtk::DescribeBuffers(soa);
  REQUIRE(two.size() == 2);
  CHECK(std::string(two[1].GetRole()) == "component_1");
  CHECK(two[1].GetPointer() == reinterpret_cast<intptr_t>(y.data()));
  CHECK(two[1].GetSizeInBytes() == 12);

  // An SOA array whose values VTK stores interleaved owns one buffer (VTK 9.3+), else one per
  // component: either way the descriptions cover its 2 x 3 values exactly once.
  vtkNew<vtkSOADataArrayTemplate<int>> own;
  own->SetNumberOfComponents(2);
  own->SetNumberOfTuples(3);
  int64_t bytes = 0;
  for (const dlbridge::MemoryDescriptor& d : dlbridge::vtk::DescribeBuffers(own)) {
    bytes += d.GetSizeInBytes();
  }
  CHECK(bytes == 24);

  vtkNew<vtkBitArray> bits;
  bits->SetNumberOfTuples(8);
  CHECK(dlbridge::vtk::DescribeBuffers(bits).empty());
  vtkNew<vtkStringArray> strings;
  CHECK(dlbridge::vtk::DescribeBuffers(strings).empty());
  CHECK(dlbridge::vtk::DescribeBuffers(nullptr).empty());
}

TEST_CASE("KIT-6 the VTK bridge answers to ToTensor, ToTensors and Adopt") {
  vtkNew<vtkFloatArray> array;
  array->SetNumberOfComponents(2);
  array->SetNumberOfTuples(3);
  const int references = array->GetReferenceCount();
  {
    dlbridge::Tensor t = dlbridge::vtk::ToTensor(array);
    CHECK(t.Data<float>() == array->GetPointer(0));
    CHECK(t.layout.Shape()[1] == 2);
    vtkSmartPointer<vtkDataArray> again = dlbridge::vtk::Adopt(std::move(t));
    CHECK(again->GetVoidPointer(0) == array->GetVoidPointer(0));
  }
  CHECK(array->GetReferenceCount() == references);
  vtkNew<vtkSOADataArrayTemplate<float>> soa;
  std::vector<float> x(3, 1.0f), y(3, 2.0f);
  soa->SetNumberOfComponents(2);
  soa->SetArray(0, x.data(), 3, true, true);
  soa->SetArray(1, y.data(), 3, true, true);
  std::vector<dlbridge::Tensor> parts = dlbridge::vtk::ToTensors(soa);
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].Data<float>() == y.data());
}
