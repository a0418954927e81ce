"""`python3 -m dlbridge.check` against fake targets (spec/conformance.md, PYP-*/PYC-*): for each
probe, a deliberately non-conforming producer or consumer that the probe must report and a
conforming one that it must pass. Producers are small Python classes returning hand-built
capsules; consumers are from_dlpack functions written here over a minimal float32 importer
(`Imported`, independent of dlbridge's own from_dlpack). Everything runs in this process
(isolate=False) but the last test, which runs the command."""
import ctypes
import gc
import os
import subprocess
import sys
import unittest

import dlbridge
from dlbridge import check
from dlbridge.dlpack_ctypes import (CURRENT_STREAM, FROM_PYOBJECT, DLPackExchangeAPI,
                                    DLPackExchangeAPIHeader)
from support import (DELETER, NAMES, DLManagedTensor, DLManagedTensorVersioned, address_of,
                     c_int64_p, capsule_name, capsule_pointer, make_capsule)

_api = ctypes.pythonapi
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]


class FakeTarget(check.Target):
    def __init__(self, arrays=(), from_dlpack=None, has_read_only=False):
        self.name, self.version = "fake", "0"
        self.arrays, self.from_dlpack, self.has_read_only = list(arrays), from_dlpack, has_read_only

    def matrix(self):
        return iter(self.arrays)


def producer_results(*arrays):
    results = check.Results(list(dlbridge._checker_rules()) + list(check.PY_RULES))
    target = FakeTarget([("array %d" % i, a) for i, a in enumerate(arrays)],
                        has_read_only=any(getattr(a, "readonly", False) for a in arrays))
    check.check_producer(target, results, lambda _msg: None)
    return results


def consumer_results(from_dlpack, *kinds):
    results = check.Results(list(dlbridge._checker_rules()) + list(check.PY_RULES))
    check.check_consumer(FakeTarget(from_dlpack=from_dlpack), None, results, lambda _msg: None,
                         isolate=False, kinds=list(kinds))
    gc.collect()
    return results


class FakeArray:
    """A (2, 3) float32 producer; element zero is element 2 of its buffer. Knobs: the device,
    which stream values it accepts, element zero in byte_offset instead of data, and copies
    that forget IS_COPIED."""

    def __init__(self, device=(1, 0), streams=lambda s: s is None, in_byte_offset=False,
                 copy_flag=True, readonly=False, read_only_flag=True):
        self.device, self.streams = device, streams
        self.in_byte_offset, self.copy_flag = in_byte_offset, copy_flag
        self.readonly, self.read_only_flag = readonly, read_only_flag
        self.buffer = (ctypes.c_float * 16)(*range(16))
        self.shape = (ctypes.c_int64 * 2)(2, 3)
        self.strides = (ctypes.c_int64 * 2)(3, 1)
        self.deleter = DELETER(lambda _managed: None)
        self.keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream is not None and not self.streams(stream):
            raise BufferError("stream %r is not valid here" % (stream,))
        if dl_device is not None and tuple(dl_device) != self.device:
            raise BufferError("cannot export to %r" % (dl_device,))
        base, flags = address_of(self.buffer), 0
        if copy:
            copied = (ctypes.c_float * 16)(*self.buffer)
            self.keep.append(copied)
            base, flags = address_of(copied), dlbridge.FLAG_IS_COPIED if self.copy_flag else 0
        versioned = self.versioned(max_version)
        if self.readonly and not copy:
            if not versioned and self.read_only_flag:
                raise BufferError("a read-only array cannot be exported as a legacy tensor")
            flags |= dlbridge.FLAG_READ_ONLY if self.read_only_flag else 0
        m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            m.version.major, m.version.minor, m.flags = 1, 3, flags
        t = m.dl_tensor
        t.data, t.byte_offset = (base, 8) if self.in_byte_offset else (base + 8, 0)
        t.device.device_type, t.device.device_id = self.device
        t.ndim, t.shape, t.strides = 2, ctypes.cast(self.shape, c_int64_p), ctypes.cast(self.strides, c_int64_p)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 32, 1
        m.deleter = self.deleter
        self.keep.append(m)
        return make_capsule(ctypes.addressof(m), b"dltensor_versioned" if versioned else b"dltensor")

    def versioned(self, max_version):
        return max_version is not None and max_version[0] >= 1


def worst(results, rule):
    return results.status[rule]


class ProducerProbes(unittest.TestCase):
    def test_pypstreamvalues_cpu_cuda_and_rocm_stream_rules(self):
        good = producer_results(FakeArray((1, 0)),
                                FakeArray((2, 0), streams=lambda s: s != 0),
                                FakeArray((10, 0), streams=lambda s: s not in (1, 2)))
        self.assertEqual(worst(good, "PYP-STREAM-VALUES"), "pass")
        self.assertIn("stream values on kDLCUDA: None, 1, 2, -1, 0", good.covered["producer (PYP-*)"])
        for device, streams, bad in (((1, 0), lambda s: True, "stream=0"),
                                     ((2, 0), lambda s: True, "stream=0"),
                                     ((10, 0), lambda s: True, "stream=1")):
            with self.subTest(device=device):
                results = producer_results(FakeArray(device, streams=streams))
                self.assertEqual(worst(results, "PYP-STREAM-VALUES"), "violation")
                self.assertIn(bad, results.example["PYP-STREAM-VALUES"])
        # Only CPU arrays: CUDA and ROCm are not applicable, with the reason in the summary.
        self.assertFalse(any("no kDLCUDA array" in l for l in good.summary()))
        cpu_only = producer_results(FakeArray((1, 0)))
        self.assertTrue(any("no kDLROCM array" in l for l in cpu_only.summary()))
        # A CUDA producer refusing -1 (optional support): a warning, not a violation.
        picky = producer_results(FakeArray((2, 0), streams=lambda s: s in (1, 2)))
        self.assertEqual(worst(picky, "PYP-STREAM-VALUES"), "warning")

    def test_pypbyteoffset_element_zero_in_data(self):
        self.assertEqual(worst(producer_results(FakeArray()), "PYP-BYTE-OFFSET"), "pass")
        results = producer_results(FakeArray(in_byte_offset=True))
        self.assertEqual(worst(results, "PYP-BYTE-OFFSET"), "warning")
        self.assertIn("byte_offset 8", results.example["PYP-BYTE-OFFSET"])
        vulkan = producer_results(FakeArray((7, 0), in_byte_offset=True))
        self.assertEqual(worst(vulkan, "PYP-BYTE-OFFSET"), "not applicable")

    def test_pypcopy_a_versioned_copy_must_say_is_copied(self):
        self.assertEqual(worst(producer_results(FakeArray()), "PYP-COPY"), "pass")
        results = producer_results(FakeArray(copy_flag=False))
        self.assertEqual(worst(results, "PYP-COPY"), "violation")
        self.assertIn("without IS_COPIED", results.example["PYP-COPY"])


class AlwaysVersioned(FakeArray):
    def versioned(self, max_version):
        return True


class NeverVersioned(FakeArray):
    def versioned(self, max_version):
        return False


class ClaimsCuda(FakeArray):
    def __dlpack_device__(self):
        return (2, 0)


class NotATuple(FakeArray):
    def __dlpack_device__(self):
        return "cpu"


class ReturnsBytes(FakeArray):
    def __dlpack__(self, **kwargs):
        return b"not a capsule"


class NoStream(FakeArray):
    def __dlpack__(self, *, max_version=None, dl_device=None, copy=None):
        return super().__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)


class Legacy(FakeArray):
    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=stream)


class IgnoresDevice(FakeArray):
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return super().__dlpack__(stream=stream, max_version=max_version, copy=copy)


class RuntimeErrors(FakeArray):
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None or max_version is None:
            raise RuntimeError("not supported")
        return super().__dlpack__(stream=stream, max_version=max_version, copy=copy)


class ProtocolProbes(unittest.TestCase):
    """The rules the command had before (PYP-*): one conforming fake, one that breaks each."""

    def check(self, rule, good, bad, status, why):
        self.assertEqual(worst(producer_results(good), rule), "pass")
        results = producer_results(bad)
        self.assertEqual(worst(results, rule), status)
        self.assertIn(why, results.example[rule])

    def test_pypdlpackdevice_matches_the_capsule(self):
        self.check("PYP-DLPACK-DEVICE", FakeArray(), ClaimsCuda(), "violation", "capsule device (1, 0)")
        self.check("PYP-DLPACK-DEVICE", FakeArray(), NotATuple(), "violation", "__dlpack_device__() is")

    def test_pypcapsulename_legacy_without_max_version(self):
        self.check("PYP-CAPSULE-NAME", FakeArray(), AlwaysVersioned(), "violation", "reads legacy")
        self.check("PYP-CAPSULE-NAME", FakeArray(), ReturnsBytes(), "violation", "returned b'not a capsule'")

    def test_pypstream_stream_none_is_accepted(self):
        self.check("PYP-STREAM", FakeArray(), NoStream(), "violation", "raised TypeError")
        self.assertEqual(worst(producer_results(NoStream()), "PYP-STREAM-VALUES"), "skipped")

    def test_pypmaxversion_the_keyword_is_accepted(self):
        self.check("PYP-MAX-VERSION", FakeArray(), Legacy(), "violation", "max_version=None) raised TypeError")

    def test_pypversioned_max_version_gets_a_versioned_capsule(self):
        self.check("PYP-VERSIONED", FakeArray(), NeverVersioned(), "warning", "gave 'dltensor'")

    def test_pypdldevice_another_device_raises_buffer_error(self):
        self.check("PYP-DL-DEVICE", FakeArray(), IgnoresDevice(), "violation", "instead of raising BufferError")
        self.check("PYP-DL-DEVICE", FakeArray(), RuntimeErrors(), "violation", "RuntimeError, not BufferError")

    def test_pypreadonly_flagged_or_refused(self):
        self.check("PYP-READ-ONLY", FakeArray(readonly=True), FakeArray(readonly=True, read_only_flag=False),
                   "violation", "exported as a writable legacy tensor")

    def test_pyperrortype_refusals_are_buffer_errors(self):
        self.check("PYP-ERROR-TYPE", FakeArray(), RuntimeErrors(), "warning", "raised RuntimeError")


def host_tensor(cls=dlbridge.Tensor):
    values = (ctypes.c_float * 6)(*range(6))
    md = dlbridge.MemoryDescriptor(address_of(values), 24, "host")
    md.SetOwner(values)  # a hold: the export is owned (no allow_unowned needed)
    return cls(md, "float32", (2, 3))


def real_table():
    capsule = dlbridge.Tensor.__dlpack_c_exchange_api__
    return DLPackExchangeAPI.from_address(capsule_pointer(capsule, "dlpack_exchange_api"))


def table_capsule(table, name=b"dlpack_exchange_api"):
    return make_capsule(ctypes.addressof(table), name)


class ExchangeProbes(unittest.TestCase):
    def test_pypexchangeapi_the_table_on_the_type(self):
        results = producer_results(host_tensor())
        self.assertEqual(worst(results, "PYP-EXCHANGE-API"), "pass")
        self.assertEqual(worst(producer_results(FakeArray()), "PYP-EXCHANGE-API"), "not applicable")

        newer = DLPackExchangeAPIHeader()  # major 2 whose prev_api reaches dlbridge's major 1
        newer.version.major, newer.version.minor = 2, 0
        newer.prev_api = ctypes.cast(ctypes.addressof(real_table()), ctypes.POINTER(DLPackExchangeAPIHeader))
        alone = DLPackExchangeAPIHeader()
        alone.version.major = 2
        no_stream = DLPackExchangeAPI.from_buffer_copy(real_table())
        no_stream.current_work_stream = CURRENT_STREAM()  # NULL

        class Chained(dlbridge.Tensor):
            __dlpack_c_exchange_api__ = table_capsule(newer)

        class WrongName(dlbridge.Tensor):
            __dlpack_c_exchange_api__ = table_capsule(alone, b"not_a_tensor")

        class OnlyMajor2(dlbridge.Tensor):
            __dlpack_c_exchange_api__ = table_capsule(alone)

        class NullFunction(dlbridge.Tensor):
            __dlpack_c_exchange_api__ = table_capsule(no_stream)

        self.assertEqual(worst(producer_results(host_tensor(Chained)), "PYP-EXCHANGE-API"), "pass")
        for cls, why in ((WrongName, "not 'dlpack_exchange_api'"), (OnlyMajor2, "no table of major 1"),
                         (NullFunction, "current_work_stream")):
            with self.subTest(cls=cls.__name__):
                results = producer_results(host_tensor(cls))
                self.assertEqual(worst(results, "PYP-EXCHANGE-API"), "violation")
                self.assertIn(why, results.example["PYP-EXCHANGE-API"])
        on_instance = FakeArray()
        on_instance.__dlpack_c_exchange_api__ = Chained.__dlpack_c_exchange_api__
        results = producer_results(on_instance)
        self.assertEqual(worst(results, "PYP-EXCHANGE-API"), "violation")
        self.assertIn("on the type", results.example["PYP-EXCHANGE-API"])

    def test_pypexchangecalls_functions_called_on_the_types_array(self):
        self.assertEqual(worst(producer_results(host_tensor()), "PYP-EXCHANGE-CALLS"), "pass")
        no_tensor = DLPackExchangeAPI.from_buffer_copy(real_table())
        no_tensor.managed_tensor_from_py_object_no_sync = FROM_PYOBJECT(lambda _obj, _out: 0)
        bad_stream = DLPackExchangeAPI.from_buffer_copy(real_table())
        bad_stream.current_work_stream = CURRENT_STREAM(lambda _type, _id, _out: -1)
        keep = [no_tensor, bad_stream]

        class NoTensor(dlbridge.Tensor):
            __dlpack_c_exchange_api__ = table_capsule(keep[0])

        class BadStream(dlbridge.Tensor):
            __dlpack_c_exchange_api__ = table_capsule(keep[1])

        for cls, why in ((NoTensor, "returned 0 and no tensor"), (BadStream, "current_work_stream(kDLCPU, 0) returned -1")):
            with self.subTest(cls=cls.__name__):
                results = producer_results(host_tensor(cls))
                self.assertEqual(worst(results, "PYP-EXCHANGE-CALLS"), "violation")
                self.assertIn(why, results.example["PYP-EXCHANGE-CALLS"])


# ---------------------------------------------------------------------------------------
# Consumers

_KNOWN_CODES = (0, 1, 2, 4, 5, 6)
_USED = {"dltensor": b"used_dltensor", "dltensor_versioned": b"used_dltensor_versioned"}


class Imported:
    """A minimal consumer's import of a float32 capsule: renames it, describes the data through
    __array_interface__ (element zero at data + byte_offset) and runs the deleter once when
    dropped."""

    def __init__(self, capsule, ignore_byte_offset=False, null_strides_fortran=False, abs_strides=False,
                 drop_zero_extents=False, ignore_read_only=False, rename=True):
        name = capsule_name(capsule)
        address = capsule_pointer(capsule, name)
        versioned = name == "dltensor_versioned"
        m = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(address)
        if rename:
            _api.PyCapsule_SetName(capsule, ctypes.cast(NAMES[_USED[name]], ctypes.c_void_p))
        self._managed, self._address = m, address
        t = m.dl_tensor
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.strides:
            strides = tuple(abs(t.strides[i]) if abs_strides else t.strides[i] for i in range(t.ndim))
        else:
            strides = check._contiguous(shape[::-1])[::-1] if null_strides_fortran else check._contiguous(shape)
        if drop_zero_extents and 0 in shape:
            shape, strides = (0,), (1,)
        data = (t.data or 0) + (0 if ignore_byte_offset else t.byte_offset)
        self.readonly = versioned and bool(m.flags & dlbridge.FLAG_READ_ONLY) and not ignore_read_only
        self.device = "cpu"
        self.__array_interface__ = {"shape": shape, "typestr": "<f4", "version": 3,
                                    "strides": tuple(4 * s for s in strides), "data": (data, self.readonly)}

    def __del__(self):
        if self._managed.deleter:
            self._managed.deleter(self._address)


def good_from_dlpack(x, *, device=None, copy=None):
    """A conforming consumer: the standard's signature and exception classes; dlbridge imports."""
    if copy is not None and not isinstance(copy, bool):
        raise TypeError("copy must be a bool or None, not %s" % type(copy).__name__)
    if not hasattr(x, "__dlpack__"):
        raise AttributeError("%s has no __dlpack__" % type(x).__name__)
    kwargs = {"max_version": (1, 3)}
    if copy is not None:
        kwargs["copy"] = copy
    if tuple(x.__dlpack_device__())[0] in (3, 13):  # host-accessible: ask for it as kDLCPU
        kwargs["dl_device"] = (1, 0)
    capsule = x.__dlpack__(**kwargs)
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError("__dlpack__ returned %s, not a PyCapsule" % type(capsule).__name__)
    info = check._safe_read(capsule)
    if info["dtype"][0] not in _KNOWN_CODES:
        raise BufferError("unknown dtype code %d" % info["dtype"][0])
    if info["device"][0] not in (1, 3, 13):
        raise BufferError("device type %d is not reachable from the CPU" % info["device"][0])
    return Imported(capsule)


def legacy_from_dlpack(x):
    return Imported(x.__dlpack__())


def broken(**knobs):
    """A consumer asking for a versioned capsule and importing it with one knob wrong."""
    def from_dlpack(x, **_kwargs):
        return Imported(x.__dlpack__(max_version=(1, 3)), **knobs)
    return from_dlpack


def always_copies(x, *, device=None, copy=None):
    return good_from_dlpack(x, copy=True)


def never_copies(x, *, device=None, copy=None):
    return good_from_dlpack(x, copy=None)


def value_errors(x, *, device=None, copy=None):
    try:
        return good_from_dlpack(x, device=device, copy=copy)
    except Exception as e:  # noqa: BLE001 - the deliberately wrong class
        raise ValueError(str(e))


def returns_the_capsule(x, **_kwargs):
    return x.__dlpack__(max_version=(1, 3))  # "accepts" anything, consumes nothing


def managed_of(capsule):
    return DLManagedTensorVersioned.from_address(capsule_pointer(capsule, "dltensor_versioned"))


def ignores_byte_offset(x, **_kwargs):
    return Imported(x.__dlpack__(max_version=(1, 3)), ignore_byte_offset=True)


def refuses_pinned(x, **kwargs):
    if tuple(x.__dlpack_device__())[0] != 1:
        raise BufferError("only kDLCPU")
    return good_from_dlpack(x, **kwargs)


def copies_pinned(x, **_kwargs):
    return good_from_dlpack(x, copy=True)


class Zeros:
    def __init__(self):
        self.values = (ctypes.c_float * 6)()
        self.__array_interface__ = {"shape": (2, 3), "typestr": "<f4", "version": 3, "strides": None,
                                    "data": (address_of(self.values), False)}


def zeros_instead(x, **_kwargs):
    good_from_dlpack(x)  # imports and drops it: the right shape, but the values are zeros
    return Zeros()


def never_deletes(x, **_kwargs):
    capsule = x.__dlpack__(max_version=(1, 3))
    _api.PyCapsule_SetName(capsule, ctypes.cast(NAMES[b"used_dltensor_versioned"], ctypes.c_void_p))
    return object()  # consumed, and the deleter is never called


def deletes_then_raises(x, **_kwargs):
    capsule = x.__dlpack__(max_version=(1, 3))
    managed_of(capsule).deleter(capsule_pointer(capsule, "dltensor_versioned"))
    raise BufferError("refused (after running the deleter of a capsule it did not consume)")


class ConsumerProbes(unittest.TestCase):
    def test_pyckeywords_device_and_copy(self):
        good = consumer_results(good_from_dlpack, "keywords")
        self.assertEqual(worst(good, "PYC-KEYWORDS"), "pass")
        self.assertEqual(good.counts["PYC-KEYWORDS"], {"pass": 5})
        for fn, why in ((legacy_from_dlpack, "raised TypeError"),
                        (always_copies, "copy=False) copied"),
                        (never_copies, "must always copy")):
            with self.subTest(fn=fn.__name__):
                results = consumer_results(fn, "keywords")
                self.assertEqual(worst(results, "PYC-KEYWORDS"), "violation")
                self.assertIn(why, results.example["PYC-KEYWORDS"])

    def test_pycerrorclass_the_standards_exception_classes(self):
        kinds = [k for k in check.PROBES if k.startswith("error-")]
        good = consumer_results(good_from_dlpack, *kinds)
        self.assertEqual(worst(good, "PYC-ERROR-CLASS"), "pass")
        self.assertEqual(good.counts["PYC-ERROR-CLASS"], {"pass": len(kinds)})
        self.assertEqual(worst(good, "PYC-DELETER-ONCE"), "pass")
        wrong = consumer_results(value_errors, *kinds)
        self.assertEqual(worst(wrong, "PYC-ERROR-CLASS"), "violation")  # BufferError not propagated
        self.assertIn("error-producer-raises", wrong.example["PYC-ERROR-CLASS"])
        self.assertEqual(consumer_results(value_errors, "error-non-producer").status["PYC-ERROR-CLASS"],
                         "warning")
        lax = consumer_results(returns_the_capsule, "error-dtype")
        self.assertEqual(worst(lax, "PYC-ERROR-CLASS"), "violation")
        self.assertIn("accepted it", lax.example["PYC-ERROR-CLASS"])

    def test_pycpinnedmanaged_to_the_cpu_zero_copy(self):
        good = consumer_results(good_from_dlpack, "pinned", "managed")
        self.assertEqual(worst(good, "PYC-PINNED-MANAGED"), "pass")
        self.assertEqual(good.counts["PYC-PINNED-MANAGED"], {"pass": 2})
        for fn, status, why in ((refuses_pinned, "warning", "raised BufferError"),
                                (copies_pinned, "warning", "imported a copy"),
                                (zeros_instead, "violation", "values")):
            with self.subTest(fn=fn.__name__):
                results = consumer_results(fn, "pinned", "managed")
                self.assertEqual(worst(results, "PYC-PINNED-MANAGED"), status)
                self.assertIn(why, results.example["PYC-PINNED-MANAGED"])

    def test_pycbyteoffset_element_zero_and_values(self):
        good = consumer_results(good_from_dlpack, "byte-offset")
        self.assertEqual(worst(good, "PYC-BYTE-OFFSET"), "pass")
        self.assertIn("right values", good.example["PYC-BYTE-OFFSET"])
        results = consumer_results(ignores_byte_offset, "byte-offset")
        self.assertEqual(worst(results, "PYC-BYTE-OFFSET"), "violation")
        self.assertIn("data + byte_offset", results.example["PYC-BYTE-OFFSET"])

    def test_pycdeleteronce_on_success_and_on_failure(self):
        good = consumer_results(good_from_dlpack, "byte-offset", "error-dtype", "error-device")
        self.assertEqual(worst(good, "PYC-DELETER-ONCE"), "pass")
        for fn, kind, why in ((never_deletes, "byte-offset", "ran 0 time(s) after the import was dropped"),
                              (deletes_then_raises, "byte-offset", "without renaming")):
            with self.subTest(fn=fn.__name__):
                results = consumer_results(fn, kind)
                self.assertEqual(worst(results, "PYC-DELETER-ONCE"), "violation")
                self.assertIn(why, results.example["PYC-DELETER-ONCE"])


class EdgeCaseProbes(unittest.TestCase):
    """The consumer rules the command had before (PYC-*): a conforming consumer passes each
    edge case, one with the matching mistake is reported."""

    def check(self, rule, kind, bad, status, why):
        self.assertEqual(worst(consumer_results(good_from_dlpack, kind), rule), "pass")
        results = consumer_results(bad, kind)
        self.assertEqual(worst(results, rule), status)
        self.assertIn(why, results.example[rule])

    def test_pycmaxversion_the_consumer_passes_max_version(self):
        self.check("PYC-MAX-VERSION", "byte-offset", legacy_from_dlpack, "warning", "called with [{}]")

    def test_pycnullstrides_legacy_null_strides_are_c_contiguous(self):
        self.check("PYC-NULL-STRIDES", "null-strides-legacy", broken(null_strides_fortran=True),
                   "violation", "strides (1, 3), expected (4, 1)")

    def test_pycnegativestrides_imported_as_they_are(self):
        self.check("PYC-NEGATIVE-STRIDES", "negative-strides", broken(abs_strides=True),
                   "violation", "strides (4, 1), expected (-4, -1)")

    def test_pyczerosize_null_data_keeps_its_shape(self):
        self.check("PYC-ZERO-SIZE", "zero-size-null-data", broken(drop_zero_extents=True),
                   "violation", "shape (0,), expected (2, 0, 3)")

    def test_pycreadonly_not_imported_writable(self):
        self.check("PYC-READ-ONLY", "read-only-versioned", broken(ignore_read_only=True),
                   "violation", "as writable shared memory")

    def test_pycrename_consumed_capsules_are_renamed(self):
        self.check("PYC-RENAME", "byte-offset", broken(rename=False), "violation", "capsule names after import")


class Command(unittest.TestCase):
    def test_command_probes_run_in_subprocesses_and_the_summary_says_what_was_covered(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.run([sys.executable, "-m", "dlbridge.check", "test_check:fake_factory",
                               "--quiet", "--report-only"], capture_output=True, text=True, env=env,
                              cwd=os.path.dirname(os.path.abspath(__file__)), timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Coverage:", proc.stdout)
        for line in ("producer (PYP-*):", "consumer (PYC-*):", "keywords: copy=None/False/True",
                     "PYP-EXCHANGE-API not applicable", "stream values on kDLCPU"):
            self.assertIn(line, proc.stdout)
        rows = {l.split()[0]: l.split()[1] for l in proc.stdout.splitlines() if l.startswith(("PYP-", "PYC-"))}
        self.assertEqual(rows["PYC-KEYWORDS"], "pass")
        self.assertEqual(rows["PYC-ERROR-CLASS"], "pass")


def fake_factory():
    return [("fake cpu", FakeArray())]


fake_factory.from_dlpack = good_from_dlpack


class IterableArray(FakeArray):
    """An array that is iterable itself, element by element (as a pyarrow.Array is)."""

    def __iter__(self):
        return iter([1.0, 2.0, 3.0])


class DlpackOnly:
    """Says it is read-only only through DLPack: no flags, no readonly attribute (as nanobind's
    nb_ndarray)."""

    def __init__(self, inner):
        self._inner = inner

    def __dlpack_device__(self):
        return self._inner.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self._inner.__dlpack__(**kwargs)


def single_array_factory():
    return IterableArray()


def scalars_factory():
    return [1.0, 2.0]


def empty_factory():
    return []


def not_iterable_factory():
    return 42


def plain_factory():  # no from_dlpack anywhere: the consumer comes from --consumer or nowhere
    return [("fake cpu", FakeArray())]


def dlpack_only_factory():
    return [("read-only, said through DLPack", DlpackOnly(FakeArray(readonly=True)))]


def dlpack_only_from_dlpack(x, **kwargs):
    """A conforming consumer whose import says read-only only through its own __dlpack__."""
    return DlpackOnly(dlbridge.from_dlpack(x, **kwargs))


class FactoryContract(unittest.TestCase):
    """The command for any library (CHK-1..CHK-4): the module:factory contract, said in --help and
    in the error; the Markdown report; --consumer; read-only arrays found through DLPack."""

    def run_command(self, *args):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        return subprocess.run([sys.executable, "-m", "dlbridge.check"] + list(args),
                              capture_output=True, text=True, env=env, timeout=300,
                              cwd=os.path.dirname(os.path.abspath(__file__)))

    def test_chk1_a_single_array_is_refused_with_the_contract(self):
        target = check.make_target("test_check:single_array_factory")
        with self.assertRaises(check.FactoryError) as caught:
            list(target.matrix())  # was: iterated element by element, a false violation
        message = str(caught.exception)
        self.assertIn("returned a single array (test_check.IterableArray)", message)
        self.assertIn("[(label, array), ...]", message)
        proc = self.run_command("test_check:single_array_factory", "--quiet")
        self.assertEqual(proc.returncode, 2, proc.stdout)
        self.assertIn("returned a single array", proc.stderr)
        self.assertIn("module:factory", proc.stderr)  # the contract comes with the error
        self.assertEqual(proc.stdout, "")  # nothing was checked

    def test_chk1_other_broken_factories_are_named(self):
        for factory, why in (("scalars_factory", "item 0 is float, which has no __dlpack__"),
                             ("empty_factory", "returned no arrays"),
                             ("not_iterable_factory", "returned int, which is not an iterable"),
                             ("fake_factory.nothing", "has no attribute"),
                             ("no_such_module_here", "unknown TARGET 'no_such_module_here'")):
            with self.subTest(factory=factory):
                with self.assertRaises(check.FactoryError) as caught:
                    list(check.make_target(factory if ":" in factory or "_here" in factory
                                           else "test_check:" + factory).matrix())
                self.assertIn(why, str(caught.exception))
        with self.assertRaises(check.FactoryError) as caught:
            check.make_target("no_such_module_here:arrays")
        self.assertIn("cannot import no_such_module_here", str(caught.exception))

    def test_chk1_labels_pairs_and_plain_arrays_both_work(self):
        self.assertEqual([label for label, _a in check.make_target("test_check:fake_factory").matrix()],
                         ["fake cpu"])
        target = check.make_target("test_check:plain_factory")
        self.assertIsNone(target.from_dlpack)

    def test_chk1_help_states_the_contract_with_an_example(self):
        proc = self.run_command("--help")
        self.assertEqual(proc.returncode, 0)
        for text in ("module:factory", "(label, array)", "a single array is refused",
                     "--consumer MODULE:ATTR", "def arrays():", "--markdown FILE", "Exit status"):
            self.assertIn(text, proc.stdout)

    def test_chk2_markdown_report_to_paste_into_an_issue(self):
        target = check.make_target("test_check:fake_factory")
        results = check.check(target)  # in this process
        report = check.markdown_report(target, results, "python3 -m dlbridge.check x:y")
        lines = report.splitlines()
        self.assertTrue(lines[0].startswith("## DLPack conformance of test_check:fake_factory"))
        self.assertIn("- command: `python3 -m dlbridge.check x:y`", lines)
        self.assertIn("consumer checked: `test_check.good_from_dlpack`", report)
        self.assertIn("- Python %s" % sys.version.split()[0], report)
        result = [l for l in lines if l.startswith("**Result:")]
        self.assertEqual(len(result), 1)
        self.assertIn("<details><summary>Every rule", report)
        self.assertIn("| PYC-KEYWORDS | pass |", report)
        # Findings come first, each with its example and the standard's rule.
        target = FakeTarget([("claims cuda", ClaimsCuda())], from_dlpack=None)
        results = check.check(target)
        report = check.markdown_report(target, results, "cmd", allowed={"PYP-DLPACK-DEVICE"})
        findings = report.split("<details>")[0]
        self.assertIn("| PYP-DLPACK-DEVICE | violation (allowed) |", findings)
        self.assertIn("array API __dlpack_device__", findings)
        self.assertIn("consumer checked: `none", report)

    def test_chk2_the_command_prints_it_or_writes_it(self):
        proc = self.run_command("test_check:fake_factory", "--quiet", "--markdown", "-")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith("## DLPack conformance"), proc.stdout[:200])
        self.assertIn("- command: `python3 -m dlbridge.check test_check:fake_factory --quiet "
                      "--markdown -`", proc.stdout)
        self.assertNotIn("Coverage:", proc.stdout)  # not the text table as well

    def test_chk3_consumer_names_a_from_dlpack_that_lives_elsewhere(self):
        target = check.make_target("test_check:plain_factory", consumer="test_check:good_from_dlpack")
        self.assertIs(target.from_dlpack, good_from_dlpack)
        self.assertEqual(check.make_target("numpy", consumer="test_check:legacy_from_dlpack").from_dlpack,
                         legacy_from_dlpack)
        with self.assertRaises(check.FactoryError) as caught:
            check.make_target("test_check:plain_factory", consumer="test_check:FakeArray.nothing")
        self.assertIn("--consumer", str(caught.exception))
        # The probes' subprocesses get it too.
        proc = self.run_command("test_check:plain_factory", "--quiet", "--consumer",
                                "test_check:good_from_dlpack")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        rows = {l.split()[0]: l.split()[1] for l in proc.stdout.splitlines() if l.startswith("PYC-")}
        self.assertEqual(rows["PYC-KEYWORDS"], "pass")
        self.assertEqual(rows["PYC-BYTE-OFFSET"], "pass")
        proc = self.run_command("test_check:plain_factory", "--quiet")
        self.assertIn("PYC-KEYWORDS           not applicable", proc.stdout)
        proc = self.run_command("test_check:plain_factory", "--consumer", "test_check:nowhere")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--consumer 'test_check:nowhere'", proc.stderr)

    def test_chk4_read_only_is_found_through_dlpack(self):
        target = check.make_target("test_check:dlpack_only_factory")
        results = check.Results(list(dlbridge._checker_rules()) + list(check.PY_RULES))
        check.check_producer(target, results, lambda _msg: None)
        self.assertEqual(worst(results, "PYP-READ-ONLY"), "pass")  # was: not exercised
        self.assertEqual(worst(consumer_results(dlpack_only_from_dlpack, "read-only-versioned"),
                               "PYC-READ-ONLY"), "pass")  # was: a false violation

if __name__ == "__main__":
    unittest.main()
