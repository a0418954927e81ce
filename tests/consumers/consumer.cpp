// A consumer of dlbridge, built the way users build it: exports a host buffer, imports it
// back, and checks that the release ran exactly once and that dlbridge::Error is catchable.
#include <dlbridge/dlbridge.h>

#include <cstdint>
#include <cstdio>
#include <utility>

namespace {

int releases = 0;
void Release(void*) { ++releases; }

int Fail(const char* what) {
  std::printf("consumer: FAILED: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  static float data[6] = {};
  dlbridge::Tensor tensor;
  tensor.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(data)), sizeof data,
                        "host");
  tensor.descriptor.SetRelease(&Release, nullptr);
  tensor.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 32, 1}, {2, 3});
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(tensor));
  {
    dlbridge::Tensor back = dlbridge::FromDLPack(managed);
    if (back.descriptor.GetPointer() != static_cast<int64_t>(reinterpret_cast<intptr_t>(data))) {
      return Fail("the import does not point at the buffer");
    }
    if (releases != 0) return Fail("released while still imported");
  }
  if (releases != 1) return Fail("the release did not run exactly once");

  // The exception type must cross the library boundary (its typeinfo is exported).
  DLManagedTensorVersioned bad{};
  bad.version.major = 2;
  try {
    dlbridge::FromDLPack(&bad);
    return Fail("a version 2 tensor was accepted");
  } catch (const dlbridge::Error& e) {
    if (e.code() != dlbridge::ErrorCode::kUnsupportedVersion) return Fail(e.what());
  }
  std::printf("consumer: ok (dlbridge %d.%d.%d, DLPack %d.%d)\n", DLBRIDGE_VERSION_MAJOR,
              DLBRIDGE_VERSION_MINOR, DLBRIDGE_VERSION_PATCH, DLPACK_MAJOR_VERSION,
              DLPACK_MINOR_VERSION);
  return 0;
}
