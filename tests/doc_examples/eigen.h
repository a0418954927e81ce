// Prelude of docs/bridges/eigen.md's fragment: a solver, a strided buffer and its owner.
#include <dlbridge/dlbridge.h>

#include <Eigen/Core>
#include <memory>

inline Eigen::MatrixXd Solve() { return Eigen::MatrixXd::Identity(3, 3); }
inline float* p = nullptr;
inline Eigen::Index rows = 2, cols = 3, ld = 4;
inline std::shared_ptr<const void> owner;
inline DLManagedTensorVersioned* managed = nullptr;
