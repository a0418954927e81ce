// at::Tensor -> dlbridge -> at::Tensor with the libtorch bridge (dlbridge::torch): no copy on
// the way, and the memory is freed once, when the last holder lets go. dlbridge's headers come
// first here and libtorch's after; any order works (dlbridge/torch.h, "Which headers may meet").
#include <ATen/ATen.h>
#include <dlbridge/dlbridge.h>
#include <dlbridge/torch.h>

#include <cstdio>
#include <vector>

int main() {
  std::vector<float> memory(12);
  for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<float>(i);
  int frees = 0;  // how often libtorch freed the storage
  at::Tensor original = at::from_blob(
                            memory.data(), {3, 4}, [&frees](void*) { ++frees; }, at::kFloat)
                            .t();

  // libtorch -> dlbridge: the dlbridge tensor holds a reference to the storage.
  dlbridge::Tensor shared = dlbridge::torch::FromAten(original);
  std::printf("at::Tensor data %p, dlbridge element zero %p: %s\n", original.data_ptr(),
              static_cast<void*>(shared.Data<float>()),
              original.data_ptr() == shared.Data<float>() ? "zero copy" : "COPIED");
  std::printf("dlbridge layout: %d-d, strides {%lld, %lld}\n", shared.layout.Ndim(),
              static_cast<long long>(shared.layout.Strides()[0]),
              static_cast<long long>(shared.layout.Strides()[1]));

  // dlbridge -> libtorch: the hold moves into the new at::Tensor's storage.
  at::Tensor back = dlbridge::torch::ToAten(std::move(shared));
  std::printf("back in libtorch: data %p (%s), sum %.0f\n", back.data_ptr(),
              back.data_ptr() == original.data_ptr() ? "the same memory" : "COPIED",
              back.sum().item<double>());

  original = at::Tensor();
  std::printf("original dropped: storage freed %d time(s)\n", frees);
  back = at::Tensor();
  std::printf("last holder dropped: storage freed %d time(s)\n", frees);
  return frees == 1 ? 0 : 1;
}
