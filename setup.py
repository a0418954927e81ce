"""Builds the dlbridge Python package with CMake; pyproject.toml holds the metadata.

`pip install .` runs build_ext below: it configures this source tree with CMake in setuptools'
build_temp, builds only the target dlbridge_python (libdlbridge linked in statically, so the
installed module needs nothing else), and copies _dlbridge*.so into the wheel beside the
package's .py/.pyi files (which build_py copies from python/dlbridge/, and BuildPy adds the
bridges' modules from bridges/<name>/python/dlbridge/).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def read_version():
    """The version written once in include/dlbridge/version.h (CMake reads it there too)."""
    header = ROOT / "include" / "dlbridge" / "version.h"
    text = header.read_text(encoding="utf-8")
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        match = re.search(r"^\s*#\s*define\s+DLBRIDGE_VERSION_%s\s+(\d+)" % part, text, re.M)
        if match is None:
            raise RuntimeError("dlbridge: %s has no DLBRIDGE_VERSION_%s" % (header, part))
        parts.append(match.group(1))
    return ".".join(parts)


class BuildPy(build_py):
    """build_py, plus the bridges' pure-Python modules: each bridge keeps its Python side in
    its own folder (bridges/<name>/python/dlbridge/*.py, e.g. dlbridge.vtk), and the wheel
    puts them in the dlbridge package beside python/dlbridge/'s files."""

    def run(self):
        super().run()
        for source in sorted(ROOT.glob("bridges/*/python/dlbridge/*.py")):
            target = Path(self.build_lib) / "dlbridge" / source.name
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))


class CMakeExtension(Extension):
    """An extension CMake builds: no sources for setuptools to compile."""

    def __init__(self, name, target):
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("dlbridge: building the Python module needs cmake (>= 3.25) on "
                               "PATH (apt-get install cmake, or your platform's package)")
        config = "Debug" if self.debug else "Release"
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)

        # PY-31: this tree, for the interpreter running pip, libdlbridge static inside the
        # extension, only dlbridge_python built; the wheel gets the .so beside the package files.
        configure = [
            cmake, "-S", str(ROOT), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=" + config,
            "-DPython3_EXECUTABLE=" + sys.executable,  # the interpreter running pip
            "-DDLBRIDGE_BUILD_PYTHON=ON",
            # A static libdlbridge (already position-independent) inside the extension: the
            # wheel is self-contained, with no shared library or RPATH to get right.
            "-DBUILD_SHARED_LIBS=OFF",
            "-DDLBRIDGE_BUILD_TESTS=OFF", "-DDLBRIDGE_BUILD_EXAMPLES=OFF",
            "-DDLBRIDGE_BUILD_BENCHMARKS=OFF", "-DDLBRIDGE_BUILD_DOCS=OFF",
            "-DDLBRIDGE_INSTALL=OFF",
            # A user's newer compiler may warn where ours does not; that must not fail pip.
            "-DDLBRIDGE_WERROR=OFF",
        ]
        dlpack = os.environ.get("DLBRIDGE_DLPACK_INCLUDE_DIR")
        if dlpack:
            configure.append("-DDLBRIDGE_DLPACK_INCLUDE_DIR=" + dlpack)
        # Ninja when it is there and nothing else was asked for (a generator is fixed at the
        # first configure of a build directory).
        if (not os.environ.get("CMAKE_GENERATOR") and shutil.which("ninja")
                and not (build_dir / "CMakeCache.txt").exists()):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))  # last: the user's word wins

        build = [cmake, "--build", str(build_dir), "--target", ext.target, "--config", config]
        if not os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL"):
            build += ["--parallel", str(self.parallel or os.cpu_count() or 1)]

        for command in (configure, build):
            print("dlbridge: " + " ".join(shlex.quote(c) for c in command), flush=True)
            subprocess.run(command, check=True)

        built = self._find_built(build_dir / "python" / "dlbridge", config)
        destination = Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, destination)

    @staticmethod
    def _find_built(package_dir, config):
        # python/CMakeLists.txt puts the module in <build>/python/dlbridge/ (multi-config
        # generators add a <config>/ level); its suffix is this interpreter's EXT_SUFFIX.
        name = "_dlbridge" + sysconfig.get_config_var("EXT_SUFFIX")
        for candidate in (package_dir / name, package_dir / config / name):
            if candidate.is_file():
                return candidate
        raise RuntimeError("dlbridge: CMake built no %s in %s; was the module built for "
                           "another interpreter?" % (name, package_dir))


setup(
    version=read_version(),
    # Here rather than in pyproject.toml's [tool.setuptools], which setuptools < 68 calls beta.
    package_dir={"": "python"},
    packages=["dlbridge", "dlbridge.check"],
    package_data={"dlbridge": ["py.typed", "*.pyi"]},
    license_files=["LICENSE"],
    zip_safe=False,
    ext_modules=[CMakeExtension("dlbridge._dlbridge", target="dlbridge_python")],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPy},
)
