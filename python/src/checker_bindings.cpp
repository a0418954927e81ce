// The conformance checker's bindings (spec/conformance.md): reads a capsule's tensor,
// consumes nothing; gives dlbridge.check the rule list and the device table.
#include "py_internal.h"

namespace dlbpy {
namespace {

PyObject* FindingsList(const std::vector<dlbridge::Finding>& findings) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(findings.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < findings.size(); ++i) {
    const dlbridge::Finding& f = findings[i];
    PyObject* row = Py_BuildValue("(sss)", f.rule.c_str(), dlbridge::SeverityName(f.severity),
                                  f.message.c_str());
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), row);
  }
  return list;
}

}  // namespace

PyObject* CheckCapsule(PyObject*, PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_SetString(PyExc_TypeError, "dlbridge._check_capsule: expected a DLPack capsule");
    return nullptr;
  }
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr && PyErr_Occurred() != nullptr) return nullptr;
  const CapsuleKind kind = KindOfCapsule(name);  // a NULL name is no DLPack name
  const bool versioned = kind == CapsuleKind::kVersioned;
  if (!versioned && kind != CapsuleKind::kLegacy) {
    PyErr_Format(PyExc_ValueError,
                 "dlbridge._check_capsule: a capsule %s%s%s is not an unconsumed DLPack tensor; "
                 "expected 'dltensor' or 'dltensor_versioned'",
                 name == nullptr ? "without a name" : "named '", name == nullptr ? "" : name,
                 name == nullptr ? "" : "'");
    return nullptr;
  }
  void* pointer = PyCapsule_GetPointer(capsule, name);
  if (pointer == nullptr) return nullptr;
  std::vector<dlbridge::Finding> findings;
  DLB_TRY
  findings = versioned
                 ? dlbridge::CheckDLPack(static_cast<const DLManagedTensorVersioned*>(pointer))
                 : dlbridge::CheckDLPack(static_cast<const DLManagedTensor*>(pointer));
  DLB_CATCH(nullptr)
  return FindingsList(findings);
}

PyObject* DeviceTableList(PyObject*, PyObject*) {
  int count = 0;
  const dlbridge::DeviceTypeInfo* rows = dlbridge::DeviceTable(&count);
  PyObject* list = PyList_New(count);
  if (list == nullptr) return nullptr;
  for (int i = 0; i < count; ++i) {
    PyObject* row = Py_BuildValue("(isOO)", static_cast<int>(rows[i].device_type), rows[i].name,
                                  rows[i].address_arithmetic ? Py_True : Py_False,
                                  rows[i].host_accessible ? Py_True : Py_False);
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, row);
  }
  return list;
}

PyObject* CheckerRulesList(PyObject*, PyObject*) {
  int count = 0;
  const dlbridge::CheckerRule* rules = dlbridge::CheckerRules(&count);
  PyObject* list = PyList_New(count);
  if (list == nullptr) return nullptr;
  for (int i = 0; i < count; ++i) {
    PyObject* row = Py_BuildValue("(sss)", rules[i].id, dlbridge::SeverityName(rules[i].severity),
                                  rules[i].summary);
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, row);
  }
  return list;
}

}  // namespace dlbpy
