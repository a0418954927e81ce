#!/usr/bin/env python3
"""Only src/dlpack/spare_slot.cpp reaches a thread-local through a TLS descriptor (see LT-8).

A TLS descriptor's call is assumed by GCC to change rax alone, so it keeps vector values in
registers across it; glibc before 2.40 (BZ #31372) clobbers the vector registers in the
descriptor's slow path, which a dlopen'ed libdlbridge takes (its thread-locals exceed the static
surplus). An object with a descriptor call may then lose data silently (a reviewer reproduced an
empty dlb_last_error() from c_api.cpp built that way). spare_slot.cpp holds one function with
nothing live across its call, reached by an ordinary call (CMakeLists.txt, spare_slot.cpp).

    check_tls_descriptors.py --readelf READELF [--expect-spare] OBJECT...

Reads each object's relocations (readelf -rW): R_X86_64_TLSDESC_CALL marks a descriptor call.
Fails when an object other than spare_slot.cpp's has one; with --expect-spare (the build
compiled spare_slot.cpp with descriptors), also when spare_slot.cpp's has none, so that the
check cannot pass by reading nothing.
"""
import argparse
import os
import subprocess
import sys

SPARE = "spare_slot.cpp"


def descriptor_calls(readelf, path):
    """How many R_X86_64_TLSDESC_CALL relocations the object has."""
    out = subprocess.run([readelf, "-rW", path], capture_output=True, text=True, check=True).stdout
    return sum(1 for line in out.splitlines() if "R_X86_64_TLSDESC_CALL" in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readelf", required=True)
    parser.add_argument("--expect-spare", action="store_true")
    parser.add_argument("objects", nargs="+")
    args = parser.parse_args()
    problems = []
    spare_calls = None
    for path in args.objects:
        calls = descriptor_calls(args.readelf, path)
        if os.path.basename(path).startswith(SPARE + "."):
            spare_calls = calls
        elif calls:
            problems.append(f"{path}: {calls} TLS descriptor call(s); only {SPARE} may have them "
                            "(compile it without -mtls-dialect=gnu2: see CMakeLists.txt)")
    if spare_calls is None:
        problems.append(f"no object of {SPARE} among the {len(args.objects)} given")
    elif args.expect_spare and spare_calls == 0:
        problems.append(f"{SPARE} has no TLS descriptor call, but the build compiled it with "
                        "-mtls-dialect=gnu2: is the check reading the right relocations?")
    for problem in problems:
        print("check_tls_descriptors:", problem)
    print(f"check_tls_descriptors: {len(args.objects)} objects, {SPARE}: "
          f"{spare_calls} descriptor call(s); {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
