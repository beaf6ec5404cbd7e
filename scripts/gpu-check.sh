#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real-GPU check: builds Kareus with CUDA and runs the CUDA executor on every partition key of a
# small workload at the GPU's current clock, for a few SM counts and launch slots, printing
# measured vs emulated time and energy per configuration and whether both rank the
# configurations the same way (docs/validation.md).
#
# It never changes clocks, power limits or any other GPU setting.
#
#   scripts/gpu-check.sh [--build-dir DIR] [--no-build] [--gpu CATALOGUE_NAME] [kareus-gpu-check options]
#
# Without workload options it checks Llama 3.2 3B, TP2, microbatch 2 x 2048 tokens, with the
# collective on 1, 2, 4 and 16 SMs (where the emulator expects the order of configurations to
# change) at the first two launch slots of each key: 32 configurations, about 5 min of GPU time.
# --dry-run lists the configurations with emulated figures and touches no GPU.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$root/build-gpu-check"
build=1
gpu=""
args=()
has_workload=0
has_slots=0
has_sms=0

die() {
  echo "gpu-check.sh: $*" >&2
  exit 2
}

while (($#)); do
  case "$1" in
    --build-dir)
      (($# >= 2)) || die "--build-dir needs a directory"
      build_dir="$2"
      shift 2
      ;;
    --no-build)
      build=0
      shift
      ;;
    --gpu)
      (($# >= 2)) || die "--gpu needs a catalogue name (kareus gpus)"
      gpu="$2"
      shift 2
      ;;
    --allow-clock-control | --power-limit* | --lock-* | --reset-*)
      die "$1: this check never changes clocks, power limits or other GPU settings"
      ;;
    -h | --help)
      sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      case "$1" in
        --model | --workload) has_workload=1 ;;
        --slots-per-key) has_slots=1 ;;
        --sms) has_sms=1 ;;
      esac
      args+=("$1")
      shift
      ;;
  esac
done

# The catalogue entry of the first GPU, from the name the driver reports.
if [[ -z "$gpu" ]]; then
  name="$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || true)"
  case "$name" in
    *A100*80GB*) gpu=a100-sxm4-80gb ;;
    *A100*) gpu=a100-sxm4-40gb ;;
    *H100*) gpu=h100-sxm ;;
    *H200*) gpu=h200 ;;
    *A40*) gpu=a40 ;;
    *3080\ Ti*) gpu=rtx3080ti ;;
    "") gpu=h100-sxm
      echo "gpu-check.sh: no GPU found by nvidia-smi; catalogue entry $gpu assumed (--gpu)" >&2 ;;
    *) die "no catalogue entry for \"$name\": pass --gpu NAME (see data/gpus/)" ;;
  esac
fi

if ((!has_workload)); then
  args=(--model llama3.2-3b --tp 2 --mbs 2 --seq 2048 "${args[@]}")
fi
if ((!has_slots)); then
  args+=(--slots-per-key 2)
fi
if ((!has_sms)); then
  args+=(--sms 1,2,4,16)
fi

if ((build)); then
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
  cmake --build "$build_dir" --target kareus-gpu-check -j "$(nproc)" >&2
fi
binary="$build_dir/apps/kareus-gpu-check/kareus-gpu-check"
[[ -x "$binary" ]] || die "$binary was not built: the CUDA toolkit (nvcc) was not found by CMake"

# CUDA numbers devices fastest first by default, NVML by PCI bus; energy must come from the GPU
# that runs the kernels.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export KAREUS_DATA_DIR="${KAREUS_DATA_DIR:-$root/data}"
exec "$binary" --gpu "$gpu" "${args[@]}"
