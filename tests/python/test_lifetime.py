"""Lifetime in Python (spec/python.md, PY-50..PY-55): the hold exports rely on, pending
exceptions across releases, interpreter shutdown, garbage collection, the hold-less opt-in
and consumed descriptors."""
import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading
import unittest
import weakref

import numpy as np

import dlbridge
from support import (DELETER, DLManagedTensorVersioned, HandBuilt, ReleaseCounter, address_of,
                     capsule_pointer, exchange_api, host_tensor, owned)

_api = ctypes.pythonapi
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_USED = ctypes.create_string_buffer(b"used_dltensor_versioned")


def floats(n):
    return (ctypes.c_float * n)(*range(n))


def take_managed(capsule):
    """Consumes a versioned capsule as a C consumer would: the managed tensor's address."""
    pointer = capsule_pointer(capsule, "dltensor_versioned")
    _api.PyCapsule_SetName(capsule, _USED)
    return DLManagedTensorVersioned.from_address(pointer)


def delete(managed):
    managed.deleter(ctypes.pointer(managed))


class Marker:
    pass


class Counted:
    """Counts the ends of the markers it makes (weakref.finalize), to put into owner cycles."""

    def __init__(self):
        self.ends = []

    @property
    def marker(self):
        marker = Marker()
        weakref.finalize(marker, self.ends.append, 1)
        return marker


class LiveExports(unittest.TestCase):
    """PY-50: a tensor's hold cannot be moved out, replaced or cleared while exports live."""

    def hold_changes(self, t):
        d = t.descriptor
        return {"Tensor(descriptor)": lambda: dlbridge.Tensor(t.descriptor, "float32", (4,)),
                "SetReleaseAddress": lambda: d.SetReleaseAddress(0, 0),
                "SetOwner": lambda: d.SetOwner(None),
                "TakeRelease": d.TakeRelease}

    def test_py50_view_cannot_move_the_hold_while_numpy_reads_the_memory(self):
        counter = ReleaseCounter()
        values = floats(4)
        t = host_tensor(values, counter=counter)
        a = np.from_dlpack(t)
        for name, call in self.hold_changes(t).items():
            with self.subTest(call=name), self.assertRaises(BufferError) as cm:
                call()
            self.assertIn("1 live export", str(cm.exception))
            self.assertIn(name, str(cm.exception))
        self.assertEqual(counter.calls, 0)
        self.assertTrue(t.descriptor.HasOwnership())
        self.assertEqual(a.tolist(), [0.0, 1.0, 2.0, 3.0])
        # The description may still change: exports carry their own copy of it.
        t.descriptor.SetSizeInBytes(12)
        t.descriptor.Set(address_of(values), 16, "host")
        del a
        gc.collect()
        moved = dlbridge.Tensor(t.descriptor, "float32", (4,))  # nothing relies on it now
        self.assertFalse(t.descriptor.HasOwnership())
        self.assertTrue(moved.descriptor.HasOwnership())
        self.assertEqual(counter.calls, 0)
        del moved
        self.assertEqual(counter.calls, 1)

    def test_py50_every_export_kind_is_counted_until_its_deleter_runs(self):
        counter = ReleaseCounter()
        t = host_tensor(floats(4), counter=counter)
        api = exchange_api()
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        self.assertEqual(api.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out)), 0)
        exports = [t.__dlpack__(), t.__dlpack__(max_version=(1, 3))]  # unconsumed capsules
        for live in (3, 2, 1):
            with self.assertRaises(BufferError) as cm:
                t.descriptor.SetOwner(None)
            self.assertIn("%d live export" % live, str(cm.exception))
            if live == 3:
                out.contents.deleter(out)  # the exchange API's export
            else:
                exports.pop()
        del exports
        managed = take_managed(t.__dlpack__(max_version=(1, 3)))
        with self.assertRaises(BufferError):
            t.descriptor.TakeRelease()
        worker = threading.Thread(target=delete, args=(managed,))  # deleters run on any thread
        worker.start()
        worker.join()
        release, context = t.descriptor.TakeRelease()
        self.assertEqual((release, context), (counter.address, 1234))
        self.assertEqual(counter.calls, 0)

    def test_py50_copies_do_not_rely_on_the_hold(self):
        counter = ReleaseCounter()
        t = host_tensor(floats(4), counter=counter)
        copied = t.__dlpack__(max_version=(1, 3), copy=True)
        t.descriptor.SetOwner(None)  # only zero-copy exports are counted
        self.assertEqual(counter.calls, 1)
        self.assertEqual(dlbridge.from_dlpack(copied).shape, (4,))


class PendingExceptions(unittest.TestCase):
    """PY-51: a release run by a dealloc or deleter while an exception propagates keeps it."""

    @staticmethod
    def dropped_while_raising(make):
        # list() drops its partial result with the generator's exception pending.
        def items():
            yield make()
            raise KeyError("kept")
        list(items())

    def test_py51_tensor_and_descriptor_drops_keep_the_pending_exception(self):
        counter = ReleaseCounter()  # a ctypes release: Python code run from C

        def tensor():
            return host_tensor(floats(4), counter=counter)

        def descriptor():
            md = dlbridge.MemoryDescriptor()
            md.SetReleaseAddress(counter.address, 7)
            return md

        def capsule():
            return host_tensor(floats(4), counter=counter).__dlpack__(max_version=(1, 3))

        for make in (tensor, descriptor, capsule):
            with self.subTest(make=make.__name__):
                before = counter.calls
                with self.assertRaises(KeyError) as cm:
                    self.dropped_while_raising(make)
                self.assertEqual(cm.exception.args, ("kept",))
                self.assertEqual(counter.calls, before + 1)

    def test_py51_owner_dropped_while_raising_runs_its_finaliser_and_keeps_the_exception(self):
        ended = []

        class Owner:
            def __del__(self):
                ended.append(1)
                try:
                    raise RuntimeError("inside __del__")  # handled: must not replace KeyError
                except RuntimeError:
                    pass

        def tensor():
            values = floats(4)
            md = dlbridge.MemoryDescriptor(address_of(values), 16, "host")
            md.SetOwner(Owner())
            return dlbridge.Tensor(md, "float32", (4,))

        with self.assertRaises(KeyError) as cm:
            self.dropped_while_raising(tensor)
        self.assertEqual(cm.exception.args, ("kept",))
        self.assertEqual(ended, [1])


RACE = textwrap.dedent("""
    import ctypes, os, sys
    import numpy  # a longer finalisation: more of it for the threads to land in
    import dlbridge
    from dlbridge.dlpack_ctypes import DLManagedTensorVersioned
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    helper = ctypes.CDLL(os.environ["DLBRIDGE_PY_THREAD_HELPER"])
    helper.dlbt_call_later.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    USED = ctypes.create_string_buffer(b"used_dltensor_versioned")
    values = (ctypes.c_float * 4)()
    md = dlbridge.MemoryDescriptor(ctypes.addressof(values), 16, "host")
    md.SetOwner(values)
    t = dlbridge.Tensor(md, "float32", (4,))
    threads, spread_ns = int(sys.argv[1]), int(sys.argv[2])
    for i in range(threads):
        delay = i * spread_ns // threads
        if i % 4 == 0:  # an owner reference handed over as a release pair (MD-12)
            owner = dlbridge.MemoryDescriptor()
            owner.SetOwner([i])
            release, context = owner.TakeRelease()
            assert helper.dlbt_call_later(release, context, delay) == 0
            continue
        capsule = t.__dlpack__(max_version=(1, 3))
        pointer = api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        api.PyCapsule_SetName(capsule, USED)  # consumed: the native thread deletes it
        deleter = DLManagedTensorVersioned.from_address(pointer).deleter
        assert helper.dlbt_call_later(ctypes.cast(deleter, ctypes.c_void_p), pointer, delay) == 0
    print("spawned", flush=True)
""")


FORK = textwrap.dedent("""
    import ctypes, os, sys, time
    import dlbridge
    helper = ctypes.CDLL(os.environ["DLBRIDGE_PY_THREAD_HELPER"])
    helper.dlbt_call_later.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    owner = dlbridge.MemoryDescriptor()
    owner.SetOwner([1])
    release, context = owner.TakeRelease()
    sys.setswitchinterval(30)  # this thread keeps the GIL while it spins
    assert helper.dlbt_call_later(release, context, 10000000) == 0  # waits for the GIL from 10 ms
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        pass
    pid = os.fork()  # the native thread is counted in, waiting for the GIL; the child lacks it
    if pid == 0:
        sys.exit(0)  # a normal exit: atexit, dlbridge's hook included
    sys.setswitchinterval(0.005)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            sys.exit(os.waitstatus_to_exitcode(status))
        time.sleep(0.01)
    os.kill(pid, 9)
    print("the forked child hung at exit")
    sys.exit(3)
""")


class Shutdown(unittest.TestCase):
    """PY-52: deleters and releases racing interpreter exit on native threads."""

    def test_py52_native_threads_calling_deleters_during_exit_never_abort(self):
        helper = os.environ.get("DLBRIDGE_PY_THREAD_HELPER")
        if not helper:
            self.skipTest("DLBRIDGE_PY_THREAD_HELPER is not set (ctest sets it to the helper library)")
        runs = 50
        for run in range(runs):
            # The threads' calls spread over 5 ms from the end of the script: before, during
            # and after finalisation (without the fix, most runs abort).
            proc = subprocess.run([sys.executable, "-c", RACE, "100", "5000000"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                                  env=dict(os.environ))
            with self.subTest(run=run):
                self.assertNotIn(b"terminate", proc.stderr)
                self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
                self.assertEqual(proc.stdout, b"spawned\n")

    def test_py52_a_forked_child_does_not_wait_for_its_parents_threads_at_exit(self):
        if not os.environ.get("DLBRIDGE_PY_THREAD_HELPER") or not hasattr(os, "fork"):
            self.skipTest("needs os.fork and DLBRIDGE_PY_THREAD_HELPER (ctest sets it)")
        proc = subprocess.run([sys.executable, "-c", FORK], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=60, env=dict(os.environ))
        self.assertEqual((proc.returncode, proc.stdout), (0, b""), proc.stderr.decode(errors="replace"))


class Collection(unittest.TestCase):
    """PY-53: ownership cycles through tensors and descriptors are collected, once."""

    def setUp(self):
        gc.collect()

    def test_py53_tensor_owning_itself_is_collected_and_its_release_runs_once(self):
        counted = Counted()
        counter = ReleaseCounter()
        keeper = dlbridge.MemoryDescriptor()
        keeper.SetReleaseAddress(counter.address, 5)
        values = floats(4)
        t = dlbridge.Tensor(owned(values), "float32", (4,))
        t.descriptor.SetOwner([t, counted.marker, keeper, values])
        del t, keeper
        self.assertEqual(counted.ends, [])  # only the collector can free the cycle
        gc.collect()
        self.assertEqual(counted.ends, [1])
        self.assertEqual(counter.contexts, [5])
        gc.collect()
        self.assertEqual(counter.calls, 1)

    def test_py53_descriptor_owning_itself_is_collected(self):
        counted = Counted()
        md = dlbridge.MemoryDescriptor()
        md.SetOwner([md, counted.marker])
        view_cycle = host_tensor(floats(4))
        view = view_cycle.descriptor
        view_cycle.descriptor.SetOwner([view, counted.marker])  # through a view: its tensor
        del md, view, view_cycle
        self.assertEqual(counted.ends, [])
        gc.collect()
        self.assertEqual(counted.ends, [1, 1])

    def test_py53_subclass_instances_and_their_dict_are_collected(self):
        class Sub(dlbridge.Tensor):
            pass

        counted = Counted()
        s = Sub(owned(floats(4)), "float32", (4,))
        s.me = s
        s.descriptor.SetOwner(counted.marker)
        del s
        gc.collect()
        self.assertEqual(counted.ends, [1])

    def test_py53_a_cycle_with_a_live_export_is_kept_until_the_export_goes(self):
        counted = Counted()
        values = floats(4)
        t = dlbridge.Tensor(owned(values), "float32", (4,))
        t.descriptor.SetOwner([t, counted.marker, values])
        capsule = t.__dlpack__(max_version=(1, 3))
        del t, values
        gc.collect()
        self.assertEqual(counted.ends, [])  # the export's reference keeps the cycle alive
        imported = dlbridge.from_dlpack(capsule)
        self.assertEqual(np.from_dlpack(imported).tolist(), [0.0, 1.0, 2.0, 3.0])
        del capsule, imported
        gc.collect()
        self.assertEqual(counted.ends, [1])


class HoldlessOptIn(unittest.TestCase):
    """PY-54: exporting memory that nothing holds needs allow_unowned=True."""

    def test_py54_holdless_exports_are_refused_naming_the_keyword(self):
        values = floats(4)
        t = dlbridge.Tensor(dlbridge.MemoryDescriptor(address_of(values), 16, "host"), "float32", (4,))
        api = exchange_api()
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        exports = {"__dlpack__": t.__dlpack__, "versioned": lambda: t.__dlpack__(max_version=(1, 3)),
                   "copy": lambda: t.__dlpack__(copy=True), "__dlpack_device__": t.__dlpack_device__,
                   "numpy": lambda: np.from_dlpack(t), "from_dlpack": lambda: dlbridge.from_dlpack(t)}
        for name, export in exports.items():
            with self.subTest(export=name), self.assertRaises(BufferError) as cm:
                export()
            self.assertIn("allow_unowned=True", str(cm.exception))
            self.assertEqual(cm.exception.code, "kNoHold")
        with self.assertRaises(BufferError):
            api.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out))
        self.assertFalse(out)
        t.descriptor.SetOwner(values)  # a hold set later is seen by the next export
        self.assertEqual(np.from_dlpack(t).tolist(), [0.0, 1.0, 2.0, 3.0])

    def test_py54_the_keyword_opts_in_and_a_hold_handed_away_opts_out(self):
        values = floats(4)
        t = dlbridge.Tensor(dlbridge.MemoryDescriptor(address_of(values), 16, "host"), "float32", (4,),
                            allow_unowned=True)
        self.assertEqual(np.from_dlpack(t).tolist(), [0.0, 1.0, 2.0, 3.0])
        counter = ReleaseCounter()
        held = host_tensor(values, counter=counter)
        held.__dlpack__()  # prepared and exported with the hold
        release, context = held.descriptor.TakeRelease()
        with self.assertRaises(BufferError) as cm:
            held.__dlpack__()
        self.assertIn("allow_unowned=True", str(cm.exception))
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(release)(context)
        self.assertEqual(counter.calls, 1)
        with self.assertRaises(TypeError):
            dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32", (0,), None, 0, None, 0, True)

    def test_py54_an_import_without_a_deleter_holds_nothing_and_is_not_re_exported(self):
        producer = HandBuilt(versioned=True, strides=[1])
        producer.managed.deleter = DELETER()  # NULL: legal (IMP-3), the import holds nothing
        imported = dlbridge.from_dlpack(producer.capsule())
        self.assertFalse(imported.descriptor.HasOwnership())
        with self.assertRaises(BufferError) as cm:
            np.from_dlpack(imported)
        self.assertEqual(cm.exception.code, "kNoHold")


class ConsumedDescriptors(unittest.TestCase):
    """PY-55: a hold moves into one Tensor; a second Tensor from that descriptor is refused."""

    def test_py55_second_tensor_from_a_consumed_descriptor_is_refused(self):
        counter = ReleaseCounter()
        values = floats(4)
        md = dlbridge.MemoryDescriptor(address_of(values), 16, "host")
        md.SetReleaseAddress(counter.address, 9)
        first = dlbridge.Tensor(md, "float32", (4,))
        with self.assertRaises(BufferError) as cm:
            dlbridge.Tensor(md, "float32", (4,))
        self.assertIn("already moved into an earlier dlbridge.Tensor", str(cm.exception))
        self.assertIn("allow_unowned=True", str(cm.exception))
        unowned = dlbridge.Tensor(md, "float32", (4,), allow_unowned=True)  # deliberate
        self.assertFalse(unowned.descriptor.HasOwnership())
        md.SetOwner(values)  # a new hold: the descriptor may be used again
        second = dlbridge.Tensor(md, "float32", (4,))
        self.assertTrue(second.descriptor.HasOwnership())
        del first
        self.assertEqual(counter.calls, 1)
        plain = dlbridge.MemoryDescriptor(address_of(values), 16, "host")  # never held anything
        dlbridge.Tensor(plain, "float32", (4,))
        dlbridge.Tensor(plain, "float32", (4,))

    def test_py55_a_tensors_hold_moves_out_through_its_view_once(self):
        t = host_tensor(floats(4))
        moved = dlbridge.Tensor(t.descriptor, "float32", (4,))
        self.assertTrue(moved.descriptor.HasOwnership())
        with self.assertRaises(BufferError) as cm:
            dlbridge.Tensor(t.descriptor, "float32", (4,))
        self.assertIn("already moved", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
