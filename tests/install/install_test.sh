#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build tree into a temporary DESTDIR/prefix and uses the result as a user would:
# the installed CLI with the installed catalogue, a C program via pkg-config, a CMake project via
# find_package(Kareus), and `import kareus` with Debian's python3. Nothing points back into the
# source or build tree (KAREUS_DATA_DIR and KAREUS_REPORT_JS_DIR are unset).
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d "${build_dir}/install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset KAREUS_DATA_DIR KAREUS_REPORT_JS_DIR PYTHONPATH
export XDG_CACHE_HOME="$work/cache"
prefix=/opt/kareus
root="$work/dest$prefix"
step() { echo "install_test: $*"; }

step "cmake --install (DESTDIR=$work/dest, --prefix $prefix)"
DESTDIR="$work/dest" cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
for f in bin/kareus bin/kareusd include/kareus/kareus.h lib/systemd/system/kareusd.service \
  share/kareus/data/gpus/a100-sxm4-40gb.json; do
  [ -e "$root/$f" ] || { echo "install_test: $f not installed" >&2; exit 1; }
done
# A model only the installed catalogue has: planning it proves the installed binaries, library and
# Python module read share/kareus, not the source tree they were built from.
model=installed-only-llama
cp "$root/share/kareus/data/models/llama3.2-3b.json" "$root/share/kareus/data/models/$model.json"
grep -q "^ExecStart=$prefix/bin/kareusd " "$root/lib/systemd/system/kareusd.service"

step "installed kareus --version and a plan from the installed catalogue"
version=$("$root/bin/kareus" --version)
[ "$version" = "$("$root/bin/kareusd" --version | sed 's/^kareusd/kareus/')" ]
echo "$version" | grep -Eq '^kareus [0-9]+\.[0-9]+\.[0-9]+'
(cd "$work" && "$root/bin/kareus" plan --model "$model" --gpu a100-sxm4-40gb --tp 8 --pp 2 \
  --mbs 8 --seq 4096 --microbatches 4 --methods megatron --quiet --db "$work/store.sqlite" \
  --out "$work/plan" >"$work/plan.log")
[ -s "$work/plan/schedule.json" ]

libdir=$(dirname "$(find "$root" -name 'libkareus.so' | head -n 1)")
export LD_LIBRARY_PATH="$libdir"
step "a C program via pkg-config ($libdir/pkgconfig/kareus.pc)"
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs kareus)
cc -std=c11 -Wall -Werror -o "$work/pc_consumer" "$source_dir/tests/install/consumer/plan_megatron.c" \
  $flags
"$work/pc_consumer" "$model"

step "a CMake project via find_package(Kareus)"
cmake -S "$source_dir/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$root" \
  >"$work/consumer.log"
cmake --build "$work/consumer" >>"$work/consumer.log"
"$work/consumer/plan_megatron" "$model"

step "import kareus with /usr/bin/python3"
site=$(find "$root" -type d -path '*-packages/kareus' | head -n 1 | xargs dirname)
PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c "
import kareus, sys
assert kareus.__file__.startswith('$root'), kareus.__file__
w = kareus.Workload('$model', 'a100-sxm4-40gb', tp=8, pp=2, microbatch_size=8,
                    sequence_length=4096, microbatches=4)
r = kareus.plan(w, methods=['megatron'])
assert r.methods == ['megatron'], r.methods
print('python: kareus from', kareus.__file__)
"
step "passed"
