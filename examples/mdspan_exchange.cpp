// The mdspan bridge (bridges/mdspan): a column-major std::mdspan (Kokkos' mdspan where the
// standard library has none) lent to a DLPack consumer without a copy, with its buffer as the
// owner; the consumer views it as the mdspan type it wants, and a layout that does not fit is
// refused with the reason.
#if defined(__has_include) && __has_include(<mdspan>)
#include <mdspan>
#endif
#ifdef __cpp_lib_mdspan
namespace md = std;
#else
#include <mdspan/mdspan.hpp>
namespace md = Kokkos;
#endif

#include <dlbridge/dlbridge.h>
#include <dlbridge/mdspan.h>

#include <cstdio>
#include <memory>
#include <vector>

int main() {
  try {
    // 1. The producer: a 3 x 4 column-major matrix in a shared buffer.
    auto buffer = std::make_shared<std::vector<double>>(12);
    for (std::size_t i = 0; i < buffer->size(); ++i) (*buffer)[i] = 0.5 * double(i);
    md::mdspan<double, md::dextents<std::size_t, 2>, md::layout_left> matrix(buffer->data(), 3, 4);
    dlbridge::Tensor tensor = dlbridge::mdspan::ToTensor(matrix, buffer);
    const double* memory = buffer->data();
    buffer.reset();  // the tensor's hold keeps the memory now
    std::printf("1. mdspan 3x4 layout_left -> tensor strides [%lld, %lld]\n",
                static_cast<long long>(tensor.layout.Strides()[0]),
                static_cast<long long>(tensor.layout.Strides()[1]));

    // 2. A consumer that sees only DLPack views it as the mdspan it names.
    dlbridge::Tensor imported =
        dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
    using Left = md::mdspan<const double, md::dextents<int, 2>, md::layout_left>;
    Left view = dlbridge::mdspan::View<Left>(imported);
    std::printf("2. consumer's mdspan: %dx%d, (2,3) = %g, same memory: %s\n", view.extent(0),
                view.extent(1), view.data_handle()[view.mapping()(2, 3)],
                view.data_handle() == memory ? "yes" : "no");

    // 3. The same tensor as a row-major mdspan: its strides do not fit, and the error says so.
    using Right = md::mdspan<const double, md::dextents<int, 2>>;
    try {
      (void)dlbridge::mdspan::View<Right>(imported);
      std::printf("FAILED: a column-major tensor became a layout_right mdspan\n");
      return 1;
    } catch (const dlbridge::Error& e) {
      std::printf("3. as layout_right: refused: %s\n", e.what());
    }
  } catch (const dlbridge::Error& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  return 0;
}
