#!/usr/bin/env bash
# Installs the Debian 12 packages ucoll builds and tests with, and those
# bench/vs_mpi.sh compares against and plots with (run as root).
set -euo pipefail
pkgs=(build-essential pkg-config meson ninja-build libucx-dev ucx-utils libpmix-dev
      libhwloc-dev openmpi-bin python3 valgrind iproute2
      libopenmpi-dev mpich libmpich-dev python3-matplotlib)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
