// A nanobind extension whose functions take and return nb::ndarray: the peer of
// tests/python/test_peers.py (spec/conformance.md PEER-2) and bench/python_bench.py. It does not
// use dlbridge at all, as a user's nanobind extension would not: DLPack is the only contract.
//
// Every buffer it makes is owned by a capsule whose destructor counts the free, so a test can
// check that each buffer nanobind hands out is freed exactly once, after every consumer let go.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

int64_t made = 0;                       // buffers made by make() and make_read_only()
int64_t freed = 0;                      // of them, freed by their owner capsule
std::vector<nb::ndarray<nb::ro>> held;  // arrays kept by hold() until release_held()

// n float32 values 0, 1, ..., n - 1, owned by a capsule that counts its free.
float* NewValues(size_t n, nb::capsule* owner) {
  float* values = new float[n == 0 ? 1 : n];
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
  *owner = nb::capsule(values, [](void* p) noexcept {
    delete[] static_cast<float*>(p);
    ++freed;
  });
  ++made;
  return values;
}

// The layouts make() offers over one rows x cols buffer: "c" (C order), "t" (its transpose,
// strides {1, cols}), "step2" (every other column, strides {cols, 2}).
void Layout(const char* layout, size_t rows, size_t cols, std::vector<size_t>* shape,
            std::vector<int64_t>* strides) {
  const std::string name(layout);
  const auto c = static_cast<int64_t>(cols);
  if (name == "c") {
    *shape = {rows, cols};
    *strides = {c, 1};
  } else if (name == "t") {
    *shape = {cols, rows};
    *strides = {1, c};
  } else if (name == "step2") {
    *shape = {rows, (cols + 1) / 2};
    *strides = {c, 2};
  } else {
    throw nb::value_error("layout must be 'c', 't' or 'step2'");
  }
}

template <typename Array>
nb::tuple Describe(const Array& a) {
  nb::list shape;
  nb::list strides;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape.append(a.shape(i));
    strides.append(a.stride(i));
  }
  const nb::dlpack::dtype dt = a.dtype();
  return nb::make_tuple(reinterpret_cast<uintptr_t>(a.data()), nb::tuple(shape), nb::tuple(strides),
                        nb::make_tuple(static_cast<int>(dt.code), static_cast<int>(dt.bits),
                                       static_cast<int>(dt.lanes)),
                        nb::make_tuple(a.device_type(), a.device_id()));
}

// The values of a float32 host array in C order, read through its strides.
nb::list Values(const nb::ndarray<const float, nb::device::cpu>& a) {
  nb::list out;
  const size_t n = a.size();
  std::vector<size_t> index(a.ndim(), 0);
  for (size_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (size_t i = 0; i < a.ndim(); ++i) offset += static_cast<int64_t>(index[i]) * a.stride(i);
    out.append(a.data()[offset]);
    for (size_t i = a.ndim(); i-- > 0;) {
      if (++index[i] < a.shape(i)) break;
      index[i] = 0;
    }
  }
  return out;
}

// A rows x cols float32 buffer in one of Layout's layouts, returned as Framework's array.
template <typename Framework, typename Scalar>
nb::ndarray<Framework, Scalar, nb::device::cpu> Make(size_t rows, size_t cols, const char* layout) {
  std::vector<size_t> shape;
  std::vector<int64_t> strides;
  Layout(layout, rows, cols, &shape, &strides);  // throws before anything is allocated
  nb::capsule owner;
  Scalar* values = NewValues(rows * cols, &owner);
  return nb::ndarray<Framework, Scalar, nb::device::cpu>(values, shape.size(), shape.data(), owner,
                                                         strides.data());
}

}  // namespace

NB_MODULE(nanobind_peer, m) {
  // Taking arrays: any dtype and device, read-only allowed (nb::ro).
  m.def(
      "describe", [](const nb::ndarray<nb::ro>& a) { return Describe(a); },
      "(element 0's address, shape, strides in elements, (code, bits, lanes), device)");
  // Only writable arrays: a READ_ONLY versioned tensor is refused by nanobind's caster.
  m.def("describe_writable", [](const nb::ndarray<>& a) { return Describe(a); });
  m.def("values", &Values, "a float32 host array's values in C order, through its strides");
  m.def("fill", [](const nb::ndarray<float, nb::device::cpu>& a, float value) {
    std::vector<size_t> index(a.ndim(), 0);
    for (size_t k = 0; k < a.size(); ++k) {
      int64_t offset = 0;
      for (size_t i = 0; i < a.ndim(); ++i) offset += static_cast<int64_t>(index[i]) * a.stride(i);
      a.data()[offset] = value;
      for (size_t i = a.ndim(); i-- > 0;) {
        if (++index[i] < a.shape(i)) break;
        index[i] = 0;
      }
    }
  });
  m.def("hold", [](const nb::ndarray<nb::ro>& a) { held.push_back(a); });
  m.def("release_held", [] { held.clear(); });
  m.def("held_count", [] { return held.size(); });

  // Returning arrays: nb::array_api gives a nanobind.nb_ndarray (__dlpack__ with max_version,
  // __dlpack_device__); no framework gives a bare legacy "dltensor" capsule.
  m.def("make", &Make<nb::array_api, float>, nb::arg("rows"), nb::arg("cols"),
        nb::arg("layout") = "c");
  m.def("make_read_only", &Make<nb::array_api, const float>, nb::arg("rows"), nb::arg("cols"),
        nb::arg("layout") = "c");
  m.def("make_capsule", &Make<nb::no_framework, float>, nb::arg("rows"), nb::arg("cols"),
        nb::arg("layout") = "c");
  m.def("make_read_only_capsule", &Make<nb::no_framework, const float>, nb::arg("rows"),
        nb::arg("cols"), nb::arg("layout") = "c");
  // An array handed in, handed back: the same memory in a new nb_ndarray that shares the import
  // (rv_policy::reference: nanobind would otherwise copy an array it has no owner object for).
  m.def(
      "echo", [](const nb::ndarray<nb::ro>& a) { return nb::ndarray<nb::array_api, nb::ro>(a); },
      nb::rv_policy::reference);
  // nanobind as a consumer for python3 -m dlbridge.check: the array nanobind imported, returned
  // as nanobind's own view of it (element 0, shape, strides, dtype, device and read-only as
  // nanobind read them), holding the import until the view goes.
  m.def("from_dlpack", [](const nb::ndarray<nb::ro>& a) {
    auto* kept = new nb::ndarray<nb::ro>(a);
    nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<nb::ndarray<nb::ro>*>(p); });
    std::vector<size_t> shape(a.ndim());
    for (size_t i = 0; i < a.ndim(); ++i) shape[i] = a.shape(i);
    return nb::ndarray<nb::array_api, nb::ro>(a.data(), a.ndim(), shape.data(), owner,
                                              a.stride_ptr(), a.dtype(), a.device_type(),
                                              a.device_id());
  });
  // For bench/python_bench.py: taking an array and doing nothing with it, and returning a view of
  // a static buffer (no allocation, no owner: rv_policy::reference, so nanobind does not copy).
  m.def("take", [](const nb::ndarray<nb::ro>&) {});
  m.def(
      "view",
      [] {
        static float values[16] = {};
        const size_t shape[2] = {4, 4};
        return nb::ndarray<nb::array_api, float, nb::device::cpu>(values, 2, shape);
      },
      nb::rv_policy::reference);
  m.def("made", [] { return made; });
  m.def("freed", [] { return freed; });
}
