#!/usr/bin/env python3
"""The include graph holds what docs/architecture.md says must never depend on what.

Reads every project #include of src/, include/, testing/include/, python/src/,
python/include/ and the bridges' include/, src/ and python/ (quoted, and <dlbridge/...>;
conditional ones count too), follows them
transitively, and checks each "never" line of the page's section "What must never depend on
what", plus: no include cycles. It also checks the page's table "The parts" (see may_use):
every scanned file of the library and the Python module belongs to exactly one part, and each
of its direct project includes is of its own part, of the foundation, or of what its row's
"may use" column names; and the page's table "Where the parts live": every file of src/ lies
in the folder that holds its part (check_folders). Each bullet of that section must have a rule here (or be named
in NOT_INCLUDE_RULES with where it is checked instead), so the page and this test cannot drift
apart. A violation prints the chain of includes that reaches the forbidden header and what to
do. Before the real check, a self-test adds one forbidden include per rule to a copy of the
graph and requires the rule to catch it, so a rule that can no longer fail is itself an error.

Usage: check_include_graph.py [--root DIR]. Exit 0 when every rule holds, 1 otherwise.
Standard library only.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(dlbridge/[^>]+)>)', re.M)
SCANNED = ("src", "include", "testing/include", "python/src", "python/include")
SEARCH = ("include", "testing/include", "python/include", "src")
# The bridges' own code (bridges/<name>/include, src and python; not their tests), scanned and
# searched as the library's is: bridges/<name>/include is on the bridge's include path.
BRIDGE_PARTS = ("include", "src", "python")
SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".mm")

PUBLIC = "include/dlbridge/"
DLPACK = PUBLIC + "dlpack_header.h"
CONVERTERS = [
    PUBLIC + "to_dlpack.h",
    PUBLIC + "from_dlpack.h",
    PUBLIC + "export_plan.h",
    PUBLIC + "host_copy.h",
    PUBLIC + "checker.h",
    "src/dlpack/export_internal.h",
]
RULES_MODULE = ["src/dlpack/dlpack_rules.h", "src/dlpack/export_rules.h", "src/dlpack/dlpack_fast_paths.h"]
DEVICE_MAP = [PUBLIC + "device_map.h", "src/devices/device_map_internal.h"]
RUNTIME = [PUBLIC + "runtime.h", "src/runtimes/runtime_internal.h", "src/runtimes/runtime_backend_internal.h"]
VALUES = [PUBLIC + "memory_descriptor.h", PUBLIC + "tensor.h", PUBLIC + "tensor_layout.h"]
BACKENDS = [
    "src/runtimes/runtime_backend.cpp",
    "src/runtimes/runtime_backend_internal.h",
    "src/runtimes/runtime_cuda.cpp",
    "src/runtimes/runtime_hip.cpp",
    "src/runtimes/runtime_level_zero.cpp",
    "src/runtimes/dynamic_library.h",
    "src/runtimes/dynamic_library.cpp",
]
EXPORT_SIDE = [
    "src/dlpack/to_dlpack.cpp",
    "src/dlpack/spare_slot.cpp",
    "src/dlpack/export_plan.cpp",
    "src/dlpack/export_internal.h",
    "src/dlpack/export_rules.h",
    PUBLIC + "to_dlpack.h",
    PUBLIC + "export_plan.h",
]

# (the page's bullet title, the files it constrains, what they must never reach, why/what to do)
RULES = [
    (
        "Runtimes are leaves.",
        BACKENDS,
        [DLPACK] + VALUES + DEVICE_MAP + RULES_MODULE + CONVERTERS + [PUBLIC + "runtime.h"],
        "a backend knows its runtime's library only: give it what it needs through "
        "runtime_backend_internal.h and the value headers below it (runtime_info.h)",
    ),
    (
        "The descriptor knows nothing of DLPack.",
        ["src/core/memory_descriptor.cpp", "src/core/memory_space.cpp", PUBLIC + "memory_descriptor.h"],
        [DLPACK] + DEVICE_MAP + RUNTIME + RULES_MODULE + CONVERTERS
        + [PUBLIC + "tensor.h", PUBLIC + "tensor_layout.h"],
        "move the type the descriptor needs below it (as KeepAlive went to callbacks.h)",
    ),
    (
        "The device map sits below the converters.",
        ["src/devices/device_map.cpp"] + DEVICE_MAP,
        CONVERTERS + RULES_MODULE + ["src/dlpack/reexport_internal.h", PUBLIC + "tensor.h"],
        "the tables read nothing of their users; move the fact into a column instead",
    ),
    (
        "The rules sit below the checker and the converters.",
        ["src/dlpack/dlpack_rules.h", "src/dlpack/export_rules.h", "src/dlpack/dlpack_rules.cpp"],
        CONVERTERS + [PUBLIC + "options.h", PUBLIC + "tensor.h", "src/dlpack/reexport_internal.h",
                      "src/core/callback_internal.h"],
        "the rules take values and report through a sink; the types they need live below "
        "them (dlbridge/findings.h)",
    ),
    (
        "The rules sit below the checker and the converters.",
        ["src/dlpack/dlpack_fast_paths.h"],  # it reads ExportOptions (options.h), no converter
        CONVERTERS + ["src/dlpack/reexport_internal.h", "src/core/callback_internal.h"],
        "the fast recognisers read the tensor and ExportOptions (dlbridge/options.h, a value "
        "header); nothing of the converters",
    ),
    (
        "Export does not include import.",
        EXPORT_SIDE,
        [PUBLIC + "from_dlpack.h"],
        "the only link is reexport_internal.h (the identity of an import's release)",
    ),
    (
        "Public headers include no `src/` header",
        None,  # every public header
        ["src/"],  # a prefix: anything under src/
        "a public header is installed; src/ is not",
    ),
    (
        "Callbacks are values below their users.",
        [PUBLIC + "callbacks.h", "src/core/callback_internal.h", PUBLIC + "findings.h"],
        [DLPACK, PUBLIC + "export_plan.h", PUBLIC + "memory_descriptor.h", PUBLIC + "checker.h"],
        "value headers include nothing above them",
    ),
    (
        "The bridges stand on the public API.",
        ["bridges/"],  # a prefix: every bridge's headers, sources and Python extension
        ["src/"],
        "a bridge is what a user could write: it uses include/dlbridge/ and its framework only "
        "(a check it needs belongs in a public helper)",
    ),
    (
        "The C API and Python stand on the public API.",
        ["src/c_api/c_api.cpp", "python/src/", "python/include/"],  # prefixes
        ["src/"],
        "only the two funnels of the library (error_internal.h, callback_internal.h) may be "
        "used by the C API; Python uses public headers only",
    ),
]
# Bullets that require an include instead of forbidding one: every bridge (its headers and
# sources under bridges/<name>/) reaches the header, through at least one of its files.
REQUIRED = [
    (
        "Every bridge builds on the kit.",
        PUBLIC + "bridge_kit.h",
        "describe and check through dlbridge/bridge_kit.h (kit::Describe, kit::CheckView) "
        "instead of restating its checks",
    ),
]
# The C API's two allowed src/ headers (see the rule above and the page).
C_API_ALLOWED = {"src/core/error_internal.h", "src/core/callback_internal.h"}
# Bullets of the section that are not about includes, and where they are checked instead.
NOT_INCLUDE_RULES = {
    "One rule, one place.": "scripts/check_rule_ids.py (ctest spec_rule_ids) and RT-5",
}


def bridge_dirs(root, part):
    """bridges/<name>/<part> for every bridge that has one."""
    top = os.path.join(root, "bridges")
    names = sorted(os.listdir(top)) if os.path.isdir(top) else []
    return tuple(os.path.join("bridges", n, part) for n in names
                 if os.path.isdir(os.path.join(top, n, part)))


def scan(root):
    """{file: [(included file, line text)]} for every project file under SCANNED."""
    global SEARCH
    SEARCH = SEARCH + bridge_dirs(root, "include")
    files = []
    for top in SCANNED + tuple(d for part in BRIDGE_PARTS for d in bridge_dirs(root, part)):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(SUFFIXES):
                    files.append(os.path.relpath(os.path.join(d, n), root))
    graph = {}
    for f in sorted(files):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        edges = []
        for m in INCLUDE.finditer(text):
            name = m.group(1) or m.group(2)
            target = resolve(root, f, name)
            if target is not None:
                edges.append(target)
        graph[f] = edges
    return graph


def resolve(root, including, name):
    here = os.path.dirname(including)
    for base in (here,) + SEARCH:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None  # a system or third-party header


def reach(graph, start):
    """{file: the file it was first reached from} over everything `start` includes."""
    parent = {start: None}
    todo = [start]
    while todo:
        f = todo.pop()
        for g in graph.get(f, ()):
            if g not in parent:
                parent[g] = f
                todo.append(g)
    return parent


def chain(parent, end):
    out = [end]
    while parent[out[-1]] is not None:
        out.append(parent[out[-1]])
    return " -> ".join(reversed(out))


def matches(path, patterns):
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in patterns)


def check(graph):
    problems = []
    for title, subjects, forbidden, advice in RULES:
        if subjects is None:
            files = [f for f in graph if f.startswith(PUBLIC)]
        else:
            files = [f for f in graph if matches(f, subjects)]
            missing = [s for s in subjects if not s.endswith("/") and s not in graph]
            for s in missing:
                problems.append(f"{title} names {s}, which does not exist: update the rule")
        for f in files:
            parent = reach(graph, f)
            for g in parent:
                if g == f or not matches(g, forbidden):
                    continue
                if f == "src/c_api/c_api.cpp" and g in C_API_ALLOWED:
                    continue
                problems.append(
                    f'"{title}" broken: {f} reaches {g} ({chain(parent, g)}); {advice}'
                )
    problems += check_required(graph)
    problems += cycles(graph)
    return problems


def bridge_groups(graph):
    """{bridges/<name>: [its header and source files]} (not its Python extension)."""
    groups = {}
    for f in graph:
        parts = f.split("/")
        if len(parts) > 3 and parts[0] == "bridges" and parts[2] in ("include", "src"):
            groups.setdefault("/".join(parts[:2]), []).append(f)
    return groups


def check_required(graph):
    problems = []
    for title, header, advice in REQUIRED:
        for bridge, files in sorted(bridge_groups(graph).items()):
            if not any(header in reach(graph, f) for f in files):
                problems.append(f'"{title}" broken: nothing in {bridge} includes {header}; {advice}')
    return problems


def cycles(graph):
    problems = []
    state = {}

    def visit(f, stack):
        state[f] = 1
        stack.append(f)
        for g in graph.get(f, ()):
            if state.get(g) == 1:
                loop = stack[stack.index(g):] + [g]
                problems.append("include cycle: " + " -> ".join(loop))
            elif g not in state:
                visit(g, stack)
        stack.pop()
        state[f] = 2

    for f in sorted(graph):
        if f not in state:
            visit(f, [])
    return problems


def page_bullets(root):
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## What must never depend on what", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- \*\*(.+?)\*\*", section, re.M)


def self_test(graph):
    """Each rule must catch one forbidden include added to its first subject, and a cycle."""
    failures = []
    for title, subjects, forbidden, _ in RULES:
        files = sorted(f for f in graph if (f.startswith(PUBLIC) if subjects is None
                                           else matches(f, subjects)))
        target = next((g for g in sorted(graph) if matches(g, forbidden)
                       and g not in C_API_ALLOWED), None)
        if not files or target is None:
            failures.append(f'self-test: "{title}" has no file or no forbidden header to test')
            continue
        trial = {k: list(v) for k, v in graph.items()}
        trial[files[0]].append(target)
        if not any(p.startswith(f'"{title}" broken: {files[0]} reaches {target}')
                   for p in check(trial)):
            failures.append(f'self-test: "{title}" did not catch {files[0]} including {target}')
    for title, header, _ in REQUIRED:
        groups = bridge_groups(graph)
        if not groups:
            failures.append(f'self-test: "{title}" has no bridge to test')
            continue
        bridge, files = sorted(groups.items())[0]
        trial = {k: list(v) for k, v in graph.items()}
        for f in files:  # cut this bridge's paths to the header: direct, or through a bridge
            trial[f] = [g for g in trial[f] if g != header and not g.startswith("bridges/")]
        if not any(p.startswith(f'"{title}" broken: nothing in {bridge}') for p in check(trial)):
            failures.append(f'self-test: "{title}" did not catch {bridge} without {header}')
    trial = {k: list(v) for k, v in graph.items()}
    trial[PUBLIC + "export.h"] = trial.get(PUBLIC + "export.h", []) + [PUBLIC + "error.h"]
    if not any(p.startswith("include cycle") for p in check(trial)):
        failures.append("self-test: an include cycle (export.h <-> error.h) was not caught")
    return failures


# ---- The parts table: "may use" (docs/architecture.md, "The parts") ----
# Files the table covers (the bridges have their own rule above).
PART_SCOPE = ("src/", "include/", "testing/include/", "python/src/", "python/include/")
FOUNDATION = "foundation"  # the part every part may use
PUBLIC_API = "the public API"  # a "may use" item: every public header


def expand_braces(name):
    m = re.match(r"(.*?)\{([^}]*)\}(.*)", name)
    if not m:
        return [name]
    return [x for alt in m.group(2).split(",") for x in expand_braces(m.group(1) + alt + m.group(3))]


def page_path(name):
    """A file named in the table: a bare public header name, or a path from the root."""
    return name if "/" in name else PUBLIC + name


def strip_parentheses(text):
    while True:
        stripped = re.sub(r"\([^()]*\)", "", text)
        if stripped == text:
            return text
        text = stripped


def parts_table(root):
    """[(part, [file or folder/], {parts it may use}, {files it may use})] from the page: the
    files column's backticked paths; the "may use" column's items, separated by commas and
    semicolons, each a part's name, a backticked file, "the public API" or "nothing", with
    anything in parentheses a comment."""
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## The parts", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("part", "") or set(cells[0]) <= set("-: "):
            continue
        part, files, _what, may = cells
        paths = [page_path(e) for n in re.findall(r"`([^`]+)`", files) for e in expand_braces(n)]
        may_parts, may_files = set(), set()
        for item in re.split(r"[,;]", strip_parentheses(may)):
            item = item.strip()
            named = re.findall(r"`([^`]+)`", item)
            if named:
                may_files.update(page_path(e) for n in named for e in expand_braces(n))
            elif item and item != "nothing":
                may_parts.add(item)
        rows.append((part, paths, may_parts, may_files))
    return rows


def part_of(rows, f):
    owners = [r[0] for r in rows if matches(f, r[1])]
    return owners


def check_may_use(graph, rows):
    problems = []
    names = {r[0] for r in rows}
    for part, paths, may_parts, may_files in rows:
        for item in sorted(may_parts - names - {PUBLIC_API}):
            problems.append(f'docs/architecture.md: part "{part}" may use "{item}", which is no '
                            f"part of the table")
        for path in paths:
            if not path.endswith("/") and not os.path.exists(path_root(path)):
                problems.append(f'docs/architecture.md: part "{part}" names {path}, which does '
                                f"not exist")
    by_name = {r[0]: r for r in rows}
    for f in sorted(graph):
        if not f.startswith(PART_SCOPE):
            continue
        owners = part_of(rows, f)
        if len(owners) != 1:
            problems.append(f"may use: {f} belongs to {len(owners)} parts of docs/architecture.md "
                            f"({', '.join(owners) or 'none'}); name it in exactly one row")
            continue
        part, _paths, may_parts, may_files = by_name[owners[0]]
        for g in graph[f]:
            others = part_of(rows, g)
            if not others:
                continue  # reported as the file's own problem
            other = others[0]
            if (other in (part, FOUNDATION) or other in may_parts or g in may_files
                    or (PUBLIC_API in may_parts and g.startswith(PUBLIC))):
                continue
            problems.append(f'may use: {f} (part "{part}") includes {g} (part "{other}"), '
                            f'which its row\'s "may use" does not name; add it there, or move '
                            f"the include")
    return problems


_ROOT = ["."]


def path_root(path):
    return os.path.join(_ROOT[0], path)


def self_test_may_use(graph, rows):
    """The check must catch an include of a part a row does not name."""
    trial = {k: list(v) for k, v in graph.items()}
    f, g = PUBLIC + "error.h", PUBLIC + "tensor.h"  # errors may use nothing
    trial[f] = trial.get(f, []) + [g]
    if not any(p.startswith(f"may use: {f} (part") and g in p for p in check_may_use(trial, rows)):
        return ["self-test: the may-use check did not catch error.h including tensor.h"]
    return []


# ---- The folders of src/ (docs/architecture.md, "Where the parts live") ----


def folders_table(root):
    """{"src/<folder>/": {parts}} from the page's folder table (backticked folder, parts)."""
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Where the parts live", 1)[1].split("\n## ", 1)[0]
    folders = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        folder = re.findall(r"`([^`]+)`", cells[0])[0]
        folders[folder] = {x.strip() for x in strip_parentheses(cells[1]).split(",") if x.strip()}
    return folders


def check_folders(graph, rows, folders):
    """Every file of src/ lies in a folder of the table, and that folder holds its part."""
    problems = []
    names = {r[0] for r in rows}
    for folder, parts in sorted(folders.items()):
        for part in sorted(parts - names):
            problems.append(f'docs/architecture.md: folder {folder} holds "{part}", which is no '
                            f"part of the table")
    for f in sorted(graph):
        if not f.startswith("src/"):
            continue
        folder = f[: f.index("/", 4) + 1] if f.count("/") >= 2 else "src/"
        owners = part_of(rows, f)
        if folder not in folders:
            problems.append(f"folders: {f} is in {folder}, which the page's folder table does not "
                            f"name; move it into the folder of its part ({', '.join(owners)})")
        elif owners and owners[0] not in folders[folder]:
            problems.append(f'folders: {f} (part "{owners[0]}") is in {folder}, which holds '
                            f"{', '.join(sorted(folders[folder]))}; move it, or the row")
    return problems


def self_test_folders(graph, rows, folders):
    """The check must catch a file moved into the folder of another part."""
    trial = dict(graph)
    moved = "src/copies/error.cpp"  # errors live in core/, not copies/
    trial[moved] = []
    trial_rows = [(r[0], r[1] + ([moved] if r[0] == "errors" else []), r[2], r[3]) for r in rows]
    if not any(p.startswith(f"folders: {moved}") for p in check_folders(trial, trial_rows, folders)):
        return ["self-test: the folder check did not catch errors' file in src/copies/"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    root = os.path.abspath(parser.parse_args().root)
    graph = scan(root)
    problems = self_test(graph)
    titles = {r[0] for r in RULES} | {r[0] for r in REQUIRED}
    for bullet in page_bullets(root):
        if bullet not in titles and bullet not in NOT_INCLUDE_RULES:
            problems.append(f'docs/architecture.md: "{bullet}" has no rule in {__file__}')
    for title in titles:
        if title not in page_bullets(root):
            problems.append(f'{__file__}: rule "{title}" is not a bullet of docs/architecture.md')
    problems += check(graph)
    _ROOT[0] = root
    rows = parts_table(root)
    problems += self_test_may_use(graph, rows)
    problems += check_may_use(graph, rows)
    folders = folders_table(root)
    problems += self_test_folders(graph, rows, folders)
    problems += check_folders(graph, rows, folders)
    for p in problems:
        print(p)
    print(f"{len(graph)} files, {sum(len(v) for v in graph.values())} includes, "
          f"{len(RULES)} rules: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
