#!/usr/bin/env python3
"""DEV-6: device facts live in the device table (src/devices/device_map.cpp) and nowhere beside it.

Scans the C++ of src/ and python/src/ (comments stripped) outside the table's own files for
the two shapes a device fact takes when it is written down again: a `case kDL...:` label (a
switch over device types that decides per type what a table column should say), and a string
literal naming two or more device types (a hand-written device list in a message, instead of
DeviceTypeNames over the table's rows). A self-test first plants one of each in a copy of a
file and requires both to be found.

Usage: check_device_facts.py [--root DIR]. Exit 0 when none is found, 1 otherwise.
Standard library only.
"""
import argparse
import os
import re
import sys

SCANNED = ("src", "python/src")
TABLE = {"src/devices/device_map.cpp", "src/devices/device_map_internal.h"}  # the table and its generators
SUFFIXES = (".h", ".cpp", ".cc", ".mm")
TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*[\s\S]*?\*/')
CASE = re.compile(r"\bcase\s+(?:DLDeviceType::)?kDL[A-Za-z]+\s*:")
DEVICE_NAME = re.compile(r"\bkDL[A-Za-z]+")


def strip_comments(text):
    """The text with comments blanked; string and character literals kept."""
    return TOKENS.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)


def problems_in(path, text):
    found = []
    code = strip_comments(text)
    for m in CASE.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        found.append(f"{path}:{line}: a device-type case label ({m.group(0).strip()}): read the "
                     f"fact from a column of the device table instead")
    for m in re.finditer(r'"(?:\\.|[^"\\\n])*"', code):
        names = DEVICE_NAME.findall(m.group(0))
        if len(set(names)) >= 2:
            line = code.count("\n", 0, m.start()) + 1
            found.append(f"{path}:{line}: a hand-written device list {m.group(0)}: build it with "
                         f"DeviceTypeNames over the table's rows")
    return found


def scan(root):
    problems = []
    for top in SCANNED:
        for base, _dirs, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(base, name), root).replace(os.sep, "/")
                if path in TABLE:
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    problems += problems_in(path, f.read())
    return problems


def self_test():
    planted = ('switch (t) {\n  case kDLCUDA: return 1;  // case kDLROCM: in a comment\n}\n'
               'Fail(code, "accepted: kDLCPU, kDLCUDA");\n'
               'const char* one = "kDLCPU device 0";  // one name is no list\n')
    found = problems_in("planted.cpp", planted)
    if len(found) != 2:
        return [f"self-test: expected the planted case label and device list, found: {found}"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    root = os.path.abspath(parser.parse_args().root)
    problems = self_test() + scan(root)
    for p in problems:
        print(p)
    print(f"device facts outside the table: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
