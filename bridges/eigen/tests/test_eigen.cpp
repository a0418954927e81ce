// The Eigen bridge (spec/bridges.md, EIG-*): Eigen objects to tensors and back, through
// DLPack, with element checks for each storage order and stride kind, and lifetime counts.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <memory>
#include <thread>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/eigen.h"

using dlbridge::ErrorCode;
using dlbridge::Tensor;
namespace eig = dlbridge::eigen;

namespace {

// Through DLPack and back: export, import, so that the view sees what a consumer sees.
Tensor RoundTrip(Tensor t) {
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(t));
  return dlbridge::FromDLPack(managed);
}

std::vector<int64_t> Strides(const Tensor& t) {
  return {t.layout.Strides().begin(), t.layout.Strides().end()};
}
std::vector<int64_t> Shape(const Tensor& t) {
  return {t.layout.Shape().begin(), t.layout.Shape().end()};
}

// Every element of `view` equals the same element of `expected`.
template <class A, class B>
void CheckSameElements(const A& view, const B& expected) {
  REQUIRE(view.rows() == expected.rows());
  REQUIRE(view.cols() == expected.cols());
  for (Eigen::Index i = 0; i < expected.rows(); ++i) {
    for (Eigen::Index j = 0; j < expected.cols(); ++j) {
      CHECK(view(i, j) == expected(i, j));
    }
  }
}

Eigen::MatrixXd Numbered(Eigen::Index rows, Eigen::Index cols) {
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = static_cast<double>(10 * i + j);
  return m;
}

}  // namespace

TEST_CASE("EIG-1 a matrix exports its shape and strides in both storage orders") {
  SUBCASE("column-major") {
    Eigen::MatrixXd m = Numbered(3, 4);
    const double* data = m.data();
    Tensor t = eig::ToTensor(m, nullptr);
    CHECK(Shape(t) == std::vector<int64_t>{3, 4});
    CHECK(Strides(t) == std::vector<int64_t>{1, 3});
    CHECK(t.Data<double>() == data);
    CHECK(dlbridge::SameDataType(t.layout.Dtype(), dlbridge::DataTypeOf<double>()));
    CheckSameElements(eig::View<double>(t), m);
  }
  SUBCASE("row-major") {
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m(2, 3);
    m << 1, 2, 3, 4, 5, 6;
    Tensor t = eig::ToTensor(m, nullptr);
    CHECK(Shape(t) == std::vector<int64_t>{2, 3});
    CHECK(Strides(t) == std::vector<int64_t>{3, 1});
    CheckSameElements(eig::View<float, Eigen::RowMajor>(t), m);
    CheckSameElements(eig::View<float>(t), m);  // the strides carry over in either order
  }
  SUBCASE("fixed-size, complex, integer and bool scalars") {
    Eigen::Matrix<std::complex<float>, 2, 2> c;
    c << std::complex<float>(1, 2), 3, 4, std::complex<float>(0, -1);
    CheckSameElements(eig::View<std::complex<float>>(eig::ToTensor(c, nullptr)), c);
    Eigen::Array<int16_t, 3, 2, Eigen::RowMajor> a;
    a << 1, -2, 3, -4, 5, -6;
    CheckSameElements(eig::View<int16_t>(eig::ToTensor(a, nullptr)), a);
    Eigen::Matrix<bool, 2, 2> b;
    b << true, false, false, true;
    CheckSameElements(eig::View<bool>(eig::ToTensor(b, nullptr)), b);
  }
}

TEST_CASE("EIG-2 Maps, blocks and Refs export their inner and outer strides") {
  double buffer[64];
  for (int i = 0; i < 64; ++i) buffer[i] = i;
  auto owner = std::make_shared<int>(0);  // the tests' buffer outlives everything here
  SUBCASE("OuterStride, column-major") {
    Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>> m(buffer, 3, 4, Eigen::OuterStride<>(5));
    Tensor t = eig::ToTensor(m, owner);
    CHECK(Strides(t) == std::vector<int64_t>{1, 5});
    CheckSameElements(eig::View<double>(RoundTrip(std::move(t))), m);
  }
  SUBCASE("InnerStride, row-major") {
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<RowMajor, 0, Eigen::InnerStride<2>> m(buffer, 3, 4);
    Tensor t = eig::ToTensor(m, owner);
    CHECK(Strides(t) == std::vector<int64_t>{8, 2});  // outer = cols * inner
    CheckSameElements(eig::View<double, Eigen::RowMajor>(RoundTrip(std::move(t))), m);
  }
  SUBCASE("Stride<Outer, Inner>, both orders") {
    using Strided = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
    Eigen::Map<Eigen::MatrixXd, 0, Strided> col(buffer, 3, 2, Strided(9, 3));
    Tensor tc = eig::ToTensor(col, owner);
    CHECK(Strides(tc) == std::vector<int64_t>{3, 9});
    CheckSameElements(eig::View<double>(RoundTrip(std::move(tc))), col);
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<RowMajor, 0, Strided> row(buffer + 1, 3, 2, Strided(9, 3));
    Tensor tr = eig::ToTensor(row, owner);
    CHECK(Strides(tr) == std::vector<int64_t>{9, 3});
    CHECK(tr.Data<double>() == buffer + 1);
    CheckSameElements(eig::View<double, Eigen::RowMajor>(RoundTrip(std::move(tr))), row);
  }
  SUBCASE("a block, a column of a row-major matrix, a Ref") {
    Eigen::MatrixXd m = Numbered(5, 6);
    auto block = m.block(1, 2, 3, 2);
    Tensor tb = eig::ToTensor(block, owner);
    CHECK(Strides(tb) == std::vector<int64_t>{1, 5});
    CHECK(tb.Data<double>() == &m(1, 2));
    CheckSameElements(eig::View<double>(RoundTrip(std::move(tb))), block);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m;
    Tensor column = eig::ToTensor(r.col(3), owner);  // a vector: 1-D, stride 6
    CHECK(Shape(column) == std::vector<int64_t>{5});
    CHECK(Strides(column) == std::vector<int64_t>{6});
    CheckSameElements(eig::View<double>(RoundTrip(std::move(column))), r.col(3));
    Eigen::Ref<const Eigen::MatrixXd, 0, Eigen::OuterStride<>> ref = m.topRightCorner(2, 3);
    Tensor tr = eig::ToTensor(ref, owner);
    CHECK(Strides(tr) == std::vector<int64_t>{1, 5});
    CHECK((tr.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);  // a const Ref: read-only (EIG-5)
    CheckSameElements(eig::View<const double>(RoundTrip(std::move(tr))), ref);
  }
}

TEST_CASE("EIG-7 vectors export as 1-D and a 1-D tensor views as a column") {
  Eigen::VectorXf v(4);
  v << 1, 2, 3, 4;
  Tensor t = eig::ToTensor(v, nullptr);
  CHECK(Shape(t) == std::vector<int64_t>{4});
  CHECK(Strides(t) == std::vector<int64_t>{1});
  Eigen::RowVector3d rv(7, 8, 9);
  CHECK(Shape(eig::ToTensor(rv, nullptr)) == std::vector<int64_t>{3});
  auto view = eig::View<float>(t);
  CHECK(view.rows() == 4);
  CHECK(view.cols() == 1);
  CheckSameElements(view, v);
  float strided[8] = {0, 10, 1, 11, 2, 12, 3, 13};
  Eigen::Map<Eigen::VectorXf, 0, Eigen::InnerStride<2>> odd(strided + 1, 4);
  Tensor to = eig::ToTensor(odd, nullptr);
  CHECK(Strides(to) == std::vector<int64_t>{2});
  CheckSameElements(eig::View<float, Eigen::RowMajor>(to), odd);
}

TEST_CASE("EIG-7 a 1-D tensor's column stride is computed without overflow") {
  // rows * stride is past int64 while the reach (rows - 1) * stride is not: the unused
  // column stride must not wrap (signed overflow) into a negative one.
  int8_t values[2] = {1, 2};
  Tensor t;
  t.descriptor.Set(values, 2);
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<int8_t>(), {2}, {int64_t{1} << 62});
  auto view = eig::View<const int8_t>(t);
  CHECK(view.rows() == 2);
  CHECK(view.cols() == 1);
  CHECK(view.innerStride() == (int64_t{1} << 62));
  CHECK(view.outerStride() >= 0);
  auto rowMajor = eig::View<const int8_t, Eigen::RowMajor>(t);
  CHECK(rowMajor.outerStride() == (int64_t{1} << 62));
  CHECK(rowMajor.innerStride() >= 0);
}

TEST_CASE("EIG-3 a matrix moved in is the owner: it dies when the last consumer lets go") {
  SUBCASE("dynamic-size: zero copy, through two consumers") {
    Eigen::MatrixXf m = Eigen::MatrixXf::Constant(3, 2, 1.5f);
    const float* data = m.data();
    Tensor t = eig::ToTensor(std::move(m));
    std::weak_ptr<const void> alive = t.descriptor.GetOwner();
    CHECK(t.Data<float>() == data);  // zero copy: the moved matrix kept its buffer
    DLManagedTensorVersioned* first = dlbridge::ToDLPackVersioned(std::move(t));
    CHECK(first->dl_tensor.data == data);
    Tensor imported = dlbridge::FromDLPack(first);  // a consumer holding the producer's deleter
    auto view = eig::View<float>(imported);
    CHECK(view(2, 1) == 1.5f);
    // A second consumer: the import re-exported to a legacy tensor, dropped on another thread.
    DLManagedTensor* second = dlbridge::ToDLPack(std::move(imported));
    CHECK_FALSE(alive.expired());
    std::thread other([second] { second->deleter(second); });
    other.join();
    CHECK(alive.expired());  // the matrix is gone exactly when the last one let go
  }
  SUBCASE("fixed-size: the tensor points at the held copy") {
    Eigen::Matrix3d fixed = Eigen::Matrix3d::Identity();
    Tensor tf = eig::ToTensor(std::move(fixed));
    const auto* held = static_cast<const Eigen::Matrix3d*>(tf.descriptor.GetOwner().get());
    CHECK(tf.Data<double>() == held->data());
    CheckSameElements(eig::View<double>(tf), Eigen::Matrix3d::Identity());
  }
}

TEST_CASE("EIG-4 an lvalue exports with the owner given, and none needs allow_unowned") {
  int drops = 0;
  auto matrix = std::make_shared<Eigen::MatrixXd>(Numbered(2, 2));
  Eigen::Map<const Eigen::MatrixXd> map(matrix->data(), 2, 2);
  {
    Tensor t = eig::ToTensor(map, dlbridge::MakeOwner(matrix, [&](const auto&) { ++drops; }));
    matrix.reset();  // the tensor's owner is now the only reference
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t));
    CHECK(drops == 0);
    CHECK(static_cast<const double*>(m->dl_tensor.data)[3] == 11.0);
    m->deleter(m);
    CHECK(drops == 1);
  }
  Eigen::MatrixXd local = Numbered(2, 2);
  Tensor unowned = eig::ToTensor(local, nullptr);
  CHECK_FALSE(unowned.descriptor.HasOwnership());
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(unowned)), ErrorCode::kNoHold,
                  "holds nothing");
  Tensor optIn = eig::ToTensor(local, nullptr);
  dlbridge::ExportOptions options;
  options.allow_unowned = true;  // the caller keeps `local` alive until the deleter runs
  DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(optIn), options);
  CHECK(m->dl_tensor.data == local.data());
  m->deleter(m);
}

TEST_CASE("EIG-5 what Eigen cannot write through exports read-only") {
  Eigen::MatrixXd m = Numbered(2, 3);
  Eigen::Map<const Eigen::MatrixXd> readOnly(m.data(), 2, 3);
  Tensor t = eig::ToTensor(readOnly, nullptr);
  CHECK((t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(eig::ToTensor(m, nullptr).flags == 0);
  CHECK_DLB_ERROR(eig::View<double>(t), ErrorCode::kReadOnly, "use View<const Scalar>");
  CheckSameElements(eig::View<const double>(t), m);
  // A const object: its type could be written through, the caller's access cannot.
  const Eigen::MatrixXd& constant = m;
  CHECK((eig::ToTensor(constant, nullptr).flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  const Eigen::Matrix2f fixed = Eigen::Matrix2f::Identity();
  CHECK((eig::ToTensor(fixed, nullptr).flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(eig::ToTensor(m.col(1), nullptr).flags == 0);  // a writable block stays writable
}

TEST_CASE("EIG-6 View refuses what an Eigen::Map cannot express, saying why") {
  float values[24] = {};
  Tensor t;
  t.descriptor.Set(values, sizeof values);
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2, 3, 4});
  CHECK_DLB_ERROR(eig::View<float>(t), ErrorCode::kInvalidShape,
                  "dlbridge::eigen::View: the tensor has ndim 3 (shape [2, 3, 4], strides [12, "
                  "4, 1]); an Eigen::Map takes ndim 0 to 2");
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2, 3}, {-3, 1}, 12);
  CHECK_DLB_ERROR(eig::View<float>(t), ErrorCode::kInvalidStrides,
                  "strides[0] is -3 (shape [2, 3], strides [-3, 1]); an Eigen::Map takes no "
                  "negative strides");
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2, 3});
  CHECK_DLB_ERROR(eig::View<double>(t), ErrorCode::kInvalidDtype,
                  "the tensor's dtype is float32 but an Eigen::Map reads float64");
  t.layout.SetByteOffset(2);  // element zero half-way through a float
  CHECK_DLB_ERROR(eig::View<float>(t), ErrorCode::kInvalidArgument,
                  "element zero (byte offset 2) is not aligned to 4 bytes");
  t.layout.SetByteOffset(0);
  t.descriptor.SetMemorySpace("cuda");
  CHECK_DLB_ERROR(eig::View<float>(t), ErrorCode::kUnsupportedDevice, "not host-readable");
  t.descriptor.SetMemorySpace("host");
  // Zero strides (a broadcast) are expressible: every row reads the same elements.
  values[0] = 1;
  values[1] = 2;
  values[2] = 3;
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {4, 3}, {0, 1});
  auto broadcast = eig::View<const float>(t);
  CHECK(broadcast(3, 2) == 3.0f);
  CHECK(broadcast(0, 1) == 2.0f);
  // 0-d: one element, 1 x 1.
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), std::vector<int64_t>{});
  CHECK(eig::View<float>(t)(0, 0) == 1.0f);
}

TEST_CASE("HLP-6 TensorLayout takes Eigen index vectors for shape and strides") {
  Eigen::Array<Eigen::Index, 2, 1> shape(3, 4);
  Eigen::Matrix<int, Eigen::Dynamic, 1> strides(2);
  strides << 1, 3;
  const dlbridge::TensorLayout layout(dlbridge::DataTypeOf<double>(), shape, strides);
  CHECK(layout == dlbridge::TensorLayout(dlbridge::DataTypeOf<double>(), {3, 4}, {1, 3}));
}

TEST_CASE("HLP-6 an Eigen row of a column-major matrix gives the row, not the column") {
  // Row 0 is {2, 3, 4}; in column-major storage its elements are two apart, and data() then
  // size() would read 2, 5, 3.
  Eigen::Matrix<int, 2, 3> dims;
  dims << 2, 3, 4, 5, 6, 7;
  const dlbridge::TensorLayout layout(dlbridge::DataTypeOf<float>(), dims.row(0));
  CHECK(layout == dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2, 3, 4}));
  const dlbridge::TensorLayout strided(dlbridge::DataTypeOf<float>(), dims.row(0), dims.row(1));
  CHECK(strided == dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2, 3, 4}, {5, 6, 7}));
}
