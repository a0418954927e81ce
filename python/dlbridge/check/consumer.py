"""Consumer side, the probes: each edge case into the target's from_dlpack (in a subprocess of
this command, so that a consumer that kills the process is a finding), and what the import got."""
import ctypes
import gc
import json
import subprocess
import sys

from .capsules import _capsule_name, _safe_read
from .devices import HOST_ACCESSIBLE, KDLCPU, KDLCUDA
from .edges import PROBES, _PROBE_RULE, EdgeProducer, _contiguous, _indices
from .findings import PY_RULES
from .targets import _is_read_only

def _describe_import(result):
    """Shape, strides (elements), element 0's address and device type of an imported array:
    read through its own __dlpack__ (versioned first, so read-only imports can answer), else
    __array_interface__ or torch-style data_ptr()/stride(). Raises BufferError when none works."""
    for kwargs in ({"max_version": (1, 3)}, {}):
        try:
            capsule = result.__dlpack__(**kwargs)
        except Exception:  # noqa: BLE001 - a legacy or refusing __dlpack__: try the next way
            continue
        info = _safe_read(capsule)
        if info is None:
            continue
        element0 = (info["data"] + info["byte_offset"]) if info["data"] else None
        strides = info["strides"] or _contiguous(info["shape"])
        return info["shape"], strides, element0, info["device"][0]
    ai = getattr(result, "__array_interface__", None)
    if ai is not None:
        shape = tuple(ai["shape"])
        item = int(ai["typestr"][2:])
        strides = tuple(b // item for b in ai["strides"]) if ai.get("strides") else _contiguous(shape)
        return shape, strides, ai["data"][0] or None, KDLCPU
    if hasattr(result, "data_ptr") and hasattr(result, "stride"):
        device = KDLCUDA if getattr(result, "is_cuda", False) else KDLCPU
        return tuple(result.shape), tuple(result.stride()), result.data_ptr() or None, device
    raise BufferError("the imported object can be described neither by __dlpack__, "
                      "__array_interface__ nor data_ptr()/stride()")


def _read_values(shape, strides, element0, count):
    """The first `count` float32 elements (row-major order) of a host-memory import."""
    return [ctypes.c_float.from_address(element0 + 4 * sum(i * s for i, s in zip(idx, strides))).value
            for idx in _indices(shape)[:count]]


def _import_problems(producer, got):
    """What an import got wrong: shape, strides, element 0 and the element values."""
    shape, strides, element0 = producer.expect
    got_shape, got_strides, got0, got_device = got
    problems = []
    if tuple(got_shape) != shape:
        problems.append("shape %r, expected %r" % (got_shape, shape))
    elif strides is not None and got_strides is not None:
        if [i for i, n in enumerate(shape) if n > 1 and got_strides[i] != strides[i]]:
            problems.append("strides %r, expected %r" % (got_strides, strides))
    if element0 is not None and got0 != element0:
        problems.append("element 0 at %#x, expected %#x (data + byte_offset)" % (got0 or 0, element0))
    if not problems[:1] or problems[0].startswith("element 0"):  # the layout is right: read it
        if got0 and got_device in HOST_ACCESSIBLE and producer.values:
            values = _read_values(got_shape, got_strides, got0, len(producer.values))
            if values != producer.values:
                problems.append("values %r, expected %r" % (values, producer.values))
    return problems


def probe_findings(kind, target):
    """One probe into target.from_dlpack; a list of (rule, status, message)."""
    if kind == "keywords":
        return _probe_keywords(target)
    if kind.startswith("error-"):
        return _probe_error(kind, target)
    out = []
    producer = EdgeProducer(kind)
    rule = _PROBE_RULE[kind]
    try:
        result = target.from_dlpack(producer)
    except Exception as e:  # noqa: BLE001
        status = "warning" if kind in ("negative-strides", "read-only-versioned", "pinned", "managed") else "violation"
        if kind == "read-only-versioned" and not any(c.get("max_version") for c in producer.calls):
            status = "warning"
        out.append((rule, status, "from_dlpack raised %s: %s" % (type(e).__name__, e)))
        result = None
    mv = [c.get("max_version") for c in producer.calls]  # PYC-MAX-VERSION
    out.append(("PYC-MAX-VERSION", "pass" if any(v is not None for v in mv) else "warning",
                "__dlpack__ was called with %s" % (producer.calls,)))
    if result is not None:
        got = None
        try:
            got = _describe_import(result)
        except BufferError as e:
            if kind != "read-only-versioned":
                out.append((rule, "warning", "the imported array cannot be re-exported to check it: %s" % e))
        if got is not None:
            problems = _import_problems(producer, got)
            if kind in ("pinned", "managed") and len(problems) == 1 and problems[0].startswith("element 0") \
                    and _values_ok(producer, got):
                out.append((rule, "warning", "imported a copy (%s); zero-copy expected for "
                            "host-accessible memory" % "; ".join(problems)))
            elif problems:
                out.append((rule, "violation", "; ".join(problems)))
            elif kind != "read-only-versioned":
                out.append((rule, "pass", "imported %r zero-copy%s" % (
                    producer.expect[0], " with the right values" if producer.values else "")))
        if kind == "read-only-versioned":
            shared = got is None or got[2] is None or got[2] == producer.expect[2]
            if shared and not _is_read_only(result) and got is not None:
                out.append((rule, "violation", "imported a READ_ONLY tensor as writable shared memory"))
            else:
                out.append((rule, "pass", "read-only kept (or copied)"))
        names = [_capsule_name(c[0]) for c in producer.capsules]
        if names and names[-1] in ("used_dltensor", "used_dltensor_versioned"):  # PYC-RENAME
            out.append(("PYC-RENAME", "pass", "capsule renamed %r" % names[-1]))
        else:
            out.append(("PYC-RENAME", "violation", "capsule names after import: %r" % names))
        out.extend(producer.audit(alive=True))
        del result
    gc.collect()
    out.extend(producer.audit(alive=False))
    return out


def _values_ok(producer, got):
    shape, strides, got0, device = got
    if not got0 or device not in HOST_ACCESSIBLE:
        return False
    return _read_values(shape, strides, got0, len(producer.values)) == producer.values


def _probe_keywords(target):
    """PYC-KEYWORDS: from_dlpack(x, *, device=None, copy=None) on plain CPU producers."""
    rule, out, unsupported, own_device = "PYC-KEYWORDS", [], set(), None
    first = EdgeProducer("plain")  # a plain import first: the device object the library uses
    try:
        own_device = getattr(target.from_dlpack(first), "device", None)
    except Exception as e:  # noqa: BLE001 - reported by the other probes; here only the device
        out.append((rule, "skipped", "from_dlpack(x) without keywords failed (%s), so its device "
                    "object is unknown" % type(e).__name__))
    gc.collect()
    out.extend(first.audit(alive=False))
    cases = [("copy=None", {"copy": None}, "reuse"), ("copy=False", {"copy": False}, "share"),
             ("copy=True", {"copy": True}, "copy"), ("device=None", {"device": None}, "reuse"),
             ("device=<the import's .device>", None, "share")]
    for label, kwargs, expect in cases:
        if kwargs is None:
            if own_device is None:
                out.append((rule, "skipped", "%s: the imported array has no .device" % label))
                continue
            kwargs = {"device": own_device}
        if set(kwargs) & unsupported:
            continue
        producer = EdgeProducer("plain")
        try:
            result = target.from_dlpack(producer, **kwargs)
        except TypeError as e:
            unsupported |= set(kwargs)
            out.append((rule, "violation", "from_dlpack(x, %s) raised TypeError: %s (array API 2023.12: "
                        "from_dlpack(x, /, *, device=None, copy=None))" % (label, e)))
            continue
        except Exception as e:  # noqa: BLE001 - a plain CPU tensor can always be imported so
            out.append((rule, "violation", "from_dlpack(x, %s) raised %s: %s" % (label, type(e).__name__, e)))
            gc.collect()
            out.extend(producer.audit(alive=False))
            continue
        try:
            got = _describe_import(result)
        except BufferError as e:
            out.append((rule, "warning", "from_dlpack(x, %s): cannot inspect the import: %s" % (label, e)))
            got = None
        if got is not None:
            shared = got[2] == producer.element0
            values = _values_ok(producer, got)
            if expect == "share" and not shared:
                out.append((rule, "violation", "from_dlpack(x, %s) copied (element 0 at %#x, the producer's "
                            "at %#x); it must not" % (label, got[2] or 0, producer.element0)))
            elif expect == "copy" and shared:
                out.append((rule, "violation", "from_dlpack(x, %s) shares the producer's memory; it must "
                            "always copy" % label))
            elif not values:
                out.append((rule, "violation", "from_dlpack(x, %s): wrong element values" % label))
            elif expect == "reuse" and not shared:
                out.append((rule, "warning", "from_dlpack(x, %s) copied although the memory could be "
                            "reused (the standard: reuse if possible)" % label))
            else:
                out.append((rule, "pass", "from_dlpack(x, %s) %s" % (label, "shared" if shared else "copied")))
        del result
        gc.collect()
        out.extend(producer.audit(alive=False))
    return out


# kind -> (the argument from_dlpack gets, keyword arguments, the expected class, the class when
# the expected one is not raised: warning / violation)
_ERROR_CASES = {
    "error-non-producer": (AttributeError, "warning"),
    "error-dtype": (BufferError, "warning"),
    "error-device": (BufferError, "warning"),
    "error-producer-raises": (BufferError, "violation"),
    "error-not-capsule": (TypeError, "warning"),
    "error-bad-copy": (TypeError, "warning"),
}


def _probe_error(kind, target):
    """PYC-ERROR-CLASS: an input the consumer must refuse, and the class it raises."""
    rule, (expected, otherwise) = "PYC-ERROR-CLASS", _ERROR_CASES[kind]
    what = PROBES[kind][1]
    producer = None if kind == "error-non-producer" else EdgeProducer(kind)
    arg = object() if producer is None else producer
    kwargs = {"copy": "yes"} if kind == "error-bad-copy" else {}
    out = []
    if kwargs:  # a TypeError only says something if copy=None itself is accepted
        plain = EdgeProducer("plain")
        try:
            del_me = target.from_dlpack(plain, copy=None)
            del del_me
        except TypeError as e:
            gc.collect()
            return [(rule, "skipped", "%s: from_dlpack does not take copy= at all (%s; see PYC-KEYWORDS)"
                     % (what, e))] + plain.audit(alive=False)
        except Exception:  # noqa: BLE001 - copy=None is accepted; the import's fate is another probe's
            pass
        gc.collect()
        out.extend(plain.audit(alive=False))
    try:
        result = target.from_dlpack(arg, **kwargs)
    except expected as e:
        out.append((rule, "pass", "%s: %s: %s" % (what, type(e).__name__, e)))
    except Exception as e:  # noqa: BLE001
        status = otherwise
        if kind == "error-non-producer" and isinstance(e, TypeError):
            status = "warning"  # the class before the array API's 2023.12 revision
        out.append((rule, status, "%s: raised %s instead: %s" % (what, type(e).__name__, e)))
    else:
        status = "warning" if kind == "error-bad-copy" else "violation"
        out.append((rule, status, "%s: from_dlpack accepted it and returned %s" % (what, type(result).__name__)))
        del result
    gc.collect()
    if producer is not None:
        out.extend(producer.audit(alive=False))
    return out


def run_probe(kind, target):
    """In the child: one probe's findings as one JSON line."""
    print("DLBRIDGE-PROBE " + json.dumps(probe_findings(kind, target)))
    sys.stdout.flush()


def check_consumer(target, spec, results, log, isolate=True, kinds=None):
    """Every probe (or `kinds`) into target.from_dlpack: each in a subprocess of this command
    (isolate; spec names the target there: TARGET, or TARGET and the command's --consumer as a
    list), or in this process (tests of fake consumers)."""
    if target.from_dlpack is None:
        log("  %s has no from_dlpack: consumer side not checked" % target.name)
        for rule, _sev, _summary in PY_RULES:
            if rule.startswith("PYC-"):
                results.add(rule, "not applicable", "%s has no from_dlpack" % target.name)
        return
    for kind in kinds or PROBES:
        rule, what = PROBES[kind]
        results.cover("consumer (PYC-*)", "%s: %s" % (kind, what))
        if not isolate:
            for r, status, message in probe_findings(kind, target):
                results.add(r, status, "%s: %s" % (kind, message))
            continue
        proc = subprocess.run([sys.executable, "-m", "dlbridge.check", "--probe", kind]
                              + ([spec] if isinstance(spec, str) else list(spec)),
                              capture_output=True, text=True, timeout=120)
        line = [l for l in proc.stdout.splitlines() if l.startswith("DLBRIDGE-PROBE ")]
        if proc.returncode != 0 or not line:
            how = ("killed by signal %d" % -proc.returncode if proc.returncode < 0
                   else "exit status %d" % proc.returncode)
            tail = (proc.stderr.strip().splitlines() or [""])[-1][:200]
            results.add(rule, "violation", "%s: from_dlpack ended the process (%s) %s" % (kind, how, tail))
            log("  probe %s: process ended (%s)" % (kind, how))
            continue
        for r, status, message in json.loads(line[-1][len("DLBRIDGE-PROBE "):]):
            results.add(r, status, "%s: %s" % (kind, message))
        log("  probe %s: done" % kind)

