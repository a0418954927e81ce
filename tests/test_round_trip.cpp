// One field-by-field checker over legacy and versioned exports, and re-export (RT-*).
#include <doctest/doctest.h>

#include <memory>
#include <type_traits>

#include "counting.h"

using dlbridge::Tensor;
using namespace dlbtest;

namespace {

template <class M>
M* Export(Tensor&& t, const dlbridge::ExportOptions& o = {}) {
  if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) {
    return dlbridge::ToDLPackVersioned(std::move(t), o);
  } else {
    return dlbridge::ToDLPack(std::move(t), o);
  }
}

// Checks an exported DLTensor against the layout and descriptor it came from.
void CheckTensor(const DLTensor& t, const dlbridge::TensorLayout& layout, int64_t pointer) {
  CHECK(t.ndim == layout.Ndim());
  CHECK(t.dtype.code == layout.Dtype().code);
  CHECK(t.dtype.bits == layout.Dtype().bits);
  CHECK(t.dtype.lanes == layout.Dtype().lanes);
  if (layout.ElementCount() == 0) {
    CHECK(t.data == nullptr);
  } else {
    CHECK(reinterpret_cast<intptr_t>(t.data) == pointer);
    CHECK(t.byte_offset == layout.ByteOffset());
  }
  for (int i = 0; i < t.ndim; ++i) {
    CHECK(t.shape[i] == layout.Shape()[i]);
    CHECK(t.strides[i] == layout.Strides()[i]);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("RT-1 export then import preserves pointer, layout and the single release", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  const dlbridge::TensorLayout layouts[] = {
      dlbridge::TensorLayout(),
      F32({16}),
      F32({4, 4}, {1, 4}),
      F32({3, 5}, {-5, 1}, 40),
      F32({2, 0, 3}),
      dlbridge::TensorLayout({kDLComplex, 128, 1}, {2, 2, 2, 2}),
      dlbridge::TensorLayout({kDLUInt, 8, 1}, std::vector<int64_t>(10, 2), {}, 16),
  };
  for (const dlbridge::TensorLayout& layout : layouts) {
    ReleaseCounter c;
    M* m = Export<M>(HostTensor(buf, c, layout));
    CheckTensor(m->dl_tensor, layout, buf.Address());
    {
      Tensor back = dlbridge::FromDLPack(m);
      CHECK(back.layout.Shape().size == layout.Shape().size);
      if (layout.ElementCount() > 0) {
        CHECK(back.descriptor.GetPointer() + static_cast<int64_t>(back.layout.ByteOffset()) ==
              buf.Address() + static_cast<int64_t>(layout.ByteOffset()));
      }
      CHECK(c.calls == 0);
    }
    CHECK(c.calls == 1);
  }
}

TEST_CASE_TEMPLATE("RT-2 re-exporting an unchanged import hands back the original tensor", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  ReleaseCounter c;
  M* first = Export<M>(HostTensor(buf, c, F32({3, 5}, {-5, 1}, 40)));
  Tensor imported = dlbridge::FromDLPack(first);
  M* again = Export<M>(std::move(imported));
  CHECK(again == first);
  CHECK_FALSE(imported.descriptor.HasOwnership());
  CHECK(c.calls == 0);
  again->deleter(again);
  CHECK(c.calls == 1);
}

TEST_CASE_TEMPLATE("RT-3 a changed or cross-type re-export wraps, and still releases once", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  ReleaseCounter c;
  SUBCASE("changed layout") {
    M* first = Export<M>(HostTensor(buf, c, F32({4, 4})));
    Tensor imported = dlbridge::FromDLPack(first);
    imported.layout = F32({16});
    M* again = Export<M>(std::move(imported));
    CHECK(again != first);
    CHECK(again->manager_ctx == first);  // the release context is the original tensor
    CHECK(again->dl_tensor.ndim == 1);
    again->deleter(again);
    CHECK(c.calls == 1);
  }
  SUBCASE("other struct type") {
    DLManagedTensorVersioned* first = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({4})));
    Tensor imported = dlbridge::FromDLPack(first);
    DLManagedTensor* legacy = dlbridge::ToDLPack(std::move(imported));
    CHECK(static_cast<void*>(legacy) != static_cast<void*>(first));
    Tensor again = dlbridge::FromDLPack(legacy);
    DLManagedTensorVersioned* back = dlbridge::ToDLPackVersioned(std::move(again));
    back->deleter(back);
    CHECK(c.calls == 1);
  }
  SUBCASE("read-only asked on re-export") {
    if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) {
      M* first = Export<M>(HostTensor(buf, c, F32({4})));
      Tensor imported = dlbridge::FromDLPack(first);
      dlbridge::ExportOptions ro;
      ro.read_only = true;
      M* again = Export<M>(std::move(imported), ro);
      CHECK(again != first);
      CHECK(again->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
      again->deleter(again);
      CHECK(c.calls == 1);
    }
  }
}

TEST_CASE("RT-4 a producer's legacy tensor with NULL strides is wrapped, not handed back") {
  Buffer buf;
  Legacy h(buf.bytes, {2, 2});
  h.T().strides = nullptr;
  Tensor imported = dlbridge::FromDLPack(&h.managed);
  DLManagedTensor* again = dlbridge::ToDLPack(std::move(imported));
  CHECK(again != &h.managed);
  REQUIRE(again->dl_tensor.strides != nullptr);
  CHECK(again->dl_tensor.strides[0] == 2);
  again->deleter(again);
  CHECK(h.deletes == 1);
}
