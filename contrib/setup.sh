#!/usr/bin/env bash
# Installs everything duet needs to build, test and demo on Debian 12 (root).
# Idempotent: a second run installs nothing and changes nothing.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential autoconf automake libtool pkg-config ccache git
  # scheduler: learned policy
  libtorch-dev libopenblas0-serial libeigen3-dev
  # training workers: LibTorch's c10d (ProcessGroupGloo) includes Gloo's headers
  libgloo-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev gnuplot-nox
  # vmha: transport (UCX; rdma-core for RDMA devices where a host has them;
  # ucx_info to see which transports UCX found) and the static guest programs.
  # No libvirt: vmha runs its own process VMs on /dev/kvm; a package enters
  # this list when something links or runs it.
  libucx-dev ucx-utils rdma-core busybox-static
  nettle-dev
  iproute2
  # tests (python3: JSON in tests, contrib/doc-check); clang and libFuzzer for make fuzz
  check python3 clang-14 libfuzzer-14-dev
  # the real programs vmha runs in its tests (tests/vmha_corpus)
  python3-torch python3-numpy python3-pip sqlite3 perl make gcc
  # Slurm cluster (one host, loopback)
  slurmctld slurmd slurmdbd slurm-client libslurm-dev
  munge libmunge-dev mariadb-server mariadb-client
  # Slurm internal headers: apt-get source + configure
  dpkg-dev quilt
  # process handling in the test cluster
  procps
)

if [ "$(id -u)" -ne 0 ]; then
  echo "contrib/setup.sh: must run as root (it installs Debian packages)" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' \
    || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # Debian's daemons try to start through invoke-rc.d; there is no init here.
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi
