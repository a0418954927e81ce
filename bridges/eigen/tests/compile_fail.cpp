// Must NOT compile (bridges/eigen/tests/CMakeLists.txt, EIG-8): each DLB_CASE is a misuse of
// ToTensor that the bridge stops at compile time with a static_assert saying what to do.
#include <Eigen/Core>

#include "dlbridge/eigen.h"

dlbridge::Tensor Misuse() {
  Eigen::MatrixXf m(2, 2);
#if DLB_CASE == 1
  return dlbridge::eigen::ToTensor(m);  // an lvalue without an owner
#elif DLB_CASE == 2
  Eigen::Map<Eigen::MatrixXf> map(m.data(), 2, 2);
  return dlbridge::eigen::ToTensor(std::move(map));  // a Map owns nothing
#else
  return dlbridge::eigen::ToTensor(m + m, nullptr);  // an expression without direct access
#endif
}
