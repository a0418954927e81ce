"""Prints where this interpreter installs platform packages, relative to its install prefix
and with '/' separators (the default of DLBRIDGE_PYTHON_INSTALL_DIR, python/CMakeLists.txt),
then that prefix on a second line.

E.g. lib/python3.11/site-packages in a venv; lib/python3.11/dist-packages for Debian's
/usr/bin/python3, whose install prefix is /usr/local."""
import os
import sys
import sysconfig


def main():
    platlib = sysconfig.get_path("platlib")
    base = sysconfig.get_config_var("platbase") or sys.exec_prefix
    relative = os.path.relpath(platlib, base).split(os.sep)
    if relative[0] == os.pardir:
        sys.exit("platlib.py: %s is not under the interpreter's prefix %s" % (platlib, base))
    get_scheme = getattr(sysconfig, "get_default_scheme", None) or sysconfig._get_default_scheme
    # Debian's and Ubuntu's default scheme installs into {platbase}/local/...: its prefix is
    # /usr/local, the directory that sys.path searches, not /usr (see PY-32).
    if get_scheme() == "posix_local" and relative[0] == "local" and len(relative) > 1:
        relative = relative[1:]
    prefix = platlib
    for _ in relative:
        prefix = os.path.dirname(prefix)
    print("/".join(relative))
    print(prefix.replace(os.sep, "/"))


if __name__ == "__main__":
    main()
