"""The GPU check script (tests/gpu/run.sh and its Python parts) cannot run here, so what can be
checked without a GPU is: run.sh and the Python files parse, and tests/gpu/copies.py's copy
rows and timing code run end to end against the fake CUDA driver (--fake), values checked
(spec/python.md PY-65)."""
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import unittest

from test_streams import switched_off

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GPU = os.path.join(ROOT, "tests", "gpu")


class GpuScript(unittest.TestCase):
    def test_py65_the_gpu_scripts_parse(self):
        bash = shutil.which("bash")
        if bash is None:
            self.skipTest("no bash to parse tests/gpu/run.sh")
        subprocess.run([bash, "-n", os.path.join(GPU, "run.sh")], check=True)
        for name in ("interop.py", "copies.py"):
            with self.subTest(name=name):
                py_compile.compile(os.path.join(GPU, name), doraise=True,
                                   cfile=os.path.join(tempfile.gettempdir(), name + "c"))

    def test_py65_the_gpu_copy_check_runs_against_the_fake_driver(self):
        if switched_off("cuda"):
            self.skipTest("this build has DLBRIDGE_WITH_CUDA=OFF: no fake driver is loaded")
        fake = os.environ.get("DLBRIDGE_FAKE_CUDA_DRIVER")
        if not fake:
            self.fail("DLBRIDGE_FAKE_CUDA_DRIVER is not set: run this file through ctest "
                      "(python.test_gpu_script)")
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "report.md")
            proc = subprocess.run([sys.executable, os.path.join(GPU, "copies.py"), "--fake", fake,
                                   "--report", report], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stdout)
            with open(report, encoding="utf-8") as f:
                text = f.read()
        for name in ("copy D2H", "copy H2D", "copy D2D", "no device allocation left",
                     "timing: exchanges", "timing: D2H copy bandwidth"):
            with self.subTest(row=name):
                self.assertRegex(text, r"\| %s[^|]*\| PASS \|" % name)
        self.assertRegex(text, r"\| np\.from_dlpack\(dlbridge GPU tensor, device='cpu'\) \| "
                               r"(PASS|skip) \|")
        self.assertIn("FAKE DRIVER", text)
        self.assertIn("| dlbridge.Tensor -> dlbridge (fake) | 4 KiB | yes |", text)
        self.assertIn("| 64 KiB |", text)


if __name__ == "__main__":
    unittest.main()
