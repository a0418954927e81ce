// The Kokkos bridge (bridges/kokkos): a Kokkos::View filled by a kernel lent to a DLPack
// consumer without a copy, the allocation kept by the export until the consumer lets go;
// then a consumer's tensor used in a Kokkos kernel as an unmanaged View.
#include <dlbridge/dlbridge.h>
#include <dlbridge/kokkos.h>

#include <Kokkos_Core.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    // 1. The producer: a 3 x 4 View in host memory, filled on the default host space.
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> field("field", 3, 4);
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 3), KOKKOS_LAMBDA(int i) {
          for (int j = 0; j < 4; ++j) field(i, j) = 10.0 * i + j;
        });
    Kokkos::fence();
    DLManagedTensorVersioned* exported =
        dlbridge::ToDLPackVersioned(dlbridge::kokkos::ToTensor(field));
    std::printf("1. View 3x4 exported: device type %d, zero copy: %s, allocation users: %d\n",
                static_cast<int>(exported->dl_tensor.device.device_type),
                exported->dl_tensor.data == field.data() ? "yes" : "no", field.use_count());

    // 2. A consumer imports it and runs a kernel on it as an unmanaged View.
    double total = 0;
    {
      dlbridge::Tensor imported = dlbridge::FromDLPack(exported);
      auto view = dlbridge::kokkos::View<const double**>(imported);
      Kokkos::parallel_reduce(
          "sum", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 3),
          KOKKOS_LAMBDA(int i, double& acc) {
            for (int j = 0; j < 4; ++j) acc += view(i, j);
          },
          total);
    }  // the import drops: the export's hold on the allocation goes
    std::printf("2. consumer's sum: %g, allocation users after it let go: %d\n", total,
                field.use_count());
    if (total != 138.0 || field.use_count() != 1) {
      std::printf("FAILED: expected sum 138 and one user\n");
      return 1;
    }
  } catch (const dlbridge::Error& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  return 0;
}
