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


# Each advice's triggers: Python calls that make the core raise an error carrying that advice,
# with the code expected and the runtime state each needs (the CUDA driver missing, or the fake
# driver failing cuInit with a CUresult).
MISSING = ("missing", 0)
NO_ID = "held(floats(), space='cuda').__dlpack__()"
TRIGGERS = {
    "kUseVersioned": [
        ("kReadOnly", MISSING, "held(floats(), flags=1).__dlpack__()"),
        ("kInvalidFlags", MISSING,
         "held(bytes4(), dtype=(17, 4, 1), shape=(4,), flags=4).__dlpack__()"),
    ],
    "kGiveDeviceId": [
        ("kMissingDeviceId", MISSING, NO_ID),
        ("kMissingDeviceId", ("fake", 100), NO_ID),  # CUDA_ERROR_NO_DEVICE
        ("kMissingDeviceId", ("fake", 3), NO_ID),  # CUDA_ERROR_NOT_INITIALIZED
        ("kMissingDeviceId", ("fake", 34), NO_ID),  # CUDA_ERROR_STUB_LIBRARY
    ],
}
# Runtime failures where the id was given: no advice, and no C++ API named in their words.
NO_ADVICE = [
    ("kRuntimeUnavailable", MISSING, "ordered_cuda_export()"),
    ("kNoDevice", ("fake", 100), "ordered_cuda_export()"),
    ("kRuntimeNotInitialized", ("fake", 3), "ordered_cuda_export()"),
    ("kStubLibrary", ("fake", 34), "ordered_cuda_export()"),
]

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
        out.append([getattr(e, "code", None), getattr(e, "advice", None), str(e)])
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
        # Every advice has triggers here, and every trigger an advice.
        self.assertEqual(sorted(advice for advice, _cpp, _python in table), sorted(TRIGGERS))
        by_state = {}
        for advice, _cpp, python in table:
            for code, state, call in TRIGGERS[advice]:
                by_state.setdefault(state, []).append((advice, python, code, call))
        for code, state, call in NO_ADVICE:
            by_state.setdefault(state, []).append((None, "", code, call))
        fake = os.environ.get("DLBRIDGE_FAKE_CUDA_DRIVER") and not cuda_switched_off()
        checked = 0
        total = sum(len(entries) for entries in by_state.values())
        for state, entries in by_state.items():
            if state[0] == "fake" and not fake:
                continue  # reported below: the fake CUDA driver is needed for these
            results = run_triggers(state, [call for _a, _p, _c, call in entries])
            for (advice, python, code, call), got in zip(entries, results):
                with self.subTest(advice=advice, call=call):
                    self.assertIsNotNone(got, "%s raised nothing" % call)
                    got_code, got_advice, message = got
                    self.assertEqual(got_code, code, message)
                    self.assertEqual(got_advice, advice, message)
                    # The advice attached: the Python wording ends the message, no C++ one left.
                    self.assertTrue(message.endswith(python), message)
                    self.assertNotIn("::", message)
                    self.assertNotIn("ToDLPackVersioned", message.split(":", 1)[1])
                    checked += 1
        if not fake:
            self.skipTest("the fake CUDA driver is not loadable ($DLBRIDGE_FAKE_CUDA_DRIVER unset: "
                          "run through ctest; or CUDA switched off): %d of %d triggers checked"
                          % (checked, total))
        self.assertEqual(checked, total)

    def test_py42_advice_is_a_value_whatever_the_message_says(self):
        # The Python advice is written from the error's advice value, never found in its text:
        # a reason reworded to name no C++ API still gets it, and a reason that happens to
        # contain the C++ wording without carrying the advice is left as it is.
        rows = {advice: (cpp, python) for advice, cpp, python in dlbridge._python_advice()}
        read_only = 16  # ErrorCode::kReadOnly
        with self.assertRaises(BufferError) as cm:
            dlbridge._raise_error(read_only, "reworded: the legacy struct has no bit for it", 1, "")
        self.assertEqual(str(cm.exception), "reworded: the legacy struct has no bit for it"
                         + rows["kUseVersioned"][1])
        self.assertEqual(cm.exception.advice, "kUseVersioned")
        self.assertEqual(cm.exception.code, "kReadOnly")
        with self.assertRaises(BufferError) as cm:
            dlbridge._raise_error(read_only, "quoted; use ToDLPackVersioned", 0, "")
        self.assertEqual(str(cm.exception), "quoted; use ToDLPackVersioned")
        self.assertIsNone(cm.exception.advice)
        with self.assertRaises(BufferError) as cm:
            dlbridge._raise_error(11, "no ordinal", 2, "kDLROCM")  # kMissingDeviceId
        self.assertEqual(str(cm.exception), "no ordinal; pass device=(kDLROCM, 0) to dlbridge.Tensor")
        # A real refusal carries its advice as the exception's `advice` attribute.
        values = (ctypes.c_float * 4)()
        with self.assertRaises(BufferError) as cm:
            held(values, flags=dlbridge.FLAG_READ_ONLY).__dlpack__()
        self.assertEqual(cm.exception.advice, "kUseVersioned")
        self.assertTrue(str(cm.exception).endswith(rows["kUseVersioned"][1]), str(cm.exception))


if __name__ == "__main__":
    unittest.main()
