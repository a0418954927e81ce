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

// Checks an exported DLTensor against the layout and descriptor it came from: element zero in
// data (EXP-17), or the descriptor's split when `keep` (ExportOptions::keep_byte_offset).
void CheckTensor(const DLTensor& t, const dlbridge::TensorLayout& layout, int64_t pointer,
                 bool keep) {
  CHECK(t.ndim == layout.Ndim());
  CHECK(t.dtype.code == layout.Dtype().code);
  CHECK(t.dtype.bits == layout.Dtype().bits);
  CHECK(t.dtype.lanes == layout.Dtype().lanes);
  if (layout.ElementCount() == 0) {
    CHECK(t.data == nullptr);
  } else {
    const int64_t offset = static_cast<int64_t>(layout.ByteOffset());
    CHECK(reinterpret_cast<intptr_t>(t.data) == (keep ? pointer : pointer + offset));
    CHECK(t.byte_offset == (keep ? layout.ByteOffset() : 0));
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
  for (bool keep : {false, true})
    for (const dlbridge::TensorLayout& layout : layouts) {
      ReleaseCounter c;
      dlbridge::ExportOptions o;
      o.keep_byte_offset = keep;
      M* m = Export<M>(HostTensor(buf, c, layout), o);
      CheckTensor(m->dl_tensor, layout, buf.Address(), keep);
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
  // Another producer's tensor (dlbridge's own exports are taken back instead: RT-6), 3 x 5
  // with a negative row stride and a byte offset.
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {3, 5});
  h.strides[0] = -5;
  h.T().byte_offset = 40;
  Tensor imported = dlbridge::FromDLPack(&h.managed);
  M* again = Export<M>(std::move(imported));
  CHECK(again == &h.managed);
  CHECK_FALSE(imported.descriptor.HasOwnership());
  CHECK(h.deletes == 0);
  again->deleter(again);
  CHECK(h.deletes == 1);
}

TEST_CASE_TEMPLATE("RT-3 a changed or cross-type re-export wraps, and still releases once", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  SUBCASE("changed layout") {
    HandBuilt<M> h(buf.bytes, {4, 4});  // another producer's (RT-6 takes our own back)
    Tensor imported = dlbridge::FromDLPack(&h.managed);
    imported.layout = F32({16});
    M* again = Export<M>(std::move(imported));
    CHECK(again != &h.managed);
    CHECK(again->manager_ctx == &h.managed);  // the release context is the original tensor
    CHECK(again->dl_tensor.ndim == 1);
    CHECK(h.deletes == 0);
    again->deleter(again);
    CHECK(h.deletes == 1);
  }
  SUBCASE("other struct type") {
    Versioned h(buf.bytes, {4});  // another producer's (RT-6 takes our own back)
    Tensor imported = dlbridge::FromDLPack(&h.managed);
    DLManagedTensor* legacy = dlbridge::ToDLPack(std::move(imported));
    CHECK(static_cast<void*>(legacy) != static_cast<void*>(&h.managed));
    CHECK(legacy->manager_ctx == &h.managed);  // wrapped: the release context is the original
    Tensor again = dlbridge::FromDLPack(legacy);
    // The wrapper is ours, unchanged: RT-6 takes it back, its hold being the import of the
    // original, and RT-2 then hands the original back: no chain of wrappers.
    DLManagedTensorVersioned* back = dlbridge::ToDLPackVersioned(std::move(again));
    CHECK(back == &h.managed);
    CHECK(h.deletes == 0);
    back->deleter(back);
    CHECK(h.deletes == 1);
  }
  SUBCASE("read-only asked on re-export") {
    if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) {
      HandBuilt<M> h(buf.bytes, {4});
      Tensor imported = dlbridge::FromDLPack(&h.managed);
      dlbridge::ExportOptions ro;
      ro.read_only = true;
      M* again = Export<M>(std::move(imported), ro);
      CHECK(again != &h.managed);
      CHECK(again->manager_ctx == &h.managed);
      CHECK(again->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
      again->deleter(again);
      CHECK(h.deletes == 1);
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

namespace {

// A host tensor over `pointer` (never dereferenced: export and import only do arithmetic).
Tensor AtAddress(int64_t pointer, int64_t size, ReleaseCounter& c, dlbridge::TensorLayout layout) {
  Tensor t;
  t.descriptor.Set(pointer, size, "host");
  t.descriptor.SetRelease(&ReleaseCounter::Release, &c);
  t.layout = std::move(layout);
  return t;
}

// Whether the import of a hand-built tensor with `data` and `byte_offset` over `dims` floats
// is accepted (the deleter runs once either way).
template <class M>
bool ImportAccepts(uintptr_t data, uint64_t byteOffset, std::initializer_list<int64_t> dims) {
  HandBuilt<M> h(reinterpret_cast<void*>(data), dims);
  h.T().byte_offset = byteOffset;
  bool accepted = true;
  try {
    Tensor t = dlbridge::FromDLPack(&h.managed);
  } catch (const dlbridge::Error& e) {
    CHECK(e.code() == dlbridge::ErrorCode::kOverflow);
    accepted = false;
  }
  CHECK(h.deletes == 1);
  return accepted;
}

}  // namespace

TEST_CASE_TEMPLATE("EXP-18 export accepts exactly the addresses the import of it accepts", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  constexpr int64_t kMax = INT64_MAX;
  SUBCASE("the last 8 bytes below 2^63: both accept, and the round trip keeps the address") {
    for (bool keep : {false, true}) {
      ReleaseCounter c;
      dlbridge::ExportOptions o;
      o.keep_byte_offset = keep;
      M* m = Export<M>(AtAddress(kMax - 7, 8, c, F32({2})), o);
      CHECK(reinterpret_cast<uintptr_t>(m->dl_tensor.data) == uintptr_t{kMax - 7});
      Tensor back = dlbridge::FromDLPack(m);
      CHECK(back.descriptor.GetPointer() == kMax - 7);
      CHECK(back.descriptor.GetSizeInBytes() == 8);
      // RT-6: an own export comes back with its own hold (the release, not the block's deleter).
      CHECK((back.descriptor.GetRelease() == &ReleaseCounter::Release));
      M* again = Export<M>(std::move(back));
      CHECK(reinterpret_cast<uintptr_t>(again->dl_tensor.data) == uintptr_t{kMax - 7});
      again->deleter(again);
      CHECK(c.calls == 1);
    }
    // With a byte offset: element zero at 2^63 - 4, the last float below 2^63.
    ReleaseCounter c;
    M* m = Export<M>(AtAddress(kMax - 7, 8, c, F32({1}, {}, 4)));
    CHECK(reinterpret_cast<uintptr_t>(m->dl_tensor.data) == uintptr_t{kMax - 3});
    CHECK(m->dl_tensor.byte_offset == 0);
    Tensor back = dlbridge::FromDLPack(m);
    CHECK(back.descriptor.GetPointer() == kMax - 3);
    back = Tensor{};
    CHECK(c.calls == 1);
    CHECK(ImportAccepts<M>(uintptr_t{kMax - 7}, 4, {1}));
  }
  struct Refused {
    const char* what;
    int64_t pointer;
    int64_t size;
    dlbridge::TensorLayout layout;
    const char* message;
  };
  const Refused refused[] = {
      {"a pointer at 2^63", INT64_MIN, 8, F32({2}),
       "the descriptor's pointer 0x8000000000000000 with byte_offset 0 and this layout wraps "
       "around the address space"},
      {"a pointer just past 2^63", INT64_MIN + 64, 64, F32({4}, {}, 16), "0x8000000000000040"},
      {"element zero at 2^63 through the byte offset", kMax - 3, 8, F32({1}, {}, 4),
       "the descriptor's pointer 0x7ffffffffffffffc with byte_offset 4"},
      {"a pointer 8 bytes below 2^64", -8, 8, F32({2}), "0xfffffffffffffff8"},
      {"a layout whose last byte is 2^64 - 1", -16, 16, F32({2}, {}, 8), "0xfffffffffffffff0"},
  };
  for (const Refused& r : refused) {
    CAPTURE(r.what);
    for (bool keep : {false, true}) {
      ReleaseCounter c;
      dlbridge::ExportOptions o;
      o.keep_byte_offset = keep;
      Tensor t = AtAddress(r.pointer, r.size, c, r.layout);
      CHECK_DLB_ERROR(Export<M>(std::move(t), o), dlbridge::ErrorCode::kOverflow, r.message);
      CHECK(t.descriptor.HasOwnership());  // EXP-11
      t = Tensor{};
      CHECK(c.calls == 1);
    }
    // The import of the same bytes refuses too, in either split.
    const auto pointer = static_cast<uintptr_t>(r.pointer);
    const uint64_t offset = r.layout.ByteOffset();
    const int64_t n = r.layout.Shape()[0];
    CHECK_FALSE(ImportAccepts<M>(pointer, offset, {n}));
    CHECK_FALSE(ImportAccepts<M>(pointer + offset, 0, {n}));
  }
}
