// The checker's one internal entry: its tensor checks with a stand-in device row, which the
// test hook testing::CheckWithDeviceRow (src/testing/testing_hooks.cpp) reaches; not installed.
#pragma once

#include <vector>

#include "dlbridge/device_map.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/findings.h"

namespace dlbridge {
namespace detail {

// CheckDLPack's tensor checks of `managed` with `row` in place of the table's row for its
// device type. Consumes nothing.
std::vector<Finding> CheckTensorWithRow(const DLManagedTensorVersioned& managed,
                                        const DeviceTypeInfo& row);

}  // namespace detail
}  // namespace dlbridge
