// The core helpers (spec/bridges.md, HLP-*): DataTypeOf, SameDataType, Tensor::Data,
// the pointer overloads of Set/SetPointer, TensorLayout from any integer range, MakeOwner.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/dlbridge.h"

using dlbridge::DataTypeOf;
using dlbridge::ErrorCode;
using dlbridge::MakeOwner;
using dlbridge::SameDataType;
using dlbridge::Tensor;
using dlbridge::TensorLayout;

namespace {

constexpr bool Is(DLDataType d, uint8_t code, uint8_t bits) {
  return d.code == code && d.bits == bits && d.lanes == 1;
}

// Compile-time checks: DataTypeOf is constexpr, and each type maps as spec/bridges.md says.
static_assert(Is(DataTypeOf<bool>(), kDLBool, 8));
static_assert(Is(DataTypeOf<int8_t>(), kDLInt, 8));
static_assert(Is(DataTypeOf<int16_t>(), kDLInt, 16));
static_assert(Is(DataTypeOf<int32_t>(), kDLInt, 32));
static_assert(Is(DataTypeOf<int64_t>(), kDLInt, 64));
static_assert(Is(DataTypeOf<uint8_t>(), kDLUInt, 8));
static_assert(Is(DataTypeOf<uint16_t>(), kDLUInt, 16));
static_assert(Is(DataTypeOf<uint32_t>(), kDLUInt, 32));
static_assert(Is(DataTypeOf<uint64_t>(), kDLUInt, 64));
static_assert(Is(DataTypeOf<float>(), kDLFloat, 32));
static_assert(Is(DataTypeOf<double>(), kDLFloat, 64));
static_assert(Is(DataTypeOf<std::complex<float>>(), kDLComplex, 64));
static_assert(Is(DataTypeOf<std::complex<double>>(), kDLComplex, 128));
static_assert(Is(DataTypeOf<const volatile float>(), kDLFloat, 32));

int64_t Address(const void* p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); }

}  // namespace

TEST_CASE("HLP-1 DataTypeOf names every arithmetic type DLPack can name") {
  // The same at run time, and the platform's own integer types by size and signedness.
  CHECK(Is(DataTypeOf<signed char>(), kDLInt, 8));
  CHECK(Is(DataTypeOf<unsigned char>(), kDLUInt, 8));
  CHECK(Is(DataTypeOf<char>(), std::numeric_limits<char>::is_signed ? kDLInt : kDLUInt, 8));
  CHECK(Is(DataTypeOf<short>(), kDLInt, static_cast<uint8_t>(8 * sizeof(short))));
  CHECK(Is(DataTypeOf<unsigned long>(), kDLUInt, static_cast<uint8_t>(8 * sizeof(long))));
  CHECK(Is(DataTypeOf<long long>(), kDLInt, 64));
  CHECK(Is(DataTypeOf<size_t>(), kDLUInt, static_cast<uint8_t>(8 * sizeof(size_t))));
  // Every one is a dtype the export and import rules accept, with the name NumPy gives it.
  CHECK(dlbridge::DtypeName(DataTypeOf<bool>()) == "bool");
  CHECK(dlbridge::DtypeName(DataTypeOf<int16_t>()) == "int16");
  CHECK(dlbridge::DtypeName(DataTypeOf<uint64_t>()) == "uint64");
  CHECK(dlbridge::DtypeName(DataTypeOf<float>()) == "float32");
  CHECK(dlbridge::DtypeName(DataTypeOf<double>()) == "float64");
  CHECK(dlbridge::DtypeName(DataTypeOf<std::complex<float>>()) == "complex64");
  CHECK(dlbridge::DtypeName(DataTypeOf<std::complex<double>>()) == "complex128");
}

TEST_CASE("HLP-2 SameDataType compares code, bits and lanes") {
  static_assert(SameDataType(DataTypeOf<float>(), DLDataType{kDLFloat, 32, 1}));
  CHECK(SameDataType(DataTypeOf<int32_t>(), dlbridge::ParseDtype("int32")));
  CHECK_FALSE(SameDataType(DataTypeOf<int32_t>(), DataTypeOf<uint32_t>()));             // code
  CHECK_FALSE(SameDataType(DataTypeOf<float>(), DataTypeOf<double>()));                 // bits
  CHECK_FALSE(SameDataType(DLDataType{kDLFloat, 32, 1}, DLDataType{kDLFloat, 32, 4}));  // lanes
}

TEST_CASE("HLP-3 Tensor::Data checks the element type against the dtype") {
  float values[6] = {0, 1, 2, 3, 4, 5};
  Tensor t;
  t.descriptor.Set(values, sizeof values);
  t.layout = TensorLayout(DataTypeOf<float>(), {2, 3});
  CHECK(t.Data<float>() == values);
  CHECK(t.Data<const float>() == values);
  t.layout.SetByteOffset(2 * sizeof(float));  // element zero moves with the byte offset
  CHECK(t.Data<float>() == values + 2);
  CHECK(*t.Data<const float>() == 2.0f);
  CHECK_DLB_ERROR(t.Data<double>(), ErrorCode::kInvalidDtype,
                  "Tensor::Data<T>: T is float64 but the tensor's dtype is float32");
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kInvalidDtype, "T is int32");
  t.layout = TensorLayout(DLDataType{kDLFloat, 32, 4}, {1});
  CHECK_DLB_ERROR(t.Data<float>(), ErrorCode::kInvalidDtype, "dtype is float32x4");
  Tensor empty;  // no memory: a null element zero, no throw
  CHECK(empty.Data<float>() == nullptr);
}

TEST_CASE("HLP-4 Tensor::Data refuses memory the CPU cannot read") {
  int32_t values[4] = {};
  Tensor t;
  t.descriptor.Set(values, sizeof values);
  t.layout = TensorLayout(DataTypeOf<int32_t>(), {4});
  for (int32_t type : {0, static_cast<int32_t>(kDLCPU), static_cast<int32_t>(kDLCUDAHost),
                       static_cast<int32_t>(kDLROCMHost)}) {
    t.device = DLDevice{static_cast<DLDeviceType>(type), 0};
    CHECK(t.Data<int32_t>() == values);
  }
  t.device = DLDevice{kDLCPU, 0};
  t.descriptor.SetMemorySpace("cuda");
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kUnsupportedDevice,
                  "memory space \"cuda\" (device type kDLCPU) is not host-readable");
  t.device = DLDevice{};
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kUnsupportedDevice,
                  "memory space \"cuda\" (device type kDLCUDA) is not host-readable");
  t.device = DLDevice{kDLCUDAManaged, 0};  // managed: not host-addressable in the device table
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kUnsupportedDevice, "kDLCUDAManaged");
  t.descriptor.SetMemorySpace("hip");
  t.device = DLDevice{};
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kUnsupportedDevice, "memory space \"hip\"");
  t.descriptor.SetMemorySpace("host");
  t.device = DLDevice{kDLCUDA, 0};  // a host space with a GPU device type contradicts itself
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kUnsupportedDevice, "kDLCUDA");
}

TEST_CASE("HLP-5 Set and SetPointer take pointers") {
  double values[3] = {};
  dlbridge::MemoryDescriptor d;
  d.Set(values, sizeof values);  // space "host", role "data" by default
  CHECK(d.GetPointer() == Address(values));
  CHECK(d.GetSizeInBytes() == static_cast<int64_t>(sizeof values));
  CHECK(std::string(d.GetMemorySpace()) == "host");
  CHECK(std::string(d.GetRole()) == "data");
  const void* cv = values + 1;
  d.Set(cv, 8, "cuda", "offsets");
  CHECK(d.GetPointer() == Address(values + 1));
  CHECK(std::string(d.GetMemorySpace()) == "cuda");
  CHECK(std::string(d.GetRole()) == "offsets");
  d.SetPointer(values + 2);
  CHECK(d.GetPointer() == Address(values + 2));
  // The same checks as the int64 overloads: a null pointer with bytes is refused.
  CHECK_DLB_ERROR(d.SetPointer(static_cast<const float*>(nullptr)), ErrorCode::kInvalidDescriptor,
                  "pointer is null");
  CHECK_DLB_ERROR(d.Set(static_cast<int*>(nullptr), 4), ErrorCode::kInvalidDescriptor,
                  "pointer is null");
  d.Set(0, 0, "host");  // a literal 0 still picks the int64 overload
  CHECK(d.GetPointer() == 0);
}

TEST_CASE("HLP-6 TensorLayout takes shapes and strides of any integer range") {
  const TensorLayout expected(DataTypeOf<float>(), std::vector<int64_t>{2, 3},
                              std::vector<int64_t>{-3, 1}, 12);
  const std::vector<size_t> shapeSizes{2, 3};
  const std::array<int, 2> stridesInts{-3, 1};
  CHECK(TensorLayout(DataTypeOf<float>(), shapeSizes, stridesInts, 12) == expected);
  const int32_t shapeC[] = {2, 3};
  const short stridesC[] = {-3, 1};
  CHECK(TensorLayout(DataTypeOf<float>(), shapeC, stridesC, 12) == expected);
  CHECK(TensorLayout(DataTypeOf<float>(), shapeSizes, {-3, 1}, 12) == expected);
  CHECK(TensorLayout(DataTypeOf<float>(), {2, 3}, {-3, 1}, 12) == expected);  // as before
  // No strides: C-contiguous, as with the int64 vectors.
  const TensorLayout contiguous(DataTypeOf<float>(), std::array<uint32_t, 3>{4, 5, 6});
  CHECK(contiguous.IsContiguous());
  CHECK(contiguous.Strides()[0] == 30);
  CHECK(TensorLayout(DataTypeOf<float>(), std::vector<uint8_t>{}).Ndim() == 0);
  // The constructor's own checks still apply, with their messages.
  CHECK_DLB_ERROR(TensorLayout(DataTypeOf<float>(), shapeSizes, std::vector<int>{1}),
                  ErrorCode::kInvalidStrides, "strides has 1 entries but shape has 2");
  CHECK_DLB_ERROR(TensorLayout(DataTypeOf<float>(), std::vector<int>{2, -1}),
                  ErrorCode::kInvalidShape, "shape[1] is -1");
  CHECK_DLB_ERROR(TensorLayout(DataTypeOf<float>(), std::vector<size_t>(65, 1)),
                  ErrorCode::kInvalidShape, "ndim is 65");
}

namespace {

// A range whose data() is its first element but whose elements are `step` apart, as an Eigen
// row of a column-major matrix is: only iterating reads the right values.
struct StridedIndices {
  struct Iterator {
    const int* at;
    std::ptrdiff_t step;
    const int& operator*() const { return *at; }
    Iterator& operator++() {
      at += step;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return at != other.at; }
  };
  const int* first;
  size_t count;
  std::ptrdiff_t step;
  const int* data() const { return first; }
  size_t size() const { return count; }
  Iterator begin() const { return {first, step}; }
  Iterator end() const { return {first + static_cast<std::ptrdiff_t>(count) * step, step}; }
};

}  // namespace

TEST_CASE("HLP-6 a strided range gives its elements, not the memory after its first one") {
  // Column-major 2x3 storage: row 0 is {2, 3, 4} at indices 0, 2, 4; data() would read 2, 7, 3.
  const int storage[] = {2, 7, 3, 8, 4, 9};
  const StridedIndices row0{storage, 3, 2};
  const TensorLayout layout(DataTypeOf<float>(), row0);
  REQUIRE(layout.Ndim() == 3);
  CHECK(layout.Shape()[0] == 2);
  CHECK(layout.Shape()[1] == 3);
  CHECK(layout.Shape()[2] == 4);
  const StridedIndices strides{storage + 1, 3, 2};  // 7, 8, 9
  const TensorLayout strided(DataTypeOf<float>(), row0, strides);
  CHECK(strided.Strides()[0] == 7);
  CHECK(strided.Strides()[1] == 8);
  CHECK(strided.Strides()[2] == 9);
}

TEST_CASE("HLP-9 TensorLayout refuses unsigned values past INT64_MAX, naming the index") {
  const uint64_t big = uint64_t{1} << 63;  // INT64_MAX + 1: would wrap to INT64_MIN
  CHECK_DLB_ERROR(TensorLayout(DataTypeOf<float>(), std::vector<uint64_t>{2, big}),
                  ErrorCode::kOverflow,
                  "TensorLayout: shape[1] is 9223372036854775808, past INT64_MAX");
  CHECK_DLB_ERROR(TensorLayout(DataTypeOf<float>(), std::vector<size_t>{2, 2},
                               std::vector<size_t>{SIZE_MAX, 1}),
                  ErrorCode::kOverflow, "strides[0] is ");
  // INT64_MAX itself converts (and then fails, or not, on the layout's own rules).
  const TensorLayout edge(DataTypeOf<uint8_t>(), std::vector<uint64_t>{1},
                          std::vector<uint64_t>{uint64_t{INT64_MAX}});
  CHECK(edge.Strides()[0] == INT64_MAX);
}

namespace {

// Counts its destructions: the owner's object dies exactly once.
struct Tracked {
  explicit Tracked(std::atomic<int>* deaths) : deaths_(deaths) {}
  Tracked(Tracked&& other) noexcept : deaths_(other.deaths_), data(std::move(other.data)) {
    other.deaths_ = nullptr;  // a moved-from shell does not count
  }
  Tracked(const Tracked&) = default;
  ~Tracked() {
    if (deaths_ != nullptr) deaths_->fetch_add(1);
  }
  std::atomic<int>* deaths_;
  std::vector<float> data = std::vector<float>(8, 1.0f);
};

}  // namespace

TEST_CASE("HLP-7 MakeOwner keeps a value or a smart pointer alive until the hold drops") {
  SUBCASE("a value moved in: its memory stays where it was") {
    std::atomic<int> deaths{0};
    Tracked value(&deaths);
    const float* memory = value.data.data();
    Tensor t;
    t.descriptor.Set(memory, 8 * sizeof(float));
    t.descriptor.SetOwner(MakeOwner(std::move(value)));
    t.layout = TensorLayout(DataTypeOf<float>(), {8});
    CHECK(deaths.load() == 0);
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t));
    CHECK(m->dl_tensor.data == memory);  // zero copy
    CHECK(deaths.load() == 0);
    m->deleter(m);  // the last consumer lets go
    CHECK(deaths.load() == 1);
  }
  SUBCASE("a copied lvalue: the copy is held, the original stays the caller's") {
    std::atomic<int> deaths{0};
    Tracked value(&deaths);
    {
      auto owner = MakeOwner(value);
      CHECK(static_cast<const Tracked*>(owner.get())->data.data() != value.data.data());
    }
    CHECK(deaths.load() == 1);
  }
  SUBCASE("a shared_ptr is the owner itself; a unique_ptr becomes one") {
    auto shared = std::make_shared<int>(5);
    auto owner = MakeOwner(shared);
    CHECK(owner.get() == shared.get());
    CHECK(shared.use_count() == 2);
    std::atomic<int> deaths{0};
    auto unique = std::make_unique<Tracked>(&deaths);
    const Tracked* raw = unique.get();
    auto held = MakeOwner(std::move(unique));
    CHECK(held.get() == raw);
    held.reset();
    CHECK(deaths.load() == 1);
    CHECK(MakeOwner(std::unique_ptr<int>()) == nullptr);
  }
}

TEST_CASE("HLP-8 MakeOwner(handle, onDrop) runs onDrop once, on the dropping thread") {
  SUBCASE("exactly once, on another thread") {
    std::atomic<int> drops{0};
    std::thread::id dropper;
    int handle = 42;
    Tensor t;
    t.descriptor.Set(&handle, sizeof handle);
    t.descriptor.SetOwner(MakeOwner(&handle, [&](int* h) {
      CHECK(h == &handle);
      dropper = std::this_thread::get_id();
      drops.fetch_add(1);
    }));
    auto copy = t.descriptor.GetOwner();  // a second reference: the drop waits for both
    t.descriptor.SetOwner(nullptr);
    CHECK(drops.load() == 0);
    std::thread other([owner = std::move(copy)]() mutable { owner.reset(); });
    const std::thread::id otherId = other.get_id();
    other.join();
    CHECK(drops.load() == 1);
    CHECK(dropper == otherId);
  }
  SUBCASE("a throwing onDrop is swallowed and counted, and runs once") {
    const int64_t before = dlbridge::CallbackExceptionCount();
    int calls = 0;
    {
      auto owner = MakeOwner(7, [&](int) {
        ++calls;
        throw std::runtime_error("onDrop failed");
      });
    }
    CHECK(calls == 1);
    CHECK(dlbridge::CallbackExceptionCount() == before + 1);
  }
  SUBCASE("an onDrop whose copy throws still releases the handle itself, once") {
    // A handle that is empty once moved from: releasing a moved-from one would lose the real one.
    struct Handle {
      int id;
      explicit Handle(int i) : id(i) {}
      Handle(Handle&& other) noexcept : id(other.id) { other.id = -1; }
    };
    struct CopyThrows {
      std::vector<int>* dropped;
      bool armed;
      CopyThrows(std::vector<int>* d, bool a) : dropped(d), armed(a) {}
      CopyThrows(const CopyThrows& other) : dropped(other.dropped), armed(false) {
        if (other.armed) throw std::bad_alloc();
      }
      void operator()(Handle& h) const { dropped->push_back(h.id); }
    };
    std::vector<int> dropped;
    const CopyThrows onDrop(&dropped, true);  // an lvalue: MakeOwner copies it, which throws
    CHECK_DLB_ERROR(MakeOwner(Handle(7), onDrop), ErrorCode::kOutOfMemory, "");
    REQUIRE(dropped.size() == 1);
    CHECK(dropped[0] == 7);  // the real handle, not a moved-from shell
  }
  SUBCASE("the release path: TakeRelease hands the hold on, its release runs onDrop once") {
    int drops = 0;
    dlbridge::MemoryDescriptor d;
    d.SetOwner(MakeOwner(1, [&](int) { ++drops; }));
    dlbridge::ReleaseFunction release = nullptr;
    void* context = nullptr;
    REQUIRE(d.TakeRelease(release, context));
    CHECK(drops == 0);
    release(context);
    CHECK(drops == 1);
  }
}
