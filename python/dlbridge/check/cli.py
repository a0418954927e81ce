"""The command: ``python3 -m dlbridge.check TARGET`` (both sides of a target, the report,
the exit status)."""
import argparse
import sys

import dlbridge

from . import __doc__ as _PACKAGE_DOC
from .consumer import check_consumer, run_probe
from .findings import PY_RULES, Results, render
from .producer import check_producer
from .targets import make_target

def check(target, spec=None, isolate=True, log=lambda _msg: None):
    """Both sides of `target` (a Target); the Results. spec names the target for the consumer
    probes' subprocesses (isolate), else they run in this process."""
    results = Results(list(dlbridge._checker_rules()) + list(PY_RULES))
    check_producer(target, results, log)
    check_consumer(target, spec, results, log, isolate=isolate and spec is not None)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m dlbridge.check", description=_PACKAGE_DOC.split("\n\n")[0])
    parser.add_argument("target", help="numpy, torch, dlbridge or module:factory")
    parser.add_argument("--report-only", action="store_true", help="exit 0 even with violations")
    parser.add_argument("--allow", default="", metavar="RULE,...",
                        help="violations of these rules are reported but do not fail the run")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    target = make_target(args.target)
    if args.probe:
        run_probe(args.probe, target)
        return 0
    log = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    results = check(target, args.target, log=log)
    header, text = render(target, results, markdown=False)
    print(text)
    if args.markdown:
        _h, table = render(target, results, markdown=True)
        with open(args.markdown, "w") as f:
            f.write("# %s\n\n%s\n" % (header, table))
    bad = results.violations()
    allowed = {r.strip() for r in args.allow.split(",") if r.strip()}
    if bad:
        print("\nviolations: %s" % ", ".join(bad))
    failing = [r for r in bad if r not in allowed]
    if bad and not failing:
        print("(all allowed by --allow)")
    return 0 if args.report_only or not failing else 1
