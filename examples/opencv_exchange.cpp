// The OpenCV bridge (bridges/opencv): a region of an OpenCV image lent to a DLPack consumer
// without a copy, OpenCV's memory freed exactly when the last holder lets go; then a
// consumer's tensor (a slice of a wider buffer) used as a cv::Mat whose last copy releases it,
// and a layout OpenCV cannot express refused with the reason.
#include <dlbridge/dlbridge.h>
#include <dlbridge/opencv.h>

#include <cstdio>
#include <opencv2/core.hpp>
#include <utility>
#include <vector>

namespace {

int Fail(const char* what) {
  std::printf("FAILED: %s\n", what);
  return 1;
}

void CountRelease(void* context) { ++*static_cast<int*>(context); }

}  // namespace

int main() {
  try {
    // 1. The producer: a 3-channel image and a region of it (a non-continuous Mat).
    cv::Mat image(48, 64, CV_8UC3, cv::Scalar(10, 20, 30));
    cv::Mat face = image(cv::Rect(8, 4, 16, 12));
    dlbridge::Tensor tensor = dlbridge::opencv::FromMat(face);  // holds one Mat reference
    std::printf(
        "1. ROI 12x16 CV_8UC3 at %p -> tensor shape [%lld, %lld, %lld] strides "
        "[%lld, %lld, %lld]; image refcount %d\n",
        static_cast<void*>(face.data), static_cast<long long>(tensor.layout.Shape()[0]),
        static_cast<long long>(tensor.layout.Shape()[1]),
        static_cast<long long>(tensor.layout.Shape()[2]),
        static_cast<long long>(tensor.layout.Strides()[0]),
        static_cast<long long>(tensor.layout.Strides()[1]),
        static_cast<long long>(tensor.layout.Strides()[2]), image.u->refcount);

    // 2. Export; the producer drops its Mats, the consumer still reads OpenCV's memory.
    DLManagedTensorVersioned* exported = dlbridge::ToDLPackVersioned(std::move(tensor));
    const void* memory = face.data;
    cv::UMatData* shared = image.u;
    face.release();
    image.release();
    std::printf("2. exported data=%p (zero copy: %s); producer's Mats released, refcount %d\n",
                exported->dl_tensor.data, exported->dl_tensor.data == memory ? "yes" : "no",
                shared->refcount);
    const auto* pixels = static_cast<const unsigned char*>(exported->dl_tensor.data);
    std::printf("   consumer reads pixel (0,0) = (%d, %d, %d)\n", pixels[0], pixels[1], pixels[2]);
    exported->deleter(exported);  // the last reference: OpenCV frees the image here
    std::printf("3. consumer let go: OpenCV freed the image (the deleter ran once)\n");

    // 4. The other way: a consumer's buffer, sliced, becomes a cv::Mat with its row pitch.
    std::vector<float> buffer(10 * 12, 0.0f);
    for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
    int releases = 0;
    dlbridge::Tensor slice;
    slice.descriptor.Set(buffer.data(), static_cast<int64_t>(buffer.size() * sizeof(float)));
    slice.descriptor.SetRelease(&CountRelease, &releases);
    // Rows 2..5 and columns 3..8 of the 10 x 12 buffer: strides (12, 1), offset (2, 3).
    slice.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {4, 6}, {12, 1},
                                          (2 * 12 + 3) * sizeof(float));
    cv::Mat view = dlbridge::opencv::ToMat(std::move(slice));
    std::printf(
        "4. tensor [4, 6] strides [12, 1] -> cv::Mat %dx%d CV_32F, step %zu bytes, "
        "continuous: %s, (1, 2) = %g, sum = %g\n",
        view.rows, view.cols, view.step[0], view.isContinuous() ? "yes" : "no",
        static_cast<double>(view.at<float>(1, 2)), cv::sum(view)[0]);
    {
      cv::Mat copy = view;  // OpenCV's own reference counting
      cv::Mat row = view.row(3);
      view.release();
      std::printf("   original Mat released, copies alive: releases so far %d\n", releases);
      (void)row;
      (void)copy;
    }
    std::printf("5. last Mat gone: releases %d (exactly once)\n", releases);
    if (releases != 1) return Fail("the release did not run exactly once");

    // 6. A planar (channels-first) tensor is not an OpenCV layout: refused with the reason.
    dlbridge::Tensor planar;
    planar.descriptor.Set(buffer.data(), static_cast<int64_t>(buffer.size() * sizeof(float)));
    planar.descriptor.SetRelease(&CountRelease, &releases);
    planar.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {4, 5, 3}, {5, 1, 20});
    try {
      (void)dlbridge::opencv::ToMat(std::move(planar));
      return Fail("a planar tensor became a Mat");
    } catch (const dlbridge::Error& e) {
      std::printf("6. refused (%s): %s\n", dlbridge::ErrorCodeName(e.code()), e.what());
    }
  } catch (const dlbridge::Error& e) {
    std::printf("error (%s): %s\n", dlbridge::ErrorCodeName(e.code()), e.what());
    return 1;
  }
  return 0;
}
