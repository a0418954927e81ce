// What an exchange costs through each bridge built here, beside the framework's own view of
// the same memory (the floor for a bridge): `Bridge/<name>/floor` makes the framework's object
// over a 3 x 4 float buffer; `Bridge/<name>/exchange` goes the whole way a user's code goes,
// from such an object (or, where the framework adopts, a tensor over the same memory):
// ToTensor (with a hold), ToDLPackVersioned, FromDLPack, then the framework's view of the import
// (View, or Adopt where the hold moves in), and drops it all.
// The ratio is the bridge's overhead as a number (docs/benchmarks.md, "Bridges"). Every
// exchange checks that the hold dropped exactly once per operation.
#include <benchmark/benchmark.h>
#include <dlbridge/dlbridge.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>

#include "bench_registry.h"

#ifdef DLBRIDGE_BENCH_BRIDGE_EIGEN
#include <dlbridge/eigen.h>
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_OPENCV
#include <dlbridge/opencv.h>
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_VTK
#include <dlbridge/vtk.h>
#include <vtkFloatArray.h>
#include <vtkSmartPointer.h>
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_TORCH
#include <ATen/ATen.h>
#include <dlbridge/torch.h>
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_VISKORES
#include <dlbridge/viskores.h>
#include <viskores/cont/ArrayHandleBasic.h>
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_MDSPAN
#if defined(__has_include) && __has_include(<mdspan>)
#include <mdspan>
#endif
#ifdef __cpp_lib_mdspan
namespace md = std;
#else
#include <mdspan/mdspan.hpp>
namespace md = Kokkos;
#endif
#include <dlbridge/mdspan.h>
#endif

namespace dlbridge_bench {
namespace {

constexpr int kRows = 3;
constexpr int kCols = 4;

// The values every benchmark views, and an owner whose drops are counted: each exchange must
// drop its hold exactly once.
struct Values {
  float data[kRows * kCols] = {};
  int drops = 0;
};

[[maybe_unused]] std::shared_ptr<const void> CountedOwner(Values& values) {
  return std::shared_ptr<const void>(
      &values, [](const void* v) { ++const_cast<Values*>(static_cast<const Values*>(v))->drops; });
}

[[maybe_unused]] void CheckDrops(benchmark::State& state, const Values& values) {
  if (values.drops != static_cast<int>(state.iterations())) {
    state.SkipWithError("a hold did not drop exactly once per exchange");
  }
}

// A tensor over `values` of `shape`, held by the counted owner: where the framework adopts.
[[maybe_unused]] dlbridge::Tensor OwnedTensor(Values& values, std::initializer_list<int64_t> shape) {
  dlbridge::Tensor t;
  t.descriptor.Set(values.data, sizeof values.data);
  t.descriptor.SetOwner(CountedOwner(values));
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), shape);
  return t;
}

[[maybe_unused]] dlbridge::Tensor ThroughDLPack(dlbridge::Tensor&& tensor) {
  return dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
}

#ifdef DLBRIDGE_BENCH_BRIDGE_EIGEN
using EigenMap = Eigen::Map<Eigen::MatrixXf, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

void BM_EigenFloor(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    EigenMap map(values.data, kRows, kCols,
                 Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(kRows, 1));
    benchmark::DoNotOptimize(map.data());
  }
}

void BM_EigenExchange(benchmark::State& state) {
  Values values;
  EigenMap source(values.data, kRows, kCols,
                  Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(kRows, 1));
  for (auto _ : state) {
    dlbridge::Tensor imported =
        ThroughDLPack(dlbridge::eigen::ToTensor(source, CountedOwner(values)));
    auto view = dlbridge::eigen::View<float>(imported);
    benchmark::DoNotOptimize(view.data());
  }
  CheckDrops(state, values);
}
#endif

#ifdef DLBRIDGE_BENCH_BRIDGE_OPENCV
void BM_OpenCVFloor(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    cv::Mat mat(kRows, kCols, CV_32FC1, values.data);
    benchmark::DoNotOptimize(mat.data);
  }
}

void BM_OpenCVExchange(benchmark::State& state) {
  Values values;
  cv::Mat source(kRows, kCols, CV_32FC1, values.data);  // not const: const exports read-only
  for (auto _ : state) {
    cv::Mat mat = dlbridge::opencv::Adopt(
        ThroughDLPack(dlbridge::opencv::ToTensor(source, CountedOwner(values))));
    benchmark::DoNotOptimize(mat.data);
  }
  CheckDrops(state, values);
}
#endif

#ifdef DLBRIDGE_BENCH_BRIDGE_VTK
void BM_VTKFloor(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    auto array = vtkSmartPointer<vtkFloatArray>::New();
    array->SetNumberOfComponents(kCols);
    array->SetArray(values.data, kRows * kCols, /*save=*/1);
    benchmark::DoNotOptimize(array->GetPointer(0));
  }
}

void BM_VTKExchange(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    vtkSmartPointer<vtkDataArray> array =
        dlbridge::vtk::Adopt(ThroughDLPack(OwnedTensor(values, {kRows, kCols})));
    benchmark::DoNotOptimize(array->GetVoidPointer(0));
  }
  CheckDrops(state, values);
}
#endif

#ifdef DLBRIDGE_BENCH_BRIDGE_TORCH
void BM_TorchFloor(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    at::Tensor t = at::from_blob(values.data, {kRows, kCols}, at::kFloat);
    benchmark::DoNotOptimize(t.data_ptr());
  }
}

void BM_TorchExchange(benchmark::State& state) {
  Values values;
  const at::Tensor source = at::from_blob(values.data, {kRows, kCols}, at::kFloat);
  for (auto _ : state) {
    dlbridge::Tensor described = dlbridge::torch::ToTensor(source);
    described.descriptor.SetOwner(CountedOwner(values));  // counted, in place of the copy
    at::Tensor t = dlbridge::torch::Adopt(ThroughDLPack(std::move(described)));
    benchmark::DoNotOptimize(t.data_ptr());
  }
  CheckDrops(state, values);
}
#endif

#ifdef DLBRIDGE_BENCH_BRIDGE_VISKORES
void BM_ViskoresFloor(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    auto handle =
        viskores::cont::make_ArrayHandle(values.data, kRows * kCols, viskores::CopyFlag::Off);
    benchmark::DoNotOptimize(handle.GetNumberOfValues());
  }
}

void BM_ViskoresExchange(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    auto handle =
        dlbridge::viskores::Adopt<float>(ThroughDLPack(OwnedTensor(values, {kRows * kCols})));
    benchmark::DoNotOptimize(handle.GetNumberOfValues());
  }
  CheckDrops(state, values);
}
#endif

#ifdef DLBRIDGE_BENCH_BRIDGE_MDSPAN
using MdMatrix = md::mdspan<float, md::dextents<std::size_t, 2>>;  // row-major, as the others

void BM_MdspanFloor(benchmark::State& state) {
  Values values;
  for (auto _ : state) {
    MdMatrix view(values.data, kRows, kCols);
    float* data = view.data_handle();  // an lvalue: DoNotOptimize's const& form is deprecated
    benchmark::DoNotOptimize(data);
  }
}

void BM_MdspanExchange(benchmark::State& state) {
  Values values;
  const MdMatrix source(values.data, kRows, kCols);
  for (auto _ : state) {
    dlbridge::Tensor imported =
        ThroughDLPack(dlbridge::mdspan::ToTensor(source, CountedOwner(values)));
    MdMatrix view = dlbridge::mdspan::View<MdMatrix>(imported);
    float* data = view.data_handle();
    benchmark::DoNotOptimize(data);
  }
  CheckDrops(state, values);
}
#endif

}  // namespace

void RegisterBridgeBenchmarks() {
  using benchmark::RegisterBenchmark;
#ifdef DLBRIDGE_BENCH_BRIDGE_EIGEN
  RegisterBenchmark("Bridge/eigen/floor", BM_EigenFloor);
  RegisterBenchmark("Bridge/eigen/exchange", BM_EigenExchange);
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_OPENCV
  RegisterBenchmark("Bridge/opencv/floor", BM_OpenCVFloor);
  RegisterBenchmark("Bridge/opencv/exchange", BM_OpenCVExchange);
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_VTK
  RegisterBenchmark("Bridge/vtk/floor", BM_VTKFloor);
  RegisterBenchmark("Bridge/vtk/exchange", BM_VTKExchange);
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_TORCH
  RegisterBenchmark("Bridge/torch/floor", BM_TorchFloor);
  RegisterBenchmark("Bridge/torch/exchange", BM_TorchExchange);
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_VISKORES
  RegisterBenchmark("Bridge/viskores/floor", BM_ViskoresFloor);
  RegisterBenchmark("Bridge/viskores/exchange", BM_ViskoresExchange);
#endif
#ifdef DLBRIDGE_BENCH_BRIDGE_MDSPAN
  RegisterBenchmark("Bridge/mdspan/floor", BM_MdspanFloor);
  RegisterBenchmark("Bridge/mdspan/exchange", BM_MdspanExchange);
#endif
}

}  // namespace dlbridge_bench
