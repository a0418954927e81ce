/// @file
/// The Eigen bridge (spec/bridges.md, EIG-*): a dense Eigen object with direct access (Matrix,
/// Array, Map with any Stride, Ref, Block) as a dlbridge::Tensor with its owner kept alive,
/// and a host Tensor viewed as an Eigen::Map with the right strides. Header-only; needs
/// Eigen 3.3 or later (target dlbridge::eigen).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/owner.h"
#include "dlbridge/tensor.h"

/// @namespace dlbridge::eigen
/// The Eigen bridge: ToTensor (Eigen to dlbridge) and View (dlbridge to Eigen).
namespace dlbridge {
namespace eigen {
namespace detail {

template <class Derived>
inline constexpr bool kHasDirectAccess = (Derived::Flags & Eigen::DirectAccessBit) != 0;

template <class T>
inline constexpr bool kOwnsStorage =
    std::is_base_of_v<Eigen::PlainObjectBase<std::remove_cv_t<T>>, std::remove_cv_t<T>>;

// EIG-1: shape and strides (in elements) from Eigen's own rows, cols, inner and outer strides
// and storage order.
template <class Derived>
Tensor Describe(const Eigen::DenseBase<Derived>& base, std::shared_ptr<const void> owner) {
  // EIG-8: misuses stop the build, saying what to do instead.
  static_assert(kHasDirectAccess<Derived>,
                "dlbridge::eigen::ToTensor: this Eigen expression has no direct access to its "
                "coefficients (a product, a sum, a lazy expression): evaluate it into a Matrix "
                "or Array first (.eval()), or pass a Map/Ref/Block of stored data");
  if constexpr (!kHasDirectAccess<Derived>) {
    return Tensor();  // not reached: the assertion above stops the build
  } else {
    using Scalar = typename Derived::Scalar;
    const Derived& object = base.derived();
    const Eigen::Index rows = object.rows();
    const Eigen::Index cols = object.cols();
    // EIG-2: any direct-access expression says its own strides (Map, Ref, Block alike).
    const Eigen::Index inner = object.innerStride();
    const Eigen::Index outer = object.outerStride();
    const bool rowMajor = (Derived::Flags & Eigen::RowMajorBit) != 0;
    int64_t shape[2];
    int64_t strides[2];
    int32_t ndim = 2;
    if constexpr (Derived::IsVectorAtCompileTime) {  // EIG-7: a compile-time vector is 1-D
      ndim = 1;
      shape[0] = static_cast<int64_t>(object.size());
      strides[0] = static_cast<int64_t>(inner);
    } else {
      shape[0] = rows;
      shape[1] = cols;
      strides[0] = rowMajor ? outer : inner;
      strides[1] = rowMajor ? inner : outer;
    }
    kit::StridedArray array;
    array.data = object.data();
    array.dtype = DataTypeOf<Scalar>();
    array.ndim = ndim;
    array.shape = shape;
    array.strides = strides;
    // EIG-5: an expression Eigen does not let anyone write through exports read-only.
    array.read_only = (Derived::Flags & Eigen::LvalueBit) == 0;
    return kit::Describe(array, std::move(owner), kit::Site{"eigen", "ToTensor"});
  }
}

}  // namespace detail

/// A tensor over `object`'s coefficients (zero copy), which `object` — a Matrix or Array,
/// moved in (`ToTensor(std::move(m))`) — now belongs to: it is held (MakeOwner) until the last
/// consumer of the tensor and its exports lets go, then destroyed on that thread. Shape and
/// strides in elements follow Eigen's storage order: a matrix is 2-D (rows, cols), a
/// compile-time vector (VectorXf, RowVector3d, ArrayXi) 1-D; dtype DataTypeOf<Scalar>(), host
/// memory (kDLCPU). A fixed-size object is moved into the hold, and the tensor points at the
/// held copy. An lvalue, or a Map/Ref/Block (which own nothing), does not compile: pass them
/// with their owner to ToTensor(object, owner). On failure (Error(kOutOfMemory)) the object is
/// left as it was.
// EIG-3: by value, the object is the tensor's owner.
template <class Object>
Tensor ToTensor(Object&& object) {
  static_assert(!std::is_lvalue_reference_v<Object>,
                "dlbridge::eigen::ToTensor(object): object is an lvalue; pass std::move(object) "
                "to hand it to the tensor, or ToTensor(object, owner) with what keeps its "
                "memory alive");
  static_assert(detail::kOwnsStorage<Object>,
                "dlbridge::eigen::ToTensor(object): only a Matrix or an Array owns its "
                "coefficients; a Map, Ref or Block owns nothing: use ToTensor(object, owner)");
  using Plain = std::remove_cv_t<Object>;
  std::shared_ptr<const void> owner = MakeOwner(std::move(object));
  const Plain& held = *static_cast<const Plain*>(owner.get());
  return detail::Describe(held, std::move(owner));
}

/// A tensor over the coefficients of any dense Eigen object with direct access (a Matrix,
/// Array, Map with InnerStride/OuterStride/Stride, Ref or Block: zero copy), held alive by
/// `owner` — the shared_ptr that owns the memory, or MakeOwner(...) of whatever does — until
/// the last consumer lets go. Layout as ToTensor(object); an expression that cannot be
/// written through (a Map of const, a const Ref) exports with DLPACK_FLAG_BITMASK_READ_ONLY.
/// A null `owner` leaves the tensor without a hold: ToDLPackVersioned/ToDLPack then refuse
/// it (Error(kNoHold)) unless ExportOptions::allow_unowned says the caller keeps the memory
/// alive. A const object (`const Eigen::MatrixXf&`) exports read-only too. A
/// `Ref<const ...>` that had to copy its argument (one whose strides it cannot express) points
/// at that copy, which lives only as long as the Ref: `owner` does not keep it, so pass such a
/// Ref only while it is alive, or pass the original object. Nothing is taken on failure.
// EIG-4: an explicit owner; none only with the core's allow_unowned opt-in.
template <class Object, class Derived = std::remove_cv_t<std::remove_reference_t<Object>>,
          class = std::enable_if_t<std::is_base_of_v<Eigen::DenseBase<Derived>, Derived>>>
Tensor ToTensor(Object&& object, std::shared_ptr<const void> owner) {
  Tensor t = detail::Describe(object, std::move(owner));
  // EIG-5 for a const object: its type has LvalueBit, the caller's access does not.
  if constexpr (std::is_const_v<std::remove_reference_t<Object>>) {
    t.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  }
  return t;
}

/// The Eigen type View returns: a dynamic-size Map with dynamic inner and outer strides.
/// `Scalar` const gives a read-only map; `Options` is Eigen::ColMajor or Eigen::RowMajor.
template <class Scalar, int Options = Eigen::ColMajor>
using TensorMap =
    Eigen::Map<std::conditional_t<std::is_const_v<Scalar>,
                                  const Eigen::Matrix<std::remove_const_t<Scalar>, Eigen::Dynamic,
                                                      Eigen::Dynamic, Options>,
                                  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Options>>,
               Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

/// `tensor`'s elements as an Eigen::Map (zero copy), which borrows: valid while `tensor`'s
/// descriptor holds the memory. A 2-D tensor maps as rows x cols, a 1-D one as a column
/// (n x 1), a 0-d one as 1 x 1; the strides carry over whatever `Options` (ColMajor or
/// RowMajor: only the Map's iteration order differs). Throws dlbridge::Error, naming the
/// layout and what Eigen would need, for what an Eigen::Map cannot express:
/// kInvalidShape for ndim > 2, kInvalidStrides for a negative stride (Eigen's Stride takes
/// none), kInvalidDtype when DataTypeOf<Scalar> is not the dtype, kUnsupportedDevice for
/// memory the CPU cannot read, kReadOnly for a mutable `Scalar` over a read-only tensor
/// (use View<const Scalar>), kInvalidArgument for element zero not aligned to Scalar.
// EIG-6: what an Eigen::Map can express, and a clear refusal of the rest.
template <class Scalar, int Options = Eigen::ColMajor>
TensorMap<Scalar, Options> View(const Tensor& tensor) {
  kit::ViewNeeds needs;
  needs.view = "an Eigen::Map";
  needs.dtype = DataTypeOf<std::remove_const_t<Scalar>>();
  needs.max_ndim = 2;
  needs.strides = kit::StrideRule::kNonNegative;  // Eigen's Stride takes none
  needs.writes = !std::is_const_v<Scalar>;
  needs.read_only_advice = "use View<const Scalar>";
  needs.alignment = alignof(Scalar);
  const kit::CheckedView checked = kit::CheckView(tensor, needs, kit::Site{"eigen", "View"});
  auto* data = static_cast<Scalar*>(checked.data);
  const int32_t ndim = tensor.layout.Ndim();
  const IndexSpan shape = tensor.layout.Shape();
  const IndexSpan strides = tensor.layout.Strides();
  Eigen::Index rows = 1;
  Eigen::Index cols = 1;
  Eigen::Index rowStride = 1;
  Eigen::Index colStride = 1;
  if (ndim >= 1) {
    rows = shape[0];
    rowStride = strides[0];
    // One column: its stride is never used to address. rows * rowStride may pass int64
    // where the reach, (rows - 1) * rowStride, does not: then the row stride serves.
    int64_t column = 0;
    colStride = kit::CheckedMul(rows, rowStride, &column) ? rowStride : column;
  }
  if (ndim == 2) {
    cols = shape[1];
    colStride = strides[1];
  }
  const bool rowMajor = (Options & Eigen::RowMajor) != 0;
  const Eigen::Index outer = rowMajor ? rowStride : colStride;
  const Eigen::Index inner = rowMajor ? colStride : rowStride;
  return TensorMap<Scalar, Options>(data, rows, cols,
                                    Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(outer, inner));
}

}  // namespace eigen
}  // namespace dlbridge
