#!/usr/bin/env bash
# Build Kokkos 3.4.1 and Kokkos Kernels 3.4.1 for kfuse's OpenMP or CUDA backend.
#
#   scripts/build-kokkos.sh openmp|cuda [PREFIX]
#
# The sources come from Debian 12's `trilinos` source package (13.2.0-4, which
# bundles packages/kokkos and packages/kokkos-kernels), fetched with a private
# apt configuration (deb-src entry, lists and caches under .deps/src/apt/), so
# the system's apt sources and state are never touched. The archive address is
# read at run time from /etc/apt/sources.list.d/debian.sources (or
# /etc/apt/sources.list). The download is cached in .deps/src/ and shared by
# both backends. Only the two Kokkos subtrees are extracted, the patches in
# cmake/patches/ are applied (CUDA 13 fixes, HOPPER90 arch; see
# docs/backends.md), and both packages are configured standalone (not through
# TriBITS) and installed into PREFIX (default: <repo>/.deps/kokkos-<backend>).
#
# A second run with the same backend, prefix, script, patches and toolchain
# does nothing but print where the install is (stamp file in PREFIX).
#
# Environment knobs (all optional; each one is part of the stamp):
#   KFUSE_KOKKOS_CUDA_ARCH  Kokkos arch option for CUDA (default HOPPER90;
#                           CUDA 13 also accepts TURING75, AMPERE80, AMPERE86)
#   KFUSE_KOKKOS_SHARED     ON|OFF: shared libraries (default OFF: binaries
#                           carry Kokkos (and, for cuda, cudart); a shared
#                           libkokkoscore would meet Debian's, which Debian's
#                           PETSc loads, in the solver tests' processes)
#   KFUSE_KOKKOS_BUILD_TYPE CMake build type (default Release)
#   KFUSE_TRILINOS_VERSION  Debian source version (default 13.2.0-4)
#   KFUSE_TRILINOS_SUITE    Debian suite to fetch it from (default bookworm)
#   KFUSE_APT_URI           archive URI, instead of the system's sources
#   KFUSE_JOBS              parallel build jobs (default: nproc)
#   KFUSE_DEPS_DIR          cache/build root (default <repo>/.deps)
set -euo pipefail

die() { echo "build-kokkos: error: $*" >&2; exit 1; }
say() { echo "build-kokkos: $*"; }

usage() {
  sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
backend=$1
case "$backend" in
  openmp|cuda) ;;
  -h|--help) usage ;;
  *) echo "build-kokkos: unknown backend '$backend'" >&2; usage ;;
esac

script_path=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/$(basename "${BASH_SOURCE[0]}")
repo_root=$(cd "$(dirname "$script_path")/.." && pwd -P)
patch_dir=$repo_root/cmake/patches
deps=${KFUSE_DEPS_DIR:-$repo_root/.deps}
case "$deps" in /*) ;; *) deps=$PWD/$deps ;; esac

prefix=${2:-$deps/kokkos-$backend}
case "$prefix" in /*) ;; *) prefix=$PWD/$prefix ;; esac
prefix=${prefix%/}

trilinos_version=${KFUSE_TRILINOS_VERSION:-13.2.0-4}
trilinos_suite=${KFUSE_TRILINOS_SUITE:-bookworm}
build_type=${KFUSE_KOKKOS_BUILD_TYPE:-Release}
jobs=${KFUSE_JOBS:-$(nproc)}
cuda_arch=${KFUSE_KOKKOS_CUDA_ARCH:-HOPPER90}
# Static by default: Debian's PETSc loads Debian's shared Kokkos (libpetsc ->
# libtrilinos_ml -> Teuchos -> libtrilinos_kokkoscore), and two shared Kokkos
# cores in one process interpose each other's globals, which then get
# destroyed twice at exit ("corrupted double-linked list" in test_solvers).
shared=${KFUSE_KOKKOS_SHARED:-OFF}
[ "$backend" = cuda ] || cuda_arch=none
case "$shared" in ON|OFF) ;; *) die "KFUSE_KOKKOS_SHARED must be ON or OFF" ;; esac

# ---------------------------------------------------------------- toolchain
nvcc=
if [ "$backend" = cuda ]; then
  if [ -n "${CUDA_ROOT:-}" ] && [ -x "$CUDA_ROOT/bin/nvcc" ]; then
    nvcc=$CUDA_ROOT/bin/nvcc
  elif command -v nvcc >/dev/null 2>&1; then
    nvcc=$(command -v nvcc)
  elif [ -x /usr/local/cuda/bin/nvcc ]; then
    nvcc=/usr/local/cuda/bin/nvcc
  else
    die "nvcc not found (set CUDA_ROOT or put the CUDA toolkit's bin/ on PATH)"
  fi
  # nvcc_wrapper and CMake's FindCUDAToolkit both look for nvcc on PATH.
  PATH="$(dirname "$nvcc"):$PATH"
  export PATH
fi
host_cxx=${CXX:-c++}
toolchain="cxx: $("$host_cxx" --version 2>/dev/null | head -n1 || echo unknown)"
if [ -n "$nvcc" ]; then
  toolchain="$toolchain; nvcc: $("$nvcc" --version | tail -n1)"
fi

# ---------------------------------------------------------------- stamp
stamp_file=$prefix/.kfuse-kokkos-stamp
shopt -s nullglob
patches=("$patch_dir"/*.patch)
shopt -u nullglob
stamp=$(
  {
    echo "backend=$backend prefix=$prefix trilinos=$trilinos_version"
    echo "arch=$cuda_arch shared=$shared build_type=$build_type"
    echo "$toolchain"
    cat "$script_path"
    for p in "${patches[@]}"; do echo "== $(basename "$p")"; cat "$p"; done
  } | sha256sum | cut -d' ' -f1
)

summary() {
  local cxx_opt=""
  [ "$backend" = cuda ] && cxx_opt=" -DCMAKE_CXX_COMPILER=$prefix/bin/nvcc_wrapper"
  say "Kokkos + Kokkos Kernels ($backend, shared=$shared) installed in $prefix"
  echo "  Kokkos_ROOT=$prefix"
  echo "  KokkosKernels_ROOT=$prefix"
  if [ "$backend" = cuda ]; then
    echo "  CMAKE_CXX_COMPILER=$prefix/bin/nvcc_wrapper   (Kokkos_ARCH_$cuda_arch)"
  fi
  echo "  e.g. cmake -S . -B build/$backend -DKokkos_ROOT=$prefix -DKokkosKernels_ROOT=$prefix$cxx_opt"
}

if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] &&
   [ -f "$prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] &&
   [ -f "$prefix/lib/cmake/KokkosKernels/KokkosKernelsConfig.cmake" ]; then
  say "up to date (stamp $stamp_file)"
  summary
  exit 0
fi

# .deps/ holds downloads, builds and installs: keep it out of git even when
# the repository's .gitignore does not mention it.
mkdir -p "$deps"
[ -f "$deps/.gitignore" ] || printf '# generated by scripts/build-kokkos.sh\n*\n' > "$deps/.gitignore"

t_start=$(date +%s)

# ---------------------------------------------------------------- fetch
srcdir=$deps/src
mkdir -p "$srcdir"
dsc=$srcdir/trilinos_${trilinos_version}.dsc

# The .orig tarball's name and SHA-256 as listed in the .dsc (which apt
# verified against the archive's signed Sources index when it downloaded it).
orig_entry() { # prints "sha256 filename"
  awk '/^Checksums-Sha256:/ {f=1; next} /^[^ ]/ {f=0} f && $3 ~ /\.orig\.tar\./ {print $1, $3}' "$dsc"
}

cached_sources_ok() {
  [ -f "$dsc" ] || return 1
  local sum name
  read -r sum name < <(orig_entry) || return 1
  [ -n "${name:-}" ] && [ -f "$srcdir/$name" ] || return 1
  echo "$sum  $srcdir/$name" | sha256sum --check --status
}

# Archive URI (and keyring) of the system's Debian entry, from the deb822
# file or, failing that, the one-line sources.list. Prints "uri keyring".
system_archive() {
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -r "$f" ]; then
    awk -v suite="$trilinos_suite" '
      function flush() {
        if (uri != "" && enabled != "no" && types ~ /(^| )deb( |$)/) {
          if (!have_any) { any_uri = uri; any_key = key; have_any = 1 }
          if (!have_match && (" " suites " ") ~ (" " suite " ")) {
            m_uri = uri; m_key = key; have_match = 1 }
        }
        uri = ""; key = ""; types = ""; suites = ""; enabled = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[^ \t]/ {
        field = tolower($1); sub(/:$/, "", field)
        val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        if (field == "uris") { split(val, u, /[ \t]+/); uri = u[1] }
        else if (field == "types") types = val
        else if (field == "suites") suites = val
        else if (field == "enabled") enabled = tolower(val)
        else if (field == "signed-by" && val ~ /^\//) key = val
      }
      END {
        flush()
        if (have_match) print m_uri, m_key
        else if (have_any) print any_uri, any_key
      }' "$f"
    return
  fi
  f=/etc/apt/sources.list
  if [ -r "$f" ]; then
    # deb [opts] uri suite components...
    sed -n 's/^[ \t]*deb[ \t]\+\(\[[^]]*\][ \t]\+\)\{0,1\}\([^ \t]\+\)[ \t]\+'"$trilinos_suite"'[ \t].*/\2/p' "$f" | head -n1
  fi
}

fetch_sources() {
  local apt_dir=$srcdir/apt uri key
  if [ -n "${KFUSE_APT_URI:-}" ]; then
    uri=$KFUSE_APT_URI; key=
  else
    read -r uri key < <(system_archive) || true
  fi
  [ -n "${uri:-}" ] || die "no Debian archive found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list (set KFUSE_APT_URI)"
  say "fetching trilinos $trilinos_version source from $uri ($trilinos_suite, private apt config in $apt_dir)"

  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/state"
  local opt=""
  [ -n "${key:-}" ] && [ -r "$key" ] && opt="[signed-by=$key] "
  echo "deb-src ${opt}${uri} ${trilinos_suite} main" > "$apt_dir/sources.list"
  : > "$apt_dir/state/status"
  local apt_opts=(
    -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State=$apt_dir/state"
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::State::status=$apt_dir/state/status"
    -o "Dir::Cache=$apt_dir/cache"
    -o "Dir::Cache::pkgcache="
    -o "Dir::Cache::srcpkgcache="
    -o "APT::Get::List-Cleanup=false"
  )
  apt-get "${apt_opts[@]}" -q update >/dev/null ||
    die "apt-get update (private deb-src list $apt_dir/sources.list) failed"

  # As root apt drops to the _apt user to download; give it a directory it
  # may write to, then move the files into the cache.
  local dl
  dl=$(mktemp -d "$apt_dir/download.XXXXXX")
  if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
  if ! (cd "$dl" && apt-get "${apt_opts[@]}" -q source --download-only "trilinos=$trilinos_version") \
       > "$apt_dir/source.log" 2>&1; then
    cat "$apt_dir/source.log" >&2
    die "apt-get source trilinos=$trilinos_version failed"
  fi
  grep -E '^(Get|Fetched)' "$apt_dir/source.log" || true
  local f
  for f in "$dl"/*; do
    mv -f "$f" "$srcdir/"
  done
  rm -rf "$dl"
  cached_sources_ok || die "downloaded sources do not match $dsc"
}

t0=$(date +%s)
{
  # Both backends may run at once: one download at a time.
  flock 9
  if cached_sources_ok; then
    say "using cached sources in $srcdir"
  else
    fetch_sources
  fi
} 9> "$srcdir/.lock"
read -r _ orig_name < <(orig_entry)
t_fetch=$(( $(date +%s) - t0 ))

# ---------------------------------------------------------------- extract + patch
build_root=$deps/build/$backend-$(echo -n "$prefix" | sha256sum | cut -c1-8)
src=$build_root/src
rm -rf "$build_root"
mkdir -p "$src"
t0=$(date +%s)
say "extracting packages/kokkos and packages/kokkos-kernels from $orig_name"
tar -xf "$srcdir/$orig_name" -C "$src" --wildcards --strip-components=2 \
  '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
if ! grep -q 'set(Kokkos_VERSION_MINOR 4)' "$src/kokkos/CMakeLists.txt" ||
   ! grep -q 'set(Kokkos_VERSION_PATCH 01)' "$src/kokkos/CMakeLists.txt"; then
  die "expected Kokkos 3.4.1 in $src/kokkos"
fi
[ -f "$src/kokkos-kernels/CMakeLists.txt" ] || die "no kokkos-kernels in $orig_name"

apply_patches() { # dir glob...
  local dir=$1 p; shift
  for p in "$@"; do
    say "  patch $(basename "$p")"
    patch -d "$dir" -p1 --forward --batch --silent --no-backup-if-mismatch < "$p" ||
      die "patch $(basename "$p") does not apply to $dir"
  done
}
shopt -s nullglob
apply_patches "$src/kokkos" "$patch_dir"/kokkos-[0-9]*.patch
apply_patches "$src/kokkos-kernels" "$patch_dir"/kokkos-kernels-[0-9]*.patch
shopt -u nullglob
t_extract=$(( $(date +%s) - t0 ))

# ---------------------------------------------------------------- install dir
if [ -d "$prefix" ]; then
  if [ -f "$stamp_file" ] || [ -z "$(ls -A "$prefix")" ]; then
    rm -rf "$prefix"          # an older install of ours: start clean
  else
    say "warning: $prefix exists and was not made by this script; installing over it"
  fi
fi
mkdir -p "$prefix"

common=(
  -DCMAKE_BUILD_TYPE="$build_type"
  -DCMAKE_INSTALL_PREFIX="$prefix"
  -DCMAKE_INSTALL_LIBDIR=lib
  -DCMAKE_CXX_STANDARD=17
  -DCMAKE_CXX_EXTENSIONS=OFF
  -DBUILD_SHARED_LIBS="$shared"
)

# ---------------------------------------------------------------- Kokkos
kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON)
if [ "$backend" = cuda ]; then
  kokkos_opts+=(
    -DCMAKE_CXX_COMPILER="$src/kokkos/bin/nvcc_wrapper"
    -DKokkos_ENABLE_CUDA=ON
    -DKokkos_ENABLE_CUDA_LAMBDA=ON
    "-DKokkos_ARCH_${cuda_arch}=ON"
  )
else
  kokkos_opts+=(-DKokkos_ENABLE_OPENMP=ON)
  [ -n "${CXX:-}" ] && kokkos_opts+=(-DCMAKE_CXX_COMPILER="$CXX")
fi

log=$build_root/log
mkdir -p "$log"
run_logged() { # name cmd...
  local name=$1; shift
  if ! "$@" > "$log/$name.log" 2>&1; then
    tail -n 40 "$log/$name.log" >&2
    die "$name failed (full log: $log/$name.log)"
  fi
}

# Configure, build and install one package's standalone CMake project.
build_package() {  # NAME SOURCE-DIR [CMAKE-ARG...]
  local name=$1 source=$2
  shift 2
  say "configuring $name ..."
  run_logged "$name-configure" cmake -S "$source" -B "$build_root/$name" "${common[@]}" "$@"
  say "building $name with $jobs jobs ..."
  run_logged "$name-build" cmake --build "$build_root/$name" --parallel "$jobs"
  run_logged "$name-install" cmake --install "$build_root/$name"
}

t0=$(date +%s)
say "Kokkos: $backend, shared=$shared"
build_package kokkos "$src/kokkos" "${kokkos_opts[@]}"
t_kokkos=$(( $(date +%s) - t0 ))

# ---------------------------------------------------------------- Kokkos Kernels
# ETI off: kernels are instantiated in the code that calls them (kfuse is
# header-only anyway), which keeps this build to a few seconds. TPLs off: the
# cuBLAS/cuSPARSE code paths of Kokkos Kernels 3.4 do not compile with CUDA 12+
# (see docs/backends.md); the native Kokkos implementations are used.
kk_opts=(
  -DKokkos_ROOT="$prefix"
  -DKokkosKernels_ADD_DEFAULT_ETI=OFF
  -DKokkosKernels_INST_DOUBLE=OFF
  -DKokkosKernels_INST_FLOAT=OFF
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF
  -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
  -DKokkosKernels_INST_ORDINAL_INT=OFF
  -DKokkosKernels_INST_ORDINAL_INT64_T=OFF
  -DKokkosKernels_INST_OFFSET_INT=OFF
  -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
  -DKokkosKernels_INST_LAYOUTLEFT=OFF
  -DKokkosKernels_INST_LAYOUTRIGHT=OFF
  -DKokkosKernels_ENABLE_TPL_BLAS=OFF
  -DKokkosKernels_ENABLE_TPL_LAPACK=OFF
  -DKokkosKernels_ENABLE_TPL_MKL=OFF
  -DKokkosKernels_ENABLE_TPL_CBLAS=OFF
  -DKokkosKernels_ENABLE_TPL_LAPACKE=OFF
  -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF
  -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
  -DKokkosKernels_NO_DEFAULT_CUDA_TPLS=ON
)
if [ "$backend" = cuda ]; then
  kk_opts+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper")
elif [ -n "${CXX:-}" ]; then
  kk_opts+=(-DCMAKE_CXX_COMPILER="$CXX")
fi

t0=$(date +%s)
build_package kokkos-kernels "$src/kokkos-kernels" "${kk_opts[@]}"
t_kernels=$(( $(date +%s) - t0 ))

# Keep the applied patches next to the install, for the record.
mkdir -p "$prefix/share/kfuse-kokkos"
for p in "${patches[@]}"; do cp "$p" "$prefix/share/kfuse-kokkos/"; done
cp "$log"/*.log "$prefix/share/kfuse-kokkos/"

echo "$stamp" > "$stamp_file"
rm -rf "$build_root"   # sources and objects are rebuilt from scratch every time anyway
rmdir "$deps/build" 2>/dev/null || true
t_total=$(( $(date +%s) - t_start ))
say "times: fetch ${t_fetch}s, extract+patch ${t_extract}s, Kokkos ${t_kokkos}s, Kokkos Kernels ${t_kernels}s, total ${t_total}s"
summary
