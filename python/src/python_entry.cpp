// Entering Python from any thread at any time, interpreter exit included (PY-52): the
// counts and the flag PythonEntry checks, the atexit hook that sets it, the entry's slow path
// (taking the GIL), and the references dropped through it.
#include "py_internal.h"

namespace dlbpy {

// Shutdown (PY-52): entries by threads that held the GIL already: changed and read only with
// the GIL held, so a plain count (no locked instruction on the common path); the hook waits
// for it too. And whether the atexit hook has run.
long g_in_python_holding = 0;
std::atomic<bool> g_shutting_down{false};

namespace {

// Entries by threads that took the GIL. Sequentially consistent: a thread counts itself in,
// then reads the flag; the hook sets the flag, then waits for the count to reach zero.
std::atomic<long> g_in_python{0};

bool InterpreterFinalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// Runs from atexit, before finalisation begins, with the GIL held: from here on releases
// leak; the threads already entering Python get the GIL (released while waiting) and finish.
PyObject* ShutdownHook(PyObject*, PyObject*) {
  g_shutting_down.store(true);
  while (g_in_python.load() > 0 || g_in_python_holding > 0) {
    PyThreadState* saved = PyEval_SaveThread();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    PyEval_RestoreThread(saved);
  }
  Py_RETURN_NONE;
}

PyMethodDef kShutdownHookDef = {"_dlbridge_shutdown", ShutdownHook, METH_NOARGS, nullptr};

// A forked child has only the forking thread: threads the parent counted in are not there to
// leave, and the child's exit would wait for them for ever.
void ForgetOtherThreads() {
  g_in_python.store(0);
  g_in_python_holding = 0;
  ForgetRecycledBlocks();  // one of them may have been changing it
}

}  // namespace

// PY-52: a thread without the GIL counts itself in, then checks the flag; from shutdown on
// (or once finalisation has begun, when PyGILState_Ensure would end the thread) it leaks.
void PythonEntry::EnterTakingGil() noexcept {
  g_in_python.fetch_add(1);
  if (g_shutting_down.load() || !Py_IsInitialized() || InterpreterFinalizing()) {
    g_in_python.fetch_sub(1);
    return;
  }
  state_ = PyGILState_Ensure();
  entered_ = took_ = true;
}

void PythonEntry::LeaveReleasingGil() noexcept {
  PyGILState_Release(state_);
  g_in_python.fetch_sub(1);
}

int InstallShutdownHook() {
#if !defined(_WIN32)
  static const bool kAtFork = pthread_atfork(nullptr, nullptr, &ForgetOtherThreads) == 0;
  if (!kAtFork) {
    PyErr_SetString(PyExc_RuntimeError, "dlbridge: pthread_atfork failed");
    return -1;
  }
#endif
  g_shutting_down.store(false);  // an embedder's interpreter initialised again imports anew
  PyObject* atexit = PyImport_ImportModule("atexit");
  if (atexit == nullptr) return -1;
  PyObject* hook = PyCFunction_New(&kShutdownHookDef, nullptr);
  PyObject* result = hook != nullptr ? PyObject_CallMethod(atexit, "register", "O", hook) : nullptr;
  Py_XDECREF(hook);
  Py_DECREF(atexit);
  if (result == nullptr) return -1;
  Py_DECREF(result);
  return 0;
}

// PY-3: a Python owner's reference is dropped with the GIL taken, on any thread; from
// shutdown on it is leaked.
void DecRefAnyThread(PyObject* object) noexcept {
  const PythonEntry python;
  if (!python.entered()) return;  // the interpreter is going: leak on purpose
  Py_DECREF(object);
}

}  // namespace dlbpy
