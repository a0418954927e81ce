"""Facts read from their one table, never restated beside it (spec/device-map.md DEV-6,
spec/python.md PY-42): the device lists in the module's messages and in `dlbridge.check` come
from the core's device table, and every entry of the Python advice table attaches to a message
the core really raises."""
import ctypes
import glob
import json
import os
import re
import subprocess
import sys
import unittest

import dlbridge
from support import address_of

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = dlbridge._device_table()  # (device_type, name, address_arithmetic, host_accessible)


def names(pick):
    return ", ".join(name for _t, name, address, host in TABLE if pick(address, host))


def held(values, dtype="float32", shape=None, space="host", **kwargs):
    md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), space)
    md.SetOwner(values)
    return dlbridge.Tensor(md, dtype, shape or (len(values),), **kwargs)


class DeviceLists(unittest.TestCase):
    def test_dev6_python_messages_list_device_types_from_the_table(self):
        host = names(lambda _address, host: host)
        self.assertEqual(host, "kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged")
        values = (ctypes.c_float * 4)()
        with self.assertRaises(BufferError) as cm:  # __dlpack__(dl_device=...), see PY-10
            held(values).__dlpack__(dl_device=(dlbridge.kDLCUDA, 0), copy=False)
        self.assertIn("host-accessible memory (%s) reaches (kDLCPU, 0)" % host, str(cm.exception))

        class Producer:  # from_dlpack(device=...) checks what it got (see PY-34)
            def __dlpack_device__(self):
                return (dlbridge.kDLCPU, 0)

            def __dlpack__(self, **_kwargs):
                return held(values).__dlpack__()

        with self.assertRaises(BufferError) as cm:
            dlbridge.from_dlpack(Producer(), device=(dlbridge.kDLCUDA, 0), copy=False)
        self.assertIn("host-accessible memory (%s) reaches (kDLCPU, 0)" % host, str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            dlbridge.set_current_stream((dlbridge.kDLCPU, 0), 5)
        self.assertIn("(CUDA: kDLCUDA, kDLCUDAHost, kDLCUDAManaged; ROCm: kDLROCM, kDLROCMHost)",
                      str(cm.exception))

    def test_dev6_the_check_command_reads_devices_from_the_module(self):
        from dlbridge import check
        from dlbridge.check import devices
        self.assertEqual(devices._DEVICE_NAMES, {t: name for t, name, _a, _h in TABLE})
        self.assertEqual(set(devices._NO_ADDRESS_DEVICES),
                         {t for t, _n, address, _h in TABLE if not address})
        self.assertEqual(devices.HOST_ACCESSIBLE, {t for t, _n, _a, host in TABLE if host})
        for attr, name in (("KDLCPU", "kDLCPU"), ("KDLCUDA", "kDLCUDA"),
                           ("KDLCUDAHOST", "kDLCUDAHost"), ("KDLROCM", "kDLROCM"),
                           ("KDLCUDAMANAGED", "kDLCUDAManaged")):
            self.assertEqual(getattr(check, attr), getattr(dlbridge, name))
        # No module of the package writes a device type's number beside its name.
        package = os.path.dirname(os.path.abspath(check.__file__))
        for path in glob.glob(os.path.join(package, "*.py")):
            with open(path, encoding="utf-8") as f:
                self.assertIsNone(re.search(r"\b\d+\s*:\s*\"kDL", f.read()), path)


# Each advice entry's trigger: a Python call that makes the core raise that entry's code with
# a message carrying its C++ phrase, and the runtime state it needs (the CUDA driver missing,
# or the fake driver failing cuInit with a CUresult).
MISSING = ("missing", 0)
TRIGGERS = {
    ("kReadOnly", "use ToDLPackVersioned"): (MISSING, "held(floats(), flags=1).__dlpack__()"),
    ("kInvalidFlags", "use ToDLPackVersioned"):
        (MISSING, "held(bytes4(), dtype=(17, 4, 1), shape=(4,), flags=4).__dlpack__()"),
    ("kInvalidFlags", "Tensor::flags"): (MISSING, "held(floats(), flags=0x20).__dlpack__()"),
    ("kMissingDeviceId", "Tensor::device or ExportOptions::device_id"):
        (MISSING, "held(floats(), space='cuda').__dlpack__()"),
    ("kMissingDeviceId", "set Tensor::device (e.g. {"):
        (MISSING, "held(floats(), space='cuda').__dlpack__()"),
    ("kMissingDeviceId", "}) or ExportOptions::device_id"):
        (MISSING, "held(floats(), space='cuda').__dlpack__()"),
    ("kDeviceMismatch", "Tensor::device"): (MISSING, "held(floats(), device=(2, 0)).__dlpack__()"),
    ("kRuntimeUnavailable", "Tensor::device or ExportOptions::device_id"):
        (MISSING, "ordered_cuda_export()"),
    ("kNoDevice", "Tensor::device or ExportOptions::device_id"):
        (("fake", 100), "ordered_cuda_export()"),  # CUDA_ERROR_NO_DEVICE
    ("kRuntimeNotInitialized", "Tensor::device or ExportOptions::device_id"):
        (("fake", 3), "ordered_cuda_export()"),  # CUDA_ERROR_NOT_INITIALIZED
    ("kStubLibrary", "Tensor::device or ExportOptions::device_id"):
        (("fake", 34), "ordered_cuda_export()"),  # CUDA_ERROR_STUB_LIBRARY
}

# Run in a fresh interpreter (the runtime is loaded once per process): each trigger's
# exception as [code, message].
CHILD = r'''
import ctypes, json, os, sys
import dlbridge
from support import address_of
if FAIL:
    ctypes.CDLL(os.environ["DLBRIDGE_CUDA_LIBRARY"]).fake_driver_fail(b"cuInit", FAIL)
def floats():
    return (ctypes.c_float * 4)()
def bytes4():
    return (ctypes.c_ubyte * 4)()
def held(values, dtype="float32", shape=None, space="host", **kwargs):
    md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), space)
    md.SetOwner(values)
    return dlbridge.Tensor(md, dtype, shape or (len(values),), **kwargs)
def ordered_cuda_export():  # a producer stream to order after: the runtime is needed
    md = dlbridge.MemoryDescriptor(0x100000, 16, "cuda")
    md.SetOwner(sys)
    dlbridge.Tensor(md, "float32", (4,), device=(2, 0), stream=5).__dlpack__(stream=7)
out = []
for call in CALLS:
    try:
        eval(call)
        out.append(None)
    except Exception as e:
        out.append([getattr(e, "code", None), str(e)])
print("RESULT " + json.dumps(out))
'''


def run_triggers(state, calls):
    kind, fail = state
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([HERE, env.get("PYTHONPATH", "")])
    env["DLBRIDGE_CUDA_LIBRARY"] = (os.environ.get("DLBRIDGE_FAKE_CUDA_DRIVER", "") if kind == "fake"
                                    else os.path.join(HERE, "no-such-dir", "libcuda.so.1"))
    script = "FAIL = %d\nCALLS = %r\n" % (fail, calls) + CHILD
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=HERE, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise AssertionError("subprocess failed (exit %d):\n%s" % (proc.returncode, proc.stdout))
    return json.loads(lines[-1][len("RESULT "):])


def cuda_switched_off():
    """Whether this build has the CUDA backend switched off (DLBRIDGE_WITH_CUDA=OFF): every
    runtime failure is then that one message, and no fake driver can be loaded."""
    md = dlbridge.MemoryDescriptor(0x10000, 64, "cuda")
    try:
        dlbridge.Tensor(md, "float32", (16,), allow_unowned=True).__dlpack_device__()
    except BufferError as error:
        return "DLBRIDGE_WITH_CUDA=OFF" in str(error)
    return False


class PythonAdvice(unittest.TestCase):
    def test_py42_every_advice_entry_attaches(self):
        table = dlbridge._python_advice()
        # Every entry has a trigger here, and every trigger an entry.
        self.assertEqual(sorted((code, cpp) for code, cpp, _python in table), sorted(TRIGGERS))
        by_state = {}
        for code, cpp, python in table:
            state, call = TRIGGERS[(code, cpp)]
            by_state.setdefault(state, []).append((code, cpp, python, call))
        fake = os.environ.get("DLBRIDGE_FAKE_CUDA_DRIVER") and not cuda_switched_off()
        checked = 0
        for state, entries in by_state.items():
            if state[0] == "fake" and not fake:
                continue  # reported below: the fake CUDA driver is needed for these codes
            results = run_triggers(state, [call for _c, _p, _py, call in entries])
            for (code, cpp, python, call), got in zip(entries, results):
                with self.subTest(code=code, cpp=cpp):
                    self.assertIsNotNone(got, "%s raised nothing" % call)
                    got_code, message = got
                    self.assertEqual(got_code, code, message)
                    # The advice attached: the Python phrase is there and no C++ one is left.
                    self.assertIn(python, message)
                    self.assertNotIn("::", message)
                    self.assertNotIn("ToDLPackVersioned", message.split(":", 1)[1])
                    checked += 1
        if not fake:
            self.skipTest("the fake CUDA driver is not loadable ($DLBRIDGE_FAKE_CUDA_DRIVER unset: "
                          "run through ctest; or CUDA switched off): %d of %d entries checked"
                          % (checked, len(table)))
        self.assertEqual(checked, len(table))


if __name__ == "__main__":
    unittest.main()
