// Prelude of docs/bridges/opencv.md's fragment: an image and a producer's tensor.
#include <dlbridge/dlbridge.h>

#include <opencv2/core.hpp>

inline cv::Mat image(32, 32, CV_8UC3);
inline DLManagedTensorVersioned* managed = nullptr;
