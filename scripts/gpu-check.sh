#!/usr/bin/env bash
# The GPU harness, in two halves (docs/backends.md, "The GPU harness"):
#
#   scripts/gpu-check.sh prepare         here, without a GPU: gathers into .gpu/ (ignored) what
#                                        the GPU machine lacks, and checks that .gpu/ and the
#                                        sources fit in what its tool carries (64 MiB)
#   scripts/gpu-check.sh run OUT-DIR     on the GPU machine, with .gpu/ carried along: builds the
#                                        tests, examples and kfuse-bench with nvcc for its GPU,
#                                        runs ctest and kfuse-bench at GPU sizes, and writes
#                                        summary.md, ctest.log, build.log, bench.txt,
#                                        bench.json and, when a workload crashed, its stack
#                                        (bench-crash.txt: gdb, or scripts/crash-report.c)
#                                        into OUT-DIR (about 9 minutes on 16 cores)
#   scripts/gpu-check.sh simulate OUT-DIR
#                                        `run` here, as root, in a mount namespace that hides
#                                        the Debian packages the GPU machine lacks (Boost,
#                                        doctest, Kokkos, Open MPI, PETSc, ...), with a
#                                        stand-in nvidia-smi: checks the harness without a GPU
#                                        (everything builds; the tests then stop in
#                                        Kokkos::initialize, there being no driver)
#
# .gpu/ holds: kokkos/ (CUDA Kokkos + Kokkos Kernels of scripts/build-kokkos.sh cuda, built or
# reused), prefix/ (the headers and CMake package files of Boost.Hana, doctest, CLI11 and
# nlohmann-json), openmpi/ (Debian's Open MPI: runtime, plugins, headers, compiler wrappers,
# and the libraries they need beyond glibc; relocated with OPAL_PREFIX by openmpi/env.sh),
# matrices/ (the real test matrices, when ../shared/matrices is there) and MANIFEST. When
# Open MPI does not start there, run builds the one-rank build (KFUSE_ENABLE_MPI=OFF).
#
# Environment knobs:
#   KFUSE_GPU_DIR            the folder prepare fills and run reads (default <repo>/.gpu)
#   KFUSE_KOKKOS_CUDA_ARCH   the GPU generation prepare builds for (default HOPPER90: H100, H200)
#   KFUSE_GPU_CARRY_LIMIT    bytes the GPU machine's tool carries (default 64 MiB)
#   KFUSE_GPU_MPI            ON|OFF: carry Open MPI (default ON)
#   KFUSE_GPU_BUDGET         seconds run may take in all (default 560); each phase's limit
#                            grows with it (a dry run on a small machine sets it high)
#   KFUSE_GPU_TARGETS        build only these targets, e.g. "test_expr_operators kfuse-bench"
#                            (default: all), for a quick re-check of what failed
#   KFUSE_GPU_TESTS          ctest -R regex: run only the tests it matches (default: all), or
#                            "none": no ctest (the second call of docs/backends.md's recipe)
#   KFUSE_GPU_WORKLOADS      the benchmark workloads to run, e.g. "cg swe", or "none"
#                            (default: every workload of GPU_BENCH_SIZES)
#   KFUSE_GPU_PROFILE        the workloads whose kernels Nsight Compute measures after the
#                            benchmarks (profile.md: DRAM bytes, L2 hit rate, occupancy and
#                            issue use per kernel), or "none"
#                            (default: "black_scholes stencil_jacobi cg gmg")
#   JOBS                     build parallelism (default: nproc)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
gpu_dir=${KFUSE_GPU_DIR:-$repo/.gpu}
case "$gpu_dir" in /*) ;; *) gpu_dir=$repo/$gpu_dir ;; esac
JOBS=${JOBS:-$(nproc)}

die() { echo "gpu-check: error: $*" >&2; exit 1; }
say() { echo "gpu-check: $*"; }
usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }

# The benchmark sizes on a GPU: each workload's arrays (and matrix) take at least 1 GiB in all,
# so that every kernel streams from device memory rather than the 50-60 MB L2.
#   black_scholes 40 B an option; stencil_jacobi 2 arrays; swe 6; cfd 7; cg_matfree 5 vectors;
#   cg and bicgstab a 5-point CSR matrix (60 B a row) and 4 or 8 vectors; gmg the same matrix
#   and a quarter-size coarse level.
GPU_BENCH_SIZES=(
  black_scholes=33554432
  stencil_jacobi=8192
  swe=5120
  cfd=4608
  cg=4096
  bicgstab=4096
  gmg=4096
  cg_matfree=6144  # last: 83 s in run 4 (MDRangePolicy then), the others 9-16 s each
)
GPU_STREAM_DOUBLES=134217728  # 1 GiB an array, 3 GiB in all

# ------------------------------------------------------------------------------- prepare
copy_headers() {  # DEST: the headers the build needs that the GPU machine lacks
  local inc=$1/include
  mkdir -p "$inc/boost"
  # Boost.Hana includes only boost/hana/*; FindBoost and BoostConfig read version.hpp and
  # config.hpp (and nvcc builds pick their compiler file from config/).
  cp -a /usr/include/boost/hana /usr/include/boost/hana.hpp /usr/include/boost/version.hpp \
    /usr/include/boost/config /usr/include/boost/config.hpp "$inc/boost/"
  cp -a /usr/include/doctest /usr/include/CLI /usr/include/nlohmann "$inc/"
}

# CMake package files that find the headers relative to themselves (Debian's CLI11,
# nlohmann-json and Boost ones do; Debian's doctest names /usr, so it gets its own).
copy_package_files() {  # DEST
  local dest=$1 multiarch boost_version
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  mkdir -p "$dest/share/cmake" "$dest/lib/$multiarch/cmake" "$dest/lib/cmake/doctest"
  cp -a /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$dest/share/cmake/"
  boost_version=$(awk '$1 == "#define" && $2 == "BOOST_VERSION" {
      printf "%d.%d.%d", $3 / 100000, $3 / 100 % 1000, $3 % 100 }' /usr/include/boost/version.hpp)
  [ -n "$boost_version" ] || die "no BOOST_VERSION in /usr/include/boost/version.hpp"
  local d
  for d in "Boost-$boost_version" "boost_headers-$boost_version"; do
    [ -d "/usr/lib/$multiarch/cmake/$d" ] || die "no /usr/lib/$multiarch/cmake/$d"
    cp -a "/usr/lib/$multiarch/cmake/$d" "$dest/lib/$multiarch/cmake/"
  done
  cp -a /usr/lib/cmake/doctest/doctestConfigVersion.cmake "$dest/lib/cmake/doctest/"
  cat > "$dest/lib/cmake/doctest/doctestConfig.cmake" <<'CMAKE'
# doctest is one header; written by scripts/gpu-check.sh prepare (Debian's names /usr).
if(NOT TARGET doctest::doctest)
  add_library(doctest::doctest INTERFACE IMPORTED)
  set_target_properties(doctest::doctest PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include")
endif()
CMAKE
}

# Debian's Open MPI as a relocatable tree: the packages' files (no docs) under DEST/usr, the
# libraries they link beyond glibc (udev, zlib, munge), the usual command names, and env.sh,
# which points Open MPI and PMIx at the tree wherever it lands. The network plugins (UCX,
# libfabric, PSM) find no library there and are skipped silently: one node needs none.
OPEN_MPI_PACKAGES=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15
                   libevent-core-2.1-7 libevent-pthreads-2.1-7)
OPEN_MPI_EXTRA_LIBS=(libudev.so.1 libz.so.1 libmunge.so.2)

copy_open_mpi() {  # DEST
  local dest=$1 multiarch package lib
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  mkdir -p "$dest"
  for package in "${OPEN_MPI_PACKAGES[@]}"; do
    kfuse_package_installed "$package" || die "Open MPI: $package is not installed"
    dpkg -L "$package" | grep -vE '^/usr/share/(doc|man|lintian)/' |
      while read -r f; do [ -f "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
      tar -cf - --null -T - 2>/dev/null | tar -xf - -C "$dest"
  done
  for lib in "${OPEN_MPI_EXTRA_LIBS[@]}"; do
    cp -L "/lib/$multiarch/$lib" "$dest/usr/lib/$multiarch/" || die "Open MPI: no /lib/$multiarch/$lib"
  done
  local name
  for name in mpiexec mpirun mpicc mpicxx; do
    ln -sf "$name.openmpi" "$dest/usr/bin/$name"
  done
  cat > "$dest/env.sh" <<ENV
# Open MPI carried by scripts/gpu-check.sh prepare: source this file, wherever it lies.
_kfuse_ompi=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)/usr
export OPAL_PREFIX=\$_kfuse_ompi PMIX_INSTALL_PREFIX=\$_kfuse_ompi/lib/$multiarch/pmix2
export PATH=\$_kfuse_ompi/bin:\$PATH
export LD_LIBRARY_PATH=\$_kfuse_ompi/lib/$multiarch:\$_kfuse_ompi/lib/$multiarch/openmpi/lib:\$_kfuse_ompi/lib/$multiarch/pmix2/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export OMPI_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
unset _kfuse_ompi
ENV
}

# Bytes of what the device tool carries: the files git tracks or does not ignore, shared/ in
# the checkout, and the carried folder.
carried_bytes() {
  local sources=0 shared=0 carried
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    sources=$(git ls-files -z --cached --others --exclude-standard |
              xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
  else  # not a git checkout: everything but the build folders
    sources=$(du -sb --exclude=./build --exclude=./.deps --exclude="./$(basename "$gpu_dir")" . |
              cut -f1)
  fi
  [ -d shared ] && shared=$(du -sb shared | cut -f1)
  carried=$(du -sb "$gpu_dir" | cut -f1)
  echo "$sources $shared $carried"
}

prepare() {
  source scripts/lib/deps.sh
  kfuse_install_packages
  local kokkos=${KFUSE_DEPS_DIR:-$repo/.deps}/kokkos-cuda
  scripts/build-kokkos.sh cuda "$kokkos"
  local arch=${KFUSE_KOKKOS_CUDA_ARCH:-HOPPER90}

  rm -rf "$gpu_dir"
  mkdir -p "$gpu_dir"
  # Not git's business, wherever the folder is.
  printf '# made by scripts/gpu-check.sh prepare\n*\n' > "$gpu_dir/.gitignore"
  cp -a "$kokkos" "$gpu_dir/kokkos"
  rm -rf "$gpu_dir/kokkos/share/kfuse-kokkos"/*.log  # build logs: the stamp stays
  copy_headers "$gpu_dir/prefix"
  copy_package_files "$gpu_dir/prefix"
  local mpi="not carried (KFUSE_GPU_MPI=OFF): one-rank build, KFUSE_ENABLE_MPI=OFF"
  if [ "${KFUSE_GPU_MPI:-ON}" = ON ]; then
    copy_open_mpi "$gpu_dir/openmpi"
    mpi="Open MPI $(dpkg-query -W -f='${Version}' libopenmpi3) (Debian), relocatable"
  fi
  local matrices=""
  for d in "$repo/../shared/matrices" "$repo/shared/matrices"; do
    if [ -f "$d/spd/1138_bus.mtx" ]; then
      cp -a "$d" "$gpu_dir/matrices"
      matrices=$d
      break
    fi
  done
  {
    echo "prepared: $(date -u +%Y-%m-%dT%H:%MZ) from $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "kokkos_arch: $arch"
    echo "kokkos: $(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")/\1/p' \
      "$gpu_dir/kokkos/lib/cmake/Kokkos/KokkosConfigVersion.cmake") (CUDA, scripts/build-kokkos.sh)"
    echo "nvcc_here: $(nvcc --version 2>/dev/null | tail -n1 || echo none)"
    echo "host_cxx_here: $(c++ --version | head -n1)"
    echo "matrices: ${matrices:-none (the sparse tests leave the real matrices out)}"
    echo "mpi: $mpi"
  } > "$gpu_dir/MANIFEST"

  local limit=${KFUSE_GPU_CARRY_LIMIT:-67108864} sources shared carried total
  read -r sources shared carried < <(carried_bytes)
  total=$((sources + shared + carried))
  say "carried: sources $((sources / 1024)) KiB + shared/ $((shared / 1024)) KiB + $(basename "$gpu_dir")/ $((carried / 1024)) KiB = $((total / 1048576)) MiB of $((limit / 1048576)) MiB"
  ((total <= limit)) || die "$((total / 1048576)) MiB is more than the $((limit / 1048576)) MiB the GPU machine's tool carries"
  say "ready: on the GPU machine, carry '$(realpath --relative-to="$repo" "$gpu_dir")' and run: scripts/gpu-check.sh run \$OUT"
}

# ------------------------------------------------------------------------------- run
started=$(date +%s)
budget=${KFUSE_GPU_BUDGET:-560}
remaining() { echo $((budget - ($(date +%s) - started))); }

# Runs a phase under `timeout`: at most SECONDS (a share of the default 480 s budget, scaled
# with KFUSE_GPU_BUDGET) and what is left of the budget.
phase() {  # NAME SECONDS LOG CMD...
  local name=$1 seconds=$(($2 * budget / 480)) log=$3 left rc=0
  shift 3
  left=$(remaining)
  ((seconds < left)) || seconds=$left
  if ((seconds <= 5)); then
    echo "- $name: skipped, the time budget is spent" >> "$summary"
    return 1
  fi
  local t0
  t0=$(date +%s)
  timeout --kill-after=10 "$seconds" "$@" >> "$log" 2>&1 || rc=$?
  local took=$(($(date +%s) - t0))
  if ((rc == 0)); then
    echo "- $name: ok (${took} s)" >> "$summary"
  elif ((rc == 124 || rc == 137)); then
    echo "- $name: **stopped after ${seconds} s** (time limit)" >> "$summary"
  else
    echo "- $name: **failed** (exit $rc, ${took} s; see $(basename "$log"))" >> "$summary"
  fi
  say "$name: exit $rc after ${took} s"
  return "$rc"
}

# The CUDA toolkit's root, from nvcc on PATH or the usual places.
find_cuda() {
  local nvcc
  nvcc=$(command -v nvcc || true)
  for c in "$nvcc" "${CUDA_ROOT:-}/bin/nvcc" "${CUDA_HOME:-}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      dirname "$(dirname "$(realpath "$c")")"
      return 0
    fi
  done
  return 1
}

# Kokkos' package files name the CUDA libraries (and libdl.a) where Kokkos was built; point
# them at this machine's when those paths do not exist here.
relocate_cuda() {  # KOKKOS-PREFIX CUDA-ROOT
  local dir=$1/lib/cmake/Kokkos cuda=$2 recorded lib=""
  local files=("$dir/KokkosConfig.cmake" "$dir/KokkosTargets.cmake")
  recorded=$(sed -n 's|.*"\([^"]*\)/libcudart\.so".*|\1|p' "$dir/KokkosConfig.cmake" | head -n1)
  if [ -n "$recorded" ] && [ ! -e "$recorded/libcudart_static.a" ]; then
    for candidate in "$cuda/lib64" "$cuda/lib" "$cuda/targets/x86_64-linux/lib"; do
      [ -e "$candidate/libcudart_static.a" ] && { lib=$candidate; break; }
    done
    [ -n "$lib" ] || die "no libcudart_static.a under $cuda (Kokkos was built against $recorded)"
    sed -i "s|$recorded/|$lib/|g; s|${recorded%/lib*}/include|$cuda/include|g" "${files[@]}"
    say "CUDA libraries: $lib (Kokkos was built against $recorded)"
  fi
  local libdl
  libdl=$(sed -n 's|.*IMPORTED_LOCATION "\([^"]*libdl\.a\)".*|\1|p' "$dir/KokkosConfig.cmake" | head -n1)
  if [ -n "$libdl" ] && [ ! -e "$libdl" ]; then
    sed -i "s|IMPORTED_LOCATION \"$libdl\"|IMPORTED_LIBNAME \"dl\"|" "$dir/KokkosConfig.cmake"
    sed -i 's|ADD_LIBRARY(Kokkos::LIBDL UNKNOWN IMPORTED)|ADD_LIBRARY(Kokkos::LIBDL INTERFACE IMPORTED)|' "$dir/KokkosConfig.cmake"
    say "libdl: $libdl is not here; linking -ldl"
  fi
}

# After a program died of a signal (exit 134 or 139): the stack of the same run, appended to
# LOG, when the budget leaves time: under gdb, or else (the GPU machine has no gdb) with
# scripts/crash-report.c preloaded, its code addresses named by addr2line.
crash_backtrace() {  # RC LOG CMD...
  local rc=$1 log=$2 left
  shift 2
  ((rc == 134 || rc == 139)) || return 0
  left=$(remaining)
  ((left > 20)) || return 0
  ((left < 120)) || left=120
  echo "== $* (exit $rc)" >> "$log"
  if command -v gdb >/dev/null; then
    timeout --kill-after=5 "$left" gdb -batch -ex run -ex bt --args "$@" >> "$log" 2>&1 || true
  elif command -v cc >/dev/null && command -v addr2line >/dev/null; then
    local report=$build/crash-report.so
    [ "$report" -nt "$repo/scripts/crash-report.c" ] ||  # built once for every crash
      cc -shared -fPIC -O1 -o "$report" "$repo/scripts/crash-report.c" -ldl >> "$log" 2>&1 || return 0
    # OMPI_MCA_opal_signal empty: Open MPI leaves the signals to the preloaded handler.
    OMPI_MCA_opal_signal='' LD_PRELOAD=$report timeout --kill-after=5 "$left" "$@" 2>&1 |
      grep '^crash-report:' | while read -r _ kind file offset symbol; do
        if [ -f "$file" ] && [ "$kind" != signal ]; then
          echo "$kind $(basename "$file") $offset ${symbol:-$(addr2line -f -C -e "$file" "$offset" | head -n1 | cut -c1-600)}"
        else
          echo "$kind $file $offset $symbol"
        fi
      done >> "$log" || true
  else
    echo "- (no gdb, cc or addr2line here for a backtrace)" >> "$summary"
    return 0
  fi
  echo "- backtrace of the crash above: $(basename "$log")" >> "$summary"
}

# Nsight Compute, where the machine has it: one short run (a repetition of two iterations) of
# a workload's fused and per-statement variants and the hand-written one, every kfuse group
# kernel and hand-written kernel measured (clocks as they run, as kfuse-bench times them).
# The CSV (with ncu's own messages) stays in the build tree; profile.md gets a table per
# workload: what bounds each kernel (memory: DRAM bytes at the triad's rate; the cache: bytes
# read again; issue).
NCU_METRICS=(gpu__time_duration.sum dram__bytes_read.sum dram__bytes_write.sum
  lts__t_sector_hit_rate.pct sm__warps_active.avg.pct_of_peak_sustained_active
  smsp__issue_active.avg.pct_of_peak_sustained_active launch__registers_per_thread)

find_ncu() {
  local c
  for c in "$(command -v ncu || true)" "$cuda/bin/ncu" /opt/nvidia/nsight-compute/*/ncu; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

profile_kernels() {  # BENCH SIZES...
  local bench=$1 ncu entry name size csv
  shift
  ncu=$(find_ncu) || {
    echo "- profile: no Nsight Compute (ncu) here" >> "$summary"
    return 0
  }
  : > "$out/profile.md"
  for entry in "$@"; do
    name=${entry%%=*} size=${entry#*=}
    [[ " ${KFUSE_GPU_PROFILE:-black_scholes stencil_jacobi cg gmg} " == *" $name "* ]] || continue
    csv=$build/profile-$name.csv
    phase "profile $name (size $size)" 60 "$build/profile.log" \
      "$ncu" --csv --page raw --print-units base --log-file "$csv" --clock-control none \
      --target-processes all --kernel-name-base demangled --kernel-name 'regex:GroupKernel|kfuse::bench::' \
      --metrics "$(IFS=,; echo "${NCU_METRICS[*]}")" "${launch[@]}" "$bench" --workload "$name" --size "$size" \
      --variant 'fused,per_statement' --repetitions 1 --iterations 2 --stream-size 8388608 || true
    python3 "$repo/scripts/ncu-table.py" "$name" "$csv" >> "$out/profile.md" ||
      echo "- profile $name: no table (build/gpu/profile.log)" >> "$summary"
  done
}

# Kokkos arch option -> compute capability digits (HOPPER90 -> 90).
arch_digits() { sed 's/^[A-Z]*//' <<<"$1"; }

run() {
  local out=$1
  mkdir -p "$out"
  out=$(realpath "$out")
  summary=$out/summary.md
  : > "$out/build.log"
  [ -f "$gpu_dir/MANIFEST" ] ||
    die "no $gpu_dir/MANIFEST: run 'scripts/gpu-check.sh prepare' where the sources are, and carry $(basename "$gpu_dir")/ to this machine"

  local smi gpu_name cc driver memory
  smi=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader 2>&1 | head -n1) ||
    die "nvidia-smi failed: $smi"
  IFS=, read -r gpu_name cc driver memory <<<"$smi"
  cc=$(tr -d ' .' <<<"$cc")
  local arch want
  arch=$(sed -n 's/^kokkos_arch: //p' "$gpu_dir/MANIFEST")
  want=$(arch_digits "$arch")
  local cuda
  cuda=$(find_cuda) || die "no nvcc (set CUDA_ROOT)"
  export PATH=$cuda/bin:$PATH
  {
    echo "# kfuse on $gpu_name"
    echo
    echo "- GPU: $gpu_name, compute capability $cc, driver $driver,$memory"
    echo "- nvcc: $(nvcc --version | tail -n1); host compiler: $(g++ --version 2>/dev/null | head -n1 || echo 'no g++')"
    echo "- CPU: $(nproc) cores; sources: $(git rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')"
    echo "- $(cmake --version | head -n1); ninja $(ninja --version 2>/dev/null || echo 'not found')"
    sed 's/^/- carried: /' "$gpu_dir/MANIFEST"
    echo
    echo "## Phases"
  } > "$summary"
  # Kokkos stops at start-up when the kernels' major compute capability is not the GPU's.
  if ((cc / 10 != want / 10)); then
    die "this GPU has compute capability $cc; the carried Kokkos was built for $arch: run prepare with KFUSE_KOKKOS_CUDA_ARCH set for this GPU (docs/backends.md)"
  elif ((cc != want)); then
    echo "- note: Kokkos was built for $arch, this GPU is $cc" >> "$summary"
  fi

  # Open MPI, when carried and it starts here: MPI tests at 1 and 2 ranks on the one GPU.
  local mpi_args=(-DKFUSE_ENABLE_MPI=OFF) launch=() exclude='compile_fail|fuzz|install'
  if [ -f "$gpu_dir/openmpi/env.sh" ]; then
    # shellcheck source=/dev/null
    source "$gpu_dir/openmpi/env.sh"
    if timeout 60 mpiexec -n 2 true >> "$out/build.log" 2>&1; then
      mpi_args=(-DKFUSE_ENABLE_MPI=ON -DMPI_CXX_COMPILER="$(command -v mpicxx)"
                -DMPIEXEC_EXECUTABLE="$(command -v mpiexec)")
      launch=(mpiexec -n 1)
      exclude+='|np4'
      echo "- MPI: carried Open MPI started (mpiexec -n 2); MPI tests at 1 and 2 ranks" >> "$summary"
    else
      echo "- MPI: **the carried Open MPI did not start** (build.log): one-rank build" >> "$summary"
    fi
  else
    echo "- MPI: not carried: one-rank build" >> "$summary"
  fi

  local kokkos=$gpu_dir/kokkos
  relocate_cuda "$kokkos" "$cuda"
  local build=${KFUSE_GPU_BUILD_DIR:-$repo/build/gpu} generator=() matrices=()
  [ -d "$gpu_dir/matrices" ] && matrices=(-DKFUSE_MATRICES_DIR="$gpu_dir/matrices")
  command -v ninja >/dev/null && generator=(-G Ninja)
  local build_log=$out/build.log

  # One tree for tests and benchmarks, Release: the benchmarks need it, and nvcc optimises
  # device code whatever the build type.
  phase configure 120 "$build_log" cmake -S . -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" \
    -DKokkos_ROOT="$kokkos" -DKokkosKernels_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$gpu_dir/prefix" \
    "${mpi_args[@]}" -DKFUSE_BUILD_HEADER_TESTS=OFF -DKFUSE_FUZZ_CXX_WORKS=OFF \
    -DKFUSE_BENCH_NATIVE=OFF -DKFUSE_BENCH_BUILD_SAMPLES=OFF "${matrices[@]}" || {
      tail -n 30 "$build_log" >&2
      die "configure failed (build.log)"
    }
  # -k 0: every program that compiles is built and tested, whatever else fails.
  local targets=()
  # shellcheck disable=SC2206  # a list of target names
  if [ -n "${KFUSE_GPU_TARGETS:-}" ]; then targets=(--target ${KFUSE_GPU_TARGETS}); fi
  local build_tool=(cmake --build "$build" --parallel "$JOBS" "${targets[@]}" --)
  if ((${#generator[@]})); then build_tool+=(-k 0); else build_tool+=(-k); fi
  phase build 300 "$build_log" "${build_tool[@]}" || true
  local warnings
  warnings=$(grep -cE '^[^ ]*/(include/kfuse|tests|examples|benchmarks)/[^(]*\([0-9]+\): (warning|error)' \
    "$build_log" || true)
  echo "- nvcc diagnostics in kfuse code: $warnings" >> "$summary"

  # ctest: the tests that run kfuse code (compile-fail, fuzz and install tests are
  # backend-independent; 4 ranks on one GPU add nothing to 2), four at a time on the one GPU.
  if [ "${KFUSE_GPU_TESTS:-}" = none ]; then
    echo "- ctest: not run (KFUSE_GPU_TESTS=none)" >> "$summary"
  else
    phase ctest 180 "$out/ctest.log" \
      bash -c "cd '$build' && ctest --output-on-failure --parallel 4 --timeout 120 -LE '^($exclude)\$' ${KFUSE_GPU_TESTS:+-R '$KFUSE_GPU_TESTS'}" ||
      true
    {
      echo
      echo "## Tests"
      echo
      grep -E 'tests passed|tests failed' "$out/ctest.log" | sed 's/^/- /' || echo "- no ctest summary"
      sed -n '/The following tests FAILED/,$p' "$out/ctest.log" | sed -n 's/^[[:space:]]*[0-9]* - /  - /p'
    } >> "$summary"
  fi

  # kfuse-bench, each workload at its GPU size; the rows are gathered in the build tree, not in
  # OUT, whose files the device tool brings back only 8 at a time.
  local bench=$build/benchmarks/kfuse-bench rows=$build/bench-rows
  rm -rf "$rows"
  mkdir -p "$rows"
  : > "$out/bench.txt"
  if [ -x "$bench" ]; then
    local entry name size
    for entry in "${GPU_BENCH_SIZES[@]}"; do
      name=${entry%%=*} size=${entry#*=}
      [ -z "${KFUSE_GPU_WORKLOADS:-}" ] || [[ " $KFUSE_GPU_WORKLOADS " == *" $name "* ]] || continue
      # One placement: each set-up at these sizes takes seconds of device time, and the
      # pages-placement spread the default guards against was measured on a host CPU. 20
      # rounds, not the host's up to 30 s of them: device time is counted.
      local args=(--workload "$name" --size "$size" --stream-size "$GPU_STREAM_DOUBLES" --kernel-times
                  --placements 1 --repetitions 20)
      phase "bench $name (size $size)" 120 "$out/bench.txt" "${launch[@]}" "$bench" "${args[@]}" \
        --json "$rows/$name.json" || crash_backtrace $? "$out/bench-crash.txt" "$bench" "${args[@]}"
    done
    [ "${KFUSE_GPU_PROFILE:-}" = none ] || profile_kernels "$bench" "${GPU_BENCH_SIZES[@]}"
  else
    echo "- bench: kfuse-bench was not built" >> "$summary"
  fi
  python3 - "$rows" "$out/bench.json" >> "$summary" <<'PY'
import json, math, pathlib, sys
rows = []
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    rows += json.loads(f.read_text())["rows"]
pathlib.Path(sys.argv[2]).write_text(json.dumps(rows, indent=1))
fused = [r for r in rows if r["variant"] == "fused"]
print("\n## Benchmarks (fused kfuse; ratios are speed-ups of one run)\n")
if not fused:
    print("no benchmark rows")
    sys.exit(0)
def x(v):
    return "-" if v is None else f"{v:.2f}x"
def pct(v):  # none where the workload has no bytes model (gmg) or fits in the cache
    return "-" if v is None else f"{v:.0f}%"
print("| workload | size | ms/iter | kernels/iter | vs unfused | vs kokkos | % device triad | status |")
print("|---|---|---|---|---|---|---|---|")
for r in fused:
    print(f"| {r['workload']} | {r['size_knob']} | {1e3 * r['time_per_iter_s']:.3f} | "
          f"{r['kernels_per_iter']:.1f} | {x(r['speedup_vs_unfused'])} | {x(r['speedup_vs_kokkos'])} | "
          f"{pct(r['pct_stream'])} | {r['status']} |")
for key in ("speedup_vs_unfused", "speedup_vs_kokkos"):
    v = [r[key] for r in fused if r[key]]
    if v:
        print(f"\ngeometric mean {key[8:].replace('_', ' ')}: "
              f"{math.exp(sum(map(math.log, v)) / len(v)):.2f}x over {len(v)} workloads")
stream = sorted({round(r["stream_gbps"]) for r in rows})
print(f"\ndevice STREAM triad: {', '.join(map(str, stream))} GB/s")
PY
  rm -rf "$rows"
  echo >> "$summary"
  echo "total: $(($(date +%s) - started)) s" >> "$summary"
  cat "$summary"
}

# What the GPU machine does not have (Debian 12 paths; globs for Open MPI's libraries).
HIDDEN_ON_GPU_MACHINE=(
  /usr/include/boost /usr/include/doctest /usr/include/CLI /usr/include/nlohmann
  /usr/include/trilinos /usr/lib/cmake/doctest /usr/share/cmake/CLI11
  /usr/share/cmake/nlohmann_json /usr/lib/x86_64-linux-gnu/cmake /usr/lib/petscdir
  /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi
  /etc/openmpi /usr/bin/orterun /usr/bin/orted /usr/bin/opal_wrapper
  '/usr/lib/x86_64-linux-gnu/lib{mpi,open-,hwloc,event_,munge,ucp,uct,ucs,fabric}*.so*'
)

simulate() {
  local out=$1 stand_in
  ((EUID == 0)) || die "simulate needs root (unshare -m)"
  [ -f "$gpu_dir/MANIFEST" ] || die "run 'scripts/gpu-check.sh prepare' first"
  stand_in=$(mktemp -d)
  mkdir "$stand_in/bin" "$stand_in/empty"
  printf '#!/bin/sh\necho "stand-in for nvidia-smi (no GPU), 9.0, none, 0 MiB"\n' > "$stand_in/bin/nvidia-smi"
  chmod +x "$stand_in/bin/nvidia-smi"
  # Folders are hidden behind an empty folder, files behind /dev/null (symbolic links, which
  # lead to hidden files, stay).
  local mounts="" pattern d
  for pattern in "${HIDDEN_ON_GPU_MACHINE[@]}"; do
    for d in $(eval "echo $pattern"); do
      if [ -d "$d" ] && [ ! -L "$d" ]; then
        mounts+="mount --bind '$stand_in/empty' '$d' && "
      elif [ -f "$d" ] && [ ! -L "$d" ]; then
        mounts+="mount --bind /dev/null '$d' && "
      fi
    done
  done
  # Phase limits are for 16 cores: a machine with fewer gets them scaled up.
  local budget=$((480 * 16 / $(nproc)))
  unshare -m bash -c "${mounts} PATH='$stand_in/bin':\$PATH KFUSE_GPU_BUDGET=\${KFUSE_GPU_BUDGET:-$budget} \
    KFUSE_GPU_BUILD_DIR='$repo/build/gpu-simulated' '$repo/scripts/gpu-check.sh' run '$out'" || true
  rm -rf "$stand_in"
}

case "${1:-}" in
  prepare) [ $# -eq 1 ] || usage; prepare ;;
  run) [ $# -eq 2 ] || usage; run "$2" ;;
  simulate) [ $# -eq 2 ] || usage; simulate "$2" ;;
  *) usage ;;
esac
