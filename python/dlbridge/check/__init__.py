"""DLPack conformance check of a Python array library, producer and consumer side.

    python3 -m dlbridge.check TARGET [--consumer MODULE:ATTR] [--report-only] [--allow RULE,...]
                                     [--markdown FILE|-]

TARGET is ``numpy``, ``torch``, ``dlbridge`` or ``module:factory``: a callable returning an
iterable of arrays or of ``(label, array)`` pairs (never a single array, even an iterable one:
that is refused with the contract, exit status 2; ``FACTORY_CONTRACT`` and ``EXAMPLE_FACTORY``
below, and ``--help``, say it in full). The consumer checked is ``--consumer`` if given, else the
factory's own ``from_dlpack`` attribute, else ``module.from_dlpack``, if any. ``--markdown``
writes a report to paste into an issue (``-``: to stdout instead of the text table). Rules and
their meaning: spec/conformance.md.

Producer side: a matrix of arrays (dtypes x shapes x strides x zero-size x read-only x 0-d)
is exported through ``__dlpack__`` with the standard's argument combinations, and every
capsule is run through dlbridge's C++ checker (``dlbridge._check_capsule``, CONF-* rules)
without being consumed; the Python protocol rules are PYP-*: keywords, capsule names, the
device, copies, read-only, where element zero is (``byte_offset``), the stream values of each
device the matrix has, and the C exchange API when the array's type publishes one.

Consumer side: the library's ``from_dlpack`` is fed dlbridge's edge-case producers (legacy NULL
strides, negative strides, zero-size with NULL data, read-only versioned, byte_offset != 0,
pinned and managed memory, the ``device``/``copy`` keywords, inputs it must refuse with the
standard's exception classes), each in its own subprocess so that a consumer that kills the
process is reported as a finding (PYC-*), not as a crash of the checker; every capsule handed
out is audited for exactly one deleter call, on success and on failure.

Prints one row per rule (pass, a finding: note / warning / violation, not applicable with the
reason, skipped, or not exercised; with an example and the standard's rule it checks), then
what was covered per area with counts, and exits 1 when any rule is violated, unless
--report-only (or the rule is listed in --allow).
"""
# The package, by concern: devices.py (the core's device table, through the module),
# capsules.py (reading capsules), findings.py (the rules, the results and the report),
# targets.py (the array matrix of each library), producer.py and exchange.py (the producer
# side), edges.py and consumer.py (the consumer side), cli.py (the command; __main__.py runs it).
from .capsules import FLAG_IS_COPIED, FLAG_READ_ONLY
from .capsules import _safe_read  # noqa: F401 - a helper tests/python/test_check.py reads
from .cli import check, main
from .consumer import check_consumer, probe_findings, run_probe
from .devices import KDLCPU, KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED, KDLHEXAGON, KDLROCM
from .edges import PROBES, EdgeProducer
from .edges import _contiguous  # noqa: F401 - a helper tests/python/test_check.py reads
from .exchange import check_exchange_api
from .findings import CITES, FINDINGS, PY_RULES, Results, markdown_report, render
from .producer import CALLS, check_producer, check_streams
from .targets import (EXAMPLE_FACTORY, FACTORY_CONTRACT, DlbridgeTarget, FactoryError,
                      FactoryTarget, NumpyTarget, Target, TorchTarget, load_consumer, make_target)

__all__ = ["CALLS", "CITES", "EXAMPLE_FACTORY", "FACTORY_CONTRACT", "FINDINGS", "FLAG_IS_COPIED",
           "FLAG_READ_ONLY", "KDLCPU", "KDLCUDA", "KDLCUDAHOST", "KDLCUDAMANAGED", "KDLHEXAGON",
           "KDLROCM", "PROBES", "PY_RULES", "DlbridgeTarget", "EdgeProducer", "FactoryError",
           "FactoryTarget", "NumpyTarget", "Results", "Target", "TorchTarget", "check",
           "check_consumer", "check_exchange_api", "check_producer", "check_streams",
           "load_consumer", "main", "make_target", "markdown_report", "probe_findings", "render",
           "run_probe"]
