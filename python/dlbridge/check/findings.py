"""The rules the command reports (the Python protocol's PYP-*/PYC-*; CONF-* come from the C++
checker), what each checks in the standard, the per-rule results and the report."""
import dlbridge

PY_RULES = [
    ("PYP-DLPACK-DEVICE", "violation", "__dlpack_device__() is (int, int) and matches the capsule's device"),
    ("PYP-CAPSULE-NAME", "violation", "the capsule is 'dltensor' or 'dltensor_versioned'; legacy when max_version is None"),
    ("PYP-STREAM", "violation", "__dlpack__(stream=None) is accepted"),
    ("PYP-STREAM-VALUES", "violation", "per device: CPU only None; CUDA None/1/2/-1, never 0; ROCm None/0/-1, never 1 or 2"),
    ("PYP-MAX-VERSION", "violation", "__dlpack__ accepts max_version (None, (1, 0), (1, 3), (2, 0))"),
    ("PYP-VERSIONED", "warning", "max_version >= (1, 0) gets a 'dltensor_versioned' capsule (recommended)"),
    ("PYP-DL-DEVICE", "violation", "__dlpack__ accepts dl_device; the array's own device exports, another raises BufferError"),
    ("PYP-COPY", "violation", "copy=False never copies (BufferError when it must), copy=True copies (IS_COPIED when versioned)"),
    ("PYP-READ-ONLY", "violation", "read-only arrays: READ_ONLY flag when versioned; legacy export refused with BufferError"),
    ("PYP-ERROR-TYPE", "warning", "refusals raise BufferError (TypeError only for unknown arguments)"),
    ("PYP-BYTE-OFFSET", "warning", "exports put element zero in data with byte_offset 0 (address devices)"),
    ("PYP-EXCHANGE-API", "violation", "__dlpack_c_exchange_api__ on the type: capsule name, a major-1 table in the prev_api chain, functions set"),
    ("PYP-EXCHANGE-CALLS", "violation", "the exchange API's functions called on the type's own array agree with __dlpack__"),
    ("PYC-MAX-VERSION", "warning", "from_dlpack calls __dlpack__ with max_version (DLPack >= 1.0 consumers)"),
    ("PYC-KEYWORDS", "violation", "from_dlpack(x, *, device=None, copy=None): copy=False shares, copy=True copies, device= accepted"),
    ("PYC-ERROR-CLASS", "warning", "AttributeError for a non-producer, BufferError for unknown dtypes/devices and propagated from __dlpack__, TypeError for bad types"),
    ("PYC-NULL-STRIDES", "violation", "a legacy tensor with NULL strides imports as C-contiguous"),
    ("PYC-NEGATIVE-STRIDES", "violation", "negative strides import zero-copy, or are refused with an exception (never a crash)"),
    ("PYC-ZERO-SIZE", "violation", "a zero-size tensor with NULL data imports with its shape"),
    ("PYC-READ-ONLY", "violation", "a read-only versioned tensor imports read-only, or is copied or refused"),
    ("PYC-BYTE-OFFSET", "violation", "element 0 is read at data + byte_offset (addresses and element values)"),
    ("PYC-PINNED-MANAGED", "warning", "kDLCUDAHost and kDLCUDAManaged tensors import to the CPU zero-copy with their values"),
    ("PYC-RENAME", "violation", "an imported capsule is renamed 'used_dltensor[_versioned]'"),
    ("PYC-DELETER-ONCE", "violation", "each capsule's deleter runs exactly once (consumed: after the drop; refused: never by the consumer)"),
]

# The standard's rule each PYP/PYC rule checks (array API 2024.12 `__dlpack__`/`from_dlpack`,
# the DLPack Python specification, the DLPack 1.3 header), printed in the Markdown report.
CITES = {
    "PYP-DLPACK-DEVICE": "array API __dlpack_device__: returns (device_type, device_id) of the array's DLDevice",
    "PYP-CAPSULE-NAME": "DLPack python_spec: the capsule is named \"dltensor\" or \"dltensor_versioned\"; max_version=None: legacy",
    "PYP-STREAM": "array API __dlpack__: stream=None must be accepted (the default)",
    "PYP-STREAM-VALUES": "array API __dlpack__ stream: CPU only None; CUDA None, 1, 2, >2, -1 (0 disallowed); ROCm None, 0, >2, -1 (1, 2 not supported)",
    "PYP-MAX-VERSION": "array API 2023.12 __dlpack__(*, stream, max_version, dl_device, copy)",
    "PYP-VERSIONED": "array API __dlpack__ max_version: returning that version is recommended",
    "PYP-DL-DEVICE": "array API __dlpack__ dl_device: export there, or raise BufferError if the producer cannot",
    "PYP-COPY": "array API __dlpack__ copy: True always copies (IS_COPIED), False never copies (BufferError if needed)",
    "PYP-READ-ONLY": "DLPack python_spec / header: READ_ONLY on versioned capsules; BufferError for a legacy consumer",
    "PYP-ERROR-TYPE": "array API __dlpack__: BufferError when the data cannot be exported as asked",
    "PYP-BYTE-OFFSET": "de-facto convention (NumPy, PyTorch, CuPy): element zero in data, byte_offset 0; PyTorch ignores byte_offset on import",
    "PYP-EXCHANGE-API": "DLPack 1.3 header: a PyCapsule \"dlpack_exchange_api\" on the type; check the major; prev_api chain; functions non-NULL",
    "PYP-EXCHANGE-CALLS": "DLPack 1.3 header: managed_tensor_from_py_object_no_sync returns an owning tensor or -1 with an exception; current_work_stream(kDLCPU) may give NULL",
    "PYC-MAX-VERSION": "array API from_dlpack / python_spec: the consumer passes the highest max_version it supports",
    "PYC-KEYWORDS": "array API 2023.12 from_dlpack(x, /, *, device=None, copy=None): copy=True always copies, False never copies",
    "PYC-ERROR-CLASS": "array API 2023.12 from_dlpack Raises: AttributeError without __dlpack__; BufferError from __dlpack__ must propagate; python_spec: BufferError for an unsupported device",
    "PYC-NULL-STRIDES": "DLPack header: NULL strides mean C-contiguous (legacy and < 1.2)",
    "PYC-NEGATIVE-STRIDES": "DLPack header / python_spec: strided arrays, negative strides included, are valid input",
    "PYC-ZERO-SIZE": "DLPack header: a zero-size tensor should have NULL data",
    "PYC-READ-ONLY": "DLPack header: a READ_ONLY tensor must not be written by the consumer",
    "PYC-BYTE-OFFSET": "DLPack header: byte_offset is the offset in bytes from data to the beginning of the tensor",
    "PYC-PINNED-MANAGED": "array API 2023.12 from_dlpack device: memory accessible to the interpreter is importable to the CPU; pinned and managed memory is host-accessible",
    "PYC-RENAME": "DLPack python_spec: a consumed capsule is renamed used_dltensor[_versioned]",
    "PYC-DELETER-ONCE": "DLPack header / python_spec: the consumer calls the deleter once; an unconsumed capsule's destructor does",
}

_RANK = {"not applicable": -2, "skipped": -1, "pass": 0, "note": 1, "warning": 2, "violation": 3}
FINDINGS = ("note", "warning", "violation")


def _area(rule):
    return {"CONF": "C structs (CONF-*)", "PYP": "producer (PYP-*)", "PYC": "consumer (PYC-*)"}.get(
        rule.split("-")[0], "other")


class Results:
    """Per rule: the worst status seen, how often each status was seen, and one example.
    "not applicable" and "skipped" (each with its reason) rank below pass, so a rule that was
    exercised somewhere shows what it found."""

    def __init__(self, rules):
        self.rules = list(rules)  # [(id, severity, summary)]
        self.status = {r[0]: None for r in self.rules}
        self.example = {}
        self.counts = {r[0]: {} for r in self.rules}
        self.covered = {}  # area -> [what was probed]
        self.reasons = {}  # area -> {"not applicable: why": times}

    def add(self, rule, status, example):
        if rule not in self.status:
            self.rules.append((rule, status, "(not in the checker's rule list)"))
            self.status[rule] = None
            self.counts[rule] = {}
        self.counts[rule][status] = self.counts[rule].get(status, 0) + 1
        if status in ("not applicable", "skipped"):
            why = example.split(": ", 1)[-1] if rule != "PYP-STREAM-VALUES" else example
            key = "%s %s: %s" % (rule, status, why)
            reasons = self.reasons.setdefault(_area(rule), {})
            reasons[key] = reasons.get(key, 0) + 1
        current = self.status[rule]
        if current is None or _RANK[status] > _RANK[current]:
            self.status[rule] = status
            self.example[rule] = example
        elif status == current and rule not in self.example:
            self.example[rule] = example

    def cover(self, area, what):
        items = self.covered.setdefault(area, [])
        if what not in items:
            items.append(what)

    def violations(self):
        return [r for r, s in self.status.items() if s == "violation"]

    def rows(self):
        for rule, _sev, summary in self.rules:
            status = self.status[rule]
            counts = ", ".join("%d %s" % (n, s) for s, n in sorted(self.counts[rule].items()))
            yield (rule, status or "not exercised", summary, counts, self.example.get(rule, ""))

    def summary(self):
        """Lines: per area, what was probed and how many rules ended in each result."""
        lines = []
        for area in ("C structs (CONF-*)", "producer (PYP-*)", "consumer (PYC-*)"):
            tally = {}
            for rule, status, _s, _c, _e in self.rows():
                if _area(rule) == area:
                    key = "finding (%s)" % status if status in FINDINGS else status
                    tally[key] = tally.get(key, 0) + 1
            counts = ", ".join("%d %s" % (n, k) for k, n in sorted(tally.items()))
            lines.append("%s: %s" % (area, counts or "no rules"))
            for what in self.covered.get(area, []):
                lines.append("  - %s" % what)
            for why, n in sorted(self.reasons.get(area, {}).items()):
                lines.append("  - %s%s" % (why, " (%d times)" % n if n > 1 else ""))
        return lines



_CHECKER_RULES = dlbridge._checker_rules()


def _run_checker(results, capsule, where):
    findings = dlbridge._check_capsule(capsule)
    seen = set()
    for rule, severity, message in findings:
        results.add(rule, severity, "%s: %s" % (where, message))
        seen.add(rule)
    for rule, _severity, _summary in _CHECKER_RULES:
        if rule not in seen:
            results.add(rule, "pass", where)
    return findings



def render(target, results, markdown):
    header = "DLPack conformance of %s %s (dlbridge %s, DLPack header %d.%d)" % (
        target.name, target.version, dlbridge.__version__, *dlbridge.DLPACK_VERSION)
    if markdown:
        lines = ["| rule | result | what it checks | the standard | counts | example |",
                 "|---|---|---|---|---|---|"]
        for rule, status, summary, counts, example in results.rows():
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                rule, status, summary, CITES.get(rule, "DLPack 1.3 header (spec/conformance.md)"),
                counts, example.replace("|", "\\|")))
        lines += ["", "## Coverage", ""] + ["- " + l if not l.startswith("  ") else "  " + l
                                            for l in results.summary()]
        return header, "\n".join(lines)
    lines = [header, ""]
    for rule, status, _summary, _counts, example in results.rows():
        lines.append("%-22s %-15s %s" % (rule, status, example))
    lines += ["", "Coverage:"] + ["  " + l for l in results.summary()]
    return header, "\n".join(lines)



# CHK-2: the Markdown report a peer pastes into an issue.
def markdown_report(target, results, command, allowed=()):
    """The report a peer can paste into an issue (CHK-2): what was run, with which versions, the
    findings first (each with its example and the standard's rule), then every rule in a
    collapsed table and the coverage. GitHub-flavoured Markdown; nothing machine-specific but
    the versions."""
    import platform
    import sys
    header, table = render(target, results, markdown=True)
    found = [(rule, status, example) for rule, status, _s, _c, example in results.rows()
             if status in FINDINGS]
    found.sort(key=lambda f: -_RANK[f[1]])
    tally = {}
    for _rule, status, _e in found:
        tally[status] = tally.get(status, 0) + 1
    if target.consumer:
        consumer = target.consumer
    elif target.from_dlpack is not None:
        fn = target.from_dlpack
        consumer = "%s.%s" % (getattr(fn, "__module__", None) or "?",
                              getattr(fn, "__qualname__", None) or "from_dlpack")
    else:
        consumer = "none (the consumer side is not applicable)"
    lines = ["## %s" % header, "",
             "- command: `%s`" % command,
             "- library: %s %s; consumer checked: `%s`" % (target.name, target.version, consumer),
             "- Python %s (%s), %s" % (sys.version.split()[0], platform.python_implementation(),
                                       platform.platform(terse=True)),
             "- checker: dlbridge %s, DLPack header %d.%d; rules: "
             "spec/conformance.md of dlbridge" % (dlbridge.__version__, *dlbridge.DLPACK_VERSION),
             "",
             "**Result: %s.**" % (", ".join("%d %s%s" % (n, s, "s" if n > 1 else "")
                                          for s, n in sorted(tally.items(), key=lambda x: -_RANK[x[0]]))
                                 or "no finding"),
             ""]
    if found:
        lines += ["| rule | result | example | the standard |", "|---|---|---|---|"]
        for rule, status, example in found:
            note = " (allowed)" if rule in allowed else ""
            lines.append("| %s | %s%s | %s | %s |" % (
                rule, status, note, example.replace("|", "\\|"),
                CITES.get(rule, "DLPack 1.3 header (spec/conformance.md)")))
        lines.append("")
    lines += ["<details><summary>Every rule (%d) and what was covered</summary>" % len(results.rules),
              "", table, "", "</details>", ""]
    return "\n".join(lines)
