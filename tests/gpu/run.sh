#!/usr/bin/env bash
# GPU check (spec/device-map.md GPU-*), for a machine with an NVIDIA GPU and the CUDA toolkit:
# builds libdlbridge (CUDA backend on, no tests, no doctest / Google Benchmark needed) and
# tests/gpu/gpu_check.cu, runs it (device, pinned, registered, managed and pool memory), then,
# if the dlbridge Python module could be built, exchanges CUDA tensors with PyTorch and CuPy
# through DLPack both ways (tests/gpu/interop.py). Both end with the race case (spec/streams.md
# STR-9): a slow kernel writes on a non-blocking stream, the buffer crosses dlbridge, a consumer
# on another stream must see the final values; a second run with ordering off
# (DLBRIDGE_GPU_RACE_ORDERING=off, read by the test programs only) must see the race, else it
# reports "race not observed, check inconclusive". Then the copies (tests/gpu/copies.py,
# spec/python.md PY-65): values checked after D2H, H2D and D2D copies through dlbridge and
# NumPy 2's from_dlpack(device="cpu") of a dlbridge GPU tensor, and a timing table (exchanges of
# 4 KiB and 4 GiB, ordered and unordered, against PyTorch -> CuPy; D2H copy bandwidth against a
# plain cudaMemcpy) written to $GPU_REPORT (default <build>/gpu-report.md), for the lead to
# commit under spec/reports/. Prints summary tables; exits non-zero on any failure, 2 when there
# is no GPU. Aims at well under 5 minutes. Without a GPU, ctest's python.test_gpu_script runs
# copies.py against the fake CUDA driver (copies.py --fake) and parses this script (bash -n).
#
#   tests/gpu/run.sh                      # build in build/gpu-check
#   GPU_CHECK_BUILD=/tmp/b tests/gpu/run.sh
#   DLPACK_INCLUDE_DIR=/path/to/include tests/gpu/run.sh   # a dlpack/dlpack.h >= 1.0
#   CUDA_HOME=/usr/local/cuda-13 tests/gpu/run.sh
#   GPU_REPORT=/tmp/gpu-report.md tests/gpu/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPU_CHECK_BUILD:-$root/build/gpu-check}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
start=$(date +%s)
say() { echo "gpu check: $*"; }
die() { echo "gpu check: FAIL: $1" >&2; exit "${2:-1}"; }

# 1. A GPU, or a clear failure.
if ! command -v nvidia-smi >/dev/null 2>&1; then
  die "no NVIDIA GPU here (nvidia-smi not found); this check needs a machine with one" 2
fi
if ! nvidia-smi -L >/dev/null 2>&1 || [ -z "$(nvidia-smi -L 2>/dev/null)" ]; then
  die "nvidia-smi lists no GPU: $(nvidia-smi -L 2>&1 | head -3)" 2
fi
nvidia-smi -L | sed 's/^/gpu check: /'

# 2. The CUDA toolkit (cuda.h for the backend, cuda_runtime.h and cudart for the program).
cuda_home=${CUDA_HOME:-${CUDA_PATH:-}}
if [ -z "$cuda_home" ]; then
  if command -v nvcc >/dev/null 2>&1; then cuda_home=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
  else cuda_home=/usr/local/cuda; fi
fi
[ -f "$cuda_home/include/cuda.h" ] || die "no CUDA toolkit at $cuda_home (set CUDA_HOME)"
say "CUDA toolkit $cuda_home"

# 3. A DLPack >= 1.0 header: DLPACK_INCLUDE_DIR, the copy scripts/setup extracted into .deps/,
# or one shipped inside an installed Python package (there is no network on GPU machines).
python=${PYTHON:-$(command -v python3 || true)}
dlpack_ok() { [ -f "$1/dlpack/dlpack.h" ] && grep -q '#define DLPACK_MAJOR_VERSION 1' "$1/dlpack/dlpack.h"; }
dlpack=${DLPACK_INCLUDE_DIR:-}
if [ -z "$dlpack" ] && dlpack_ok "$root/.deps/dlpack/usr/include"; then dlpack=$root/.deps/dlpack/usr/include; fi
if [ -z "$dlpack" ] && [ -n "$python" ]; then
  for mod in cupy torch jax jaxlib tvm; do
    dir=$("$python" -c "import importlib.util as u, os; s = u.find_spec('$mod'); print(os.path.dirname(s.origin) if s and s.origin else '')" 2>/dev/null || true)
    [ -n "$dir" ] || continue
    while IFS= read -r header; do
      inc=$(dirname "$(dirname "$header")")
      if dlpack_ok "$inc"; then dlpack=$inc; break 2; fi
    done < <(find "$dir" -path '*dlpack/dlpack.h' 2>/dev/null | head -20)
  done
fi
[ -n "$dlpack" ] || die "no DLPack >= 1.0 header: run scripts/setup on a networked machine and bring .deps/, or set DLPACK_INCLUDE_DIR"
say "DLPack header $dlpack/dlpack/dlpack.h ($(grep -m2 -E 'define DLPACK_(MAJOR|MINOR)_VERSION' "$dlpack/dlpack/dlpack.h" | awk '{print $3}' | paste -sd.))"

# 4. libdlbridge, with the Python module when the interpreter has its development files.
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=Ninja" "$build/CMakeCache.txt" && generator=()
common=(-S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
        -DDLBRIDGE_BUILD_TESTS=OFF -DDLBRIDGE_BUILD_EXAMPLES=OFF -DDLBRIDGE_BUILD_BENCHMARKS=OFF
        -DDLBRIDGE_INSTALL=OFF -DDLBRIDGE_WERROR=OFF -DDLBRIDGE_LEDGER=ON
        -DDLBRIDGE_TESTING_HOOKS=ON
        -DDLBRIDGE_WITH_CUDA=ON -DDLBRIDGE_CUDA_INCLUDE_DIR="$cuda_home/include"
        -DDLBRIDGE_DLPACK_INCLUDE_DIR="$dlpack")
mkdir -p "$build"
with_python=OFF
if [ -n "$python" ] && [ -f "$root/python/CMakeLists.txt" ]; then
  if cmake "${common[@]}" -DDLBRIDGE_BUILD_PYTHON=ON -DPython3_EXECUTABLE="$python" >"$build/configure.log" 2>&1; then
    with_python=ON
  else
    say "the Python module cannot be configured here (see $build/configure.log); building without it"
  fi
fi
if [ "$with_python" = OFF ]; then
  cmake "${common[@]}" -DDLBRIDGE_BUILD_PYTHON=OFF >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; die "configure failed"; }
fi
grep -E "dlbridge: (CUDA|HIP|LEVEL_ZERO) backend" "$build/configure.log" | sed 's/^-- /gpu check: /'
if ! cmake --build "$build" -j "$jobs" >"$build/build.log" 2>&1; then
  if [ "$with_python" = ON ]; then
    say "building with the Python module failed (see $build/build.log); retrying without it"
    with_python=OFF
    cmake "${common[@]}" -DDLBRIDGE_BUILD_PYTHON=OFF >"$build/configure.log" 2>&1
    cmake --build "$build" -j "$jobs" >"$build/build.log" 2>&1 || { tail -40 "$build/build.log"; die "build failed"; }
  else
    tail -40 "$build/build.log"; die "build failed"
  fi
fi
lib_dir=$build
[ -f "$lib_dir/libdlbridge.so" ] || lib_dir=$(dirname "$(find "$build" -name 'libdlbridge.so' | head -1)")
say "built libdlbridge in $(( $(date +%s) - start )) s"

# 5. The check program: nvcc when present, else the C++ compiler against the CUDA runtime.
exe=$build/gpu_check
src=$root/tests/gpu/gpu_check.cu
flags=(-std=c++17 -O2 -I"$root/include" -I"$root/testing/include" -I"$dlpack" -L"$lib_dir" -ldlbridge)
if command -v nvcc >/dev/null 2>&1 || [ -x "$cuda_home/bin/nvcc" ]; then
  nvcc_bin=$(command -v nvcc || echo "$cuda_home/bin/nvcc")
  "$nvcc_bin" "${flags[@]}" -Xlinker -rpath -Xlinker "$lib_dir" "$src" -o "$exe"
else
  "${CXX:-c++}" -x c++ "$src" "${flags[@]}" -I"$cuda_home/include" -L"$cuda_home/lib64" -lcudart \
    -Wl,-rpath,"$lib_dir" -Wl,-rpath,"$cuda_home/lib64" -pthread -o "$exe"
fi
status=0
"$exe" || status=$?
[ "$status" -eq 2 ] && die "gpu_check found no CUDA device" 2
# The race case again with the ordering left out: it must see the race (exit 0), 3 is
# "race not observed, check inconclusive" (reported, not a failure of dlbridge).
race_cpp=0
DLBRIDGE_GPU_RACE_ORDERING=off "$exe" --race-only || race_cpp=$?

# 6. PyTorch and CuPy through DLPack, then the copies and the timing report, when the module
# exists.
py_status=0
copies_status=skipped
race_py=skipped
report=${GPU_REPORT:-$build/gpu-report.md}
if [ "$with_python" = ON ] && ls "$build"/python/dlbridge/_dlbridge*.so >/dev/null 2>&1; then
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$python" "$root/tests/gpu/interop.py" || py_status=$?
  race_py=0
  DLBRIDGE_GPU_RACE_ORDERING=off PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
    "$python" "$root/tests/gpu/interop.py" --race-only || race_py=$?
  copies_status=0
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$python" "$root/tests/gpu/copies.py" \
    --report "$report" || copies_status=$?
else
  say "python interop and copies: skipped (the dlbridge Python module was not built)"
fi

# What the race case showed: ordered runs are in the exit statuses above; the unordered ones
# show whether the check can see a race at all.
race_text() {
  case "$1" in
    0) echo "race observed: the check can see a race" ;;
    3) echo "race not observed, check inconclusive" ;;
    skipped) echo "skipped" ;;
    *) echo "FAIL (exit $1)" ;;
  esac
}
echo
echo "| race case, ordering off                | result"
echo "|----------------------------------------|------------------------------------------"
printf '| %-38s | %s\n' "C++ (gpu_check --race-only)" "$(race_text "$race_cpp")"
printf '| %-38s | %s\n' "Python (interop.py --race-only)" "$(race_text "$race_py")"
race_status=0
for r in "$race_cpp" "$race_py"; do
  case "$r" in 0|3|skipped) ;; *) race_status=1 ;; esac
done

elapsed=$(( $(date +%s) - start ))
say "done in ${elapsed} s"
[ "$elapsed" -le 300 ] || say "WARNING: took longer than the 5-minute budget"
if [ "$status" -ne 0 ] || [ "$py_status" -ne 0 ] || [ "$race_status" -ne 0 ] ||
   { [ "$copies_status" != 0 ] && [ "$copies_status" != skipped ]; }; then
  die "gpu_check exit $status, python interop exit $py_status, copies exit $copies_status (wrong values are named in its table above), unordered race runs: C++ $(race_text "$race_cpp"), Python $(race_text "$race_py")"
fi
[ "$copies_status" = 0 ] && say "copies and timings: report in $report (commit it under spec/reports/)"
if [ "$race_cpp" = 3 ] || [ "$race_py" = 3 ]; then
  say "race not observed, check inconclusive: the ordered race rows above prove nothing on this machine"
fi
say "all checks passed"
