# shellcheck shell=bash
# The Debian packages kfuse needs, installed only when missing. Sourced by scripts/*.sh.
#
#   kfuse_install_packages [extra-package...]   install what is missing (apt-get, as root or
#                                               through sudo); nothing at all when all are there
#   kfuse_mpi_environment                       export what Open MPI needs as root and with
#                                               more ranks than cores
#   kfuse_unpack_openblas DIR                   Debian's single-threaded OpenBLAS, unpacked
#                                               under DIR when not there yet (downloaded, not
#                                               installed: the system's BLAS stays as it is)
#   kfuse_openblas_lib DIR                      the folder of its libblas.so.3 and
#                                               liblapack.so.3, for a process's LD_LIBRARY_PATH

KFUSE_DEBIAN_PACKAGES=(
  g++ cmake make pkg-config
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenmpi-dev openmpi-bin
  libboost-dev doctest-dev libcli11-dev nlohmann-json3-dev
  libpetsc-real-dev
  clang libclang-rt-14-dev  # libFuzzer: the Matrix Market fuzz test (tests/fuzz)
  time                      # GNU time: the compiler's peak memory (compile costs)
)

kfuse_package_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

kfuse_install_packages() {
  local package
  local -a missing=()
  for package in "${KFUSE_DEBIAN_PACKAGES[@]}" "$@"; do
    kfuse_package_installed "$package" || missing+=("$package")
  done
  if ((${#missing[@]} == 0)); then
    echo "deps: all $((${#KFUSE_DEBIAN_PACKAGES[@]} + $#)) Debian packages are installed"
    return 0
  fi
  local -a as_root=()
  if ((EUID != 0)); then
    as_root=(sudo)
  fi
  echo "deps: installing ${missing[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}

kfuse_mpi_environment() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

kfuse_openblas_lib() { echo "$1/usr/lib/$(gcc -print-multiarch)/openblas-serial"; }

kfuse_unpack_openblas() {
  local root=$1 package=libopenblas0-serial
  if [[ ! -f $(kfuse_openblas_lib "$root")/libblas.so.3 ]]; then
    mkdir -p "$root/deb"
    local -a download=(apt-get download -q)
    if ((EUID == 0)); then
      download+=(-o APT::Sandbox::User=root)  # apt's _apt user cannot write to $root
    fi
    if ! (cd "$root/deb" && "${download[@]}" "$package"); then
      local -a as_root=()
      if ((EUID != 0)); then
        as_root=(sudo)
      fi
      "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
      (cd "$root/deb" && "${download[@]}" "$package")
    fi
    dpkg-deb -x "$root"/deb/"$package"_*.deb "$root"
  fi
  echo "openblas: $(kfuse_openblas_lib "$root")"
}
