"""The command: ``python3 -m dlbridge.check TARGET`` (both sides of a target, the report,
the exit status)."""
import argparse
import shlex
import sys

import dlbridge

from . import __doc__ as _PACKAGE_DOC
from .consumer import check_consumer, run_probe
from .findings import PY_RULES, Results, markdown_report, render
from .producer import check_producer
from .targets import (EXAMPLE_FACTORY, FACTORY_CONTRACT, FactoryError, FactoryTarget,
                      make_target)

def check(target, spec=None, isolate=True, log=lambda _msg: None):
    """Both sides of `target` (a Target); the Results. spec names the target for the consumer
    probes' subprocesses (isolate), else they run in this process."""
    results = Results(list(dlbridge._checker_rules()) + list(PY_RULES))
    check_producer(target, results, log)
    check_consumer(target, spec, results, log, isolate=isolate and spec is not None)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m dlbridge.check", description=_PACKAGE_DOC.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="TARGET:\n  numpy, torch, dlbridge  the library's own arrays and from_dlpack\n  "
               + FACTORY_CONTRACT.replace("\n", "\n  ")
               + "\n\nAn example factory:\n\n  " + EXAMPLE_FACTORY.replace("\n", "\n  ")
               + "\n\nExit status: 0 clean (or --report-only), 1 a violation, 2 a TARGET or "
                 "--consumer that cannot be used.\nRules: spec/conformance.md (PYP-*, PYC-*, CONF-*).")
    parser.add_argument("target", metavar="TARGET", help="numpy, torch, dlbridge or module:factory (below)")
    parser.add_argument("--consumer", metavar="MODULE:ATTR",
                        help="the from_dlpack to check on the consumer side, for a library whose "
                             "from_dlpack lives elsewhere (e.g. torch.utils.dlpack:from_dlpack)")
    parser.add_argument("--report-only", action="store_true", help="exit 0 even with violations")
    parser.add_argument("--allow", default="", metavar="RULE,...",
                        help="violations of these rules are reported but do not fail the run")
    parser.add_argument("--markdown", metavar="FILE",
                        help="also write a Markdown report to paste into an issue (- for stdout)")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    try:
        target = make_target(args.target, args.consumer)
        if isinstance(target, FactoryTarget) and not args.probe:
            target.validate()  # the factory's contract before anything runs: see CHK-1
    except FactoryError as e:
        print("dlbridge.check: %s" % e, file=sys.stderr)
        return 2
    if args.probe:
        run_probe(args.probe, target)
        return 0
    log = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    spec = [args.target] + (["--consumer", args.consumer] if args.consumer else [])
    results = check(target, spec, log=log)
    allowed = {r.strip() for r in args.allow.split(",") if r.strip()}
    if args.markdown == "-":
        print(markdown_report(target, results, _command_line(argv), allowed))
    else:
        _header, text = render(target, results, markdown=False)
        print(text)
    if args.markdown and args.markdown != "-":
        with open(args.markdown, "w") as f:
            f.write(markdown_report(target, results, _command_line(argv), allowed))
    bad = results.violations()
    if bad:
        print("\nviolations: %s" % ", ".join(bad))
    failing = [r for r in bad if r not in allowed]
    if bad and not failing:
        print("(all allowed by --allow)")
    return 0 if args.report_only or not failing else 1


def _command_line(argv):
    words = ["python3", "-m", "dlbridge.check"] + list(sys.argv[1:] if argv is None else argv)
    return " ".join(shlex.quote(w) for w in words)
