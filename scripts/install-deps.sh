#!/usr/bin/env bash
# Installs the Debian 12 packages ucoll builds and tests with (the Python
# package's too: numpy, cffi, pytest; the torch.distributed backend's:
# torch, libtorch, pybind11, Python headers; the wire fuzzer's: clang with
# libFuzzer), and those bench/vs_mpi.sh compares against and plots with
# (run as root).
set -euo pipefail
pkgs=(build-essential pkg-config meson ninja-build libucx-dev ucx-utils libpmix-dev
      libhwloc-dev openmpi-bin python3 valgrind iproute2
      libopenmpi-dev mpich libmpich-dev python3-matplotlib
      python3-numpy python3-cffi python3-pytest
      python3-dev python3-torch libtorch-dev python3-pybind11 clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
