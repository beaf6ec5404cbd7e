#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What `kareus plan --deadline S --milp-nodes N` buys on shipped workloads: the selected plan's
energy without and with the refinement and the whole process's wall time (median of --runs), at
deadlines across the selected method's frontier. Every run must print the same energy (the node
limit keeps the refinement deterministic). docs/benchmarks/pipeline_solver.md quotes its output.

  scripts/plan_milp_nodes.py [--kareus build/apps/kareus/kareus] [--nodes 10] [--runs 3]
      [--fractions 0.25,0.5,0.75] [--methods LIST] WORKLOAD.json...
"""
import argparse
import json
import statistics
import subprocess
import time


def plan(args, extra):
    began = time.perf_counter()
    out = subprocess.run([args.kareus, "plan", "--workload", extra[0], "--no-db", "--quiet",
                          "--json", *(["--methods", args.methods] if args.methods else []),
                          *extra[1:]], capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - began, json.loads(out)["selected"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="+")
    p.add_argument("--kareus", default="build/apps/kareus/kareus")
    p.add_argument("--nodes", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--fractions", default="0.25,0.5,0.75")
    p.add_argument("--methods", default="")
    args = p.parse_args()
    for workload in args.workloads:
        # The selected method's frontier span, from a run without a selection.
        out = subprocess.run([args.kareus, "plan", "--workload", workload, "--no-db", "--quiet",
                              "--json", *(["--methods", args.methods] if args.methods else [])],
                             capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
        front = doc["methods"][doc["selected"]["method"]]
        fastest, slowest = front["max_throughput"]["time_s"], front["min_energy"]["time_s"]
        for fraction in (float(f) for f in args.fractions.split(",")):
            deadline = repr(fastest + fraction * (slowest - fastest))
            rows = []
            for nodes in (0, args.nodes):
                extra = [workload, "--deadline", deadline]
                extra += ["--milp-nodes", str(nodes)] if nodes else []
                walls, energies = [], set()
                for _ in range(args.runs):
                    wall, selected = plan(args, extra)
                    walls.append(wall)
                    energies.add(selected["point"]["energy_j"])
                if len(energies) != 1:
                    raise SystemExit(f"{workload} at {deadline} s: runs differ: {energies}")
                rows.append((statistics.median(walls), energies.pop(),
                             selected.get("milp_refinement")))
            (wall0, energy0, _), (wall1, energy1, refinement) = rows
            print(f"{workload.rsplit('/', 1)[-1]} {fraction:.2f} (deadline {deadline} s): "
                  f"{energy0:.1f} -> {energy1:.1f} J ({100 * (energy1 / energy0 - 1):+.3f} %), "
                  f"wall {wall0:.2f} -> {wall1:.2f} s, refinement of {selected['method']} "
                  f"{refinement['time_s']:.2f} s, improved {refinement['improved']}", flush=True)


if __name__ == "__main__":
    main()
