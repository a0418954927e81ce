// Prelude of docs/bridges.md's kit fragment: a tensor and a framework's array type.
#include <dlbridge/bridge_kit.h>
#include <dlbridge/dlbridge.h>

inline dlbridge::Tensor tensor;
namespace mylib {
struct Array {
  template <typename Shape, typename Strides>
  Array(float* data, const Shape&, const Strides&) : data(data) {}
  float* data;
};
}  // namespace mylib
