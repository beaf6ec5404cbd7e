#!/usr/bin/env python3
"""Fits the emulator's global factors for one GPU to a real training run.

Target (shared/data/kareus-artifact-frontiers, README there): Llama-3.2-3B, TP8 PP2, 8 microbatches
of 8 x 4096, full recomputation, 16 x A100-SXM4-40GB, every instruction at 1410 MHz, sequential
(Megatron) execution: iteration time 5.113 s, dynamic energy 8 x 1945 = 15,560 J for the job.

Fitted: gemm_efficiency (sets time) and data_movement_sm_activity (sets the dynamic energy of
memory-bound kernels and collectives); everything else stays at its published or separately
fitted value (docs/emulator.md). Prints the fitted values; write them into data/gpus/<gpu>.json
with the source "fitted: ... by CalibrationTest.SequentialIterationMatchesArtifact" (the other
GPUs carry A100's values over).

Usage: scripts/calibrate.py [build/apps/kareus/kareus]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

KAREUS = sys.argv[1] if len(sys.argv) > 1 else "build/apps/kareus/kareus"
GPU = "a100-sxm4-40gb"
TARGET_TIME_S = 5.113
TARGET_DYNAMIC_J = 8 * 1945.03
ARGS = ["simulate", "--model", "llama3.2-3b", "--gpu", GPU, "--tp", "8", "--pp", "2", "--mbs", "8",
        "--seq", "4096", "--microbatches", "8", "--recompute", "full", "--clock", "1410", "--json"]


def simulate(data_dir):
    out = subprocess.run([KAREUS] + ARGS, check=True, capture_output=True, text=True,
                         env={**os.environ, "KAREUS_DATA_DIR": data_dir}).stdout
    doc = json.loads(out)
    return doc["iteration_time_s"], doc["energy_j"]["dynamic"]


def main():
    repo_data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        shutil.copytree(repo_data, data)
        path = os.path.join(data, "gpus", GPU + ".json")
        spec = json.load(open(path))
        for step in range(30):
            json.dump(spec, open(path, "w"))
            t, e = simulate(data)
            print(f"step {step}: gemm_efficiency={spec['gemm_efficiency']['value']:.4f} "
                  f"activity={spec['data_movement_sm_activity']['value']:.3f} "
                  f"-> time {t:.3f} s, dynamic {e:.0f} J", file=sys.stderr)
            if abs(t / TARGET_TIME_S - 1) < 1e-3 and abs(e / TARGET_DYNAMIC_J - 1) < 1e-3:
                break
            # Time is dominated by GEMMs, which scale as 1/efficiency; dynamic energy scales
            # with the power coefficient (until the power cap binds).
            spec["gemm_efficiency"]["value"] = min(1.0, spec["gemm_efficiency"]["value"] *
                                                   (t / TARGET_TIME_S) ** 1.5)
            spec["data_movement_sm_activity"]["value"] = min(1.0, spec["data_movement_sm_activity"]["value"] * (TARGET_DYNAMIC_J / e) ** 2)
        print(json.dumps({"gemm_efficiency": round(spec["gemm_efficiency"]["value"], 4),
                          "data_movement_sm_activity":
                              round(spec["data_movement_sm_activity"]["value"], 3),
                          "iteration_time_s": t, "dynamic_energy_j": e}))


if __name__ == "__main__":
    main()
