#!/usr/bin/env python3
"""Checks the rule IDs of spec/*.md against the tests and the sources (spec/README.md, "Rule IDs").

Every table row of spec/*.md whose first cell is an ID is checked by its table's kind, which
the header's first cell names:
  ID, rule   a rule: a test carries the ID, and a comment cites it at exactly one
             enforcement file (several comments in that file are fine; "see ID" is a
             reference, not a citation);
  case       a catalogued test case of other rules: a test carries the ID;
  statement  another specification's statement: the test column names a tested ID, a
             Python test method or a test file.
`(not enforced: <reason>)` in a row waives the enforcement site, `(not tested: <reason>)` the
test. Also reported: an ID defined by two rows, a first cell naming several IDs, an ID the spec
names that no row defines, a Python test method named in a test column that does not exist.

Usage: scripts/check_rule_ids.py [--report] [--root DIR]
Prints one line per problem and a summary; exits 1 on any problem, 0 with --report.
"""
import argparse
import os
import re
import sys

ID = r"[A-Z][A-Z0-9]*-[A-Z0-9]+(?:-[A-Z0-9]+)*[a-z]?"  # MD-1, EXP-9b, CONF-STRIDES-NULL
ID_TOKEN = re.compile(r"(?<![A-Za-z0-9_-])(" + ID + r")(?![A-Za-z0-9-])")
LEADING_ID = re.compile(r"^(" + ID + r")(?![A-Za-z0-9-])")
NOT_ENFORCED = re.compile(r"\(not enforced: [^)]+\)")
NOT_TESTED = re.compile(r"\(not tested: [^)]+\)")
PY_METHOD = re.compile(r"\btest_[a-z]+[0-9]+_\w*")  # test_py12_..., maybe cut short by "…"
FILE_CITED = re.compile(r"`([^`\s]*/[^`\s]*)`")
KINDS = {"id": "rule", "rule": "rule", "case": "case", "statement": "statement"}
# Where rules are enforced (folders and files); tests/ and a bridge's tests/ never count.
ENFORCEMENT = ["src", "include", "python/src", "python/dlbridge", "python/include", "cmake",
               "scripts", "bridges", "CMakeLists.txt", "python/CMakeLists.txt",
               "python/platlib.py", "setup.py"]
C_FILES = (".h", ".hpp", ".c", ".cc", ".cpp", ".mm", ".cu", ".map")
C_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|(//[^\n]*|/\*[\s\S]*?\*/)')
HASH_TOKENS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"'
                         r'|\'(?:\\.|[^\'\\\n])*\'|(#[^\n]*)')
DOCTEST_NAME = re.compile(r'(?:TEST_CASE(?:_TEMPLATE)?|SUBCASE)\(\s*"([^"]*)"')
TABLE_ROW = re.compile(r'\{\s*"([^"]*)"')  # {"HOST-1", ...}: a row of a table-driven test
CMAKE_NAME = re.compile(r"(?<![A-Za-z0-9_-])(" + ID + r")(?=[_; \"])")  # C-19_c_abi_layout
PY_TEST = re.compile(r"(?:\bdef test_|\bpython\.)([a-z0-9]+)_")  # test_py3_..., python.py31_


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def files_under(root, top):
    if os.path.isfile(os.path.join(root, top)):
        yield top
    for base, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(names):
            yield os.path.relpath(os.path.join(base, name), root)


def test_files(root):
    """The test files: tests/, and each bridge's tests/ (bridges/<name>/tests/)."""
    yield from files_under(root, "tests")
    for path in files_under(root, "bridges"):
        if is_bridge_test(path):
            yield path


def is_bridge_test(path):
    parts = path.split(os.sep)
    return len(parts) > 3 and parts[0] == "bridges" and parts[2] == "tests"


def spec_lines(root):
    for name in sorted(os.listdir(os.path.join(root, "spec"))):
        if name.endswith(".md"):
            for n, line in enumerate(read(root, "spec/" + name).splitlines(), 1):
                yield "spec/%s:%d" % (name, n), line


def spec_rows(root):
    """(first cell, ID, kind, row, test cell, where) for each ID-first table row."""
    rows, header = [], []
    for where, line in spec_lines(root):
        if not line.startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = [c.lower() for c in cells]
        elif LEADING_ID.match(cells[0]):
            test = cells[header.index("test")] if "test" in header else ""
            rows.append((cells[0], LEADING_ID.match(cells[0]).group(1),
                         KINDS.get(header[0], "unknown table kind '%s'" % header[0]),
                         line, test, where))
    return rows


def test_carriers(root):
    """The IDs tests carry, and the stems of Python test names (py3 for test_py3_...)."""
    ids, stems = set(), set(PY_TEST.findall(read(root, "python/CMakeLists.txt")))
    for path in test_files(root):
        text = read(root, path)
        if path.endswith((".cpp", ".c", ".h")):
            names = DOCTEST_NAME.findall(text) + TABLE_ROW.findall(text)
            ids.update(m.group(1) for m in map(LEADING_ID.match, names) if m)
        elif path.endswith(".py"):
            stems.update(PY_TEST.findall(text))
        elif os.path.basename(path) == "CMakeLists.txt":
            ids.update(CMAKE_NAME.findall(re.sub(r"#[^\n]*", "", text)))
    return ids, stems


def citations(root, skip):
    """ID -> {file: first line} of the comments citing it."""
    sites = {}
    for top in ENFORCEMENT:
        for path in files_under(root, top):
            if path == skip or is_bridge_test(path):
                continue
            text = read(root, path)
            for m in (C_TOKENS if path.endswith(C_FILES) else HASH_TOKENS).finditer(text):
                comment = re.sub(r"\bsee " + ID, "", m.group(1) or "")
                for rule in ID_TOKEN.findall(comment):
                    sites.setdefault(rule, {}).setdefault(path, text.count("\n", 0, m.start()) + 1)
    return sites


def check(root, skip):
    rows = spec_rows(root)
    carried, stems = test_carriers(root)
    sites = citations(root, skip)
    py_methods = set(re.findall(r"\bdef (test_\w+)", "".join(
        read(root, p) for p in test_files(root)
        if p.endswith(".py") and (p.startswith("tests/python") or is_bridge_test(p)))))
    tested = {r[1] for r in rows if r[1] in carried or r[1].replace("-", "").lower() in stems}
    cases = {r[1] for r in rows if r[2] == "case"} & tested
    problems, defined = [], {}
    for cell, rule, kind, line, test, where in rows:
        say = lambda what: problems.append("%s: %s: %s" % (where, rule, what))  # noqa: E731
        defined.setdefault(rule, []).append(where)
        if cell != rule:
            say("the row names several IDs ('%s'): one row per ID" % cell)
        if kind not in KINDS.values():
            say(kind)
            continue
        for name in PY_METHOD.findall(test):
            if not any(m.startswith(name) for m in py_methods):
                say("no Python test method %s" % name)
        files = [p for p in FILE_CITED.findall(test) if os.path.exists(os.path.join(root, p))]
        cited = set(ID_TOKEN.findall(test))
        if NOT_TESTED.search(line) or rule in tested:
            pass
        elif kind == "statement" and not (cited & tested or files or PY_METHOD.search(test)):
            say("the test column cites no test")
        elif kind != "statement" and not (cited & cases or files):
            say("no test")
        if kind != "rule" or NOT_ENFORCED.search(line):
            continue
        at = sites.get(rule, {})
        if not at:
            say("no enforcement site")
        elif len(at) > 1:
            say("cited at %d enforcement files: %s" % (len(at), ", ".join(
                "%s:%d" % f for f in sorted(at.items()))))
    for rule, wheres in sorted(defined.items()):
        if len(wheres) > 1:
            problems.append("%s: defined by %d rows: %s" % (rule, len(wheres), ", ".join(wheres)))
    prefixes = {r.split("-")[0] for r in defined}
    for where, line in spec_lines(root):
        for rule in ID_TOKEN.findall(line):
            if rule.split("-")[0] in prefixes and rule not in defined and rule not in carried:
                problems.append("%s: %s is named but no row defines it" % (where, rule))
    return rows, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", action="store_true", help="print the problems, exit 0")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    rows, problems = check(root, os.path.relpath(os.path.abspath(__file__), root))
    for problem in problems:
        print(problem)
    kinds = [r[2] for r in rows]
    print("%d IDs: %d rules (%d not enforced), %d cases, %d statements; %d not tested; "
          "%d problems" % (len(rows), kinds.count("rule"),
                           sum(bool(NOT_ENFORCED.search(r[3])) for r in rows if r[2] == "rule"),
                           kinds.count("case"), kinds.count("statement"),
                           sum(bool(NOT_TESTED.search(r[3])) for r in rows), len(problems)))
    return 1 if problems and not args.report else 0


if __name__ == "__main__":
    sys.exit(main())
