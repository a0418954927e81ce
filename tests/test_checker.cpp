// The conformance checker (CONF-*, spec/conformance.md): every rule caught on a hand-built
// tensor that breaks it and passed on one that keeps it; dlbridge's own exports checked clean.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "counting.h"
#include "dlbridge/testing.h"

using dlbridge::CheckDLPack;
using dlbridge::DeviceTypeInfo;
using dlbridge::Finding;
using dlbridge::Severity;
using dlbridge::Tensor;
using namespace dlbtest;

namespace {

std::string Describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) {
    out += f.rule + " (" + dlbridge::SeverityName(f.severity) + "): " + f.message + "\n";
  }
  return out.empty() ? "no findings" : out;
}

// Whether `rule` was reported with `severity`.
bool Has(const std::vector<Finding>& findings, const char* rule, Severity severity) {
  for (const Finding& f : findings) {
    if (f.rule == rule && f.severity == severity) return true;
  }
  return false;
}

bool HasRule(const std::vector<Finding>& findings, const char* rule) {
  for (const Finding& f : findings) {
    if (f.rule == rule) return true;
  }
  return false;
}

#define CHECK_FINDING(findings, rule, severity) \
  CHECK_MESSAGE(Has((findings), (rule), (severity)), Describe(findings))
#define CHECK_NO_RULE(findings, rule) \
  CHECK_MESSAGE(!HasRule((findings), (rule)), Describe(findings))
#define CHECK_CLEAN(findings) CHECK_MESSAGE((findings).empty(), Describe(findings))

template <class M>
std::vector<Finding> Check(HandBuilt<M>& h) {
  std::vector<Finding> f = CheckDLPack(&h.managed);
  CHECK(h.deletes == 0);  // never consumed
  return f;
}

}  // namespace

TEST_CASE_TEMPLATE("CONF-PASS a valid hand-built tensor has no findings and is not consumed", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {4, 4});
  CHECK_CLEAN(Check(h));
  HandBuilt<M> zeroD(buf.bytes, {});
  CHECK_CLEAN(Check(zeroD));
}

TEST_CASE("CONF-NULL a NULL managed tensor is a violation") {
  CHECK_FINDING(CheckDLPack(static_cast<const DLManagedTensorVersioned*>(nullptr)), "CONF-NULL",
                Severity::kViolation);
  CHECK_FINDING(CheckDLPack(static_cast<const DLManagedTensor*>(nullptr)), "CONF-NULL",
                Severity::kViolation);
  CHECK_FALSE(dlbridge::HasViolation({}));
}

TEST_CASE("CONF-VERSION-MAJOR another major is reported and nothing past flags is read") {
  // A DLManagedTensorVersioned whose DLTensor bytes are garbage: the checker must stop at the
  // version. The tensor lives in a buffer whose tail is poisoned with pointers to nowhere.
  alignas(DLManagedTensorVersioned) unsigned char raw[sizeof(DLManagedTensorVersioned)];
  std::memset(raw, 0xAB, sizeof raw);
  auto* m = reinterpret_cast<DLManagedTensorVersioned*>(raw);
  for (uint32_t major : {0u, 2u, 0xFFFFFFFFu}) {
    m->version = {major, 0};
    std::vector<Finding> f = CheckDLPack(m);
    CHECK_FINDING(f, "CONF-VERSION-MAJOR", Severity::kViolation);
    CHECK(f.size() == 1);
  }
  Buffer buf;
  Versioned ok(buf.bytes, {2});
  CHECK_NO_RULE(Check(ok), "CONF-VERSION-MAJOR");
}

TEST_CASE("CONF-VERSION-MINOR a newer minor is a note and its unknown values are warnings") {
  Buffer buf;
  Versioned h(buf.bytes, {2});
  h.managed.version.minor = DLPACK_MINOR_VERSION + 1;
  h.managed.flags = uint64_t{1} << 40;
  h.T().dtype.code = 200;
  h.T().device.device_type = static_cast<DLDeviceType>(99);
  std::vector<Finding> f = Check(h);
  CHECK_FINDING(f, "CONF-VERSION-MINOR", Severity::kNote);
  CHECK_FINDING(f, "CONF-FLAGS-UNKNOWN", Severity::kWarning);
  CHECK_FINDING(f, "CONF-DTYPE-CODE", Severity::kWarning);
  CHECK_FINDING(f, "CONF-DEVICE-TYPE", Severity::kWarning);
  CHECK_FALSE(dlbridge::HasViolation(f));
  Versioned same(buf.bytes, {2});
  CHECK_NO_RULE(Check(same), "CONF-VERSION-MINOR");
  Versioned older(buf.bytes, {2});
  older.managed.version.minor = 0;
  CHECK_CLEAN(Check(older));
}

TEST_CASE_TEMPLATE("CONF-DELETER-NULL a NULL deleter is a note", M, DLManagedTensorVersioned,
                   DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {2});
  h.managed.deleter = nullptr;
  std::vector<Finding> f = CheckDLPack(&h.managed);
  CHECK_FINDING(f, "CONF-DELETER-NULL", Severity::kNote);
  CHECK(f.size() == 1);
  HandBuilt<M> ok(buf.bytes, {2});
  CHECK_NO_RULE(Check(ok), "CONF-DELETER-NULL");
}

TEST_CASE("CONF-FLAGS-UNKNOWN flag bits the header does not define are a violation") {
  Buffer buf;
  for (uint64_t bits : {uint64_t{1} << 3, uint64_t{1} << 63}) {
    Versioned h(buf.bytes, {2});
    h.managed.flags = bits | DLPACK_FLAG_BITMASK_READ_ONLY;
    CHECK_FINDING(Check(h), "CONF-FLAGS-UNKNOWN", Severity::kViolation);
  }
  Versioned ok(buf.bytes, {2});
  ok.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  CHECK_CLEAN(Check(ok));
}

TEST_CASE("CONF-FLAGS-PADDED the padded flag on a whole-byte dtype is a warning") {
  Buffer buf;
  Versioned h(buf.bytes, {2});
  h.managed.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  CHECK_FINDING(Check(h), "CONF-FLAGS-PADDED", Severity::kWarning);
  Versioned ok(buf.bytes, {4}, {kDLFloat4_e2m1fn, 4, 1});
  ok.managed.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-NDIM negative ndim is a violation, past 64 a warning, bounded reads", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  for (int32_t ndim : {-1, std::numeric_limits<int32_t>::min()}) {
    HandBuilt<M> h(buf.bytes, {2});
    h.T().ndim = ndim;
    CHECK_FINDING(Check(h), "CONF-NDIM", Severity::kViolation);
  }
  for (int32_t ndim : {65, std::numeric_limits<int32_t>::max()}) {
    HandBuilt<M> h(buf.bytes, {2});  // shape has 70 entries: a huge ndim must not be walked
    h.T().ndim = ndim;
    std::vector<Finding> f = Check(h);
    CHECK_FINDING(f, "CONF-NDIM", Severity::kWarning);
    CHECK_FALSE(dlbridge::HasViolation(f));
  }
  HandBuilt<M> ok(buf.bytes, std::initializer_list<int64_t>{});
  ok.T().ndim = 64;
  ok.T().shape = ok.shape;
  ok.T().strides = ok.strides;
  for (int i = 0; i < 64; ++i) {
    ok.shape[i] = 1;
    ok.strides[i] = 1;
  }
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-SHAPE-NULL NULL shape with ndim > 0 is a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {2, 2});
  h.T().shape = nullptr;
  CHECK_FINDING(Check(h), "CONF-SHAPE-NULL", Severity::kViolation);
  HandBuilt<M> ok(buf.bytes, {});  // 0-d: NULL shape is fine
  CHECK(ok.T().shape == nullptr);
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-SHAPE-NEGATIVE negative extents are a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  for (int64_t extent : {int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    HandBuilt<M> h(buf.bytes, {2, 2});
    h.shape[1] = extent;
    CHECK_FINDING(Check(h), "CONF-SHAPE-NEGATIVE", Severity::kViolation);
  }
  HandBuilt<M> ok(nullptr, {2, 0});
  CHECK_CLEAN(Check(ok));
}

TEST_CASE("CONF-STRIDES-NULL NULL strides: violation for >= 1.2, note for legacy and < 1.2") {
  Buffer buf;
  Versioned h(buf.bytes, {2, 3});
  h.T().strides = nullptr;
  CHECK_FINDING(Check(h), "CONF-STRIDES-NULL", Severity::kViolation);
  Versioned old(buf.bytes, {2, 3});
  old.managed.version.minor = 1;
  old.T().strides = nullptr;
  std::vector<Finding> f = Check(old);
  CHECK_FINDING(f, "CONF-STRIDES-NULL", Severity::kNote);
  CHECK_FALSE(dlbridge::HasViolation(f));
  Legacy legacy(buf.bytes, {2, 3});
  legacy.T().strides = nullptr;
  CHECK_FINDING(Check(legacy), "CONF-STRIDES-NULL", Severity::kNote);
  Versioned ok(buf.bytes, {2, 3});
  CHECK_CLEAN(Check(ok));
  Versioned zeroD(buf.bytes, {});  // 0-d: NULL strides are fine
  CHECK_CLEAN(Check(zeroD));
}

TEST_CASE_TEMPLATE("CONF-DTYPE-CODE unknown dtype codes are a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  for (uint8_t code : {uint8_t{18}, uint8_t{255}}) {
    HandBuilt<M> h(buf.bytes, {2}, {code, 8, 1});
    CHECK_FINDING(Check(h), "CONF-DTYPE-CODE", Severity::kViolation);
  }
  HandBuilt<M> ok(buf.bytes, {2}, {kDLFloat8_e5m2, 8, 1});
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-DTYPE-LANES zero lanes are a violation", M, DLManagedTensorVersioned,
                   DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {2}, {kDLFloat, 32, 0});
  CHECK_FINDING(Check(h), "CONF-DTYPE-LANES", Severity::kViolation);
  HandBuilt<M> ok(buf.bytes, {2}, {kDLFloat, 32, 4});
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-DTYPE-BITS bits that do not match the code are a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  const DLDataType bad[] = {{kDLFloat, 8, 1},    {kDLBool, 1, 1},          {kDLInt, 0, 1},
                            {kDLComplex, 32, 1}, {kDLFloat4_e2m1fn, 8, 1}, {kDLBfloat, 32, 1}};
  for (DLDataType dtype : bad) {
    HandBuilt<M> h(buf.bytes, {2}, dtype);
    std::vector<Finding> f = Check(h);
    CHECK_FINDING(f, "CONF-DTYPE-BITS", Severity::kViolation);
  }
  const DLDataType good[] = {{kDLBool, 8, 1},
                             {kDLComplex, 128, 1},
                             {kDLBfloat, 16, 1},
                             {kDLFloat6_e3m2fn, 6, 1},
                             {kDLUInt, 64, 1}};
  for (DLDataType dtype : good) {
    HandBuilt<M> ok(buf.bytes, {8}, dtype);
    CHECK_CLEAN(Check(ok));
  }
}

TEST_CASE_TEMPLATE("CONF-DEVICE-TYPE unknown device types are a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  for (int32_t type : {0, -1, 5, 42}) {
    HandBuilt<M> h(buf.bytes, {2});
    h.T().device.device_type = static_cast<DLDeviceType>(type);
    CHECK_FINDING(Check(h), "CONF-DEVICE-TYPE", Severity::kViolation);
  }
  HandBuilt<M> ok(buf.bytes, {2});
  ok.T().device = {kDLOpenCL, 1};  // known, even if dlbridge cannot import it
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-DEVICE-ID CPU, pinned and managed use 0, devices use >= 0", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  const DLDevice bad[] = {{kDLCPU, 1},         {kDLCPU, -1},     {kDLCUDAHost, 2},
                          {kDLCUDAManaged, 1}, {kDLROCMHost, 3}, {kDLCUDA, -1}};
  for (DLDevice device : bad) {
    HandBuilt<M> h(buf.bytes, {2});
    h.T().device = device;
    CHECK_FINDING(Check(h), "CONF-DEVICE-ID", Severity::kViolation);
  }
  const DLDevice good[] = {{kDLCPU, 0}, {kDLCUDA, 3}, {kDLCUDAManaged, 0}, {kDLROCM, 1}};
  for (DLDevice device : good) {
    HandBuilt<M> ok(buf.bytes, {2});
    ok.T().device = device;
    CHECK_CLEAN(Check(ok));
  }
}

TEST_CASE_TEMPLATE("CONF-DATA-NULL NULL data with elements is a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  HandBuilt<M> h(nullptr, {4, 4});
  CHECK_FINDING(Check(h), "CONF-DATA-NULL", Severity::kViolation);
  HandBuilt<M> ok(nullptr, {4, 0});
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-DATA-ZERO-SIZE non-NULL data on a zero-size tensor is a note", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {3, 0});
  std::vector<Finding> f = Check(h);
  CHECK_FINDING(f, "CONF-DATA-ZERO-SIZE", Severity::kNote);
  CHECK_FALSE(dlbridge::HasViolation(f));
  HandBuilt<M> ok(nullptr, {3, 0});
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-ALIGN data not aligned to 256 bytes is a note", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes + 16, {2});
  std::vector<Finding> f = Check(h);
  CHECK_FINDING(f, "CONF-ALIGN", Severity::kNote);
  CHECK_FALSE(dlbridge::HasViolation(f));
  HandBuilt<M> ok(buf.bytes, {2});
  ok.T().byte_offset = 16;  // the header's way: aligned data, byte_offset to element 0
  CHECK_CLEAN(Check(ok));
}

TEST_CASE_TEMPLATE("CONF-OVERFLOW layout and address arithmetic overflow is a violation", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  SUBCASE("element count") {
    HandBuilt<M> h(buf.bytes, {int64_t{1} << 40, int64_t{1} << 40});
    CHECK_FINDING(Check(h), "CONF-OVERFLOW", Severity::kViolation);
  }
  SUBCASE("element count with NULL strides") {
    HandBuilt<M> h(buf.bytes, {int64_t{1} << 40, int64_t{1} << 40});
    h.T().strides = nullptr;
    CHECK_FINDING(CheckDLPack(&h.managed), "CONF-OVERFLOW", Severity::kViolation);
  }
  SUBCASE("stride reach") {
    HandBuilt<M> h(buf.bytes, {4, 4});
    h.strides[0] = kMax;
    CHECK_FINDING(Check(h), "CONF-OVERFLOW", Severity::kViolation);
    HandBuilt<M> low(buf.bytes, {2});
    low.strides[0] = kMin;
    CHECK_FINDING(Check(low), "CONF-OVERFLOW", Severity::kViolation);
  }
  SUBCASE("byte size") {
    HandBuilt<M> h(buf.bytes, {int64_t{1} << 62});
    CHECK_FINDING(Check(h), "CONF-OVERFLOW", Severity::kViolation);
  }
  SUBCASE("byte_offset") {
    HandBuilt<M> h(buf.bytes, {2});
    h.T().byte_offset = uint64_t{1} << 63;
    CHECK_FINDING(Check(h), "CONF-OVERFLOW", Severity::kViolation);
    HandBuilt<M> wrap(buf.bytes, {2});
    wrap.T().byte_offset = static_cast<uint64_t>(kMax);
    CHECK_FINDING(Check(wrap), "CONF-OVERFLOW", Severity::kViolation);
  }
  SUBCASE("negative stride below address 0") {
    HandBuilt<M> h(reinterpret_cast<void*>(uintptr_t{256}), {4});
    h.strides[0] = -1000;
    CHECK_FINDING(Check(h), "CONF-OVERFLOW", Severity::kViolation);
  }
  SUBCASE("passing: negative strides with an offset that stays inside") {
    HandBuilt<M> ok(buf.bytes, {3, 5});
    ok.strides[0] = -5;
    ok.strides[1] = 1;
    ok.T().byte_offset = 40;
    CHECK_CLEAN(Check(ok));
  }
}

TEST_CASE_TEMPLATE("CONF-SUBBYTE-BOUNDARY packed sub-byte tensors start on a byte boundary", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {3}, {kDLFloat4_e2m1fn, 4, 1});
  h.strides[0] = -1;  // the lowest element is element -2: bit offset -8 ... then -1 is mid-byte
  h.shape[0] = 2;     // reach -1 element = -4 bits
  CHECK_FINDING(Check(h), "CONF-SUBBYTE-BOUNDARY", Severity::kViolation);
  HandBuilt<M> ok(buf.bytes, {4}, {kDLFloat4_e2m1fn, 4, 1});
  CHECK_CLEAN(Check(ok));
}

// The rules of spec/conformance.md's "The checker's rules" table, in order: ID and the first
// severity of its severity column.
std::vector<std::pair<std::string, std::string>> SpecRules() {
  std::ifstream in(DLBRIDGE_TEST_SPEC_DIR "/conformance.md");
  REQUIRE(in.good());
  std::vector<std::pair<std::string, std::string>> rules;
  bool inSection = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) inSection = line.find("(CONF-*)") != std::string::npos;
    if (!inSection || line.rfind("| CONF-", 0) != 0) continue;
    std::istringstream cells(line.substr(2));
    std::string id, severity;
    std::getline(cells, id, '|');
    std::getline(cells, severity, '|');
    id = id.substr(0, id.find(' '));
    severity = severity.substr(severity.find_first_not_of(' '));
    severity = severity.substr(0, severity.find_first_of(" /"));
    rules.emplace_back(id, severity);
  }
  return rules;
}

TEST_CASE("CONF-RULES every rule has an ID, a summary, and a test named after it") {
  int count = 0;
  const dlbridge::CheckerRule* rules = dlbridge::CheckerRules(&count);
  // The list is the contract's: spec/conformance.md's rows, in order, with their severities.
  const std::vector<std::pair<std::string, std::string>> spec = SpecRules();
  REQUIRE(count == static_cast<int>(spec.size()));
  std::set<std::string> ids;
  for (int i = 0; i < count; ++i) {
    CAPTURE(rules[i].id);
    CHECK(std::string(rules[i].id) == spec[i].first);
    CHECK(std::string(dlbridge::SeverityName(rules[i].severity)) == spec[i].second);
    CHECK(std::string(rules[i].summary).size() > 10);
    ids.insert(rules[i].id);
  }
  CHECK(ids.size() == static_cast<size_t>(count));
  CHECK(std::string(dlbridge::SeverityName(Severity::kWarning)) == "warning");
  // Every finding the checker reports is a listed rule (a finding of each kind, below, and in
  // the rule's own test).
  Buffer buf;
  HandBuilt<DLManagedTensorVersioned> h(buf.bytes + 16, {2, -1});
  h.managed.deleter = nullptr;
  h.managed.flags = uint64_t{1} << 40;
  h.T().dtype = {kDLFloat, 31, 0};
  h.T().device = {kDLCPU, 3};
  for (const Finding& f : CheckDLPack(&h.managed)) CHECK(ids.count(f.rule) == 1);
}

TEST_CASE("CONF-ALIGN the placement checks read the address_arithmetic column, not exported") {
  // No row of today's table has the two columns differ, so the rows are posed: a tensor whose
  // data is not aligned, with a row that allows address arithmetic but is not exported (checked:
  // a note) and one that is exported but holds handles (not checked: nothing).
  Buffer buf;
  HandBuilt<DLManagedTensorVersioned> h(buf.bytes + 16, {2});
  DeviceTypeInfo addresses = *dlbridge::FindDeviceType(kDLCPU);
  addresses.exported = false;
  addresses.address_arithmetic = true;
  CHECK_FINDING(dlbridge::testing::CheckWithDeviceRow(h.managed, addresses), "CONF-ALIGN",
                Severity::kNote);
  DeviceTypeInfo handles = *dlbridge::FindDeviceType(kDLCPU);
  handles.exported = true;
  handles.address_arithmetic = false;
  CHECK_CLEAN(dlbridge::testing::CheckWithDeviceRow(h.managed, handles));
  // The same for the address range: a byte_offset past INT64_MAX is only an address finding.
  h.T().byte_offset = uint64_t{1} << 63;
  CHECK_FINDING(dlbridge::testing::CheckWithDeviceRow(h.managed, addresses), "CONF-OVERFLOW",
                Severity::kViolation);
  CHECK_CLEAN(dlbridge::testing::CheckWithDeviceRow(h.managed, handles));
  CHECK(h.deletes == 0);
}

// dlbridge's own exports across a layout matrix are checked clean (no findings but CONF-ALIGN's
// note where element zero is not the buffer's aligned start).
TEST_CASE_TEMPLATE("CONF-EXPORTS dlbridge's exports across the layout matrix are clean", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  constexpr bool kVersioned = std::is_same_v<M, DLManagedTensorVersioned>;
  const DLDataType dtypes[] = {{kDLInt, 8, 1},           {kDLUInt, 16, 1},     {kDLInt, 64, 1},
                               {kDLFloat, 16, 1},        {kDLFloat, 32, 1},    {kDLFloat, 64, 1},
                               {kDLBfloat, 16, 1},       {kDLComplex, 128, 1}, {kDLBool, 8, 1},
                               {kDLFloat8_e4m3fn, 8, 1}, {kDLFloat, 32, 4}};
  struct Shape {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    uint64_t offset;
  };
  const Shape shapes[] = {
      {{}, {}, 0},            // 0-d
      {{7}, {}, 0},           // 1-d
      {{3, 4}, {}, 0},        // C-contiguous
      {{4, 3}, {1, 4}, 0},    // transposed
      {{3, 5}, {-5, 1}, 10},  // negative strides, offset in elements (scaled below)
      {{2, 3}, {6, 2}, 0},    // every other column
      {{2, 0, 3}, {}, 0},     // zero-size
      {{0}, {}, 0},           // zero-size 1-d
      {{1, 1, 1}, {}, 0},     // unit extents
  };
  int checked = 0;
  for (DLDataType dtype : dtypes) {
    const uint64_t item = (uint64_t{dtype.bits} * dtype.lanes + 7) / 8;
    for (const Shape& s : shapes) {
      for (bool readOnly : {false, true}) {
        if (readOnly && !kVersioned) continue;  // legacy cannot say read-only (refused)
        Buffer buf;
        ReleaseCounter c;
        Tensor t =
            HostTensor(buf, c, dlbridge::TensorLayout(dtype, s.shape, s.strides, s.offset * item));
        t.flags = readOnly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
        M* m = nullptr;
        if constexpr (kVersioned) {
          m = dlbridge::ToDLPackVersioned(std::move(t));
        } else {
          m = dlbridge::ToDLPack(std::move(t));
        }
        std::vector<Finding> f = CheckDLPack(m);
        if (s.offset != 0 && f.size() == 1 && f[0].rule == "CONF-ALIGN") {
          // data is element zero (EXP-17), 10 elements past the aligned buffer: a note.
          CHECK(reinterpret_cast<uintptr_t>(m->dl_tensor.data) % 256 == s.offset * item % 256);
          f.clear();
        }
        const std::string what = "dtype " + std::to_string(dtype.code) + "/" +
                                 std::to_string(dtype.bits) + " ndim " +
                                 std::to_string(s.shape.size()) + ": " + Describe(f);
        CHECK_MESSAGE(f.empty(), what);
        CHECK(c.calls == 0);
        m->deleter(m);
        CHECK(c.calls == 1);
        ++checked;
      }
    }
  }
  CHECK(checked == (kVersioned ? 11 * 9 * 2 : 11 * 9));
}
