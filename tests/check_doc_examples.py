#!/usr/bin/env python3
"""Every fenced code block of README.md and docs/**/*.md is compiled, run or checked (issue 36).

The convention (docs/examples.md says it in one line): an HTML comment on the line right
before a fence says how its block is checked, hidden on GitHub and in Doxygen:

  <!-- example: KIND [prelude=NAME] [requires=A,B] [std=23] [reason="..."] -->

KIND is one of
  program   C/C++: a complete program, compiled, linked against the build's libdlbridge and
            run (it must exit 0). Python: run as it is, with the build's module on PYTHONPATH.
  main      C/C++: the block is the body of main(), after the prelude; compiled, linked, run.
  fragment  C/C++: the block is the body of a function after the prelude (its #include lines
            go to the top of the file); compiled with -fsyntax-only. Python: the prelude, then
            the block, run.
  toplevel  C++: the block at namespace scope after the prelude; compiled with -fsyntax-only.
  syntax    compiled only (C/C++ as `fragment`, Python byte-compiled); needs reason= (what
            running it would need, e.g. a GPU).
  names     sh, bat, cmake (the default for these three): every script, preset, DLBRIDGE_*
            option, dlbridge:: target and `python3 -m` module the block names must exist.
  skip      not checked at all; needs reason=. Counted and listed in the summary.

std=N compiles C++ as C++N (default 17, or the standard a required bridge's target asks for).
prelude=NAME is tests/doc_examples/NAME.h (C/C++) or NAME.py (Python): the declarations a
fragment uses (a `managed` tensor, a `rows` count...), visible in the repository.
requires= lists, for C/C++, the bridges this build has (eigen, vtk, viskores, torch, opencv,
mdspan, kokkos; `python_helpers` for dlbridge/python.h, `pybind11` probed by compiling) and,
for Python, modules that must import (numpy, torch, ...). Where one is missing the block is
reported as SKIPPED with the reason, never counted as passed; the test still passes (the
newest lane has frameworks this host has not, and the other way round).

A C, C++ or Python block without a marker, a fenced block of any other language (or none),
an unknown kind, a syntax/skip marker without a reason, or a relative link (outside code) to
a file that does not exist is an error. Blocks of one prelude,
standard and requirement set that are only compiled share one translation unit (each in its
own namespace; `#line` directives make the compiler name the Markdown file and line); a
failing unit is compiled again block by block to name the failing block.

First a self-test: a small tree of broken examples (a compile error, a failing program, a
missing prelude, a name that does not exist, a failing Python program), an unmarked block and
a broken link, each of which must be caught; a checker that passed everything fails here.

Usage: check_doc_examples.py --root <source tree> --config <build>/tests/doc_examples_CXX.cfg
(the config is written by tests/CMakeLists.txt: compilers, libdlbridge, include directories,
the bridges found, the Python module). Exit 0 when every checkable block passes.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

KINDS = {"program", "main", "fragment", "toplevel", "syntax", "names", "skip"}
C_LANGS = {"cpp", "c++", "c"}
NAMES_LANGS = {"sh", "bash", "bat", "cmake"}
MARKER = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)\s*$")
TIMEOUT_S = 120


class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path, self.line, self.lang, self.text = path, line, lang, text
        self.kind, self.attrs, self.problem = None, {}, None
        if marker is not None:
            self._parse(marker)
        elif lang in NAMES_LANGS:
            self.kind = "names"
        self.status, self.detail = None, ""

    def _parse(self, marker):
        try:
            words = shlex.split(marker)
        except ValueError as error:
            self.problem = f"unreadable marker: {error}"
            return
        if not words or words[0] not in KINDS:
            self.problem = f"marker kind must be one of {sorted(KINDS)}, got {marker!r}"
            return
        self.kind = words[0]
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if not sep:
                self.problem = f"marker attribute {word!r} is not key=value"
                return
            self.attrs[key] = value
        if self.kind in ("syntax", "skip") and not self.attrs.get("reason"):
            self.problem = f"a `{self.kind}` marker needs reason=\"...\""

    @property
    def where(self):
        return f"{self.path}:{self.line}"

    @property
    def requires(self):
        value = self.attrs.get("requires", "")
        return tuple(r for r in value.split(",") if r)


def extract(root):
    files = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    blocks = []
    for path in files:
        lines = path.read_text(encoding="utf-8").split("\n")
        rel = path.relative_to(root).as_posix()
        i = 0
        while i < len(lines):
            match = FENCE.match(lines[i])
            if not match:
                i += 1
                continue
            indent, ticks, lang = match.group(1), match.group(2), match.group(3).lower()
            start = i
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != ticks:
                line = lines[i]
                body.append(line[len(indent):] if line.startswith(indent) else line)
                i += 1
            i += 1
            marker = None
            j = start - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            if j >= 0:
                found = MARKER.match(lines[j])
                if found:
                    marker = found.group(1)
            # The block's first line is start + 2 (1-based, after the fence).
            blocks.append(Block(rel, start + 2, lang, "\n".join(body) + "\n", marker))
    return blocks


def broken_links(root):
    """Relative links of README.md and docs/ (outside code) whose target does not exist, as
    GitHub resolves them: relative to the linking file."""
    broken = []
    for path in [root / "README.md"] + sorted((root / "docs").rglob("*.md")):
        text = re.sub(r"(?ms)^\s*```.*?^\s*```", "", path.read_text(encoding="utf-8"))
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            target = target.split("#", 1)[0]
            if target and not re.match(r"[a-z]+:", target) and \
                    not (path.parent / target).exists():
                broken.append(f"{path.relative_to(root).as_posix()}: link to {target}: "
                              "no such file")
    return broken


def read_config(path):
    config = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            config[key.strip()] = value.strip()
    return config


def split_list(value):
    return [v for v in value.split(";") if v]


class Checker:
    def __init__(self, root, config, work):
        self.root, self.config, self.work = root, config, Path(work)
        self.preludes = root / "tests" / "doc_examples"
        self._probes = {}
        self._modules = {}

    # ----- C and C++ ---------------------------------------------------------------------
    def bridge_available(self, name):
        if name == "pybind11":
            return self.probe_header("pybind11/pybind11.h", ("python_helpers",))
        if name == "python_helpers":
            return bool(self.config.get("python_helpers.includes"))
        return f"bridge.{name}.includes" in self.config

    def flags(self, lang, requires, std):
        flags = []
        if lang == "c":
            flags.append("-std=c99")
        else:
            flags.append(f"-std=c++{std}")
        groups = ["core"] + [r if r in ("python_helpers",) else f"bridge.{r}" for r in requires
                             if r != "pybind11"]
        for group in groups:
            flags += ["-I" + d for d in split_list(self.config.get(f"{group}.includes", ""))]
            flags += ["-D" + d for d in split_list(self.config.get(f"{group}.defines", ""))]
            for option in split_list(self.config.get(f"{group}.options", "")):
                # CMake's "SHELL:-a b" is one group of options (Kokkos: "SHELL:-fopenmp").
                flags += shlex.split(option[6:]) if option.startswith("SHELL:") else [option]
        return flags

    def standard(self, block):
        """The block's std= or, when higher, the standard a required bridge's target asks for."""
        std = int(block.attrs.get("std", "17"))
        for req in block.requires:
            for feature in split_list(self.config.get(f"bridge.{req}.features", "")):
                found = re.fullmatch(r"cxx_std_(\d+)", feature)
                if found:
                    std = max(std, int(found.group(1)))
        return std

    def compiler(self, lang):
        return self.config["cc"] if lang == "c" else self.config["cxx"]

    def probe_header(self, header, requires):
        key = (header, requires)
        if key not in self._probes:
            src = self.work / f"probe_{len(self._probes)}.cpp"
            src.write_text(f"#include <{header}>\n")
            result = subprocess.run([self.compiler("cpp"), "-fsyntax-only"] +
                                    self.flags("cpp", requires, 17) + [str(src)],
                                    capture_output=True, text=True, timeout=TIMEOUT_S)
            self._probes[key] = result.returncode == 0
        return self._probes[key]

    def prelude_text(self, block, suffix):
        name = block.attrs.get("prelude")
        if not name:
            return ""
        path = self.preludes / f"{name}{suffix}"
        if not path.is_file():
            raise FileNotFoundError(f"prelude {path.relative_to(self.root)} not found")
        return f'#line 1 "{path.relative_to(self.root).as_posix()}"\n' + path.read_text()

    def c_source(self, blocks, index_base=0):
        """One translation unit for `blocks` (same prelude, language, standard, requirements)."""
        includes, bodies = [], []
        for n, block in enumerate(blocks, index_base):
            lines = block.text.split("\n")
            kept = []
            for line in lines:
                if line.lstrip().startswith("#include"):
                    if line.strip() not in includes:
                        includes.append(line.strip())
                    kept.append("")
                else:
                    kept.append(line)
            body = "\n".join(kept)
            origin = f'#line {block.line} "{block.path}"\n'
            if block.kind == "program":
                bodies.append(origin + block.text)
            elif block.kind == "main":
                bodies.append("int main(void) {\n" + origin + body + "\nreturn 0;\n}\n")
            elif block.kind == "toplevel":
                bodies.append(origin + body)
            elif block.lang == "c":
                bodies.append(f"static void doc_example_{n}(void) {{\n" + origin + body + "\n}\n")
            else:
                bodies.append(f"namespace doc_example_{n} {{\n[[maybe_unused]] void Example() {{\n"
                              + origin + body + "\n}\n}\n")
        if blocks[0].kind == "program":
            return f'#line {blocks[0].line} "{blocks[0].path}"\n' + blocks[0].text
        return ("\n".join(includes) + "\n" + self.prelude_text(blocks[0], ".h") + "\n" +
                "\n".join(bodies))

    def compile(self, blocks, name, link):
        lang = "c" if blocks[0].lang == "c" else "cpp"
        std = self.standard(blocks[0])
        suffix = ".c" if lang == "c" else ".cpp"
        src = self.work / f"{name}{suffix}"
        src.write_text(self.c_source(blocks))
        command = [self.compiler(lang)] + self.flags(lang, blocks[0].requires, std)
        if link:
            exe = self.work / name
            lib = self.config["lib"]
            command += [str(src), "-o", str(exe), lib, "-Wl,-rpath," + str(Path(lib).parent),
                        "-pthread"]
        else:
            command += ["-fsyntax-only", str(src)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                                cwd=self.root)
        if result.returncode != 0:
            return False, result.stdout + result.stderr
        if link:
            run = subprocess.run([str(self.work / name)], capture_output=True, text=True,
                                 timeout=TIMEOUT_S)
            if run.returncode != 0:
                return False, f"exit {run.returncode}\n{run.stdout}{run.stderr}"
            return True, run.stdout
        return True, ""

    # ----- Python ------------------------------------------------------------------------
    def python_env(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [self.config["pythonpath"]] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def module_available(self, module):
        if module not in self._modules:
            result = subprocess.run([self.config["python"], "-c", f"import {module}"],
                                    capture_output=True, text=True, env=self.python_env(),
                                    timeout=TIMEOUT_S)
            self._modules[module] = result.returncode == 0
        return self._modules[module]

    def run_python(self, block, name):
        source = self.prelude_text(block, ".py").replace('#line 1 ', '# from ', 1)
        source += f"\n# {block.where}\n" + block.text
        src = self.work / f"{name}.py"
        src.write_text(source)
        result = subprocess.run([self.config["python"], str(src)], capture_output=True, text=True,
                                env=self.python_env(), cwd=self.work, timeout=TIMEOUT_S)
        if result.returncode != 0:
            return False, result.stdout + result.stderr
        return True, result.stdout

    # ----- sh, bat, cmake: what a block names must exist ----------------------------------
    def known_names(self):
        if hasattr(self, "_known"):
            return self._known
        presets = set()
        data = json.loads((self.root / "CMakePresets.json").read_text())
        for key, values in data.items():
            if key.endswith("Presets") and isinstance(values, list):
                presets.update(p["name"] for p in values)
        cmake_text = ""
        for path in [self.root / "CMakeLists.txt", self.root / "setup.py",
                     *self.root.glob("cmake/*.cmake"), *self.root.glob("*/CMakeLists.txt"),
                     *self.root.glob("*/*/CMakeLists.txt"), *self.root.glob("bridges/*/*.cmake"),
                     *self.root.glob("scripts/*")]:
            if path.is_file():
                cmake_text += path.read_text(errors="replace")
        targets = set(re.findall(r"add_library\(\s*dlbridge::(\w+)\s+ALIAS", cmake_text))
        targets.update(re.findall(r"dlbridge_add_bridge\(\s*(\w+)", cmake_text))
        self._known = (presets, cmake_text, targets)
        return self._known

    def check_names(self, block):
        presets, cmake_text, targets = self.known_names()
        text = re.sub(r"(?m)(^|\s)(#|::).*$", "", block.text)  # comments (sh, bat)
        def module_exists(module):
            base = self.root / "python" / Path(*module.split("."))
            return base.is_dir() or base.with_suffix(".py").is_file()
        rules = [  # what a block names, what it is called in a message, whether it exists
            (r"(?<![\w./-])((?:scripts|bench|tests|examples|bridges|cmake|spec|docs|\.ci)/"
             r"[\w./-]*[\w])", "path", lambda path: (self.root / path).exists()),
            (r"--preset[= ]+([\w-]+)", "preset", lambda preset: preset in presets),
            (r"\b(DLBRIDGE_[A-Z0-9_]+)", "option", lambda option: option in cmake_text),
            (r"\bdlbridge::(\w+)", "target dlbridge::", lambda target: target in targets),
            (r"-m\s+(dlbridge(?:\.\w+)*)", "module", module_exists),
        ]
        checked, missing = [], []
        for pattern, what, exists in rules:
            for name in re.findall(pattern, text):
                checked.append(name)
                if not exists(name):
                    missing.append(f"{what}{'' if what.endswith(':') else ' '}{name}")
        if block.lang == "cmake":
            for package in re.findall(r"find_package\(\s*(\w+)", text):
                checked.append(package)
                if package == "dlbridge" and "dlbridgeConfig" not in cmake_text:
                    missing.append("the dlbridge CMake package")
        if missing:
            return False, "names that do not exist: " + ", ".join(missing)
        if not checked:
            return False, ("names nothing that can be checked: mark it "
                           "<!-- example: skip reason=\"...\" --> or make it name something")
        return True, "checked: " + ", ".join(sorted(set(checked)))

    # ----- one block ---------------------------------------------------------------------
    def missing_requirement(self, block):
        if block.lang == "python":
            if not self.config.get("pythonpath"):
                return "this build has no Python module"
            for module in block.requires:
                if not self.module_available(module):
                    return f"Python module {module} not importable"
        elif block.lang in C_LANGS:
            for req in block.requires:
                if not self.bridge_available(req):
                    return f"{req} not found by this build"
        return None


def check_tree(root, config, jobs, verbose=False, print=print):
    """Checks every block under `root`; returns the number of broken blocks (markers included)."""
    blocks = extract(root)

    errors = broken_links(root)
    for block in blocks:
        if block.problem:
            errors.append(f"{block.where}: {block.problem}")
        elif block.kind is None:
            errors.append(f"{block.where}: ```{block.lang or '(no language)'} block without an "
                          "<!-- example: KIND --> marker (see tests/check_doc_examples.py)")
        elif block.kind == "names" and block.lang not in NAMES_LANGS:
            errors.append(f"{block.where}: `names` is for sh, bat and cmake blocks")
        elif block.kind in ("program", "main", "fragment", "toplevel", "syntax") and \
                block.lang not in C_LANGS | {"python"}:
            errors.append(f"{block.where}: `{block.kind}` is for C, C++ and Python blocks")
        elif block.lang == "python" and block.kind in ("main", "toplevel"):
            errors.append(f"{block.where}: `{block.kind}` is for C and C++ blocks")
    if errors:
        print("\n".join(errors))
        print(f"FAILED: {len(errors)} broken link(s) or block(s) with no valid marker")
        return len(errors)

    with tempfile.TemporaryDirectory(prefix="dlbridge_doc_examples_") as scratch:
        checker = Checker(root, config, scratch)
        work = []  # (blocks, callable, what a pass is called)
        groups = {}
        for n, block in enumerate(blocks):
            if block.kind == "skip":
                block.status, block.detail = "unchecked", block.attrs["reason"]
                continue
            missing = checker.missing_requirement(block)
            if missing:
                block.status, block.detail = "skipped", missing
                continue
            name = f"block{n}"
            if block.kind == "names":
                work.append(([block], lambda b=block: checker.check_names(b), "names checked"))
            elif block.lang == "python":
                if block.kind == "syntax":
                    def byte_compile(b=block):
                        try:
                            compile(b.text, b.where, "exec")
                            return True, ""
                        except SyntaxError as error:
                            return False, str(error)
                    work.append(([block], byte_compile, "byte-compiled"))
                else:
                    work.append(([block], lambda b=block, m=name: checker.run_python(b, m), "run"))
            elif block.kind in ("program", "main"):
                work.append(([block], lambda b=block, m=name: checker.compile([b], m, True),
                             "built and run"))
            else:
                key = (block.lang, block.attrs.get("prelude"), block.attrs.get("std", "17"),
                       block.requires)
                groups.setdefault(key, []).append(block)
        for n, members in enumerate(groups.values()):
            def compile_group(ms=members, g=n):
                ok, output = checker.compile(ms, f"group{g}", False)
                if ok or len(ms) == 1:
                    return ok, output
                # Name the failing block(s): each alone.
                outputs = []
                for k, member in enumerate(ms):
                    alone_ok, alone = checker.compile([member], f"group{g}_{k}", False)
                    if not alone_ok:
                        member.status, member.detail = "FAILED", alone
                        outputs.append(alone)
                return False, "\n".join(outputs) or output
            work.append((members, compile_group, "compiled"))

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(job): (members, label) for members, job, label in work}
            for future in concurrent.futures.as_completed(futures):
                members, label = futures[future]
                try:
                    ok, output = future.result()
                except (OSError, subprocess.SubprocessError) as error:
                    ok, output = False, str(error)
                # A unit of several blocks that failed was compiled again block by block, and
                # the failing blocks are marked already; if none failed alone, all fail.
                named = any(m.status == "FAILED" for m in members)
                for member in members:
                    if member.status == "FAILED":
                        continue
                    member.status = "FAILED" if not ok and not named else label
                    member.detail = output if (member.status == "FAILED" or verbose) else ""

    counts = {}
    failed = 0
    for block in blocks:
        counts[block.status] = counts.get(block.status, 0) + 1
        tag = f"{block.where}: ```{block.lang} [{block.kind}]"
        if block.status == "FAILED":
            failed += 1
            print(f"FAILED   {tag}\n{block.detail.rstrip()}\n")
        elif block.status in ("skipped", "unchecked"):
            print(f"{block.status.upper():8} {tag}: {block.detail}")
        else:
            print(f"ok       {tag}: {block.status}"
                  + (f"\n{block.detail.rstrip()}" if verbose and block.detail else ""))
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"\n{len(blocks)} blocks in README.md and docs/: {summary}")
    if failed:
        print(f"FAILED: {failed} example(s) broken")
    return failed


# The self-test: a tree of broken examples, each of which must be caught (a checker that
# passed everything would pass the real tree too).
SELF_TEST_README = """# broken

<!-- example: program -->
```cpp
int main() { return undeclared_name; }
```

<!-- example: main prelude=none_such -->
```cpp
int x = 1;
```

<!-- example: fragment -->
```cpp
#include <dlbridge/dlbridge.h>
dlbridge::Tensor t; t.no_such_member = 1;
```

<!-- example: program -->
```cpp
int main() { return 3; }
```

```sh
scripts/no-such-script --preset no-such-preset -DDLBRIDGE_NO_SUCH_OPTION=ON
```

<!-- example: program -->
```python
raise SystemExit("a broken Python example")
```
"""


def self_test(config, jobs):
    with tempfile.TemporaryDirectory(prefix="dlbridge_doc_examples_self_") as tree:
        root = Path(tree)
        (root / "docs").mkdir()
        (root / "CMakePresets.json").write_text("{}")
        (root / "README.md").write_text(SELF_TEST_README)
        lines = []
        broken = check_tree(root, config, jobs, print=lines.append)
        expected = 6 if config.get("pythonpath") else 5
        (root / "docs" / "unmarked.md").write_text("```cpp\nint x;\n```\n[a](none.md)\n")
        unmarked = check_tree(root, config, jobs, print=lines.append)
    if broken != expected or unmarked != 2:
        print("\n".join(lines))
        print(f"SELF-TEST FAILED: {broken} of {expected} broken examples caught, "
              f"{unmarked} of 2 (an unmarked block, a broken link)")
        return False
    print(f"self-test: {broken} broken examples, an unmarked block and a broken link caught")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--config", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    config = read_config(args.config)
    ok = self_test(config, args.jobs)
    return 1 if check_tree(args.root.resolve(), config, args.jobs, args.verbose) or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
