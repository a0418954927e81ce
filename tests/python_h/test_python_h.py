"""dlbridge/python.h from two C++ extensions (spec/bridges.md, "Python helpers", PYH-*):
python_h_raw (the raw C API) and python_h_pybind (pybind11), against NumPy, PyTorch and
dlbridge itself. Each module counts the releases of the tensors it exports."""
import ctypes
import gc
import sys
import unittest
import weakref

import numpy as np

import dlbridge
import python_h_raw as raw
from support import HandBuilt, capsule_name, capsule_pointer

try:
    import python_h_pybind as pyb
except ImportError:  # pybind11 not found at configure time
    pyb = None

try:
    import torch
except ImportError:
    torch = None

# PyTorch 2.x publishes a DLPack C exchange table on torch.Tensor (PyTorch 1.x has none): the
# helpers must then take it (PYH-6/7), and the __dlpack__ path where it is missing.
TORCH_TABLE = (capsule_pointer(torch.Tensor.__dlpack_c_exchange_api__, "dlpack_exchange_api")
               if torch is not None and hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
               else None)


class Wrapped:
    """A producer whose __dlpack__ hands out a capsule made in advance (NumPy 1.24's from_dlpack
    takes producers only)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


class LegacyOnly:
    """A producer that predates max_version: its __dlpack__ takes no keyword."""
    calls = 0

    def __init__(self, array):
        self.array = array

    def __dlpack__(self):
        type(self).calls += 1
        return self.array.__dlpack__()


class RefusesMaxVersion:
    """A producer whose __dlpack__ raises TypeError when asked with max_version."""

    def __init__(self, array):
        self.array = array
        self.kwargs = []

    def __dlpack__(self, **kwargs):
        self.kwargs.append(sorted(kwargs))
        if "max_version" in kwargs:
            raise TypeError("max_version is not understood here")
        return self.array.__dlpack__()


class Returns:
    """A producer whose __dlpack__ returns whatever it was given."""

    def __init__(self, value):
        self.value = value

    def __dlpack__(self, **kwargs):
        return self.value


class Raises:
    def __dlpack__(self, **kwargs):
        raise BufferError("this producer refuses")


class TestPythonHelpers(unittest.TestCase):
    def setUp(self):
        gc.collect()

    # PYH-1: dlbridge::Error as the module's exception classes, with the code attribute.
    def test_pyh1_core_errors_become_the_modules_exception_classes(self):
        bad = HandBuilt(versioned=True, major=2)
        capsule = bad.capsule()
        with self.assertRaises(BufferError) as raised:
            raw.import_capsule(capsule)
        self.assertEqual(raised.exception.code, "kUnsupportedVersion")
        self.assertEqual(bad.deletes, 1)  # FromDLPack consumed it once
        self.assertEqual(capsule_name(capsule), "used_dltensor_versioned")
        again = HandBuilt(versioned=True, major=2)
        with self.assertRaises(BufferError) as module:
            dlbridge.from_dlpack(again.capsule())
        self.assertEqual(module.exception.code, raised.exception.code)
        negative = HandBuilt(versioned=True, shape=(-1,))
        with self.assertRaises(ValueError) as shape:
            raw.import_capsule(negative.capsule())
        self.assertEqual(shape.exception.code, "kInvalidShape")
        self.assertIn("shape[0] is -1", str(shape.exception))
        self.assertEqual(negative.deletes, 1)
        before = raw.released()
        with self.assertRaises(BufferError) as read_only:  # legacy cannot say read-only
            raw.export_capsule(2, 2, False, True)
        self.assertEqual(read_only.exception.code, "kReadOnly")
        self.assertEqual(raw.released(), before + 1)  # the refused tensor kept its hold

    def test_pyh1_every_code_raises_the_class_spec_python_names(self):
        # spec/python.md, "Errors": the codes that mean "cannot be exchanged as asked".
        buffer_codes = {"kUnsupportedVersion", "kUnsupportedDevice", "kDeviceMismatch",
                        "kMissingDeviceId", "kMissingContext", "kReadOnly",
                        "kRuntimeUnavailable", "kStubLibrary", "kNoDevice",
                        "kRuntimeNotInitialized", "kNoHold", "kUnsupportedDtype"}
        seen = set()
        for number in range(1, 26):  # kInvalidArgument ... kUnsupportedDtype
            try:
                raw.raise_code(number)
            except Exception as error:  # noqa: BLE001 - the class is what is checked
                name = error.code
                expected = (BufferError if name in buffer_codes else
                            MemoryError if name == "kOutOfMemory" else ValueError)
                self.assertIs(type(error), expected, name)
                self.assertEqual(str(error), "raised by code")
                seen.add(name)
            else:
                self.fail("raise_code(%d) raised nothing" % number)
        self.assertEqual(len(seen), 25)
        self.assertTrue(buffer_codes <= seen)

    @unittest.skipIf(pyb is None, "pybind11 was not found at configure time")
    def test_pyh1_pybind11_translator_raises_the_same_classes(self):
        before = pyb.released()
        with self.assertRaises(BufferError) as raised:
            pyb.export_refused()
        self.assertEqual(raised.exception.code, "kReadOnly")
        self.assertEqual(pyb.released(), before + 1)
        with self.assertRaises(AttributeError):
            pyb.sum(42)
        with self.assertRaises(TypeError):
            pyb.sum(Returns(42))
        with self.assertRaises(BufferError):
            pyb.sum(Raises())

    # PYH-2: capsules of exports: names, consumption, the deleter exactly once.
    def test_pyh2_exports_reach_numpy_torch_and_dlbridge_zero_copy_released_once(self):
        before = raw.released()
        capsule = raw.export_capsule(2, 3, False)
        pointer = raw.last_pointer()
        array = np.from_dlpack(Wrapped(capsule))
        self.assertEqual(capsule_name(capsule), "used_dltensor")
        self.assertEqual(array.ctypes.data, pointer)
        np.testing.assert_array_equal(array, np.arange(6, dtype=np.float32).reshape(2, 3))
        del capsule
        self.assertEqual(raw.released(), before)  # NumPy still reads it
        del array
        gc.collect()
        self.assertEqual(raw.released(), before + 1)

        capsule = raw.export_capsule(3, 2, True)
        pointer = raw.last_pointer()
        tensor = dlbridge.from_dlpack(capsule)
        self.assertEqual(capsule_name(capsule), "used_dltensor_versioned")
        self.assertEqual(tensor.data_ptr(), pointer)
        self.assertEqual(tensor.shape, (3, 2))
        del capsule, tensor
        self.assertEqual(raw.released(), before + 2)

        if torch is not None:
            capsule = raw.export_capsule(2, 2, False)
            pointer = raw.last_pointer()
            t = torch.utils.dlpack.from_dlpack(capsule)
            self.assertEqual(capsule_name(capsule), "used_dltensor")
            self.assertEqual(t.data_ptr(), pointer)
            self.assertEqual(t.tolist(), [[0.0, 1.0], [2.0, 3.0]])
            del capsule
            self.assertEqual(raw.released(), before + 2)
            del t
            self.assertEqual(raw.released(), before + 3)
            t = torch.from_dlpack(raw.Exporter())  # a type whose __dlpack__ is the helper
            self.assertEqual(t.data_ptr(), raw.last_pointer())
            del t
            self.assertEqual(raw.released(), before + 4)

    def test_pyh2_unconsumed_capsules_run_the_deleter_once(self):
        before = raw.released()
        for versioned in (True, False):
            capsule = raw.export_capsule(4, 4, versioned)
            self.assertEqual(capsule_name(capsule),
                             "dltensor_versioned" if versioned else "dltensor")
            del capsule
        self.assertEqual(raw.released(), before + 2)
        try:
            raise KeyError("pending")
        except KeyError:
            capsule = raw.export_capsule(1, 1, True)
            del capsule  # dropped while an exception is handled: the deleter keeps it
        self.assertEqual(raw.released(), before + 3)

    @unittest.skipIf(pyb is None, "pybind11 was not found at configure time")
    def test_pyh2_pybind11_exports_reach_numpy_and_torch(self):
        before = pyb.released()
        capsule = pyb.export_capsule(5, False)
        array = np.from_dlpack(Wrapped(capsule))
        self.assertEqual(array.ctypes.data, pyb.last_pointer())
        self.assertEqual(array.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0])
        del capsule, array
        self.assertEqual(pyb.released(), before + 1)
        if torch is not None:
            t = torch.utils.dlpack.from_dlpack(pyb.export_capsule(3, False))
            self.assertEqual(t.data_ptr(), pyb.last_pointer())
            del t
            self.assertEqual(pyb.released(), before + 2)
        pyb.export_capsule(3, True)  # dropped unconsumed
        self.assertEqual(pyb.released(), before + 3)

    # PYH-3: the capsule kind by the consumer's max_version.
    def test_pyh3_max_version_selects_the_capsule(self):
        for max_version, name in ((None, "dltensor"), ((0, 8), "dltensor"),
                                  ((1, 0), "dltensor_versioned"),
                                  ((1, 3), "dltensor_versioned"),
                                  ((2, 0), "dltensor_versioned"),
                                  ((np.int64(1), 1), "dltensor_versioned")):
            capsule = raw.export_for(max_version)
            self.assertEqual(capsule_name(capsule), name, max_version)
        before = raw.released()
        for bad in ((1,), [1, 0], "1.0", (1.0, 0)):
            with self.assertRaises(TypeError):
                raw.export_for(bad)
        self.assertEqual(raw.released(), before + 4)  # each refused tensor released once
        self.assertEqual(np.from_dlpack(raw.Exporter()).shape, (2, 3))  # NumPy: legacy
        tensor = dlbridge.from_dlpack(raw.Exporter())  # dlbridge asks max_version
        self.assertEqual(tensor.shape, (2, 3))

    # PYH-4: capsules in: the two names, used_ refused, renamed before the consuming import.
    def test_pyh4_capsule_names_and_renaming(self):
        good = HandBuilt(versioned=False)
        capsule = good.capsule()
        info = raw.import_capsule(capsule)
        self.assertEqual(info["data"], ctypes.addressof(good.buffer))
        self.assertEqual(capsule_name(capsule), "used_dltensor")
        self.assertEqual(good.deletes, 1)  # the import was dropped on return
        with self.assertRaisesRegex(ValueError, "already consumed"):
            raw.import_capsule(capsule)
        self.assertEqual(good.deletes, 1)
        before = raw.named_destroyed()
        other = raw.make_named_capsule("not_a_tensor")
        with self.assertRaisesRegex(TypeError, "'not_a_tensor' is no DLPack tensor"):
            raw.import_info(Returns(other))
        self.assertEqual(capsule_name(other), "not_a_tensor")  # untouched
        del other
        self.assertEqual(raw.named_destroyed(), before + 1)  # its own destructor, once
        with self.assertRaisesRegex(TypeError, r"Returns.__dlpack__ returned a 'int', not a DLPack"):
            raw.import_info(Returns(42))
        with self.assertRaisesRegex(TypeError, "not a DLPack capsule"):
            raw.import_capsule("dltensor")

    # PYH-5: any producer: max_version first, the fallbacks, the deleter exactly once.
    def test_pyh5_imports_numpy_torch_and_dlbridge_zero_copy(self):
        array = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
        refs = sys.getrefcount(array)
        info = raw.import_info(array)
        self.assertEqual(info["data"], array.ctypes.data)
        self.assertEqual(info["shape"], (3, 2))
        self.assertEqual(info["strides"], (4, 2))
        self.assertEqual(info["sum"], float(array.sum()))
        self.assertEqual(sys.getrefcount(array), refs)  # NumPy's deleter ran
        raw.hold(array)
        self.assertEqual(sys.getrefcount(array), refs + 1)
        raw.drop_held()
        self.assertEqual(sys.getrefcount(array), refs)

        tensor = dlbridge.from_dlpack(np.arange(5, dtype=np.int64))
        info = raw.import_info(tensor)
        self.assertEqual(info["data"], tensor.data_ptr())
        self.assertEqual(info["sum"], 10.0)
        if torch is not None:
            t = torch.arange(10, dtype=torch.float32)[1::3]
            info = raw.import_info(t)
            self.assertEqual(info["data"], t.data_ptr())
            self.assertEqual(info["strides"], (3,))
            self.assertEqual(info["sum"], float(t.sum()))

    def test_pyh5_legacy_producers_and_the_type_error_fallback(self):
        array = np.arange(4, dtype=np.float32)
        LegacyOnly.calls = 0
        self.assertEqual(raw.import_info(LegacyOnly(array))["sum"], 6.0)
        self.assertEqual(LegacyOnly.calls, 1)
        self.assertEqual(raw.import_info(LegacyOnly(array))["data"], array.ctypes.data)
        self.assertEqual(LegacyOnly.calls, 2)
        refusing = RefusesMaxVersion(array)
        self.assertEqual(raw.import_info(refusing)["sum"], 6.0)
        self.assertEqual(refusing.kwargs, [["max_version"], []])
        with self.assertRaisesRegex(BufferError, "this producer refuses"):
            raw.import_info(Raises())
        with self.assertRaisesRegex(AttributeError, "no __dlpack__ method"):
            raw.import_info(object())

    def test_pyh5_a_producer_remembered_as_legacy_is_asked_without_arguments(self):
        class Counting:
            seen = []

            def __dlpack__(self, **kwargs):
                type(self).seen.append(sorted(kwargs))
                if kwargs:
                    raise TypeError("no keywords")
                return np.zeros(2).__dlpack__()

        raw.import_info(Counting())
        raw.import_info(Counting())
        self.assertEqual(Counting.seen, [["max_version"], [], []])
        Counting.extra = 1  # a changed type is asked again
        raw.import_info(Counting())
        self.assertEqual(Counting.seen[3:], [["max_version"], []])

    def test_pyh5_imports_are_released_on_a_native_thread_without_the_gil(self):
        array = np.arange(8, dtype=np.float32)
        refs = sys.getrefcount(array)
        counted = raw.export_capsule(2, 2, True)  # a dlbridge.Tensor over a counted C++ buffer
        tensor = dlbridge.from_dlpack(counted)
        del counted
        before = raw.released()
        raw.hold(array)
        raw.hold(tensor)
        if torch is not None:
            raw.hold(torch.ones(4))
        del tensor  # the holds are the last references now
        self.assertEqual(sys.getrefcount(array), refs + 1)
        raw.drop_held_on_thread()  # NumPy's and dlbridge's deleters take the GIL themselves
        self.assertEqual(sys.getrefcount(array), refs)
        self.assertEqual(raw.released(), before + 1)

    # PYH-8: OwnerFromPyObject keeps a Python object alive; dropped under the GIL anywhere.
    def test_pyh8_python_owner_lives_until_the_last_hold_and_drops_on_any_thread(self):
        owner = np.arange(16, dtype=np.uint8)
        refs = sys.getrefcount(owner)
        capsule = raw.export_owned(owner)
        self.assertEqual(sys.getrefcount(owner), refs + 1)
        array = np.from_dlpack(Wrapped(capsule))
        del capsule
        self.assertEqual(array.ctypes.data, owner.ctypes.data)
        self.assertEqual(sys.getrefcount(owner), refs + 1)
        del array
        self.assertEqual(sys.getrefcount(owner), refs)
        raw.hold_owner(owner)
        self.assertEqual(sys.getrefcount(owner), refs + 1)
        raw.drop_held_on_thread()
        self.assertEqual(sys.getrefcount(owner), refs)
        # Dropped while an exception is handled: the exception survives, the owner goes.
        # (Watched through a weak reference: Python 3.14 counts references differently
        # inside an except block, so getrefcount there does not compare with one outside.)
        probe = np.arange(4, dtype=np.uint8)
        alive = weakref.ref(probe)
        raw.hold_owner(probe)
        del probe
        self.assertIsNotNone(alive())
        try:
            raise KeyError("pending")
        except KeyError:
            raw.drop_held()
            self.assertIsInstance(sys.exc_info()[1], KeyError)
            self.assertIsNone(alive())

    # PYH-6: the exchange API found on the type, walked to major version 1, cached.
    def test_pyh6_exchange_api_of_a_type(self):
        published = capsule_pointer(dlbridge.Tensor.__dlpack_c_exchange_api__,
                                    "dlpack_exchange_api")
        self.assertEqual(raw.exchange_api_of(dlbridge.Tensor), published)
        self.assertIsNone(raw.exchange_api_of(np.ndarray))
        if torch is not None:
            # PyTorch 2's table (major version 1 heads its chain) or none (PyTorch 1).
            self.assertEqual(raw.exchange_api_of(torch.Tensor), TORCH_TABLE)
        self.assertEqual(raw.exchange_api_of(raw.TableProducer), raw.table_address("v1"))
        self.assertEqual(raw.exchange_api_of(raw.TableProducerV2), raw.table_address("v1"))

        class Late:
            pass

        self.assertIsNone(raw.exchange_api_of(Late))
        Late.__dlpack_c_exchange_api__ = dlbridge.Tensor.__dlpack_c_exchange_api__
        self.assertEqual(raw.exchange_api_of(Late), published)  # the changed type looked up again
        Late.__dlpack_c_exchange_api__ = 42
        self.assertIsNone(raw.exchange_api_of(Late))

    # PYH-7: the no-sync view: the exchange API where published, else __dlpack__.
    def test_pyh7_no_sync_view_uses_the_exchange_api_of_dlbridge_tensors(self):
        tensor = dlbridge.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3))
        view = raw.view_info(tensor)
        self.assertEqual(view["path"], "exchange_api")
        self.assertFalse(view["holds"])
        self.assertEqual(view["data"], tensor.data_ptr())
        self.assertEqual(view["shape"], (2, 3))
        self.assertEqual(view["sum"], 15.0)
        self.assertEqual(view["stream"], 0)  # dlbridge has no streams: NULL

        counts = raw.api_counts()
        view = raw.view_info(raw.TableProducer())
        after = raw.api_counts()
        self.assertEqual(view["path"], "exchange_api")
        self.assertEqual(view["stream"], 0x1234)
        self.assertEqual(view["sum"], 75.0)
        self.assertEqual(after["view"], counts["view"] + 1)
        self.assertEqual(after["stream"], counts["stream"] + 1)
        self.assertEqual(after["stream_device"], 1)  # asked for the tensor's device
        self.assertEqual(after["dlpack"], counts["dlpack"])
        self.assertEqual(raw.view_info(raw.TableProducerV2())["path"], "exchange_api")

    def test_pyh7_the_exchange_view_says_its_flags_are_unknown_need_flags_gets_them(self):
        tensor = dlbridge.from_dlpack(np.arange(4, dtype=np.float32))
        tensor.flags = dlbridge.FLAG_READ_ONLY
        # A DLTensor has no flags: 0 on that path must not read as "writable".
        self.assertEqual(raw.view_flags(tensor, False), ("exchange_api", 0, False))
        path, flags, known = raw.view_flags(tensor, True)
        self.assertEqual((path, known), ("dlpack", True))
        self.assertTrue(flags & dlbridge.FLAG_READ_ONLY)

    def test_pyh7_no_sync_view_falls_back_and_checks_the_producers_tensor(self):
        array = np.arange(6, dtype=np.float64)
        view = raw.view_info(array)
        self.assertEqual(view["path"], "dlpack")
        self.assertTrue(view["holds"])
        self.assertEqual(view["data"], array.ctypes.data)
        if torch is not None and TORCH_TABLE is None:  # PyTorch 1: no table, __dlpack__
            t = torch.ones(3)
            view = raw.view_info(t)
            self.assertEqual((view["path"], view["data"]), ("dlpack", t.data_ptr()))
        before, counts = raw.released(), raw.api_counts()
        view = raw.view_info(raw.TableProducerNoView())  # a table without the view function
        self.assertEqual(view["path"], "dlpack")
        self.assertIsNone(view["stream"])
        self.assertEqual(raw.api_counts()["dlpack"], counts["dlpack"] + 1)
        self.assertEqual(raw.released(), before + 1)  # the owning import, released once
        with self.assertRaisesRegex(ValueError, r"shape\[0\] is -1"):
            raw.view_info(raw.TableProducer(1))
        counts = raw.api_counts()
        with self.assertRaisesRegex(BufferError, "refuses a no-sync view"):
            raw.view_info(raw.TableProducer(2))
        self.assertEqual(raw.api_counts()["dlpack"], counts["dlpack"])  # no fallback then

    def test_pyh7_hostile_tables_are_refused_clearly(self):
        # A prev_api chain that loops without a version 1 table is no table.
        self.assertIsNone(raw.exchange_api_of(raw.TableProducerLoop))
        self.assertEqual(raw.view_info(raw.TableProducerLoop())["path"], "dlpack")
        # Every function NULL: the view takes __dlpack__, nothing is called through NULL.
        self.assertEqual(raw.view_info(raw.TableProducerEmpty())["path"], "dlpack")
        # A success with an exception set, a failure without one: SystemError, the producer's
        # exception kept as the cause; no fallback to __dlpack__.
        counts = raw.api_counts()
        with self.assertRaisesRegex(SystemError, "returned success with an exception set") as cm:
            raw.view_info(raw.TableProducer(3))
        self.assertIsInstance(cm.exception.__cause__, KeyError)
        with self.assertRaisesRegex(SystemError, "failed without setting an exception"):
            raw.view_info(raw.TableProducer(4))
        self.assertEqual(raw.api_counts()["dlpack"], counts["dlpack"])
        try:
            raw.set_stream_mode(1)
            with self.assertRaisesRegex(SystemError, "current_work_stream returned success") as cm:
                raw.view_info(raw.TableProducer())
            self.assertIsInstance(cm.exception.__cause__, KeyError)
            raw.set_stream_mode(2)
            with self.assertRaisesRegex(SystemError, "current_work_stream failed without"):
                raw.view_info(raw.TableProducer())
        finally:
            raw.set_stream_mode(0)
        self.assertEqual(raw.view_info(raw.TableProducer())["stream"], 0x1234)

    def test_pyh5_the_method_is_looked_up_on_the_type_not_the_instance(self):
        array = np.arange(4, dtype=np.float64)

        class Plain:
            pass

        plain = Plain()
        plain.__dlpack__ = array.__dlpack__
        with self.assertRaisesRegex(AttributeError, "no __dlpack__ method"):
            raw.import_info(plain)
        wrapped = Wrapped(array.__dlpack__())
        wrapped.__dlpack__ = plain.__dlpack__  # shadows nothing: the type's method runs
        self.assertEqual(raw.import_info(wrapped)["data"], array.ctypes.data)

    def test_pyh5_a_non_producer_reports_nothing_unraisable(self):
        # The "no __dlpack__" check must not print "Exception ignored" (PyObject_HasAttr did
        # on Python 3.13+), and must keep a producer's own AttributeError.
        seen = []
        old_hook = sys.unraisablehook
        sys.unraisablehook = seen.append
        try:
            for _ in range(3):
                with self.assertRaisesRegex(AttributeError, "no __dlpack__ method"):
                    raw.import_info(object())

            class Broken:
                def __dlpack__(self, **kwargs):
                    raise AttributeError("the producer's own")

            with self.assertRaisesRegex(AttributeError, "the producer's own"):
                raw.import_info(Broken())
        finally:
            sys.unraisablehook = old_hook
        self.assertEqual(seen, [])

    @unittest.skipIf(pyb is None, "pybind11 was not found at configure time")
    def test_pyh7_pybind11_view_and_import(self):
        array = np.arange(5, dtype=np.float64)
        self.assertEqual(pyb.sum(array), (10.0, array.ctypes.data))
        self.assertEqual(pyb.view_sum(array), (10.0, "dlpack"))
        tensor = dlbridge.from_dlpack(array)
        self.assertEqual(pyb.view_sum(tensor), (10.0, "exchange_api"))
        if torch is not None:
            self.assertEqual(pyb.view_sum(torch.arange(5, dtype=torch.float64)),
                             (10.0, "dlpack" if TORCH_TABLE is None else "exchange_api"))

    @unittest.skipIf(TORCH_TABLE is None, "this PyTorch publishes no __dlpack_c_exchange_api__")
    def test_pyh7_pytorchs_own_table_gives_the_view(self):
        # A real producer's table (PyTorch 2): the N0 view is PyTorch's non-owning DLTensor,
        # its values checked, nothing held, __dlpack__ never called.
        base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
        t = base[1:, ::2]  # strided, offset
        view = raw.view_info(t)
        self.assertEqual(view["path"], "exchange_api")
        self.assertFalse(view["holds"])
        self.assertEqual(view["shape"], (3, 3))
        self.assertEqual(view["sum"], float(t.sum()))
        self.assertEqual(view["data"], t.data_ptr())
        self.assertEqual(view["stream"], 0)  # a CPU tensor has no stream: NULL
        refs = sys.getrefcount(t)
        for _ in range(100):
            raw.view_info(t)
        self.assertEqual(sys.getrefcount(t), refs)  # the view kept nothing of the tensor
        # need_flags takes __dlpack__ (versioned with PyTorch 2): the flags are PyTorch's word.
        self.assertEqual(raw.view_flags(t, True)[0::2], ("dlpack", True))
        # PyTorch's read-only wrapper publishes its const table: still a view, same memory.
        wrapper = getattr(torch.utils.dlpack, "ReadOnlyTensorWrapper", None)
        if wrapper is not None:
            ro = wrapper(base)
            self.assertEqual(raw.view_info(ro)["path"], "exchange_api")
            self.assertEqual(raw.view_info(ro)["data"], base.data_ptr())
            path, flags, known = raw.view_flags(ro, True)
            self.assertEqual((path, known), ("dlpack", True))
            self.assertTrue(flags & dlbridge.FLAG_READ_ONLY)


if __name__ == "__main__":
    unittest.main()
