// Interposes the malloc family and the replaceable operator new/delete in the benchmark binary:
// symbols defined by the executable win over libc's for every library of the process. Each
// call adds to thread-local counts and forwards to glibc's own __libc_* allocator.
#include "alloc_counter.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
void __libc_free(void* pointer);
}

namespace {

// Plain thread-locals (local-exec TLS in an executable): one add each, no atomics, so the
// counting costs a cycle or two on top of every measured allocation, the floor's included.
thread_local uint64_t tAllocs = 0;
thread_local uint64_t tBytes = 0;

inline void* Counted(void* pointer, size_t size) noexcept {
  ++tAllocs;
  tBytes += size;
  return pointer;
}

inline bool PowerOfTwo(size_t value) { return value != 0 && (value & (value - 1)) == 0; }

void* NewOrThrow(size_t size, size_t alignment) {
  if (size == 0) size = 1;
  for (;;) {
    void* pointer = alignment <= alignof(std::max_align_t) ? __libc_malloc(size)
                                                           : __libc_memalign(alignment, size);
    if (pointer != nullptr) return Counted(pointer, size);
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* NewOrNull(size_t size, size_t alignment) noexcept {
  try {
    return NewOrThrow(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

extern "C" {

void* malloc(size_t size) noexcept { return Counted(__libc_malloc(size), size); }

void* calloc(size_t count, size_t size) noexcept {
  return Counted(__libc_calloc(count, size), count * size);
}

void* realloc(void* pointer, size_t size) noexcept {
  void* result = __libc_realloc(pointer, size);
  return size == 0 ? result : Counted(result, size);  // realloc(p, 0) frees
}

void* memalign(size_t alignment, size_t size) noexcept {
  return Counted(__libc_memalign(alignment, size), size);
}

void* aligned_alloc(size_t alignment, size_t size) noexcept {
  return Counted(__libc_memalign(alignment, size), size);
}

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (!PowerOfTwo(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = Counted(pointer, size);
  return 0;
}

void* valloc(size_t size) noexcept { return Counted(__libc_valloc(size), size); }
void* pvalloc(size_t size) noexcept { return Counted(__libc_pvalloc(size), size); }
void free(void* pointer) noexcept { __libc_free(pointer); }

}  // extern "C"

// libstdc++'s operator new already calls malloc; replacing it here makes the count independent
// of how the standard library was built. Alignment above malloc's goes through memalign.
void* operator new(size_t size) { return NewOrThrow(size, 0); }
void* operator new[](size_t size) { return NewOrThrow(size, 0); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return NewOrNull(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return NewOrNull(size, 0); }
void* operator new(size_t size, std::align_val_t alignment) {
  return NewOrThrow(size, static_cast<size_t>(alignment));
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return NewOrThrow(size, static_cast<size_t>(alignment));
}
void* operator new(size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return NewOrNull(size, static_cast<size_t>(alignment));
}
void* operator new[](size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return NewOrNull(size, static_cast<size_t>(alignment));
}
void operator delete(void* pointer) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, size_t) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, size_t) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, const std::nothrow_t&) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, const std::nothrow_t&) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, size_t, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, size_t, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  __libc_free(pointer);
}
void operator delete[](void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  __libc_free(pointer);
}

namespace dlbridge_bench {

AllocSnapshot AllocsNow() noexcept { return {tAllocs, tBytes}; }

void ReportAllocs(benchmark::State& state, const AllocSnapshot& before) {
  const AllocSnapshot now = AllocsNow();
  using benchmark::Counter;
  state.counters["allocs_per_op"] =
      Counter(static_cast<double>(now.allocs - before.allocs), Counter::kAvgIterations);
  state.counters["alloc_bytes_per_op"] =
      Counter(static_cast<double>(now.bytes - before.bytes), Counter::kAvgIterations);
}

bool AllocCountingWorks() {
  const AllocSnapshot before = AllocsNow();
  void* volatile pointer = ::malloc(24);  // volatile: the call must happen
  ::free(pointer);
  void* volatile object = ::operator new(24);  // a call, not a new-expression GCC may elide
  ::operator delete(object);
  return AllocsNow().allocs - before.allocs == 2;
}

}  // namespace dlbridge_bench
