// The VTK bridge (spec/bridges.md, "VTK"): Export of a vtkDataArray, Adopt into one, and the
// hand-off registry VTK's free function reads.
//
// Why a library and not a header: VTK 9.1 frees user-defined memory with a plain
// `void (*)(void*)` that receives the data pointer only, so the hold that must be dropped is
// found in a registry keyed by that pointer. The registry and the free function live here,
// once per process, whichever shared objects call Adopt; a header's inline statics would be
// one registry per shared object, and an array whose free function belongs to a shared object
// that was unloaded would call into nothing.
#include "dlbridge/vtk.h"

#include <vtkAbstractArray.h>
#include <vtkDataArray.h>
#include <vtkSOADataArrayTemplate.h>
#include <vtkSmartPointer.h>
#include <vtkType.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/owner.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define DLBRIDGE_VTK_DEMANGLE 1
#endif

namespace dlbridge {
namespace vtk {
namespace {

// The dtype tables' failure paths, named by their functions.
constexpr kit::Site kFromVtkType{"vtk", "DataTypeOfVtkType"};
constexpr kit::Site kToVtkType{"vtk", "VtkTypeOfDataType"};

std::string VtkTypeName(int vtkDataType) {
  switch (vtkDataType) {
    case VTK_VOID: return "VTK_VOID";
    case VTK_BIT: return "VTK_BIT";
    case VTK_STRING: return "VTK_STRING";
    case VTK_OPAQUE: return "VTK_OPAQUE";
    case VTK_VARIANT: return "VTK_VARIANT";
    case VTK_OBJECT: return "VTK_OBJECT";
    default: return "VTK type " + std::to_string(vtkDataType);
  }
}

// The hand-off registry: data pointer -> the holds of the arrays that adopted memory there.
// A multimap: views of one buffer may be adopted by several arrays, each with its own hold.
struct Held {
  MemoryDescriptor hold;
  uint64_t order = 0;  // adoptions so far when this one came: the tie-break of VTK-7
};
struct Registry {
  std::mutex mutex;
  std::unordered_multimap<const void*, Held> holds;
  uint64_t adoptions = 0;
};

Registry& TheRegistry() {
  // Never destroyed: arrays may be freed during static destruction (a global
  // vtkSmartPointer), after a function-local static registry would be gone.
  static Registry* registry = new Registry;
  return *registry;
}

// One past the last byte a hold keeps valid (unsigned: a hold may reach past 2^63).
uint64_t HoldEnd(const MemoryDescriptor& hold) {
  return static_cast<uint64_t>(hold.GetPointer()) + static_cast<uint64_t>(hold.GetSizeInBytes());
}

// VTK-7's order among the holds at one address: the one whose bytes end first drops first, so
// the hold reaching furthest stays and covers every array still there; of equal reach the
// newest, since Adopt(Export(array)) holds `array` itself, which can only go once that has.
bool DropsBefore(const std::pair<const void* const, Held>& a,
                 const std::pair<const void* const, Held>& b) {
  const uint64_t endA = HoldEnd(a.second.hold);
  const uint64_t endB = HoldEnd(b.second.hold);
  return endA < endB || (endA == endB && a.second.order > b.second.order);
}

// VTK's free function for adopted memory (SetArrayFreeFunction). VTK calls it once per
// buffer it drops: the array's last reference, or new memory given to the array.
void FreeAdopted(void* data) {
  MemoryDescriptor hold;
  {
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    const auto [first, last] = registry.holds.equal_range(data);
    if (first == last) return;  // not adopted by dlbridge: nothing to drop
    // VTK names only the pointer, not the array: which hold goes is VTK-7's order.
    const auto found = std::min_element(first, last, DropsBefore);
    hold = std::move(found->second.hold);
    registry.holds.erase(found);
  }
  // VTK-7: the hold drops here, once, outside the lock: the release may free other adopted
  // arrays (which takes the lock again). The descriptor swallows and counts a throwing
  // release (see LT-7).
}

}  // namespace

DLDataType DataTypeOfVtkType(int vtkDataType) {
  // VTK-1: VTK's numeric types and their DLPack dtypes, per platform width.
  switch (vtkDataType) {
    case VTK_CHAR: return DataTypeOf<char>();  // int8 or uint8 as char is signed or not
    case VTK_SIGNED_CHAR: return DataTypeOf<signed char>();
    case VTK_UNSIGNED_CHAR: return DataTypeOf<unsigned char>();
    case VTK_SHORT: return DataTypeOf<short>();
    case VTK_UNSIGNED_SHORT: return DataTypeOf<unsigned short>();
    case VTK_INT: return DataTypeOf<int>();
    case VTK_UNSIGNED_INT: return DataTypeOf<unsigned int>();
    case VTK_LONG: return DataTypeOf<long>();
    case VTK_UNSIGNED_LONG: return DataTypeOf<unsigned long>();
    case VTK_LONG_LONG: return DataTypeOf<long long>();
    case VTK_UNSIGNED_LONG_LONG: return DataTypeOf<unsigned long long>();
    case VTK_ID_TYPE: return DataTypeOf<vtkIdType>();
    case VTK_FLOAT: return DataTypeOf<float>();
    case VTK_DOUBLE: return DataTypeOf<double>();
    case VTK_BIT:
      kFromVtkType.Fail(ErrorCode::kUnsupportedDtype,
                        "VTK_BIT (vtkBitArray) packs 8 values per byte and DLPack has no "
                        "bit-packed type; copy the values into a vtkUnsignedCharArray first");
    default:
      kFromVtkType.Fail(ErrorCode::kUnsupportedDtype,
                        VtkTypeName(vtkDataType) +
                            " is not a numeric type; accepted: VTK_CHAR, VTK_SIGNED_CHAR, "
                            "VTK_UNSIGNED_CHAR, VTK_SHORT, VTK_UNSIGNED_SHORT, VTK_INT, "
                            "VTK_UNSIGNED_INT, VTK_LONG, VTK_UNSIGNED_LONG, VTK_LONG_LONG, "
                            "VTK_UNSIGNED_LONG_LONG, VTK_ID_TYPE, VTK_FLOAT, VTK_DOUBLE");
  }
}

int VtkTypeOfDataType(DLDataType dtype) {
  // VTK-4: the dtypes VTK has an AOS array of; int8 is VTK_SIGNED_CHAR (VTK_CHAR means text).
  if (dtype.lanes == 1) {
    if (dtype.code == kDLInt) {
      switch (dtype.bits) {
        case 8: return VTK_SIGNED_CHAR;
        case 16: return VTK_SHORT;
        case 32: return VTK_INT;
        case 64: return VTK_TYPE_INT64;
        default: break;
      }
    } else if (dtype.code == kDLUInt) {
      switch (dtype.bits) {
        case 8: return VTK_UNSIGNED_CHAR;
        case 16: return VTK_UNSIGNED_SHORT;
        case 32: return VTK_UNSIGNED_INT;
        case 64: return VTK_TYPE_UINT64;
        default: break;
      }
    } else if (dtype.code == kDLFloat) {
      if (dtype.bits == 32) return VTK_FLOAT;
      if (dtype.bits == 64) return VTK_DOUBLE;
    }
  }
  kToVtkType.Fail(ErrorCode::kUnsupportedDtype,
                  "dtype " + kit::DtypeText(dtype) +
                      " has no VTK array; accepted: int8, int16, int32, int64, uint8, uint16, "
                      "uint32, uint64, float32, float64 (one lane); convert the tensor first");
}

namespace {

// VTK-14: the name a VTK user knows. VTK's template classes (vtkSOADataArrayTemplate<float>,
// vtkmDataArray<double>, ...) report typeid(...).name() from GetClassName(), which the Itanium
// ABI mangles ("23vtkSOADataArrayTemplateIfE"); such a name is demangled for messages.
std::string ClassNameOf(vtkObjectBase* object) {
  const char* name = object->GetClassName();
#if defined(DLBRIDGE_VTK_DEMANGLE)
  if (name != nullptr && std::isdigit(static_cast<unsigned char>(name[0])) != 0) {
    int status = 0;
    char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status == 0 && readable != nullptr) {
      std::string result(readable);
      std::free(readable);
      return result;
    }
    std::free(readable);
  }
#endif
  return name != nullptr ? name : "(unnamed class)";
}

}  // namespace

Tensor Export(vtkAbstractArray* array) {
  if (array == nullptr) {
    kit::Site{"vtk", "Export"}.Fail(ErrorCode::kInvalidArgument,
                                    "array is null; pass a vtkDataArray");
  }
  vtkDataArray* data = vtkDataArray::SafeDownCast(array);
  if (data == nullptr) {
    kit::Site{"vtk", "Export"}.Fail(
        ErrorCode::kUnsupportedDtype,
        "array is a " + ClassNameOf(array) + " of " + VtkTypeName(array->GetDataType()) +
            ", not a numeric vtkDataArray; DLPack carries numbers only");
  }
  const DLDataType dtype = DataTypeOfVtkType(data->GetDataType());  // VTK_BIT refused here
  // VTK-2: only one interleaved block is exported; GetVoidPointer would copy anything else.
  if (!data->HasStandardMemoryLayout()) {
    kit::Site{"vtk", "Export"}.Fail(
        ErrorCode::kInvalidArgument,
        "array is a " + ClassNameOf(data) +
            ", whose values are not one interleaved (AOS) block; DeepCopy it into an "
            "AOS array (vtkAOSDataArrayTemplate, e.g. vtkFloatArray) first");
  }
  // VTK-8: always (tuples, components), so shape[1] exists for one component too.
  const int64_t shape[2] = {data->GetNumberOfTuples(), data->GetNumberOfComponents()};
  const int64_t strides[2] = {shape[1], 1};
  kit::StridedArray whole;
  whole.data = shape[0] * shape[1] > 0 ? data->GetVoidPointer(0) : nullptr;
  whole.dtype = dtype;
  whole.ndim = 2;
  whole.shape = shape;
  whole.strides = strides;
  // VTK-3: the descriptor holds the array; the last holder's drop unregisters it.
  return kit::Describe(whole, MakeOwner(vtkSmartPointer<vtkDataArray>(data)),
                       kit::Site{"vtk", "Export"});
}

namespace {

// What VTK-5 found about a tensor to adopt: nothing has moved yet.
struct Prepared {
  void* data = nullptr;  // element zero, or null without elements
  int vtkType = VTK_VOID;
  int64_t components = 1;
  int64_t values = 0;
};

// VTK-5: what Adopt accepts, checked before anything moves. `who` names the call in messages;
// `oneD` takes 1-D tensors only (a component of AdoptComponents).
Prepared Prepare(const char* who, const Tensor& tensor, const AdoptOptions& options, bool oneD) {
  const kit::Site site{"vtk", who};
  // The dtype first, as the kit orders its own (see KIT-3): the kit's alignment is the
  // element's size, which a dtype VTK has no array of must not be refused by.
  const int vtkType = VtkTypeOfDataType(tensor.layout.Dtype());
  kit::ViewNeeds needs;
  needs.view = oneD ? "a component of a vtkDataArray (its values)"
                    : "a vtkDataArray (values, or tuples x components)";
  needs.min_ndim = 1;
  needs.max_ndim = oneD ? 1 : 2;
  needs.strides = kit::StrideRule::kRowMajor;  // tuples one after another, interleaved
  needs.writes = true;                         // a vtkDataArray is always writable
  needs.read_only_advice = "copy it first";
  kit::CheckView(tensor, needs, site);  // host, shape, strides, read-only, span, alignment
  const TensorLayout& layout = tensor.layout;
  Prepared p;
  p.vtkType = vtkType;
  if (options.id_type && SameDataType(layout.Dtype(), DataTypeOf<vtkIdType>())) {
    p.vtkType = VTK_ID_TYPE;
  }
  p.components = layout.Ndim() == 2 ? layout.Shape()[1] : 1;
  p.values = layout.ElementCount();
  if (p.values > std::numeric_limits<vtkIdType>::max() ||
      p.components > std::numeric_limits<int>::max()) {
    site.Fail(ErrorCode::kInvalidShape,
              std::to_string(p.values) + " values of " + std::to_string(p.components) +
                  " components do not fit this VTK build's vtkIdType and int");
  }
  ExportOptions exportOptions;
  exportOptions.allow_unowned = options.allow_unowned;
  const ExportPlan plan(tensor, ExportKind::kVersioned, exportOptions);  // bounds, hold, ...
  p.data = plan.Data();
  return p;
}

// Room in the registry for `count` holds at `data[i]`, made before any hold moves (the only
// step that can fail), so that an allocation failure leaves every hold with its caller.
std::vector<std::unordered_multimap<const void*, Held>::iterator> Reserve(Registry& registry,
                                                                          void* const* data,
                                                                          size_t count) {
  std::vector<std::unordered_multimap<const void*, Held>::iterator> entries;
  try {
    entries.reserve(count);
    for (size_t i = 0; i < count; ++i) entries.push_back(registry.holds.emplace(data[i], Held()));
  } catch (const std::bad_alloc&) {
    for (auto entry : entries) registry.holds.erase(entry);
    kit::Site{"vtk", "Adopt"}.Fail(ErrorCode::kOutOfMemory,
                                   "the hand-off registry is out of memory");
  }
  return entries;
}

vtkSmartPointer<vtkDataArray> NewArray(const char* who, int vtkType, bool soa) {
  vtkSmartPointer<vtkDataArray> array;
  if (!soa) {
    array = ::vtk::TakeSmartPointer(vtkDataArray::CreateDataArray(vtkType));
  } else {
    switch (vtkType) {
      vtkTemplateMacro(array = ::vtk::TakeSmartPointer(vtkSOADataArrayTemplate<VTK_TT>::New()));
      default: break;
    }
  }
  if (array == nullptr || (!soa && !array->HasStandardMemoryLayout())) {
    kit::Site{"vtk", who}.Fail(
        ErrorCode::kOutOfMemory,
        std::string("VTK could not create a ") + vtkImageScalarTypeNameMacro(vtkType) + " array");
  }
  return array;
}

// One component's memory given to an SOA array, freed through the registry (VTK-6, VTK-7).
template <class T>
void SetComponent(vtkDataArray* array, int component, void* data, vtkIdType values, bool held) {
  auto* soa = static_cast<vtkSOADataArrayTemplate<T>*>(array);
  soa->SetArray(
      component, static_cast<T*>(data), values, /*updateMaxId=*/true, /*save=*/!held,
      held ? vtkAbstractArray::VTK_DATA_ARRAY_USER_DEFINED : vtkAbstractArray::VTK_DATA_ARRAY_FREE);
  if (held) soa->SetArrayFreeFunction(component, &FreeAdopted);
}

}  // namespace

vtkSmartPointer<vtkDataArray> Adopt(Tensor&& tensor, const AdoptOptions& options) {
  const Prepared p = Prepare("Adopt", tensor, options, /*oneD=*/false);
  vtkSmartPointer<vtkDataArray> array = NewArray("Adopt", p.vtkType, /*soa=*/false);
  array->SetNumberOfComponents(static_cast<int>(p.components));
  if (p.data == nullptr) {
    // VTK never frees an array without memory: drop the hold now rather than never.
    tensor.descriptor = MemoryDescriptor();
    return array;
  }
  if (!tensor.descriptor.HasOwnership()) {  // allow_unowned: the caller keeps the memory valid
    array->SetVoidArray(p.data, static_cast<vtkIdType>(p.values), /*save=*/1);
    return array;
  }
  {
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    void* const data[] = {p.data};
    auto entry = Reserve(registry, data, 1)[0];  // nothing moved yet
    // VTK-6: the hold moves into the registry (noexcept) and the array frees through it.
    entry->second.hold = std::move(tensor.descriptor);
    entry->second.order = ++registry.adoptions;
  }
  array->SetVoidArray(p.data, static_cast<vtkIdType>(p.values), /*save=*/0,
                      vtkAbstractArray::VTK_DATA_ARRAY_USER_DEFINED);
  array->SetArrayFreeFunction(&FreeAdopted);
  return array;
}

vtkSmartPointer<vtkDataArray> AdoptComponents(std::vector<Tensor>&& components,
                                              const AdoptOptions& options) {
  // VTK-15: every component checked (VTK-5, 1-D), of one dtype and length, before any moves.
  if (components.empty() ||
      components.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    kit::Site{"vtk", "AdoptComponents"}.Fail(
        ErrorCode::kInvalidArgument,
        "" + std::to_string(components.size()) +
            " component tensors; pass one 1-D tensor per component (at least one)");
  }
  std::vector<Prepared> prepared;
  prepared.reserve(components.size());
  for (size_t c = 0; c < components.size(); ++c) {
    const std::string who = "AdoptComponents: component " + std::to_string(c);
    prepared.push_back(Prepare(who.c_str(), components[c], options, /*oneD=*/true));
    if (prepared[c].vtkType != prepared[0].vtkType || prepared[c].values != prepared[0].values) {
      kit::Site{"vtk", "AdoptComponents"}.Fail(
          ErrorCode::kInvalidShape,
          "component " + std::to_string(c) + " is " + std::to_string(prepared[c].values) +
              " values of " + kit::DtypeText(components[c].layout.Dtype()) +
              " but component 0 is " + std::to_string(prepared[0].values) + " values of " +
              kit::DtypeText(components[0].layout.Dtype()) +
              ": every component has one value per tuple, of one type");
    }
  }
  const int vtkType = prepared[0].vtkType;
  const auto tuples = static_cast<vtkIdType>(prepared[0].values);
  vtkSmartPointer<vtkDataArray> array = NewArray("AdoptComponents", vtkType, /*soa=*/true);
  array->SetNumberOfComponents(static_cast<int>(components.size()));
  if (tuples == 0) {
    for (Tensor& component : components) component.descriptor = MemoryDescriptor();
    return array;
  }
  std::vector<void*> held;
  std::vector<bool> holds(components.size());
  for (size_t c = 0; c < components.size(); ++c) {
    holds[c] = components[c].descriptor.HasOwnership();
    if (holds[c]) held.push_back(prepared[c].data);
  }
  {
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto entries = Reserve(registry, held.data(), held.size());  // nothing moved yet
    size_t next = 0;
    for (Tensor& component : components) {
      if (!component.descriptor.HasOwnership()) continue;
      // VTK-6, per component: the hold moves into the registry under its own pointer.
      entries[next]->second.hold = std::move(component.descriptor);
      entries[next++]->second.order = ++registry.adoptions;
    }
  }
  for (size_t c = 0; c < components.size(); ++c) {
    switch (vtkType) {
      vtkTemplateMacro(
          SetComponent<VTK_TT>(array, static_cast<int>(c), prepared[c].data, tuples, holds[c]));
      default: break;
    }
  }
  return array;
}

namespace {

// Whether this VTK's vtkSOADataArrayTemplate can keep its values interleaved (VTK 9.3 and
// later start every such array in "AOS mode" until SetArray gives it component arrays).
template <class A, class = void>
struct HasStorageType : std::false_type {};
template <class A>
struct HasStorageType<A, std::void_t<decltype(std::declval<A&>().GetStorageType())>>
    : std::true_type {};

// Where an SOA array's components are: one pointer per component and the step between a
// component's values, in values (1 in SOA storage; the component count when the values are
// stored interleaved). No pointers for any other array.
struct Components {
  std::vector<void*> pointers;
  int64_t step = 1;
};

template <class T>
Components ComponentsOf(vtkSOADataArrayTemplate<T>* soa) {
  Components out;
  const int count = soa->GetNumberOfComponents();
  bool interleaved = false;
  if constexpr (HasStorageType<vtkSOADataArrayTemplate<T>>::value) {
    interleaved = soa->GetStorageType() == vtkSOADataArrayTemplate<T>::StorageTypeEnum::AOS;
  }
  if (interleaved) {
    // In AOS mode GetVoidPointer is the storage itself (in SOA mode it would copy).
    auto* base = static_cast<T*>(soa->GetNumberOfTuples() > 0 ? soa->GetVoidPointer(0) : nullptr);
    for (int c = 0; c < count; ++c) out.pointers.push_back(base != nullptr ? base + c : nullptr);
    out.step = count;
  } else {
    for (int c = 0; c < count; ++c) out.pointers.push_back(soa->GetComponentArrayPointer(c));
  }
  return out;
}

// An SOA array's components, for any value type VTK instantiates; none for other arrays.
Components ComponentsOf(vtkDataArray* data) {
  switch (data->GetDataType()) {
    vtkTemplateMacro({
      auto* soa = vtkSOADataArrayTemplate<VTK_TT>::SafeDownCast(data);
      if (soa != nullptr) return ComponentsOf(soa);
    });
    default: break;
  }
  return Components{};
}

}  // namespace

std::vector<Tensor> ExportComponents(vtkAbstractArray* array) {
  // VTK-15: one 1-D tensor per component of a struct-of-arrays array, each holding the array.
  vtkDataArray* data = array != nullptr ? vtkDataArray::SafeDownCast(array) : nullptr;
  if (data == nullptr) {
    kit::Site{"vtk", "ExportComponents"}.Fail(
        ErrorCode::kInvalidArgument,
        (array == nullptr ? std::string("array is null")
                          : "array is a " + ClassNameOf(array) + ", not a vtkDataArray") +
            "; pass a vtkSOADataArrayTemplate");
  }
  const DLDataType dtype = DataTypeOfVtkType(data->GetDataType());
  const Components components = ComponentsOf(data);
  const std::vector<void*>& pointers = components.pointers;
  if (pointers.empty()) {
    kit::Site{"vtk", "ExportComponents"}.Fail(
        ErrorCode::kInvalidArgument,
        "array is a " + ClassNameOf(data) +
            ", not a struct-of-arrays (vtkSOADataArrayTemplate) array; Export gives an "
            "AOS array's values as one (tuples, components) tensor");
  }
  const int64_t tuples = data->GetNumberOfTuples();
  std::shared_ptr<const void> owner = MakeOwner(vtkSmartPointer<vtkDataArray>(data));
  std::vector<Tensor> out;
  out.reserve(pointers.size());
  for (size_t c = 0; c < pointers.size(); ++c) {
    // One component's values: `step` apart (1 in SOA storage, the component count when they
    // are stored interleaved).
    const std::string role = "component_" + std::to_string(c);
    kit::StridedArray component;
    component.data = tuples > 0 ? pointers[c] : nullptr;
    component.dtype = dtype;
    component.ndim = 1;
    component.shape = &tuples;
    component.strides = &components.step;
    component.role = role.c_str();
    out.push_back(kit::Describe(component, owner, kit::Site{"vtk", "ExportComponents"}));
  }
  return out;
}

std::vector<MemoryDescriptor> DescribeBuffers(vtkAbstractArray* array) {
  // VTK-16: the buffers the array really owns, as views holding the array; nothing for arrays
  // whose values are computed or mapped (never a flattened temporary).
  std::vector<MemoryDescriptor> out;
  vtkDataArray* data = array != nullptr ? vtkDataArray::SafeDownCast(array) : nullptr;
  if (data == nullptr || data->GetDataType() == VTK_BIT) return out;
  std::vector<Tensor> tensors;
  const Components components = ComponentsOf(data);
  if (data->HasStandardMemoryLayout()) {
    tensors.push_back(Export(data));
  } else if (components.step > 1) {
    // An SOA array storing its values interleaved owns one buffer: describe that one.
    Tensor whole;
    const int64_t bytes = data->GetNumberOfTuples() * components.step * data->GetDataTypeSize();
    whole.descriptor.Set(components.pointers[0], components.pointers[0] != nullptr ? bytes : 0,
                         "host");
    whole.descriptor.SetOwner(MakeOwner(vtkSmartPointer<vtkDataArray>(data)));
    tensors.push_back(std::move(whole));
  } else if (!components.pointers.empty()) {
    tensors = ExportComponents(data);
  }
  for (Tensor& tensor : tensors) out.push_back(std::move(tensor.descriptor));
  return out;
}

int64_t AdoptedHoldCount() noexcept {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return static_cast<int64_t>(registry.holds.size());
}

}  // namespace vtk
}  // namespace dlbridge
