// A worked zero-copy exchange: a "simulation" lends its field to a consumer through DLPack,
// and gets it back (its release runs) exactly once, when the consumer lets go.
#include <dlbridge/dlbridge.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

// The simulation's own allocation and its bookkeeping.
struct Field {
  std::vector<double> values;
  int releases = 0;
};

void ReleaseField(void* context) {
  auto* field = static_cast<Field*>(context);
  ++field->releases;
  std::printf("  [simulation] release called (count now %d): the field may be reused\n",
              field->releases);
}

int Fail(const char* what) {
  std::printf("FAILED: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  Field field;
  const int64_t rows = 3, cols = 4;
  field.values.resize(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < field.values.size(); ++i) field.values[i] = 0.5 * static_cast<double>(i);
  const auto address = reinterpret_cast<intptr_t>(field.values.data());
  std::printf("1. simulation owns a %lldx%lld float64 field at 0x%llx (%zu bytes)\n",
              static_cast<long long>(rows), static_cast<long long>(cols),
              static_cast<unsigned long long>(address), field.values.size() * sizeof(double));

  DLManagedTensorVersioned* exported = nullptr;
  try {
    dlbridge::Tensor tensor;
    tensor.descriptor.Set(address, static_cast<int64_t>(field.values.size() * sizeof(double)),
                          "host");
    tensor.descriptor.SetRelease(&ReleaseField, &field);
    tensor.layout = dlbridge::TensorLayout({kDLFloat, 64, 1}, {rows, cols});
    std::printf("2. descriptor: pointer=0x%llx size=%lld space=%s role=%s holds=%s\n",
                static_cast<unsigned long long>(tensor.descriptor.GetPointer()),
                static_cast<long long>(tensor.descriptor.GetSizeInBytes()),
                tensor.descriptor.GetMemorySpace(), tensor.descriptor.GetRole(),
                tensor.descriptor.HasOwnership() ? "release" : "nothing");

    exported = dlbridge::ToDLPackVersioned(std::move(tensor));
    std::printf(
        "3. exported DLManagedTensorVersioned v%u.%u: data=%p device=(%d,%d) ndim=%d "
        "shape=[%lld,%lld] strides=[%lld,%lld]; manager_ctx is the release context: %s\n",
        exported->version.major, exported->version.minor, exported->dl_tensor.data,
        exported->dl_tensor.device.device_type, exported->dl_tensor.device.device_id,
        exported->dl_tensor.ndim, static_cast<long long>(exported->dl_tensor.shape[0]),
        static_cast<long long>(exported->dl_tensor.shape[1]),
        static_cast<long long>(exported->dl_tensor.strides[0]),
        static_cast<long long>(exported->dl_tensor.strides[1]),
        exported->manager_ctx == &field ? "yes" : "no");
    std::printf("   the descriptor handed its hold over: holds=%s; releases so far: %d\n",
                tensor.descriptor.HasOwnership() ? "yes" : "no", field.releases);
  } catch (const dlbridge::Error& e) {
    std::printf("export failed (%s): %s\n", dlbridge::ErrorCodeName(e.code()), e.what());
    return 1;
  }

  {
    // The consumer side: it only sees the DLPack tensor.
    dlbridge::Tensor imported = dlbridge::FromDLPack(exported);
    const auto* data = reinterpret_cast<const double*>(
        imported.descriptor.GetPointer() + static_cast<int64_t>(imported.layout.ByteOffset()));
    std::printf("4. consumer imported it: pointer=0x%llx size=%lld space=%s\n",
                static_cast<unsigned long long>(imported.descriptor.GetPointer()),
                static_cast<long long>(imported.descriptor.GetSizeInBytes()),
                imported.descriptor.GetMemorySpace());
    if (reinterpret_cast<intptr_t>(data) != address) return Fail("pointer identity");
    std::printf("   same address as the simulation's field: zero copies\n");
    double sum = 0;
    for (int64_t i = 0; i < rows * cols; ++i) sum += data[i];
    std::printf("   consumer reads element [2][3] = %.1f, sum = %.1f\n", data[2 * cols + 3], sum);
    if (data[2 * cols + 3] != field.values[11] || sum != 33.0) return Fail("data");
    field.values[0] = 42.0;
    std::printf("   simulation writes 42 into [0][0]; consumer sees %.1f\n", data[0]);
    if (data[0] != 42.0) return Fail("shared memory");
    std::printf("5. consumer still holds it; releases so far: %d\n", field.releases);
    if (field.releases != 0) return Fail("released early");
    std::printf("6. consumer lets go\n");
  }
  std::printf("7. releases: %d (expected exactly 1, at the end)\n", field.releases);
  if (field.releases != 1) return Fail("release count");
  std::printf("OK: zero-copy exchange complete, release ran exactly once\n");
  return 0;
}
