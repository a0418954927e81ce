// The OpenCV bridge (spec/bridges.md, CV-*): cv::Mat to tensors and back, through DLPack,
// with the layouts OpenCV has (channels, row pitch, n-d), every refusal, and release counts.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/opencv.h"

using dlbridge::ErrorCode;
using dlbridge::Tensor;
namespace ocv = dlbridge::opencv;

namespace {

std::vector<int64_t> Shape(const Tensor& t) {
  return {t.layout.Shape().begin(), t.layout.Shape().end()};
}
std::vector<int64_t> Strides(const Tensor& t) {
  return {t.layout.Strides().begin(), t.layout.Strides().end()};
}

// Runs `call`, which must throw dlbridge::Error with `code` and a message containing `text`.
template <class F>
void CheckError(F&& call, ErrorCode code, const std::string& text) {
  try {
    call();
    FAIL("no error thrown; expected ", dlbridge::ErrorCodeName(code));
  } catch (const dlbridge::Error& error) {
    CHECK(error.code() == code);
    CHECK_MESSAGE(std::string(error.what()).find(text) != std::string::npos, error.what());
  }
}

// OpenCV's standard allocator, counting the UMatData it frees: a Mat created with it says
// exactly when OpenCV let its memory go.
struct CountingAllocator final : cv::MatAllocator {
  mutable std::atomic<int> frees{0};
  static const cv::MatAllocator* Std() { return cv::Mat::getStdAllocator(); }
  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data, size_t* step,
                         cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    cv::UMatData* u = Std()->allocate(dims, sizes, type, data, step, flags, usage);
    if (u != nullptr) u->currAllocator = this;
    return u;
  }
  bool allocate(cv::UMatData* u, cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    return Std()->allocate(u, flags, usage);
  }
  void deallocate(cv::UMatData* u) const override {
    ++frees;
    u->currAllocator = Std();
    Std()->deallocate(u);
  }
};

cv::Mat CountedMat(CountingAllocator& allocator, int rows, int cols, int type) {
  cv::Mat mat;
  mat.allocator = &allocator;
  mat.create(rows, cols, type);
  return mat;
}

// A release that counts its calls and remembers the thread of the last one.
struct Release {
  std::atomic<int> calls{0};
  std::thread::id thread;
  static void Run(void* context) {
    auto* self = static_cast<Release*>(context);
    self->thread = std::this_thread::get_id();
    ++self->calls;
  }
};

// A host tensor of `dtype` over `buffer` (its whole 4096 bytes), with `release` as its hold.
Tensor HostTensor(dlbtest::Buffer& buffer, DLDataType dtype, std::vector<int64_t> shape,
                  std::vector<int64_t> strides, Release* release, uint64_t byteOffset = 0) {
  Tensor t;
  t.descriptor.Set(buffer.bytes, sizeof buffer.bytes);
  if (release != nullptr) t.descriptor.SetRelease(&Release::Run, release);
  t.layout = dlbridge::TensorLayout(dtype, std::move(shape), std::move(strides), byteOffset);
  return t;
}

constexpr DLDataType kU8{kDLUInt, 8, 1};
constexpr DLDataType kF32{kDLFloat, 32, 1};

}  // namespace

TEST_CASE("CV-1 every OpenCV depth has its dtype, both ways") {
  struct Pair {
    int depth;
    DLDataType dtype;
  };
  const Pair pairs[] = {
      {CV_8U, {kDLUInt, 8, 1}},      {CV_8S, {kDLInt, 8, 1}},     {CV_16U, {kDLUInt, 16, 1}},
      {CV_16S, {kDLInt, 16, 1}},     {CV_32S, {kDLInt, 32, 1}},   {CV_32F, {kDLFloat, 32, 1}},
      {CV_64F, {kDLFloat, 64, 1}},   {CV_16F, {kDLFloat, 16, 1}},
#ifdef CV_16BF
      {CV_16BF, {kDLBfloat, 16, 1}},
#endif
#ifdef CV_Bool
      {CV_Bool, {kDLBool, 8, 1}},
#endif
#ifdef CV_64U
      {CV_64U, {kDLUInt, 64, 1}},
#endif
#ifdef CV_32U
      {CV_32U, {kDLUInt, 32, 1}},
#endif
#ifdef CV_64S
      {CV_64S, {kDLInt, 64, 1}},
#endif
  };
  for (const Pair& pair : pairs) {
    CAPTURE(pair.depth);
    CHECK(dlbridge::SameDataType(ocv::DataTypeOfDepth(pair.depth), pair.dtype));
    CHECK(ocv::DepthOfDataType(pair.dtype) == pair.depth);
    // A Mat of that depth exports with the dtype, and a tensor of the dtype imports as it.
    cv::Mat mat(2, 3, CV_MAKETYPE(pair.depth, 2));
    Tensor t = ocv::FromMat(mat);
    CHECK(dlbridge::SameDataType(t.layout.Dtype(), pair.dtype));
    cv::Mat back = ocv::ToMat(std::move(t));
    CHECK(back.type() == mat.type());
    CHECK(back.data == mat.data);
  }
  CHECK(std::size(pairs) == std::size(ocv::detail::kDepths));
  CheckError([] { ocv::DataTypeOfDepth(99); }, ErrorCode::kUnsupportedDtype,
             "depth 99 is none of uint8 (CV_8U)");
  CheckError(
      [] {
        ocv::DepthOfDataType({kDLComplex, 64, 1});
      },
      ErrorCode::kUnsupportedDtype,
      "dtype complex64 has no OpenCV depth; accepted: uint8 (CV_8U), int8 (CV_8S)");
  CheckError(
      [] {
        ocv::DepthOfDataType({kDLFloat, 32, 4});
      },
      ErrorCode::kUnsupportedDtype, "dtype float32x4 has no OpenCV depth");
#ifndef CV_64S
  CheckError(
      [] {
        ocv::DepthOfDataType({kDLInt, 64, 1});
      },
      ErrorCode::kUnsupportedDtype, "dtype int64 has no OpenCV depth");
#endif
}

TEST_CASE("CV-2 FromMat gives sizes, byte steps as strides and channels last, zero copy") {
  SUBCASE("a 3-channel image") {
    cv::Mat image(4, 5, CV_8UC3);
    Tensor t = ocv::FromMat(image);
    CHECK(Shape(t) == std::vector<int64_t>{4, 5, 3});
    CHECK(Strides(t) == std::vector<int64_t>{15, 3, 1});
    CHECK(t.Data<uint8_t>() == image.data);
    CHECK(t.device.device_type == kDLCPU);
    CHECK(t.descriptor.GetSizeInBytes() == 60);
    image.at<cv::Vec3b>(2, 3)[1] = 77;  // the same memory
    CHECK(t.Data<uint8_t>()[2 * 15 + 3 * 3 + 1] == 77);
  }
  SUBCASE("a ROI keeps the parent's row pitch") {
    cv::Mat big(10, 12, CV_32FC1, cv::Scalar(0));
    cv::Mat roi = big(cv::Rect(2, 3, 4, 5));  // x, y, width, height
    REQUIRE_FALSE(roi.isContinuous());
    big.at<float>(3 + 4, 2 + 1) = 2.5f;
    Tensor t = ocv::FromMat(roi);
    CHECK(Shape(t) == std::vector<int64_t>{5, 4});
    CHECK(Strides(t) == std::vector<int64_t>{12, 1});
    CHECK(t.Data<float>() == reinterpret_cast<float*>(roi.data));
    CHECK(t.Data<float>()[4 * 12 + 1] == 2.5f);
    CHECK(t.descriptor.GetSizeInBytes() == (4 * 12 + 4) * 4);  // the reachable bytes only
  }
  SUBCASE("an n-d Mat of 2 channels") {
    const int sizes[] = {2, 3, 4};
    cv::Mat volume(3, sizes, CV_16SC2);
    Tensor t = ocv::FromMat(volume);
    CHECK(Shape(t) == std::vector<int64_t>{2, 3, 4, 2});
    CHECK(Strides(t) == std::vector<int64_t>{24, 8, 2, 1});
    CHECK(dlbridge::SameDataType(t.layout.Dtype(), {kDLInt, 16, 1}));
  }
  SUBCASE("one channel adds no dimension; an empty Mat exports its sizes") {
    cv::Mat gray(3, 7, CV_64FC1);
    CHECK(Shape(ocv::FromMat(gray)) == std::vector<int64_t>{3, 7});
    Tensor none = ocv::FromMat(cv::Mat());
    CHECK(Shape(none) == std::vector<int64_t>{0, 0});
    CHECK(none.descriptor.GetSizeInBytes() == 0);
  }
  SUBCASE("a consumer reads the same layout through DLPack") {
    cv::Mat image(6, 8, CV_8UC4);
    DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(ocv::FromMat(image));
    const DLTensor& dl = managed->dl_tensor;
    CHECK(dl.data == image.data);
    CHECK(dl.ndim == 3);
    CHECK(dl.strides[0] == 32);
    CHECK(dl.strides[1] == 4);
    CHECK(dl.strides[2] == 1);
    managed->deleter(managed);
  }
}

TEST_CASE("CV-3 a step that is not a whole number of values is refused") {
  cv::Mat mat(4, 4, CV_16UC1);
  const size_t pitch = mat.step.p[0];
  mat.step.p[0] = 9;  // what no Mat constructor makes, but a hand-edited header can hold
  CheckError([&] { ocv::FromMat(mat); }, ErrorCode::kInvalidStrides,
             "step[0] is 9 bytes, not a multiple of the value size 2");
  mat.step.p[0] = pitch;
  CHECK(mat.u->refcount == 1);  // nothing referenced
}

TEST_CASE("CV-4 the Mat's refcount is the hold, and a const Mat exports read-only") {
  SUBCASE("the memory lives until the last DLPack consumer lets go") {
    CountingAllocator counting;
    cv::Mat mat = CountedMat(counting, 3, 3, CV_8UC1);
    mat.setTo(5);
    Tensor t = ocv::FromMat(mat);
    CHECK(mat.u->refcount == 2);
    DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(t));
    mat.release();
    CHECK(counting.frees == 0);
    CHECK(static_cast<uint8_t*>(managed->dl_tensor.data)[8] == 5);
    std::thread([managed] { managed->deleter(managed); }).join();
    CHECK(counting.frees == 1);
  }
  SUBCASE("const gives DLPACK_FLAG_BITMASK_READ_ONLY, a legacy export refuses it") {
    const cv::Mat fixed(2, 2, CV_32FC1, cv::Scalar(1));
    Tensor readOnly = ocv::FromMat(fixed);
    CHECK((readOnly.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
    CheckError([&] { dlbridge::ToDLPack(std::move(readOnly)); }, ErrorCode::kReadOnly, "");
    cv::Mat writable(2, 2, CV_32FC1);
    CHECK(ocv::FromMat(writable).flags == 0);
  }
  SUBCASE("a Mat over external memory holds nothing, unless given its owner") {
    float values[4] = {1, 2, 3, 4};
    cv::Mat external(2, 2, CV_32FC1, values);
    Tensor bare = ocv::FromMat(external);
    CHECK_FALSE(bare.descriptor.HasOwnership());
    CheckError([&] { dlbridge::ToDLPackVersioned(std::move(bare)); }, ErrorCode::kNoHold, "");
    int drops = 0;
    {
      Tensor owned = ocv::FromMat(external, dlbridge::MakeOwner(&drops, [](int* n) { ++*n; }));
      DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(owned));
      CHECK(managed->dl_tensor.data == values);
      managed->deleter(managed);
    }
    CHECK(drops == 1);
  }
}

TEST_CASE("CV-5 ToMat refuses what a cv::Mat cannot describe, and the tensor keeps its hold") {
  dlbtest::Buffer buffer;
  Release release;
  auto refuse = [&](Tensor t, ErrorCode code, const std::string& text,
                    ocv::MatOptions options = {}) {
    CheckError([&] { ocv::ToMat(std::move(t), options); }, code, text);
    CHECK(t.descriptor.HasOwnership());  // unchanged: the caller still holds it
    CHECK(release.calls == 0);
    t = Tensor();  // dropping it runs the release, once
    CHECK(release.calls == 1);
    release.calls = 0;
  };
  SUBCASE("memory that is not the host's") {
    Tensor t = HostTensor(buffer, kF32, {4}, {}, &release);
    t.device = {kDLCUDA, 0};
    t.descriptor.SetMemorySpace("cuda");
    refuse(std::move(t), ErrorCode::kUnsupportedDevice,
           "dlbridge::opencv::ToMat: memory space \"cuda\" (device type kDLCUDA) is not "
           "host-readable");
  }
  SUBCASE("a dtype without a depth") {
    refuse(HostTensor(buffer, {kDLComplex, 64, 1}, {4}, {}, &release), ErrorCode::kUnsupportedDtype,
           "complex64 has no OpenCV depth");
    // Element zero 4 bytes into the buffer: not aligned to the 8-byte element, but what no
    // copy cures is the dtype.
    refuse(HostTensor(buffer, {kDLComplex, 64, 1}, {4}, {}, &release, 4),
           ErrorCode::kUnsupportedDtype, "complex64 has no OpenCV depth");
  }
  SUBCASE("ndim 0, channels alone, more than CV_MAX_DIM") {
    refuse(HostTensor(buffer, kF32, {}, {}, &release), ErrorCode::kInvalidShape,
           "ndim is 0, leaving 0 Mat dimensions; a cv::Mat has 1 to 32");
    ocv::MatOptions last;
    last.channels = ocv::Channels::kLast;
    refuse(HostTensor(buffer, kF32, {3}, {}, &release), ErrorCode::kInvalidShape,
           "ndim is 1 with the channels last", last);
    ocv::MatOptions none;
    none.channels = ocv::Channels::kNone;
    refuse(HostTensor(buffer, kF32, std::vector<int64_t>(33, 1), {}, &release),
           ErrorCode::kInvalidShape, "leaving 33 Mat dimensions", none);
  }
  SUBCASE("more than CV_CN_MAX channels") {
    refuse(HostTensor(buffer, kU8, {1, 1, 513}, {}, &release), ErrorCode::kInvalidShape,
           "the channels, is 513; a cv::Mat has 1 to CV_CN_MAX (512) channels: pass "
           "MatOptions::channels = Channels::kNone");
  }
  SUBCASE("an extent past INT_MAX") {
    refuse(HostTensor(buffer, kU8, {int64_t{1} << 31, 1}, {1, 1}, &release),
           ErrorCode::kInvalidShape, "shape[0] is 2147483648, past INT_MAX");
  }
  SUBCASE("a negative stride") {
    refuse(HostTensor(buffer, kU8, {4, 4}, {-4, 1}, &release, 12), ErrorCode::kInvalidStrides,
           "strides[0] is -4 (shape [4, 4], strides [-4, 1]); a cv::Mat takes no negative strides");
  }
  SUBCASE("channels that are not interleaved (planar)") {
    refuse(HostTensor(buffer, kU8, {4, 5, 3}, {5, 1, 20}, &release), ErrorCode::kInvalidStrides,
           "the channels' stride is 20 elements; a cv::Mat interleaves its channels");
  }
  SUBCASE("a last dimension with a stride other than one element") {
    refuse(HostTensor(buffer, kF32, {4, 4}, {8, 2}, &release), ErrorCode::kInvalidStrides,
           "strides[1] is 2 elements but the last Mat dimension's values must be adjacent");
    refuse(HostTensor(buffer, kU8, {4, 5, 3}, {15, 6, 1}, &release), ErrorCode::kInvalidStrides,
           "strides[1] is 6 elements but the last Mat dimension's values must be adjacent (3 "
           "element(s) apart");
  }
  SUBCASE("rows that overlap: a broadcast, a transposed layout") {
    refuse(HostTensor(buffer, kF32, {3, 4}, {0, 1}, &release), ErrorCode::kInvalidStrides,
           "strides[0] is 0 elements, less than the 4 the next dimension spans");
    ocv::MatOptions none;
    none.channels = ocv::Channels::kNone;
    refuse(HostTensor(buffer, kF32, {2, 3, 4}, {4, 8, 1}, &release), ErrorCode::kInvalidStrides,
           "strides[0] is 4 elements, less than the 24", none);
  }
  SUBCASE("strides whose byte steps or spans overflow int64") {
    refuse(HostTensor(buffer, kF32, {2, 4}, {int64_t{1} << 62, 1}, &release), ErrorCode::kOverflow,
           "ToMat: the array spans past INT64_MAX bytes");
    ocv::MatOptions none;
    none.channels = ocv::Channels::kNone;
    refuse(HostTensor(buffer, kU8, {2, 3, 4}, {1, int64_t{1} << 62, 1}, &release),
           ErrorCode::kOverflow,
           "ToMat: dimension 1 (extent 3, stride 4611686018427387904) reaches past INT64 "
           "elements",
           none);
  }
  SUBCASE("read-only") {
    Tensor t = HostTensor(buffer, kF32, {4}, {}, &release);
    t.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    refuse(std::move(t), ErrorCode::kReadOnly, "a cv::Mat would let its user write to it");
  }
  SUBCASE("element zero not aligned for its type") {
    refuse(HostTensor(buffer, kF32, {4}, {}, &release, 2), ErrorCode::kInvalidArgument,
           "element zero (byte offset 2) is not aligned to 4 bytes");
  }
  SUBCASE("the export checks: bounds and a hold") {
    refuse(HostTensor(buffer, kF32, {2000}, {}, &release), ErrorCode::kOutOfBounds, "");
    Tensor unowned = HostTensor(buffer, kF32, {4}, {}, nullptr);
    CheckError([&] { ocv::ToMat(std::move(unowned)); }, ErrorCode::kNoHold, "");
    ocv::MatOptions lend;
    lend.allow_unowned = true;
    cv::Mat borrowed = ocv::ToMat(std::move(unowned), lend);
    CHECK(borrowed.data == buffer.bytes);
    CHECK(borrowed.u == nullptr);
  }
}

TEST_CASE("CV-6 the hold lives exactly as long as the last Mat sharing the memory") {
  dlbtest::Buffer buffer;
  Release release;
  SUBCASE("copies, a ROI and a clone; the last drop on another thread releases once") {
    cv::Mat mat = ocv::ToMat(HostTensor(buffer, kU8, {4, 6, 3}, {}, &release));
    std::thread::id worker;
    {
      cv::Mat copy = mat;                       // a header copy: one more reference
      cv::Mat roi = mat(cv::Rect(1, 1, 2, 2));  // a view: one more reference
      cv::Mat clone = mat.clone();              // new memory: no reference
      mat.release();
      copy = cv::Mat();
      CHECK(release.calls == 0);
      CHECK(clone.data != buffer.bytes);
      std::thread thread([view = std::move(roi)]() mutable { view.release(); });
      worker = thread.get_id();
      thread.join();
    }
    CHECK(release.calls == 1);
    CHECK(release.thread == worker);
  }
  SUBCASE("create() with a new size lets go of the tensor and allocates OpenCV memory") {
    cv::Mat mat = ocv::ToMat(HostTensor(buffer, kF32, {4, 4}, {}, &release));
    mat.create(8, 8, CV_32FC1);
    CHECK(release.calls == 1);
    CHECK(mat.data != buffer.bytes);
    mat.setTo(1);  // OpenCV's own memory, freed by OpenCV
  }
  SUBCASE("a UMat of the Mat keeps the hold too") {
    cv::Mat mat = ocv::ToMat(HostTensor(buffer, kU8, {4, 4}, {}, &release));
    {
      cv::UMat umat = mat.getUMat(cv::ACCESS_READ);
      mat.release();
      CHECK(release.calls == 0);
    }
    CHECK(release.calls == 1);
  }
  SUBCASE("a tensor without elements: an empty Mat, the hold dropped at once") {
    cv::Mat mat = ocv::ToMat(HostTensor(buffer, kF32, {0, 3}, {}, &release));
    CHECK(release.calls == 1);
    CHECK(mat.empty());
    CHECK(mat.rows == 0);
    CHECK(mat.cols == 3);
    CHECK(mat.type() == CV_32FC1);
  }
  SUBCASE("the tensor's descriptor is left empty") {
    Tensor t = HostTensor(buffer, kU8, {2, 2}, {}, &release);
    cv::Mat mat = ocv::ToMat(std::move(t));
    CHECK_FALSE(t.descriptor.HasOwnership());
    mat.release();
    CHECK(release.calls == 1);
  }
}

TEST_CASE("CV-7 ToMat gives channels, sizes and byte steps, continuous or not") {
  dlbtest::Buffer buffer;
  Release release;
  SUBCASE("an image, C-contiguous: continuous, channels last") {
    cv::Mat mat = ocv::ToMat(HostTensor(buffer, kU8, {4, 5, 3}, {}, &release));
    CHECK(mat.type() == CV_8UC3);
    CHECK(mat.rows == 4);
    CHECK(mat.cols == 5);
    CHECK(mat.step[0] == 15);
    CHECK(mat.isContinuous());
    CHECK(mat.data == buffer.bytes);
    buffer.bytes[2 * 15 + 4 * 3 + 2] = 9;
    CHECK(mat.at<cv::Vec3b>(2, 4)[2] == 9);
  }
  SUBCASE("a slice of a wider image: the row pitch, not continuous") {
    // Rows 1..4, columns 2..6 of a 10 x 12 x 3 image.
    Tensor t = HostTensor(buffer, kU8, {4, 5, 3}, {36, 3, 1}, &release, 1 * 36 + 2 * 3);
    buffer.bytes[(1 + 3) * 36 + (2 + 4) * 3 + 1] = 42;
    cv::Mat mat = ocv::ToMat(std::move(t));
    CHECK(mat.step[0] == 36);
    CHECK_FALSE(mat.isContinuous());
    CHECK(mat.data == buffer.bytes + 42);
    CHECK(mat.at<cv::Vec3b>(3, 4)[1] == 42);
    CHECK(cv::sum(mat.clone())[1] == 42);  // OpenCV copies the ROI row by row
  }
  SUBCASE("Channels::kNone keeps a volume 3-D; kLast reads the last dimension as channels") {
    ocv::MatOptions none;
    none.channels = ocv::Channels::kNone;
    cv::Mat volume = ocv::ToMat(HostTensor(buffer, kF32, {2, 3, 4}, {}, &release), none);
    CHECK(volume.dims == 3);
    CHECK(volume.channels() == 1);
    CHECK(volume.step[0] == 48);
    CHECK(volume.step[1] == 16);
    ocv::MatOptions last;
    last.channels = ocv::Channels::kLast;
    cv::Mat pairs = ocv::ToMat(HostTensor(buffer, kF32, {6, 2}, {}, &release), last);
    CHECK(pairs.type() == CV_32FC2);
    CHECK(pairs.rows == 6);
    CHECK(pairs.cols == 1);
    cv::Mat wide = ocv::ToMat(HostTensor(buffer, kU8, {1, 1, 513}, {}, &release), none);
    CHECK(wide.dims == 3);
  }
  SUBCASE("1-D is a column; 4-D under kAuto is single-channel; extent 1 takes any stride") {
    cv::Mat column = ocv::ToMat(HostTensor(buffer, kF32, {7}, {}, &release));
    CHECK(column.rows == 7);
    CHECK(column.cols == 1);
    cv::Mat four = ocv::ToMat(HostTensor(buffer, kU8, {2, 3, 4, 5}, {}, &release));
    CHECK(four.dims == 4);
    CHECK(four.channels() == 1);
    cv::Mat row = ocv::ToMat(HostTensor(buffer, kF32, {1, 4}, {999, 1}, &release));
    CHECK(row.step[0] == 16);
    CHECK(row.isContinuous());
    // A negative one too: NumPy's reversed length-1 axis (a[::-1] of one row).
    cv::Mat reversed = ocv::ToMat(HostTensor(buffer, kF32, {1, 4}, {-4, 1}, &release));
    CHECK(reversed.step[0] == 16);
    CHECK(reversed.data == buffer.bytes);
    cv::Mat image = ocv::ToMat(HostTensor(buffer, kU8, {1, 5, 3}, {-15, 3, 1}, &release));
    CHECK(image.type() == CV_8UC3);
    CHECK(image.step[0] == 15);
    ocv::MatOptions last;
    last.channels = ocv::Channels::kLast;
    cv::Mat gray = ocv::ToMat(HostTensor(buffer, kU8, {4, 1}, {1, -7}, &release), last);
    CHECK(gray.type() == CV_8UC1);
  }
  SUBCASE("float16 is CV_16F") {
    cv::Mat half = ocv::ToMat(HostTensor(buffer, {kDLFloat, 16, 1}, {2, 2}, {}, &release));
    CHECK(half.type() == CV_16FC1);
  }
}

TEST_CASE("CV-8 Mat to DLPack to Mat: the same memory, freed once at the end") {
  CountingAllocator counting;
  cv::Mat original = CountedMat(counting, 5, 4, CV_32FC3);
  cv::Mat roi = original(cv::Rect(1, 1, 2, 3));
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(ocv::FromMat(roi));
  cv::Mat back = ocv::ToMat(dlbridge::FromDLPack(managed));
  CHECK(back.data == roi.data);
  CHECK(back.step[0] == roi.step[0]);
  CHECK(back.type() == roi.type());
  CHECK(back.size() == roi.size());
  original.release();
  roi.release();
  CHECK(counting.frees == 0);
  back.at<cv::Vec3f>(2, 1)[2] = 1.5f;  // still OpenCV's memory, still alive
  back.release();
  CHECK(counting.frees == 1);
}

TEST_CASE("CV-5 pinned host memory is host memory to a Mat, as the kit's host rule says") {
  dlbtest::Buffer buffer;
  Release release;
  Tensor t = HostTensor(buffer, kF32, {2, 3}, {}, &release);
  t.device = {kDLCUDAHost, 0};  // CUDA pinned memory: the CPU reads it at its own address
  {
    cv::Mat mat = ocv::ToMat(std::move(t));
    CHECK(mat.data == buffer.bytes);
    CHECK(mat.rows == 2);
    CHECK(mat.cols == 3);
    CHECK(release.calls == 0);
  }
  CHECK(release.calls == 1);
}

TEST_CASE("KIT-6 the OpenCV bridge answers to ToTensor and Adopt") {
  CountingAllocator counting;
  cv::Mat original = CountedMat(counting, 3, 4, CV_8UC1);
  Tensor held = ocv::ToTensor(original);
  CHECK(held.Data<uint8_t>() == original.data);
  dlbtest::Buffer buffer;
  Tensor lent = ocv::ToTensor(cv::Mat(2, 2, CV_8UC1, buffer.bytes), dlbridge::MakeOwner(1));
  CHECK(lent.descriptor.HasOwnership());
  cv::Mat back = ocv::Adopt(std::move(held));
  CHECK(back.data == original.data);
  original.release();
  back.release();
  CHECK(counting.frees == 1);
}
