// Must NOT compile (bridges/mdspan/tests/CMakeLists.txt, MDS-4): each DLB_CASE is an mdspan
// the bridge cannot describe, stopped at compile time with a static_assert saying why.
#if defined(__has_include) && __has_include(<mdspan>)
#include <mdspan>
#endif
#ifdef __cpp_lib_mdspan
namespace md = std;
#else
#include <mdspan/mdspan.hpp>
namespace md = Kokkos;
#endif
#include <cstddef>
#include <memory>

#include "dlbridge/mdspan.h"

// An accessor whose elements are not plain references through a pointer (a proxy).
struct Proxy {
  using offset_policy = Proxy;
  using element_type = float;
  using reference = float;  // by value: the elements are computed, not stored
  using data_handle_type = const float*;
  float access(data_handle_type p, std::size_t i) const { return 2 * p[i]; }
  data_handle_type offset(data_handle_type p, std::size_t i) const { return p + i; }
};
using Scaled = md::mdspan<float, md::dextents<std::size_t, 1>, md::layout_right, Proxy>;

void Misuse(const float* data) {
  Scaled span(data, 4);
#if DLB_CASE == 1
  (void)dlbridge::mdspan::ToTensor(span, nullptr);
#else
  (void)dlbridge::mdspan::View<Scaled>(dlbridge::mdspan::ToTensor(
      md::mdspan<const float, md::dextents<std::size_t, 1> >(data, 4), nullptr));
#endif
}
