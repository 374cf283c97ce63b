#!/usr/bin/env bash
# Makes this machine ready for clarray, and says what it did. Safe to run again (idempotent).
#
#   1. A Rust toolchain (cargo) must be there; if not, it says how to get one.
#   2. OpenCL drivers that are installed but not registered with the OpenCL loader (NVIDIA's
#      libnvidia-opencl.so.1, PoCL's libpocl.so.2) are registered: as root in
#      /etc/OpenCL/vendors, otherwise in a private vendor directory named by OCL_ICD_VENDORS.
#   3. If still no OpenCL platform is usable (or with --install), the ICD loader and PoCL, the
#      portable CPU driver, are installed from the system's packages (Debian/Ubuntu, as root or
#      with sudo).
#   4. It checks that a platform is now usable, and fails with the next step if not.
#   5. With --mpi: MPICH and libclang (for the `mpi` feature of induction: rsmpi's bindings),
#      installed from the system's packages if `mpiexec` or libclang is missing.
#   6. With --python: Python 3.9+ with venv and pip (for the Python package's tests), installed
#      from the system's packages if missing.
#
# Usage: scripts/setup.sh [--install] [--mpi] [--python]
# scripts/main.sh and scripts/test.sh source it (`source scripts/setup.sh --`), so that an
# OCL_ICD_VENDORS or PATH it sets reaches the commands they run.
set -euo pipefail

_setup_main() {
  local force_install=0 want_mpi=0 want_python=0 arg
  for arg in "$@"; do
    case "$arg" in
      --install) force_install=1 ;;
      --mpi) want_mpi=1 ;;
      --python) want_python=1 ;;
      --) ;; # what scripts/main.sh and scripts/test.sh pass when they source this file
      -h | --help) sed -n '2,17p' "${BASH_SOURCE[0]}"; return 0 ;;
      *) echo "setup: unknown argument $arg (see --help)" >&2; return 2 ;;
    esac
  done

  local did=()
  say() { echo "setup: $*"; }

  # --- 1. Rust ---------------------------------------------------------------------------
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
    did+=("added \$HOME/.cargo/bin to PATH")
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    say "no Rust toolchain (cargo) found. Install one (Rust 1.85 or newer) with rustup:"
    say "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y && . \"\$HOME/.cargo/env\""
    say "(or your system's package, e.g. apt-get install -y cargo, if it is recent enough), then run this again."
    return 1
  fi
  say "Rust: $(cargo --version)"

  # --- helpers ------------------------------------------------------------------------------
  local is_root=0
  [ "$(id -u)" -eq 0 ] && is_root=1
  as_root() {
    if [ "$is_root" -eq 1 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else return 1
    fi
  }
  local ldconfig_bin
  ldconfig_bin=$(command -v ldconfig || echo /sbin/ldconfig)
  ld_cache() { "$ldconfig_bin" -p 2>/dev/null || true; }

  # Where the loader reads vendor files from (ocl-icd's rules, as `clarray doctor` applies them).
  vendors_dir() {
    if [ -n "${OCL_ICD_VENDORS:-}" ]; then
      if [ -d "$OCL_ICD_VENDORS" ]; then echo "$OCL_ICD_VENDORS"; else echo ""; fi
    else
      echo "${OPENCL_VENDOR_PATH:-/etc/OpenCL/vendors}"
    fi
  }

  # Prints how a vendor file should name the driver whose file names start with $1 (e.g.
  # libnvidia-opencl.so): its soname if the dynamic linker knows it, else its full path.
  find_driver() {
    local prefix=$1 name d f
    name=$(ld_cache | awk -v p="$prefix" '$1 ~ "^" p "\\.[0-9]+$" && !found { found = $1 } END { print found }')
    if [ -n "$name" ]; then echo "$name"; return 0; fi
    local dirs=(/usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu
      /usr/lib/x86_64-linux-gnu/nvidia/current /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib
      /usr/local/lib /usr/local/cuda/compat /usr/lib/wsl/lib)
    local IFS_OLD=$IFS; IFS=:
    # shellcheck disable=SC2206
    local ld_dirs=(${LD_LIBRARY_PATH:-})
    IFS=$IFS_OLD
    for d in "${ld_dirs[@]}" "${dirs[@]}"; do
      for f in "$d/$prefix".[0-9] "$d/$prefix".[0-9][0-9]; do
        if [ -e "$f" ]; then echo "$f"; return 0; fi
      done
    done
    echo ""
  }

  # Whether a vendor file in the loader's directory names a library starting with $1.
  registered() {
    local dir
    dir=$(vendors_dir)
    [ -n "$dir" ] || return 0 # OCL_ICD_VENDORS names one file or library: leave it alone
    grep -qs -- "$1" "$dir"/*.icd
  }

  # Writes a vendor file $1 holding the line $2 where the loader reads it.
  register() {
    local icd=$1 line=$2 dir
    dir=$(vendors_dir)
    if [ "$dir" = /etc/OpenCL/vendors ] && [ "$is_root" -eq 0 ] && ! [ -w /etc/OpenCL/vendors ]; then
      # Without root: a private vendor directory with the system's files and the new one. It
      # replaces /etc/OpenCL/vendors for programs that see OCL_ICD_VENDORS.
      local private="$HOME/.local/etc/OpenCL/vendors"
      mkdir -p "$private"
      cp /etc/OpenCL/vendors/*.icd "$private"/ 2>/dev/null || true
      echo "$line" >"$private/$icd"
      export OCL_ICD_VENDORS="$private"
      did+=("registered $line in $private/$icd; for your own shell: export OCL_ICD_VENDORS=$private")
    else
      mkdir -p "$dir"
      echo "$line" >"$dir/$icd"
      did+=("registered $line in $dir/$icd")
    fi
  }

  register_known_drivers() {
    local spec prefix icd line
    for spec in libnvidia-opencl.so:nvidia.icd libpocl.so:pocl.icd; do
      prefix=${spec%%:*} icd=${spec##*:}
      line=$(find_driver "$prefix")
      if [ -n "$line" ] && ! registered "$prefix"; then
        register "$icd" "$line"
      fi
    done
  }

  usable() {
    # (Output is captured first: `grep -q` closing a pipe early would fail it under pipefail.)
    local out
    if command -v clinfo >/dev/null 2>&1; then
      out=$(clinfo -l 2>/dev/null || true)
      grep -q '^Platform #' <<<"$out"
    else
      # Without clinfo: the loader is there and some vendor file names a driver that exists.
      out=$(ld_cache)
      grep -q 'libOpenCL\.so\.1 ' <<<"$out" || return 1
      local dir
      dir=$(vendors_dir)
      [ -z "$dir" ] || ls "$dir"/*.icd >/dev/null 2>&1
    fi
  }

  install_packages() {
    local pkgs=("$@")
    if ! command -v apt-get >/dev/null 2>&1; then
      say "no apt-get here: install an OpenCL ICD loader and a driver (e.g. PoCL) with your package manager."
      return 1
    fi
    if [ "$is_root" -eq 0 ] && ! command -v sudo >/dev/null 2>&1; then
      say "installing packages needs root: run as root: apt-get update && apt-get install -y ${pkgs[*]}"
      return 1
    fi
    say "installing ${pkgs[*]} ..."
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
    did+=("installed ${pkgs[*]}")
  }

  # --- 2. drivers installed but not registered ---------------------------------------------
  register_known_drivers

  # --- 3. packages -------------------------------------------------------------------------
  if [ "$force_install" -eq 1 ] || ! usable; then
    install_packages ocl-icd-libopencl1 ocl-icd-opencl-dev pocl-opencl-icd clinfo || { say "could not install OpenCL; 'cargo run -p clarray-cli -- doctor' shows what is missing."; return 1; }
    register_known_drivers
  fi

  # --- 5. MPI (only asked for by --mpi) -----------------------------------------------------
  if [ "$want_mpi" -eq 1 ]; then
    if ! command -v mpiexec >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1 \
      || ! ld_cache | grep -q 'libclang'; then
      install_packages mpich libmpich-dev libclang-dev \
        || { say "could not install MPICH and libclang (needed by --features mpi)."; return 1; }
    fi
    say "MPI: $(mpichversion 2>/dev/null | head -1 || echo mpiexec at "$(command -v mpiexec)")"
  fi

  # --- 6. Python (only asked for by --python) -----------------------------------------------
  if [ "$want_python" -eq 1 ]; then
    if ! python3 -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 9)' >/dev/null 2>&1; then
      install_packages python3 python3-venv python3-pip \
        || { say "could not install Python 3 with venv (needed by the Python package's tests)."; return 1; }
    fi
    say "Python: $(python3 --version 2>&1)"
  fi

  # --- 4. check ----------------------------------------------------------------------------
  if ! usable; then
    say "still no usable OpenCL platform. Run: cargo run -p clarray-cli -- doctor"
    return 1
  fi
  if [ ${#did[@]} -eq 0 ]; then
    say "nothing to do: OpenCL and Rust are ready"
  else
    local d
    for d in "${did[@]}"; do say "$d"; done
  fi
  if command -v clinfo >/dev/null 2>&1; then
    clinfo -l 2>/dev/null | sed 's/^/setup:   /'
  fi
}

_setup_main "$@"
