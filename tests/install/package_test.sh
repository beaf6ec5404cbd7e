#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package as a user installs it: `cpack -G DEB` builds it from the build tree, then
# `dpkg -i` installs it, maintainer scripts included, into a throwaway root (an overlay of this
# machine's root in a private mount namespace, the source and build trees hidden), where it checks
# what the package holds (stripped binaries, Debian's machine-readable copyright, a real
# Maintainer, Depends on the shared libraries) and that lintian finds no error in it, then
# the installed `kareus --version`, a plan from the installed catalogue, `systemd-analyze verify`
# of the installed unit, and kareusd started as that unit starts it (its RuntimeDirectory made,
# its ExecStart run, against the fake NVML): the socket in group kareus, a member of the group
# served and its clock reset when it leaves, a non-member refused, SIGTERM ending it cleanly.
# Needs root (mounts, chroot); elsewhere it says why and exits 77, which ctest reports as skipped.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR FAKE_NVML_LIBRARY
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
fake_nvml=$(realpath "$3")
step() { echo "package_test: $*"; }
fail() {
  echo "package_test: $*" >&2
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  echo "package_test: skipped: needs root to mount a throwaway root and chroot into it" >&2
  exit 77
fi
if ! unshare --mount true 2>/dev/null; then
  echo "package_test: skipped: cannot make a mount namespace here (a container without" \
    "CAP_SYS_ADMIN?)" >&2
  exit 77
fi
if [ -z "${KAREUS_PACKAGE_TEST_NAMESPACE:-}" ]; then
  # Everything below runs in a private mount namespace: its mounts vanish with it, whatever fails.
  KAREUS_PACKAGE_TEST_NAMESPACE=1 exec unshare --mount --propagation private "$0" "$@"
fi

work=$(mktemp -d "${build_dir}/package-test.XXXXXX")
mnt=$work/mnt
# The mounts go first: /dev and /sys are bound into the throwaway root, and a removal must never
# reach them. --one-file-system is the second guard.
trap 'umount -R -l "$mnt" 2>/dev/null; rm -rf --one-file-system "$work"' EXIT
mkdir "$work/deb" "$mnt"
step "cpack -G DEB"
(cd "$build_dir" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1) ||
  { tail -n 20 "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(find "$work/deb" -maxdepth 1 -name 'kareus_*.deb' | head -n 1)
[ -n "$deb" ] || fail "cpack made no kareus_*.deb"
version=$(dpkg-deb -f "$deb" Version)

step "package contents and lintian"
mkdir "$work/contents"
dpkg-deb -x "$deb" "$work/contents"
library=$(find "$work/contents/usr/lib" -name 'libkareus.so*' -type f | head -n 1)
[ -n "$library" ] || fail "no libkareus.so in the package"
for binary in "$work/contents/usr/bin/kareus" "$work/contents/usr/bin/kareusd" "$library"; do
  [ -f "$binary" ] || fail "no ${binary#"$work/contents"} in the package"
  readelf -S "$binary" >"$work/sections.txt"
  if grep -q '\.debug_' "$work/sections.txt"; then fail "${binary#"$work/contents"} is not stripped"; fi
done
copyright=$work/contents/usr/share/doc/kareus/copyright
[ -f "$copyright" ] || fail "no /usr/share/doc/kareus/copyright"
head -n 1 "$copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  fail "copyright is not in Debian's machine-readable format"
maintainer=$(dpkg-deb -f "$deb" Maintainer)
case "$maintainer" in *localhost*) fail "Maintainer is $maintainer" ;; esac
dpkg-deb -f "$deb" Depends | grep -q 'libc6' || fail "Depends lacks the shared libraries: $(dpkg-deb -f "$deb" Depends)"
command -v lintian >/dev/null || fail "no lintian (scripts/setup.sh installs it)"
lintian --allow-root "$deb" >"$work/lintian.log" 2>&1 || true
if grep -q '^E: ' "$work/lintian.log"; then
  grep '^E: ' "$work/lintian.log" >&2
  fail "lintian reports errors"
fi

# The throwaway root: this machine's root under a writable overlay held in memory, with /proc,
# /dev and /sys, and tmpfs over the folders that hold the source and build trees, so that the
# installed binaries can find only what the package installed.
mount -t tmpfs tmpfs "$mnt" -o mode=0755 ||
  { echo "package_test: skipped: cannot mount a tmpfs here" >&2; exit 77; }
mkdir "$mnt/upper" "$mnt/overlay-work" "$mnt/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$mnt/upper,workdir=$mnt/overlay-work" \
  "$mnt/root" || { echo "package_test: skipped: cannot mount an overlay here" >&2; exit 77; }
root=$mnt/root
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t tmpfs tmpfs "$root/run"
mount -t tmpfs tmpfs "$root/tmp"
for tree in "$source_dir" "$build_dir"; do
  top=/$(echo "$tree" | cut -d/ -f2)
  [ "$top" = "/tmp" ] || mount -t tmpfs tmpfs "$root$top"
done
cp "$deb" "$root/tmp/kareus.deb"
mkdir -m 1777 "$root/tmp/fake"
cp "$fake_nvml" "$root/tmp/fake/libnvidia-ml.so.1"
cp "$source_dir/tests/data/nvml/two_gpus.json" "$root/tmp/fake/script.json"
install -m 0666 /dev/null "$root/tmp/fake/nvml.log"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
# Clean trees (CI) hold no other copy; a developer's machine may have a kareus installed.
in_root sh -c '! dpkg-query -W kareus >/dev/null 2>&1' || in_root dpkg --purge kareus >/dev/null

step "dpkg -i kareus $version, maintainer scripts included"
in_root dpkg -i /tmp/kareus.deb >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i failed"; }
in_root getent group kareus >/dev/null || fail "postinst did not create group kareus"
unit=$(in_root sh -c 'ls /usr/lib/systemd/system/kareusd.service /lib/systemd/system/kareusd.service 2>/dev/null | head -n 1')
[ -n "$unit" ] || fail "no kareusd.service installed"

step "installed kareus --version"
[ "$(in_root kareus --version)" = "kareus $version" ] || fail "kareus --version: $(in_root kareus --version)"
[ "$(in_root kareusd --version)" = "kareusd $version" ] || fail "kareusd --version"

step "kareus plan from the installed catalogue"
in_root sh -c 'cd /tmp && kareus plan --model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 \
  --mbs 8 --seq 4096 --microbatches 4 --methods megatron --quiet --db /tmp/store.sqlite \
  --out /tmp/plan' >"$work/plan.log" 2>&1 || { cat "$work/plan.log" >&2; fail "kareus plan failed"; }
[ -s "$root/tmp/plan/schedule.json" ] || fail "kareus plan wrote no schedule.json"

step "systemd-analyze verify $unit"
in_root systemd-analyze verify "$unit" >"$work/verify.log" 2>&1 ||
  { cat "$work/verify.log" >&2; fail "systemd-analyze verify failed"; }
if grep -v "nvidia-persistenced" "$work/verify.log" | grep -q .; then
  cat "$work/verify.log" >&2
  fail "systemd-analyze verify warns"
fi

step "kareusd as the unit starts it"
value() { sed -n "s/^$1=//p" "$root$unit"; }
runtime_dir=/run/$(value RuntimeDirectory)
mkdir -m "$(value RuntimeDirectoryMode)" "$root$runtime_dir"
exec_start=$(value ExecStart)
fake_env=(KAREUS_NVML_LIBRARY=/tmp/fake/libnvidia-ml.so.1 KAREUS_FAKE_NVML_SCRIPT=/tmp/fake/script.json
          KAREUS_FAKE_NVML_LOG=/tmp/fake/nvml.log)
# Not through in_root: a backgrounded function would leave $! naming a subshell, not kareusd.
# shellcheck disable=SC2086 # ExecStart is split into words as systemd splits it (no quotes in it)
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${fake_env[@]}" $exec_start \
  >"$work/kareusd.out" 2>"$work/kareusd.err" &
daemon=$!
socket=$(echo "$exec_start" | sed -n 's/.*--socket \([^ ]*\).*/\1/p')
for _ in $(seq 100); do
  grep -q "listening on $socket" "$work/kareusd.out" && break
  kill -0 "$daemon" 2>/dev/null || { cat "$work/kareusd.err" >&2; fail "kareusd exited"; }
  sleep 0.1
done
grep -q "listening on $socket" "$work/kareusd.out" || fail "kareusd did not start"
mode=$(in_root stat -c '%A %G' "$socket")
[ "$mode" = "srw-rw---- kareus" ] || fail "socket is $mode, expected srw-rw---- kareus"
gid=$(in_root getent group kareus | cut -d: -f3)
play=(kareus run-schedule --schedule /tmp/plan/schedule.json --stage 0 --hold-ms 1 --daemon "$socket")
in_root "${fake_env[@]}" setpriv --reuid=65534 --regid=65534 --groups="$gid" "${play[@]}" \
  >"$work/member.log" 2>&1 || { cat "$work/member.log" >&2; fail "a member of kareus was not served"; }
if in_root "${fake_env[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups "${play[@]}" \
  >"$work/stranger.log" 2>&1; then
  fail "a user outside group kareus was served"
fi
grep -q "Permission denied" "$work/stranger.log" || { cat "$work/stranger.log" >&2; fail "no refusal"; }
kill -TERM "$daemon"
wait "$daemon" || fail "kareusd did not exit 0 on SIGTERM: $(cat "$work/kareusd.err")"
[ ! -e "$root$socket" ] || fail "kareusd left its socket"
grep -q "nvmlDeviceSetGpuLockedClocks 0" "$root/tmp/fake/nvml.log" || fail "no clock was set"
[ "$(tail -n 1 "$root/tmp/fake/nvml.log")" = "nvmlDeviceResetGpuLockedClocks 0" ] ||
  fail "the clock was not reset last: $(cat "$root/tmp/fake/nvml.log")"
step "passed"
