#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Power and time of ML.ENERGY v2's energy per request, from the raw CSV (no model involved).

Energy per request = power of all GPUs x output tokens / throughput. The CSV derives its power
from the other two, so that identity is exact; TPOT is measured separately, and the script checks
how far TPOT x output / running batch accounts for the deployment's seconds per request. It then
prints, per GPU and batch band, how TPOT, throughput, power and energy per output token move
between neighbouring batches of one (workload, GPU, model, TP, PP), how close the GPUs come to
their power limit and to the compute bound (GPUs x peak BF16 FLOP/s / 2 FLOP per parameter per
token), the throughput each configuration reaches at its largest batch, and how much of the power
per GPU a static power plus a utilisation that follows the GPU count and the batch explains.

These are measurement outputs: EnergyLens never reads them (docs/benchmarks/energylens.md,
"power and time of the ranking misses").

Usage: scripts/energylens_power_time.py [data/energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv]
"""

import csv
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BANDS = ((0, 64), (64, 256), (256, 768), (768, math.inf))


def gpu_catalogue():
    """Display name -> (power limit W, peak BF16 FLOP/s, static power W), from data/gpus."""
    out = {}
    for path in (ROOT / "data" / "gpus").glob("*.json"):
        g = json.loads(path.read_text())
        name = g["display_name"].split(" (")[0]
        out[name] = (g["power_limit_default_w"]["value"],
                     g["peak_bf16_dense_tflops"]["value"] * 1e12,
                     g["static_power_w"]["value"])
    return out


def band(batch):
    lo, hi = next(b for b in BANDS if b[0] < batch <= b[1])
    return f"{lo + 1}-{hi}" if hi != math.inf else f">{lo}"


def num(row, key):
    return float(row[key])


def seconds_per_request(row):
    return num(row, "avg_output_tokens") / num(row, "token_throughput_tok_s")


def beyond_tpot(row):
    """log of the deployment's seconds per request over TPOT x output / running batch."""
    decode = (num(row, "avg_tpot_s") * num(row, "avg_output_tokens")
              / num(row, "avg_batch_reqs"))
    return math.log(seconds_per_request(row) / decode)


def identities(rows):
    exact = [math.log(num(r, "avg_power_all_gpus_W") * seconds_per_request(r)
                      / num(r, "energy_per_req_J")) for r in rows]
    little = [-beyond_tpot(r) for r in rows]
    for name, v in (("power x output / throughput", exact),
                    ("power x TPOT x output / running batch", little)):
        a = sorted(abs(x) for x in v)
        print(f"energy per request against {name}: |log ratio| median {a[len(a) // 2]:.3f}, "
              f"90th percentile {a[int(0.9 * len(a))]:.3f}, "
              f"mean log ratio {statistics.mean(v):+.3f}")


def steps(rows):
    series = defaultdict(list)
    for r in rows:
        series[(r["workload"], r["gpu"], r["model"], r["tp"], r["pp"])].append(r)
    for s in series.values():
        s.sort(key=lambda r: num(r, "max_batch_reqs"))
        yield from zip(s, s[1:])


def per_band(rows, gpus):
    cells = defaultdict(list)
    for a, b in steps(rows):
        db = math.log(num(b, "max_batch_reqs") / num(a, "max_batch_reqs"))
        limit, peak, _ = gpus[b["gpu"]]
        n = num(b, "num_gpus")
        el = {k: math.log(num(b, k) / num(a, k)) / db for k in
              ("avg_tpot_s", "token_throughput_tok_s", "avg_power_all_gpus_W",
               "energy_per_output_token_J")}
        el["power_of_limit"] = num(b, "avg_power_all_gpus_W") / n / limit
        bound = n * peak / (2e9 * num(b, "params_b"))  # tokens/s at 2 FLOP per parameter
        el["of_compute_bound"] = num(b, "token_throughput_tok_s") / bound
        cells[(b["gpu"], band(num(b, "max_batch_reqs")))].append(el)
    print("\nneighbouring batches of one configuration, by GPU and the larger batch; medians "
          "(elasticity = d log x / d log batch)")
    print("| GPU | batch | steps | TPOT | throughput | power | energy per output token | steps "
          "with TPOT elasticity > 1 % | power per GPU / limit (max) | throughput / compute "
          "bound (max) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (gpu, b), v in sorted(cells.items(), key=lambda kv: (kv[0][0], num_band(kv[0][1]))):
        med = {k: statistics.median(x[k] for x in v) for k in v[0]}
        top = {k: max(x[k] for x in v) for k in ("power_of_limit", "of_compute_bound")}
        over = 100 * sum(x["avg_tpot_s"] > 1 for x in v) / len(v)
        print(f"| {gpu} | {b} | {len(v)} | {med['avg_tpot_s']:.2f} | "
              f"{med['token_throughput_tok_s']:.2f} | {med['avg_power_all_gpus_W']:+.3f} | "
              f"{med['energy_per_output_token_J']:+.3f} | {over:.0f} | "
              f"{med['power_of_limit']:.2f} ({top['power_of_limit']:.2f}) | "
              f"{med['of_compute_bound']:.3f} ({top['of_compute_bound']:.3f}) |")


def num_band(text):
    return float(text.lstrip(">").split("-")[0])


def beyond_by_workload(rows):
    cells = defaultdict(list)
    for r in rows:
        cells[(r["workload"], band(num(r, "max_batch_reqs")))].append(r)
    print("\nseconds per request beyond TPOT x output / running batch (mean factor), by workload")
    print("| workload | batch | rows | factor | mean output tokens |")
    print("|---|---|---|---|---|")
    for (w, b), v in sorted(cells.items(), key=lambda kv: (kv[0][0], num_band(kv[0][1]))):
        factor = math.exp(statistics.mean(beyond_tpot(r) for r in v))
        out = statistics.mean(num(r, "avg_output_tokens") for r in v)
        print(f"| {w} | {b} | {len(v)} | {factor:.2f} | {out:.0f} |")


def saturation(rows):
    series = defaultdict(list)
    for r in rows:
        series[(r["workload"], r["gpu"], r["model"], r["tp"], r["pp"])].append(r)
    cells = defaultdict(list)
    for (workload, gpu, *_), s in series.items():
        if len(s) < 3:
            continue
        last = max(s, key=lambda r: num(r, "max_batch_reqs"))
        cells[(workload, gpu)].append((num(last, "token_throughput_tok_s"),
                                       num(last, "params_b"), num(last, "num_gpus")))
    print("\nthroughput at each configuration's largest batch (configurations with >= 3 batches)")
    print("| workload | GPU | configurations | tokens/s: min / median / max | parameters, B "
          "| GPUs |")
    print("|---|---|---|---|---|---|")
    for (w, g), v in sorted(cells.items()):
        t = sorted(x[0] for x in v)
        params = f"{min(x[1] for x in v):g}-{max(x[1] for x in v):g}"
        gpus = f"{min(x[2] for x in v):g}-{max(x[2] for x in v):g}"
        print(f"| {w} | {g} | {len(v)} | {t[0]:.0f} / {statistics.median(t):.0f} / {t[-1]:.0f} | "
              f"{params} | {gpus} |")


def demeaned(values, groups):
    """values less their group's mean (the within-group variation a group multiplier leaves)."""
    sums, counts = defaultdict(float), defaultdict(int)
    for v, g in zip(values, groups):
        sums[g] += v
        counts[g] += 1
    return [v - sums[g] / counts[g] for v, g in zip(values, groups)]


def least_squares(columns, target):
    """Coefficients of target on the columns (no intercept), by the normal equations."""
    k = len(columns)
    a = [[sum(x * y for x, y in zip(columns[i], columns[j])) for j in range(k)]
         + [sum(x * t for x, t in zip(columns[i], target))] for i in range(k)]
    for i in range(k):  # Gauss-Jordan; the columns here are few and far from collinear
        a[i] = [x / a[i][i] for x in a[i]]
        for j in range(k):
            if j != i:
                a[j] = [x - a[j][i] * y for x, y in zip(a[j], a[i])]
    return [a[i][k] for i in range(k)]


def power_law(rows, gpus):
    """Power per GPU = static + (limit - static) x u, with the utilisation u a power law of the
    load proxies the model has (GPUs = TP x PP, batch) within each (workload, GPU, model): how
    much of the power per GPU's variation it explains, as R^2 of log power per GPU."""
    groups = [(r["workload"], r["gpu"], r["model"]) for r in rows]
    static = [gpus[r["gpu"]][2] for r in rows]
    span = [gpus[r["gpu"]][0] - s for r, s in zip(rows, static)]
    power = [num(r, "avg_power_all_gpus_W") / num(r, "num_gpus") for r in rows]
    log_u = [math.log((p - s) / w) for p, s, w in zip(power, static, span)]
    proxies = {"GPUs": [math.log(num(r, "tp") * num(r, "pp")) for r in rows],
               "TP": [math.log(num(r, "tp")) for r in rows],
               "PP": [math.log(num(r, "pp")) for r in rows],
               "batch": [math.log(num(r, "max_batch_reqs")) for r in rows]}
    mean_log_p = statistics.mean(math.log(p) for p in power)
    total = sum((math.log(p) - mean_log_p) ** 2 for p in power)
    print(f"\npower per GPU = static + (limit - static) x u (data/gpus), {len(rows)} rows: "
          f"u from {min(math.exp(x) for x in log_u):.2f} to {max(math.exp(x) for x in log_u):.2f}"
          f" (median {math.exp(statistics.median(log_u)):.2f})")
    print("| law of u | elasticities | R^2 of log power per GPU | median abs log error |")
    print("|---|---|---|---|")
    laws = (("one u per GPU type", [], [r["gpu"] for r in rows]),
            ("one u per (workload, GPU, model)", [], groups),
            ("  x GPUs^c", ["GPUs"], groups),
            ("  x batch^c", ["batch"], groups),
            ("  x GPUs^c x batch^c", ["GPUs", "batch"], groups),
            ("  x TP^c x PP^c x batch^c", ["TP", "PP", "batch"], groups))
    for name, used, by in laws:
        cols = [demeaned(proxies[p], by) for p in used]
        coef = least_squares(cols, demeaned(log_u, by)) if cols else []
        fitted = [u - e for u, e in zip(log_u, demeaned(log_u, by))]  # the groups' means
        for c, p in zip(coef, used):
            means = [x - d for x, d in zip(proxies[p], demeaned(proxies[p], by))]
            fitted = [f + c * (x - m) for f, x, m in zip(fitted, proxies[p], means)]
        err = [math.log((s + w * math.exp(f)) / p)
               for f, s, w, p in zip(fitted, static, span, power)]
        r2 = 1 - sum(e * e for e in err) / total
        el = ", ".join(f"{p} {c:+.2f}" for p, c in zip(used, coef)) or "-"
        print(f"| {name} | {el} | {r2:.3f} | {statistics.median(abs(e) for e in err):.3f} |")


def main():
    default = ROOT / "data/energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    with path.open() as f:
        rows = list(csv.DictReader(f))
    gpus = gpu_catalogue()
    identities(rows)
    per_band(rows, gpus)
    beyond_by_workload(rows)
    saturation(rows)
    power_law(rows, gpus)


if __name__ == "__main__":
    main()
