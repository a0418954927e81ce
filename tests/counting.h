// Test helpers: releases and deleters that count their calls, and hand-built DLPack tensors.
#pragma once

#include <dlpack/dlpack.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "dlbridge/dlbridge.h"

namespace dlbtest {

/// A release context that counts how often its release ran.
struct ReleaseCounter {
  int calls = 0;
  static void Release(void* context) { ++static_cast<ReleaseCounter*>(context)->calls; }
};

/// A host buffer the tests describe.
struct Buffer {
  alignas(256) unsigned char bytes[4096] = {};
  int64_t Address() const { return static_cast<int64_t>(reinterpret_cast<intptr_t>(bytes)); }
};

/// A producer-side DLPack tensor built field by field, whose deleter counts its calls.
template <class Managed>
struct HandBuilt {
  static constexpr bool kVersioned = std::is_same_v<Managed, DLManagedTensorVersioned>;
  Managed managed{};
  int64_t shape[70] = {};
  int64_t strides[70] = {};
  int deletes = 0;

  static void Deleter(Managed* self) {
    // `managed` is the first member: the struct is its own manager.
    ++reinterpret_cast<HandBuilt*>(self)->deletes;
  }

  /// A C-contiguous host tensor of `dtype` over `data` with the given shape.
  HandBuilt(void* data, std::initializer_list<int64_t> dims, DLDataType dtype = {kDLFloat, 32, 1}) {
    if constexpr (kVersioned) {
      managed.version = {1, DLPACK_MINOR_VERSION};
    }
    managed.manager_ctx = this;
    managed.deleter = &Deleter;
    DLTensor& t = managed.dl_tensor;
    t.data = data;
    t.device = {kDLCPU, 0};
    t.dtype = dtype;
    t.ndim = static_cast<int32_t>(dims.size());
    int i = 0;
    for (int64_t d : dims) shape[i++] = d;
    int64_t step = 1;
    for (int k = t.ndim - 1; k >= 0; --k) {
      strides[k] = step;
      // Wraps rather than overflowing (UB) for the huge shapes overflow tests build; those
      // tests set the strides they mean.
      step = static_cast<int64_t>(static_cast<uint64_t>(step) *
                                  static_cast<uint64_t>(shape[k] > 0 ? shape[k] : 1));
    }
    t.shape = t.ndim > 0 ? shape : nullptr;
    t.strides = t.ndim > 0 ? strides : nullptr;
  }
  HandBuilt(const HandBuilt&) = delete;
  DLTensor& T() { return managed.dl_tensor; }
};

using Versioned = HandBuilt<DLManagedTensorVersioned>;
using Legacy = HandBuilt<DLManagedTensor>;

/// A host tensor over `buffer` whose release counts into `counter`.
inline dlbridge::Tensor HostTensor(Buffer& buffer, ReleaseCounter& counter,
                                   dlbridge::TensorLayout layout, int64_t size = 4096) {
  dlbridge::Tensor t;
  t.descriptor.Set(buffer.Address(), size, "host");
  t.descriptor.SetRelease(&ReleaseCounter::Release, &counter);
  t.layout = std::move(layout);
  return t;
}

inline dlbridge::TensorLayout F32(std::vector<int64_t> shape, std::vector<int64_t> strides = {},
                                  uint64_t offset = 0) {
  return dlbridge::TensorLayout({kDLFloat, 32, 1}, std::move(shape), std::move(strides), offset);
}

}  // namespace dlbtest

/// Checks that `expr` throws dlbridge::Error with `code` and a message containing `text`.
#define CHECK_DLB_ERROR(expr, code_, text)                                     \
  do {                                                                         \
    bool thrown_ = false;                                                      \
    try {                                                                      \
      (void)(expr);                                                            \
    } catch (const dlbridge::Error& e_) {                                      \
      thrown_ = true;                                                          \
      CHECK_MESSAGE(e_.code() == (code_), dlbridge::ErrorCodeName(e_.code())); \
      CHECK_MESSAGE(std::string(e_.what()).find(text) != std::string::npos,    \
                    std::string(e_.what()));                                   \
    }                                                                          \
    CHECK_MESSAGE(thrown_, "expected dlbridge::Error from " #expr);            \
  } while (0)
