// Exports, deleters, releases, descriptors and imports across threads (spec/reliability.md
// THR-*). Run under the tsan preset, these must report no race; everywhere they must release
// exactly once.
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "counting.h"

using dlbridge::MemoryDescriptor;
using dlbridge::Tensor;
using namespace dlbtest;

namespace {

constexpr int kThreads = 4;
constexpr int kPerThread = 200;

/// A release context that many threads may release into.
struct AtomicCounter {
  std::atomic<int> calls{0};
  static void Release(void* context) {
    static_cast<AtomicCounter*>(context)->calls.fetch_add(1, std::memory_order_relaxed);
  }
};

/// Records which thread ran a release.
struct ThreadRecorder {
  std::atomic<int> calls{0};
  std::thread::id thread;
  std::mutex mutex;
  static void Release(void* context) {
    auto* self = static_cast<ThreadRecorder*>(context);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->thread = std::this_thread::get_id();
    self->calls.fetch_add(1);
  }
  std::thread::id Thread() {
    std::lock_guard<std::mutex> lock(mutex);
    return thread;
  }
};

/// A closable multi-producer, multi-consumer queue.
template <class T>
class Queue {
 public:
  void Push(T value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(value));
    }
    ready_.notify_one();
  }
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool closed_ = false;
};

Tensor AtomicTensor(Buffer& buffer, AtomicCounter& counter, int i) {
  Tensor t;
  t.descriptor.Set(buffer.Address(), 4096, "host");
  t.descriptor.SetRelease(&AtomicCounter::Release, &counter);
  t.layout = F32({1 + i % 7, 1 + i % 5});
  return t;
}

void JoinAll(std::vector<std::thread>& threads) {
  for (std::thread& t : threads) t.join();
}

/// Threads report failures through this; CHECK itself is called on the main thread only.
struct Failures {
  std::atomic<int> count{0};
  void Expect(bool ok) {
    if (!ok) count.fetch_add(1);
  }
};

}  // namespace

TEST_CASE("THR-1 exports made on several threads at once each release exactly once") {
  Buffer buf;
  AtomicCounter counter;
  auto owner = std::make_shared<int>(1);
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if ((i + t) % 2 == 0) {
          DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(AtomicTensor(buf, counter, i));
          failures.Expect(m->manager_ctx == &counter);
          m->deleter(m);
        } else {
          // Many exports sharing one owner: its count changes on every thread.
          Tensor shared;
          shared.descriptor.Set(buf.Address(), 4096, "host");
          shared.descriptor.SetOwner(owner);
          shared.layout = F32({4});
          DLManagedTensor* m = dlbridge::ToDLPack(std::move(shared));
          failures.Expect(!shared.descriptor.HasOwnership());
          m->deleter(m);
        }
      }
    });
  }
  JoinAll(threads);
  CHECK(failures.count.load() == 0);
  CHECK(counter.calls.load() == kThreads * kPerThread / 2);
  CHECK(owner.use_count() == 1);
}

TEST_CASE("THR-2 deleters run on other threads than the exports that made them") {
  Buffer buf;
  AtomicCounter counter;
  Queue<DLManagedTensorVersioned*> versioned;
  Queue<DLManagedTensor*> legacy;
  std::vector<std::thread> producers;
  std::vector<std::thread> consumers;
  for (int t = 0; t < kThreads / 2; ++t) {
    consumers.emplace_back([&] {
      while (auto m = versioned.Pop()) (*m)->deleter(*m);
    });
    consumers.emplace_back([&] {
      while (auto m = legacy.Pop()) (*m)->deleter(*m);
    });
  }
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (t % 2 == 0) {
          versioned.Push(dlbridge::ToDLPackVersioned(AtomicTensor(buf, counter, i)));
        } else {
          legacy.Push(dlbridge::ToDLPack(AtomicTensor(buf, counter, i)));
        }
      }
    });
  }
  JoinAll(producers);
  versioned.Close();
  legacy.Close();
  JoinAll(consumers);
  CHECK(counter.calls.load() == kThreads * kPerThread);
}

TEST_CASE("THR-3 descriptors moved between threads release once, on the thread that drops them") {
  Buffer buf;
  ThreadRecorder recorder;
  Queue<MemoryDescriptor> queue;
  std::thread::id dropper;
  std::thread consumer([&] {
    dropper = std::this_thread::get_id();
    while (auto d = queue.Pop()) {
      MemoryDescriptor mine = std::move(*d);  // moved again, then dropped here
    }
  });
  {
    MemoryDescriptor d;
    d.Set(buf.Address(), 64, "host");
    d.SetRelease(&ThreadRecorder::Release, &recorder);
    queue.Push(std::move(d));
    CHECK_FALSE(d.HasOwnership());
  }
  // A batch of moved descriptors with releases and owners.
  AtomicCounter counter;
  auto owner = std::make_shared<int>(2);
  for (int i = 0; i < kPerThread; ++i) {
    MemoryDescriptor d;
    if (i % 2 == 0) {
      d.SetRelease(&AtomicCounter::Release, &counter);
    } else {
      d.SetOwner(owner);
    }
    queue.Push(std::move(d));
  }
  queue.Close();
  consumer.join();
  CHECK(recorder.calls.load() == 1);
  CHECK(static_cast<bool>(recorder.Thread() == dropper));
  CHECK(counter.calls.load() == kPerThread / 2);
  CHECK(owner.use_count() == 1);
}

TEST_CASE("THR-4 an import made on one thread is dropped on another, its deleter runs once there") {
  struct Produced {
    DLManagedTensorVersioned managed{};
    int64_t shape[1] = {16};
    int64_t strides[1] = {1};
    std::atomic<int> deletes{0};
    std::thread::id deleted_on;
    static void Deleter(DLManagedTensorVersioned* self) {
      auto* p = static_cast<Produced*>(self->manager_ctx);
      p->deleted_on = std::this_thread::get_id();
      p->deletes.fetch_add(1);
    }
  };
  Buffer buf;
  constexpr int kTensors = 64;
  std::vector<std::unique_ptr<Produced>> produced;
  for (int i = 0; i < kTensors; ++i) {
    auto p = std::make_unique<Produced>();
    p->managed.version = {1, DLPACK_MINOR_VERSION};
    p->managed.manager_ctx = p.get();
    p->managed.deleter = &Produced::Deleter;
    p->managed.dl_tensor.data = buf.bytes;
    p->managed.dl_tensor.device = {kDLCPU, 0};
    p->managed.dl_tensor.ndim = 1;
    p->managed.dl_tensor.dtype = {kDLFloat, 32, 1};
    p->managed.dl_tensor.shape = p->shape;
    p->managed.dl_tensor.strides = p->strides;
    produced.push_back(std::move(p));
  }
  Queue<Tensor> queue;
  std::thread::id dropper;
  std::thread importer([&] {
    for (auto& p : produced) queue.Push(dlbridge::FromDLPack(&p->managed));
    queue.Close();
  });
  std::thread consumer([&] {
    dropper = std::this_thread::get_id();
    while (auto t = queue.Pop()) {
      Tensor mine = std::move(*t);
    }
  });
  importer.join();
  consumer.join();
  for (auto& p : produced) {
    CHECK(p->deletes.load() == 1);
    CHECK(static_cast<bool>(p->deleted_on == dropper));
  }
}

TEST_CASE("THR-5 TakeRelease on one thread, the release called on another") {
  AtomicCounter counter;
  auto owner = std::make_shared<int>(3);
  Queue<std::pair<dlbridge::ReleaseFunction, void*>> queue;
  std::thread releaser([&] {
    while (auto pair = queue.Pop()) pair->first(pair->second);
  });
  std::vector<std::thread> takers;
  for (int t = 0; t < kThreads; ++t) {
    takers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        MemoryDescriptor d;
        if ((i + t) % 2 == 0) {
          d.SetRelease(&AtomicCounter::Release, &counter);
        } else {
          d.SetOwner(owner);
        }
        dlbridge::ReleaseFunction release = nullptr;
        void* context = nullptr;
        if (d.TakeRelease(release, context)) queue.Push({release, context});
      }
    });
  }
  JoinAll(takers);
  queue.Close();
  releaser.join();
  CHECK(counter.calls.load() == kThreads * kPerThread / 2);
  CHECK(owner.use_count() == 1);
}

TEST_CASE("THR-6 export, import and re-export chains handed across threads release once") {
  Buffer buf;
  AtomicCounter counter;
  Queue<DLManagedTensorVersioned*> exported;
  Queue<Tensor> imported;
  std::thread exporter([&] {
    for (int i = 0; i < kPerThread; ++i)
      exported.Push(dlbridge::ToDLPackVersioned(AtomicTensor(buf, counter, i)));
    exported.Close();
  });
  std::thread importer([&] {
    while (auto m = exported.Pop()) imported.Push(dlbridge::FromDLPack(*m));
    imported.Close();
  });
  std::atomic<int> takenBack{0};
  std::thread reexporter([&] {
    while (auto t = imported.Pop()) {
      // RT-6: each import took its export's hold back (the export block ended on the importer's
      // thread, its spare reused by the exporter's), so the re-export is a new block.
      if (t->descriptor.GetReleaseContext() == &counter) takenBack.fetch_add(1);
      DLManagedTensorVersioned* again = dlbridge::ToDLPackVersioned(std::move(*t));
      std::thread([again] { again->deleter(again); }).join();  // deleted on yet another thread
    }
  });
  exporter.join();
  importer.join();
  reexporter.join();
  CHECK(counter.calls.load() == kPerThread);
  CHECK(takenBack.load() == kPerThread);
}

TEST_CASE("THR-7 racing second deleter calls: the ledger lets exactly one free the export") {
  if (!dlbridge::LedgerEnabled()) {
    MESSAGE("DLBRIDGE_LEDGER is off in this build: a second call would be a double free");
    return;
  }
  dlbridge::ClearDoubleDeleteReports();
  Buffer buf;
  AtomicCounter counter;
  constexpr int kExports = 50;
  for (int i = 0; i < kExports; ++i) {
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(AtomicTensor(buf, counter, i));
    auto deleter = m->deleter;
    std::thread a([=] { deleter(m); });
    std::thread b([=] { deleter(m); });
    a.join();
    b.join();
  }
  CHECK(counter.calls.load() == kExports);
  CHECK(dlbridge::GetLedgerCounts().double_deletes == kExports);
  dlbridge::ClearDoubleDeleteReports();
}

// LT-8: one spare block for the whole process, taken and given back by exports and deleters on
// every thread at once: each export still reads back exactly what it was made with.
TEST_CASE("LT-8 the spare export block passes between threads without two exports sharing it") {
  Buffer buf;
  AtomicCounter counter;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < kPerThread; ++i) {
        const int64_t rows = 1 + (k + i) % 6;
        DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(AtomicTensor(buf, counter, i));
        DLManagedTensorVersioned* n = dlbridge::ToDLPackVersioned([&] {
          Tensor t;
          t.descriptor.Set(buf.Address(), 4096, "host");
          t.descriptor.SetRelease(&AtomicCounter::Release, &counter);
          t.layout = F32({rows, 3});
          return t;
        }());
        if (m == n || m->dl_tensor.shape[0] != 1 + i % 7 || m->dl_tensor.shape[1] != 1 + i % 5 ||
            n->dl_tensor.shape[0] != rows || n->dl_tensor.strides[0] != 3) {
          wrong.fetch_add(1);
        }
        m->deleter(m);
        Tensor back = dlbridge::FromDLPack(n);  // RT-6: gives the block back from here
        if (back.layout.Shape()[0] != rows) wrong.fetch_add(1);
      }
    });
  }
  JoinAll(threads);
  CHECK(wrong.load() == 0);
  CHECK(counter.calls.load() == 8 * kPerThread);
}
