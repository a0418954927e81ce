/// @file
/// dlbridge: zero-copy exchange of memory descriptors through DLPack. Umbrella header.
#pragma once

/// @namespace dlbridge
/// Everything dlbridge's C++ API declares: descriptors (MemoryDescriptor), layouts
/// (TensorLayout), export (ToDLPackVersioned, ToDLPack), import (FromDLPack), the conformance
/// checker (CheckDLPack), the device table, GPU runtime queries, the ledger and the helpers
/// (DataTypeOf, SameDataType, Tensor::Data, MakeOwner).

#include "dlbridge/callbacks.h"
#include "dlbridge/checker.h"
#include "dlbridge/device_copy.h"
#include "dlbridge/device_map.h"
#include "dlbridge/device_verification.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/from_dlpack.h"
#include "dlbridge/host_copy.h"
#include "dlbridge/ledger.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/memory_space.h"
#include "dlbridge/metal_resolver.h"
#include "dlbridge/options.h"
#include "dlbridge/owner.h"
#include "dlbridge/runtime.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"
#include "dlbridge/to_dlpack.h"
#include "dlbridge/version.h"
