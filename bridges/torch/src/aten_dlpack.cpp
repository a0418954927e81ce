// libtorch's DLPack 0.6 side of the bridge (see aten_dlpack_internal.h). Only DLPack-free
// dlbridge headers may be included here: dlbridge/error.h, never one that includes DLPack 1.x.
#include <ATen/DLConvertor.h>

#include <atomic>
#include <exception>
#include <new>
#include <string>

#include "aten_dlpack_internal.h"
#include "dlbridge/error.h"

namespace dlbridge {
namespace torch {
namespace detail {
namespace {

// Stands between dlbridge's export and libtorch so that a failure inside libtorch can neither
// lose nor double the export's deleter (TOR-6): libtorch is handed `handed` (the export's
// DLTensor, this block's deleter). Whoever drops the last of two references frees the block:
// libtorch's deleter call and ImportLegacy itself.
struct Relay {
  DLManagedTensor handed{};
  DLManagedTensor* exported = nullptr;
  std::atomic<bool> released{false};  // the export's deleter has run
  std::atomic<int> references{2};
};

void Unreference(Relay* relay) noexcept {
  if (relay->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete relay;
}

void RelayDeleter(DLManagedTensor* self) noexcept {
  auto* relay = static_cast<Relay*>(self->manager_ctx);
  relay->exported->deleter(relay->exported);  // dlbridge's deleter: never throws
  relay->released.store(true, std::memory_order_release);
  Unreference(relay);
}

// libtorch failed: runs the export's deleter unless libtorch already did (its tensor died in
// the unwinding), and drops libtorch's reference when it never took the tensor over.
void Abandon(Relay* relay) noexcept {
  if (!relay->released.load(std::memory_order_acquire)) {
    relay->exported->deleter(relay->exported);
    relay->released.store(true, std::memory_order_release);
    Unreference(relay);  // libtorch's: it will never call the deleter now
  }
  Unreference(relay);
}

at::Tensor FromDLPackImporter(void* managed) {
  return at::fromDLPack(static_cast<DLManagedTensor*>(managed));
}

}  // namespace

// TOR-6: one deleter call whatever libtorch does, and its errors as dlbridge::Error.
at::Tensor ImportLegacy(void* managed, bool asBool, AtenImporter importer) {
  auto* exported = static_cast<DLManagedTensor*>(managed);
  auto* relay = new (std::nothrow) Relay;
  if (relay == nullptr) {
    exported->deleter(exported);
    throw Error(ErrorCode::kOutOfMemory,
                "dlbridge::torch::ToAten: out of memory handing the tensor to libtorch");
  }
  relay->exported = exported;
  relay->handed.dl_tensor = exported->dl_tensor;
  if (asBool) relay->handed.dl_tensor.dtype = {kDLUInt, 8, 1};  // 0.6 has no kDLBool
  // TOR-8: libtorch 1.13 never calls the deleter of a storage whose data is NULL (its deleter
  // sits in a std::unique_ptr), and dlbridge exports zero-size tensors so: any live address
  // will do, as libtorch reads no element of them.
  if (relay->handed.dl_tensor.data == nullptr) relay->handed.dl_tensor.data = relay;
  relay->handed.manager_ctx = relay;
  relay->handed.deleter = &RelayDeleter;
  std::string failure;
  ErrorCode code = ErrorCode::kInvalidArgument;
  try {
    at::Tensor result = (importer != nullptr ? importer : &FromDLPackImporter)(&relay->handed);
    if (asBool) result = result.view(at::kBool);
    Unreference(relay);
    return result;
  } catch (const c10::Error& e) {
    failure = e.what_without_backtrace();
  } catch (const std::bad_alloc&) {
    code = ErrorCode::kOutOfMemory;
    failure = "out of memory";
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "an exception that is not a std::exception";
  }
  Abandon(relay);
  throw Error(
      code,
      "dlbridge::torch::ToAten: libtorch failed to take the tensor (its hold has been released): " +
          failure);
}

}  // namespace detail
}  // namespace torch
}  // namespace dlbridge
