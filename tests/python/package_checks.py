"""Packaging checks run by ctest (spec/python.md PY-31..PY-33; python/CMakeLists.txt):

  pip-install-venv    PY-31: `pip install` of the sdist of a clean copy of the tree, in a fresh venv
  cmake-install       PY-32: `cmake --install` puts the package where the interpreter imports
  venv-interpreter    PY-33: configuring inside a venv builds for the venv's interpreter

Each prints what it does, exits 1 with a message on a failure and 77 (ctest's skip) when the
machine lacks something the check needs (ensurepip, setuptools, NumPy)."""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile

SKIP = 77
PACKAGE_FILES = ("__init__.py", "dlpack_ctypes.py", "vtk.py", "__init__.pyi", "_dlbridge.pyi",
                 "py.typed") + tuple(
    os.path.join("check", name) for name in sorted(os.listdir(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "dlbridge", "check")))
    if name.endswith(".py"))
# Environment that would let a check find the package or the build tree by accident.
LEAKY_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV",
             "LD_LIBRARY_PATH", "PIP_REQUIRE_VIRTUALENV", "PIP_USER", "PIP_TARGET", "PIP_PREFIX")
PRINT_PLATLIB = "import sysconfig; print(sysconfig.get_path('platlib'))"


class Skip(Exception):
    pass


class Failure(Exception):
    pass


def run(command, **kwargs):
    print("+ " + " ".join(shlex.quote(str(c)) for c in command), flush=True)
    return subprocess.run([str(c) for c in command], **kwargs)


def check_run(command, what, **kwargs):
    """Runs `command`; its output is shown, and a non-zero exit is a failure named `what`."""
    result = run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    print(result.stdout, flush=True)
    if result.returncode != 0:
        raise Failure("%s failed (exit %d); its output is above" % (what, result.returncode))
    return result.stdout


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env.update(extra)
    return env


def venv_python(venv):
    return os.path.join(venv, "Scripts" if os.name == "nt" else "bin",
                        "python.exe" if os.name == "nt" else "python")


def make_venv(venv, with_pip):
    command = [sys.executable, "-m", "venv", "--system-site-packages"]
    if not with_pip:
        command.append("--without-pip")
    result = run(command + [venv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print(result.stdout)
        raise Skip("`%s -m venv` does not work here (Debian: apt-get install python3-venv)"
                   % sys.executable)
    return venv_python(venv)


def can_import(python, module):
    return run([python, "-I", "-c", "import " + module], env=clean_env(),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def source_files(source):
    """The tree as a clean checkout would have it: tracked files plus untracked ones git does
    not ignore (so no build/, .deps/ or installed eggs); without git, a walk skipping those."""
    try:
        out = subprocess.run(["git", "-C", source, "ls-files", "-co", "--exclude-standard", "-z"],
                             check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        return [f for f in out.decode("utf-8").split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for root, dirs, names in os.walk(source):
        rel_root = os.path.relpath(root, source)
        dirs[:] = [d for d in dirs if not (d.startswith(".git") or d.endswith(".egg-info") or
                                           (rel_root == "." and (d.startswith("build") or
                                                                 d in (".deps", "out"))))]
        # A git worktree's .git is a file naming its gitdir (unreadable where git is not, as in
        # scripts/test-newest's root): not part of a clean copy either.
        files += [os.path.normpath(os.path.join(rel_root, n)) for n in names
                  if not (rel_root == "." and n == ".git")]
    return files


def copy_tree(source, dest):
    count = 0
    for rel in source_files(source):
        src = os.path.join(source, rel)
        if not os.path.lexists(src) or (os.path.isdir(src) and not os.path.islink(src)):
            continue  # deleted in the work tree, or a submodule's directory
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
        count += 1
    for leftover in ("build", ".deps", ".git"):
        if os.path.exists(os.path.join(dest, leftover)):
            raise Failure("the clean copy of %s has %s/; the copy would not be clean"
                          % (source, leftover))
    for required in ("pyproject.toml", "setup.py", "python/dlbridge/py.typed"):
        if not os.path.isfile(os.path.join(dest, required)):
            raise Failure("the clean copy of %s lacks %s (not tracked, or ignored by git?)"
                          % (source, required))
    print("copied %d files of %s to %s" % (count, source, dest), flush=True)


# Run by the installed interpreter, from a directory outside the tree, with no PYTHONPATH.
# argv[1] is the directory the package must be in; argv[2] is "static" (a wheel: no
# libdlbridge.so may be loaded) or "installed" (one loaded must come from under argv[3]).
IMPORT_CHECK = r'''
import ctypes, importlib.metadata, os, sys
import dlbridge
expected_dir, lib_rule, lib_root = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
package = os.path.dirname(os.path.realpath(dlbridge.__file__))
assert package == os.path.realpath(os.path.join(expected_dir, "dlbridge")), \
    "dlbridge imported from %s, not from %s" % (package, expected_dir)
for name in @FILES@:
    assert os.path.isfile(os.path.join(package, name)), "%s is not in %s" % (name, package)
maps = open("/proc/self/maps").read() if os.path.exists("/proc/self/maps") else ""
libs = {line.split()[-1] for line in maps.splitlines() if "libdlbridge" in line}
if lib_rule == "static":
    assert not libs, "the wheel's module loaded %s; it must link dlbridge statically" % libs
else:
    assert all(os.path.realpath(l).startswith(lib_root + os.sep) for l in libs), \
        "libdlbridge came from %s, not from the install under %s" % (libs, lib_root)

import numpy as np
a = np.arange(12, dtype=np.float32).reshape(3, 4)
md = dlbridge.MemoryDescriptor(a.ctypes.data, a.nbytes, "host")
md.SetOwner(a)
t = dlbridge.Tensor(md, "float32", a.shape)
b = np.from_dlpack(t)
assert b.ctypes.data == a.ctypes.data, "np.from_dlpack copied"
assert np.array_equal(b, np.arange(12, dtype=np.float32).reshape(3, 4)), b
a[0, 0] = -1.0
assert b[0, 0] == -1.0, "a write to the source array is not seen through NumPy's import"
back = dlbridge.from_dlpack(a)
assert (back.descriptor.GetPointer(), back.shape, back.dl_dtype) == (a.ctypes.data, (3, 4), (2, 32, 1))
# A write through dlbridge's import of the array (at its pointer) shows in both arrays.
ctypes.c_float.from_address(back.descriptor.GetPointer() + back.byte_offset + 6 * 4).value = 100.0
assert a[1, 2] == 100.0 and b[1, 2] == 100.0, "a write through dlbridge's import is not seen"
if b.flags.writeable:  # NumPy >= 2 (1.x imports are read-only)
    b[2, 3] = 7.0
    assert a[2, 3] == 7.0, "a write through NumPy's import is not seen by the source array"
del t, b, back
print("ok: dlbridge %s from %s, zero-copy with NumPy %s"
      % (dlbridge.__version__, dlbridge.__file__, np.__version__))
if lib_rule == "static":
    assert importlib.metadata.version("dlbridge") == dlbridge.__version__, \
        (importlib.metadata.version("dlbridge"), dlbridge.__version__)
'''.replace("@FILES@", repr(PACKAGE_FILES))


def pip_install_venv(args, tmp):
    python = make_venv(os.path.join(tmp, "venv"), with_pip=True)
    for module in ("pip", "setuptools", "numpy"):
        if not can_import(python, module):
            raise Skip("the venv's interpreter cannot import %s (Debian: apt-get install "
                       "python3-%s)" % (module, module))
    tree = os.path.join(tmp, "tree")
    copy_tree(args.source, tree)
    # Installed from the sdist the tree makes, so that MANIFEST.in must list every file the
    # build needs (a tree-only file would build here and fail for the sdist's users).
    dist = os.path.join(tmp, "dist")
    check_run([python, "setup.py", "-q", "sdist", "--formats=gztar", "-d", dist],
              "making the sdist", env=clean_env(), cwd=tree)
    archives = glob.glob(os.path.join(dist, "*.tar.gz"))
    if len(archives) != 1:
        raise Failure("expected one sdist in %s, found %s" % (dist, archives))
    with tarfile.open(archives[0]) as archive:
        top = {name.split("/", 1)[0] for name in archive.getnames()}
        if len(top) != 1:
            raise Failure("the sdist %s has %d top-level folders, not one" % (archives[0], len(top)))
        archive.extractall(tmp)
    source = os.path.join(tmp, top.pop())
    marker = "-DDLBRIDGE_PY31_CMAKE_ARGS=passed"  # CMAKE_ARGS must reach CMake's configure
    env = clean_env(DLBRIDGE_DLPACK_INCLUDE_DIR=args.dlpack_include, CMAKE_ARGS=marker,
                    PATH=os.path.dirname(args.cmake) + os.pathsep + os.environ.get("PATH", ""))
    check_run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "-v", source],
              "pip install", env=env, cwd=tmp)
    caches = glob.glob(os.path.join(source, "build", "*", "cmake", "CMakeCache.txt"))
    if len(caches) != 1:
        raise Failure("expected one CMake build under setuptools' build_temp in %s/build, found "
                      "%s" % (source, caches))
    with open(caches[0], encoding="utf-8") as f:
        if "DLBRIDGE_PY31_CMAKE_ARGS:UNINITIALIZED=passed" not in f.read():
            raise Failure("CMAKE_ARGS (%s) did not reach CMake (%s)" % (marker, caches[0]))
    site = check_run([python, "-I", "-c", PRINT_PLATLIB], "asking the venv for its platlib",
                     env=clean_env()).strip()
    if not os.path.realpath(site).startswith(os.path.realpath(tmp) + os.sep):
        raise Failure("the venv's platlib %s is outside the venv" % site)
    elsewhere = os.path.join(tmp, "elsewhere")
    os.makedirs(elsewhere)
    check_run([python, "-I", "-c", IMPORT_CHECK, site, "static", site],
              "importing the installed dlbridge", env=clean_env(), cwd=elsewhere)


def cmake_install(args, tmp):
    # 1. The default install directory, under the interpreter's install prefix, must be a
    #    directory on its sys.path: its platlib.
    platlib = os.path.normpath(sysconfig.get_path("platlib"))
    default = os.path.normpath(args.default_dir)
    if not platlib.endswith(os.sep + default):
        raise Failure("the default DLBRIDGE_PYTHON_INSTALL_DIR %s is not where %s installs "
                      "packages (%s)" % (args.default_dir, sys.executable, platlib))
    prefix = platlib[:-len(default) - 1]
    if prefix not in (os.path.normpath(sys.exec_prefix),
                      os.path.normpath(os.path.join(sys.exec_prefix, "local"))):
        raise Failure("%s = <%s>/%s: that prefix is neither sys.exec_prefix nor its local/"
                      % (platlib, prefix, default))
    if platlib not in [os.path.normpath(p) for p in sys.path]:
        raise Failure("%s (prefix %s + the default %s) is not on %s's sys.path %s"
                      % (platlib, prefix, default, sys.executable, sys.path))
    print("ok: the default %s + prefix %s = %s, on sys.path" % (default, prefix, platlib))

    # 2. `cmake --install` into a temporary prefix puts every file there, and the installed
    #    module imports from it (its RPATH finds the installed libdlbridge, if shared).
    root = os.path.join(tmp, "prefix")
    command = [args.cmake, "--install", args.build, "--prefix", root]
    if args.config:
        command += ["--config", args.config]
    check_run(command, "cmake --install")
    target = os.path.join(root, args.install_dir)
    package = os.path.join(target, "dlbridge")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    missing = [n for n in PACKAGE_FILES + ("_dlbridge" + suffix,)
               if not os.path.isfile(os.path.join(package, n))]
    if missing:
        found = sorted(os.path.relpath(os.path.join(d, f), root)
                       for d, _, fs in os.walk(root) for f in fs)
        raise Failure("not installed in %s: %s; the install has %s" % (package, missing, found))
    if can_import(sys.executable, "numpy"):
        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(elsewhere)
        script = "import sys; sys.path.insert(0, sys.argv[1])\n" + IMPORT_CHECK
        check_run([sys.executable, "-I", "-c", script, target, "installed", root],
                  "importing the installed dlbridge", env=clean_env(), cwd=elsewhere)
    else:
        print("NumPy is missing: the installed module's import is not checked")


def venv_interpreter(args, tmp):
    venv = os.path.join(tmp, "venv")
    python = make_venv(venv, with_pip=False)
    expected = check_run([python, "-I", args.platlib_script], "platlib.py in the venv",
                         env=clean_env()).splitlines()[0]
    venv_site = check_run([python, "-I", "-c", PRINT_PLATLIB], "asking the venv for its platlib",
                          env=clean_env()).strip()
    if os.path.normpath(os.path.join(venv, expected)) != os.path.normpath(venv_site):
        raise Failure("platlib.py says %s, but the venv installs into %s" % (expected, venv_site))
    bin_dir = os.path.dirname(python)
    path = os.environ.get("PATH", "")
    cases = [("VIRTUAL_ENV set", clean_env(VIRTUAL_ENV=venv, PATH=bin_dir + os.pathsep + path)),
             ("the venv's python3 first on PATH, VIRTUAL_ENV unset",
              clean_env(PATH=bin_dir + os.pathsep + path))]
    for i, (what, env) in enumerate(cases):
        build = os.path.join(tmp, "build%d" % i)
        command = [args.cmake, "-S", args.source, "-B", build, "-DDLBRIDGE_BUILD_PYTHON=ON",
                   "-DDLBRIDGE_BUILD_TESTS=OFF", "-DDLBRIDGE_BUILD_EXAMPLES=OFF",
                   "-DDLBRIDGE_BUILD_DOCS=OFF", "-DDLBRIDGE_INSTALL=ON",
                   "-DDLBRIDGE_DLPACK_INCLUDE_DIR=" + args.dlpack_include]
        if args.generator:
            command += ["-G", args.generator]
        log = check_run(command, "configuring with " + what, env=env, cwd=tmp)
        cache = {}
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                name, sep, value = line.rstrip("\n").partition("=")
                if sep and not line.startswith(("#", "//")):
                    cache[name.split(":")[0]] = value
        # FindPython3 keeps what it found out of the cache: python/CMakeLists.txt's message.
        chosen = re.search(r"dlbridge: Python module for (.*) \(", log)
        chosen = chosen.group(1) if chosen else ""
        if not os.path.abspath(chosen).startswith(os.path.abspath(venv) + os.sep):
            raise Failure("%s: CMake chose %r, not the venv's interpreter in %s"
                          % (what, chosen, venv))
        if cache.get("DLBRIDGE_PYTHON_INSTALL_DIR") != expected:
            raise Failure("%s: DLBRIDGE_PYTHON_INSTALL_DIR is %r, not the venv's %r"
                          % (what, cache.get("DLBRIDGE_PYTHON_INSTALL_DIR"), expected))
        print("ok (%s): %s, install dir %s" % (what, chosen, expected), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="check", required=True)
    p = sub.add_parser("pip-install-venv")
    p.add_argument("--source", required=True)
    p.add_argument("--dlpack-include", required=True)
    p.add_argument("--cmake", required=True)
    p = sub.add_parser("cmake-install")
    p.add_argument("--build", required=True)
    p.add_argument("--cmake", required=True)
    p.add_argument("--config", default="")
    p.add_argument("--install-dir", required=True, help="DLBRIDGE_PYTHON_INSTALL_DIR")
    p.add_argument("--default-dir", required=True, help="its default (python/platlib.py)")
    p = sub.add_parser("venv-interpreter")
    p.add_argument("--source", required=True)
    p.add_argument("--dlpack-include", required=True)
    p.add_argument("--cmake", required=True)
    p.add_argument("--generator", default="")
    p.add_argument("--platlib-script", required=True)
    args = parser.parse_args()
    checks = {"pip-install-venv": pip_install_venv, "cmake-install": cmake_install,
              "venv-interpreter": venv_interpreter}
    tmp = tempfile.mkdtemp(prefix="dlbridge-%s-" % args.check)
    try:
        checks[args.check](args, tmp)
    except Skip as e:
        print("SKIPPED: " + str(e))
        return SKIP
    except Failure as e:
        print("FAILED: " + str(e))
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASSED: " + args.check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
