// The Eigen bridge (bridges/eigen): a solver's Eigen matrix lent to a DLPack consumer without
// a copy, the matrix freed exactly when the last consumer lets go; then a consumer's strided
// tensor viewed as an Eigen::Map, and a layout Eigen cannot express refused with the reason.
#include <dlbridge/dlbridge.h>
#include <dlbridge/eigen.h>

#include <Eigen/Core>
#include <cstdio>
#include <utility>

namespace {

int Fail(const char* what) {
  std::printf("FAILED: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  try {
    // 1. The producer: a row-major result it hands over (moved into the tensor's hold).
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> result(3, 4);
    for (Eigen::Index i = 0; i < result.size(); ++i) result.data()[i] = 0.5 * double(i);
    const double* memory = result.data();
    int drops = 0;
    // MakeOwner(handle, onDrop) counts the drop here; ToTensor(std::move(result)) alone is
    // the usual call (the matrix itself is then the owner).
    auto held = std::make_shared<decltype(result)>(std::move(result));
    dlbridge::Tensor tensor = dlbridge::eigen::ToTensor(
        *held, dlbridge::MakeOwner(held, [&drops](const auto&) { ++drops; }));
    held.reset();  // the tensor's owner is the only reference now
    std::printf(
        "1. Eigen 3x4 row-major float64 at %p -> tensor shape [%lld, %lld] strides "
        "[%lld, %lld]\n",
        static_cast<const void*>(memory), static_cast<long long>(tensor.layout.Shape()[0]),
        static_cast<long long>(tensor.layout.Shape()[1]),
        static_cast<long long>(tensor.layout.Strides()[0]),
        static_cast<long long>(tensor.layout.Strides()[1]));

    // 2. Export, and a consumer that only sees DLPack: imports it, views it as Eigen.
    DLManagedTensorVersioned* exported = dlbridge::ToDLPackVersioned(std::move(tensor));
    std::printf("2. exported: data=%p (zero copy: %s), owner drops so far: %d\n",
                exported->dl_tensor.data, exported->dl_tensor.data == memory ? "yes" : "no", drops);
    {
      dlbridge::Tensor imported = dlbridge::FromDLPack(exported);
      auto view = dlbridge::eigen::View<const double, Eigen::RowMajor>(imported);
      std::printf("3. consumer's Eigen::Map: %lldx%lld, (2,3) = %g, same memory: %s, sum = %g\n",
                  static_cast<long long>(view.rows()), static_cast<long long>(view.cols()),
                  view(2, 3), view.data() == memory ? "yes" : "no", view.sum());
      std::printf("   owner drops while the consumer holds it: %d\n", drops);
    }
    std::printf("4. consumer let go: owner drops now %d (exactly once)\n", drops);
    if (drops != 1) return Fail("the owner was not dropped exactly once");

    // 5. A strided tensor from elsewhere (every other column of a C-order buffer).
    float buffer[12];
    for (int i = 0; i < 12; ++i) buffer[i] = float(i);
    dlbridge::Tensor strided;
    strided.descriptor.Set(buffer, sizeof buffer);
    strided.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {3, 2}, {4, 2});
    auto columns = dlbridge::eigen::View<float>(strided);
    std::printf(
        "5. strided tensor as Eigen::Map<MatrixXf, 0, Stride<Dynamic, Dynamic>>: "
        "outer %lld, inner %lld, row 1 = [%g, %g]\n",
        static_cast<long long>(columns.outerStride()),
        static_cast<long long>(columns.innerStride()), columns(1, 0), columns(1, 1));

    // 6. What Eigen cannot express is refused with the reason.
    strided.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2, 3, 2});
    try {
      (void)dlbridge::eigen::View<float>(strided);
      return Fail("a 3-D tensor was viewed as a matrix");
    } catch (const dlbridge::Error& e) {
      std::printf("6. refused (%s): %s\n", dlbridge::ErrorCodeName(e.code()), e.what());
    }
  } catch (const dlbridge::Error& e) {
    std::printf("error (%s): %s\n", dlbridge::ErrorCodeName(e.code()), e.what());
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
