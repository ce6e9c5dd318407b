#!/usr/bin/env bash
# cmake/kfuseDependencies.cmake pairs Kokkos Kernels with the Kokkos it found:
#  1. given only Kokkos_DIR, it takes the Kokkos Kernels installed beside that Kokkos (not the
#     system's, e.g. Debian's, which is built on another Kokkos);
#  2. given a Kokkos Kernels of another major version, it stops with a message naming both.
#
#   bash kokkos_pairing.sh SOURCE-DIR KOKKOS-DIR CXX-COMPILER [PREFIX-PATH]
# PREFIX-PATH: the build's CMAKE_PREFIX_PATH, ':'-separated (where Boost may be).
set -euo pipefail

src=$1 kokkos_dir=$2 cxx=$3 prefix_path=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/consumer"
cat > "$work/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(kokkos_pairing CXX)
add_library(kfuse INTERFACE)
set(KFUSE_DEPENDENCIES_TARGET kfuse)
set(KFUSE_ENABLE_MPI OFF)
include([==[$src/cmake/kfuseDependencies.cmake]==])
message(STATUS "pairing: KokkosKernels_DIR=\${KokkosKernels_DIR}")
CMAKE

configure() {  # BUILD-DIR [CMAKE-ARG...]
  local dir=$1
  shift
  cmake -S "$work/consumer" -B "$work/$dir" -DCMAKE_CXX_COMPILER="$cxx" \
    -DKokkos_DIR="$kokkos_dir" -DCMAKE_PREFIX_PATH="${prefix_path//:/;}" "$@" \
    > "$work/$dir.log" 2>&1
}

# 1. Beside Kokkos.
if ! configure beside; then
  cat "$work/beside.log" >&2
  echo "kokkos_pairing: configuring with Kokkos_DIR=$kokkos_dir alone failed" >&2
  exit 1
fi
kk_dir=$(sed -n 's/^-- pairing: KokkosKernels_DIR=//p' "$work/beside.log")
want=$(realpath "$kokkos_dir/..")
got=$(realpath "$kk_dir/..")
if [ "$got" != "$want" ]; then
  echo "kokkos_pairing: Kokkos in $kokkos_dir, but Kokkos Kernels taken from $kk_dir" >&2
  exit 1
fi
echo "kokkos_pairing: Kokkos_DIR alone gives the Kokkos Kernels beside it ($kk_dir)"

# 2. A Kokkos Kernels of another major version (a stand-in package that only declares one).
fake=$work/fake/KokkosKernels
mkdir -p "$fake"
cat > "$fake/KokkosKernelsConfigVersion.cmake" <<'CMAKE'
set(PACKAGE_VERSION 99.0.0)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
CMAKE
cat > "$fake/KokkosKernelsConfig.cmake" <<'CMAKE'
add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
CMAKE
if configure mismatched -DKokkosKernels_DIR="$fake"; then
  cat "$work/mismatched.log" >&2
  echo "kokkos_pairing: Kokkos Kernels 99.0 with this Kokkos was accepted" >&2
  exit 1
fi
# CMake wraps the message: compare it with its lines joined.
message=$(tr -s ' \n' ' ' < "$work/mismatched.log")
if ! grep -qF "kfuse: Kokkos Kernels 99.0.0 in $fake does not match Kokkos" <<<"$message"; then
  cat "$work/mismatched.log" >&2
  echo "kokkos_pairing: the mismatch failed without kfuse's message" >&2
  exit 1
fi
echo "kokkos_pairing: Kokkos Kernels 99.0 refused: $(grep -o 'kfuse: Kokkos Kernels 99.*does not match Kokkos [0-9.]*' <<<"$message")"
