#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes cases.json, the bad-input corpus of tests/cli/bad_input_corpus_test.cpp.

Each case is a command line ({dir}: the case's own folder, {data}: tests/data), the files written
into {dir} first, and the fragments its one stderr line must contain. A case with "values" is one
case per value, {v} replaced. Run it after editing; the JSON is what the test reads.
"""
import json
import os

W = "--model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 8"
WORKLOAD = {"model": "llama3.2-3b", "gpu": "a100-sxm4-40gb",
            "parallelism": {"tp": 8, "pp": 2, "microbatch_size": 8, "sequence_length": 4096,
                            "microbatches": 8, "recompute": "full"}}
PROFILE = ("kernel,clock_mhz,time_s,energy_j,pass\n"
           "ln_fwd,1005,0.0001088,0.0087959,forward\nln_fwd,1410,0.0001,0.0106971,forward\n")
STAGES = ("stage,instruction,frequency,time,energy\n"
          "0,forward,1410,0.13,39.1\n0,backward,1410,0.25,73.0\n")
EL_CSV = "scenario,tp,pp,batch,output_tokens,energy_j\n"
EL_ROWS = "".join(f"s,{tp},1,{b},100,{10.0 * tp + 100.0 / b}\n" for tp in (1, 2, 4) for b in (1, 8, 64))

cases = []


def case(name, args, expect, files=None, values=None):
    c = {"name": name, "args": args, "expect": expect if isinstance(expect, list) else [expect]}
    if files:
        c["files"] = files
    if values:
        c["values"] = values
    cases.append(c)


def mutated(document, mutate):
    """JSON text of a deep copy of `document` after `mutate` changed it in place."""
    copy = json.loads(json.dumps(document))
    mutate(copy)
    return json.dumps(copy)


def workload_with(mutate):
    return mutated(WORKLOAD, mutate)


# Numeric flags: text that is no number, out of range, nan, wrapped, octal or hex.
BAD_INT = ["abc", "1.5", "nan", "0x10", "99999999999999999999999", "4294971392", "", "--"]
for flag in ["--tp", "--pp", "--mbs", "--seq", "--microbatches"]:
    base = W.replace(f"{flag} ", f"{flag}_OLD ") if flag in W else W
    args = " ".join(t for t in W.split() if True)
    parts = W.split()
    if flag in parts:
        i = parts.index(flag)
        del parts[i:i + 2]
    case(f"simulate{flag.replace('-', '_')}", "simulate " + " ".join(parts) + f" {flag} '{{v}}'",
         [flag], values=[v for v in BAD_INT if v not in ("", "--")])
for v in ["-5", "0", "-1"]:
    pass
case("simulate_tp_nonpositive", f"simulate --model llama3.2-3b --tp {{v}}", ["{v}"],
     values=["0", "-8"])
case("simulate_clock", f"simulate {W} --clock {{v}}", ["--clock", "{v}"],
     values=["nan", "0", "-5", "inf", "1e400", "1412", "abc"])
case("simulate_unknown_model", "simulate --model gpt5", "gpt5")
case("simulate_unknown_gpu", "simulate --model llama3.2-3b --gpu v100", "v100")
case("simulate_recompute", "simulate --model llama3.2-3b --recompute {v}", "{v}",
     values=["some", "FULL"])
case("simulate_execution", "simulate --model llama3.2-3b --tp 8 --execution pipelined", "pipelined")
case("simulate_governor", "simulate --model llama3.2-3b --tp 8 --governor turbo", "turbo")
case("simulate_no_workload", "simulate", "no workload")
case("simulate_unknown_flag", "simulate --model llama3.2-3b --tpp 8", "--tpp")
case("simulate_workload_and_model", "simulate --workload {dir}/w.json --model llama3.2-3b",
     "exclusive", files={"w.json": json.dumps(WORKLOAD)})
case("simulate_cp_overflow", "simulate --model llama3.2-3b --cp 2147483647 --dp 2147483647",
     "tp x cp x pp x dp")

# Workload files.
WF = "simulate --workload {dir}/w.json"
wl_bad = {
    "truncated": '{"model": "llama3.2-3b", "gpu": ',
    "empty": "",
    "not_object": "[1, 2, 3]",
    "nested_deep": "[" * 100000,
    "huge_number": json.dumps(WORKLOAD).replace('"tp": 8', '"tp": 1e400'),
    "seq_wraps": workload_with(lambda w: w["parallelism"].update(sequence_length=4294971392)),
    "mbs_float": workload_with(lambda w: w["parallelism"].update(microbatch_size=8.5)),
    "mbs_string": workload_with(lambda w: w["parallelism"].update(microbatch_size="8")),
    "tp_negative": workload_with(lambda w: w["parallelism"].update(tp=-8)),
    "tp_zero": workload_with(lambda w: w["parallelism"].update(tp=0)),
    "tp_huge": workload_with(lambda w: w["parallelism"].update(tp=1e12)),
    "unknown_top": workload_with(lambda w: w.update(modle="x")),
    "unknown_par": workload_with(lambda w: w["parallelism"].update(micro_batches=8)),
    "null_unknown": workload_with(lambda w: w["parallelism"].update(zero=None)),
    "missing_mbs": workload_with(lambda w: w["parallelism"].pop("microbatch_size")),
    "missing_model": workload_with(lambda w: w.pop("model")),
    "recompute_bad": workload_with(lambda w: w["parallelism"].update(recompute="half")),
    "layer_split_sum": workload_with(lambda w: w["parallelism"].update(layer_split=[10, 10])),
    "layer_split_len": workload_with(lambda w: w["parallelism"].update(layer_split=[28])),
    "gpus_disagree": workload_with(lambda w: w.update(gpus=3)),
    "duplicate_key": json.dumps(WORKLOAD)[:-1] + ', "model": "llama3.2-1b"}',
    "duplicate_nested": json.dumps(WORKLOAD).replace('"tp": 8', '"tp": 8, "tp": 4'),
    "trailing_garbage": json.dumps(WORKLOAD) + " x",
    "comment": "// workload\n" + json.dumps(WORKLOAD),
    "invalid_utf8": json.dumps(WORKLOAD).replace("llama3.2-3b", "llama\udcff", 1),
    "escape_bytes": workload_with(lambda w: w.update(model="\x1b[31mred")),
    "nul_in_model": workload_with(lambda w: w.update(model="llama\u0000")),
    "model_path_missing": workload_with(lambda w: w.update(model="/nonexistent/config.json")),
}
# The model name is checked after the file is read, and its message names the value only.
NAMED_BY_VALUE = {"escape_bytes": ["w.json", "\\x1b[31mred"],
                  "nul_in_model": ["w.json", "model = llama"],
                  "model_path_missing": ["w.json", "/nonexistent/config.json"]}
for name, content in wl_bad.items():
    if "\udcff" in content:
        content = content.replace("\udcff", "\\udcff")
    case(f"workload_{name}", WF, NAMED_BY_VALUE.get(name, "w.json"), files={"w.json": content})
case("workload_is_folder", "simulate --workload {dir}", "only `kareus plan` takes a folder",
     files={"x.json": json.dumps(WORKLOAD)})
case("workload_missing", "simulate --workload {dir}/none.json", "none.json")
case("workload_two", "simulate --workload {dir}/a.json --workload {dir}/a.json", "--workload",
     files={"a.json": json.dumps(WORKLOAD)})

# HF config given as --model.
HF = {"hidden_size": 3072, "num_attention_heads": 24, "num_key_value_heads": 8,
      "intermediate_size": 8192, "num_hidden_layers": 28, "vocab_size": 128256}


def hf_with(**kw):
    h = dict(HF)
    for k, v in kw.items():
        if v is None:
            h.pop(k)
        else:
            h[k] = v
    return json.dumps(h)


hf_bad = {
    "hidden_wraps": hf_with(hidden_size=4294970368),
    "heads_zero": hf_with(num_attention_heads=0),
    "kv_not_divide": hf_with(num_key_value_heads=5),
    "kv_wraps": hf_with(num_key_value_heads=4294967304),
    "layers_missing": hf_with(num_hidden_layers=None),
    "vocab_string": hf_with(vocab_size="big"),
    "inter_negative": hf_with(intermediate_size=-1),
    "max_context_zero": hf_with(max_position_embeddings=0),
    "malformed": '{"hidden_size": 3072,',
}
for name, content in hf_bad.items():
    case(f"hf_config_{name}", "simulate --model {dir}/config.json --tp 8", "config.json",
         files={"config.json": content})
case("hf_config_folder", "simulate --model {dir}/sub --tp 8", "sub", files={"sub/a": "x"})

# overlap.
case("overlap_bytes", "overlap --gpu a100-sxm4-40gb --compute gemm --shape 4096x4096x4096 "
     "--collective allreduce --bytes {v}", "{v}", values=["-1", "64XB", "abc"])
case("overlap_ranks", "overlap --gpu a100-sxm4-40gb --compute gemm --shape 4096x4096x4096 "
     "--collective allreduce --bytes 64MiB --ranks {v}", "{v}", values=["0", "-2", "x"])
case("overlap_compute", "overlap --gpu a100-sxm4-40gb --compute fft --shape 64x64x64", "fft")
case("overlap_gpu", "overlap --gpu h800 --compute gemm", "h800")
case("overlap_dtype", "overlap --gpu a100-sxm4-40gb --compute gemm --shape 64x64x64 "
     "--dtype fp8", "fp8")
case("overlap_clock", "overlap --gpu a100-sxm4-40gb --compute gemm --shape 64x64x64 "
     "--collective allreduce --bytes 1MiB --clock {v}", "{v}", values=["nan", "-1", "1e400"])

# search.
case("search_seed", f"search {W} --partition fwd_attn --db {{dir}}/m.sqlite --seed {{v}}",
     "--seed", values=["-1", "abc", "1.5", "18446744073709551616"])
case("search_strategy", f"search {W} --partition fwd_attn --strategy greedy --db {{dir}}/m.db",
     "greedy")
case("search_noise", f"search {W} --partition fwd_attn --noise {{v}} --db {{dir}}/m.db", "{v}",
     values=["nan", "-0.1", "inf"])
case("search_partition", f"search {W} --partition fwd_everything --db {{dir}}/m.db",
     "fwd_everything")
case("search_budget", f"search {W} --partition fwd_attn --budget {{v}} --db {{dir}}/m.db",
     "{v}", values=["-3", "x"])

# plan (flags parsed in cmd_plan.cpp; only the numeric text checks and workload files here).
case("plan_seed", f"plan {W} --db {{dir}}/m.db --seed {{v}}", "--seed", values=["-1", "0x10"])
case("plan_workload", "plan --workload {dir}/w.json --db {dir}/m.db", "w.json",
     files={"w.json": workload_with(lambda w: w.update(extra=1))})
case("plan_noise", f"plan {W} --db {{dir}}/m.db --noise nan", "nan")
# Model states that cannot fit even sharded over every GPU: refused before anything is planned.
case("plan_memory", "plan --model llama3.3-70b --gpu a100-sxm4-40gb --tp 1 --pp 1 --mbs 2 "
     "--seq 4096 --microbatches 4 --db {dir}/m.db", ["does not fit", "40 GiB", "raise tp, pp or dp"])
# The deadline's MILP refinement: refused before anything is planned.
case("plan_milp_nodes", f"plan {W} --no-db --deadline 5 --milp-nodes {{v}}", ["--milp-nodes", "{v}"],
     values=["-1", "abc", "1.5", "99999999999"])
case("plan_milp_nodes_without_deadline", f"plan {W} --no-db --milp-nodes 5",
     ["--milp-nodes", "deadline"])
case("plan_milp_nodes_with_budget", f"plan {W} --no-db --energy-budget 20000 --milp-nodes 5",
     ["--milp-nodes", "deadline"])
# The pipeline solver's step bound, named as the flag the user typed, with the unit that fits.
case("plan_unit_time_steps", f"plan {W} --no-db --methods megatron --unit-time-ms 1e-6",
     ["--unit-time-ms = 1e-06", "at most 1000000", "at least 0.0050"])

# kernel-dvfs: flags.
KD = "kernel-dvfs --kernel-profile {dir}/p.csv"
PF = {"p.csv": PROFILE}
case("kdvfs_layers", "kernel-dvfs --model llama3.2-3b --gpu a100-sxm4-40gb --layers {v}",
     ["--layers", "{v}"], values=["0", "-1", "100000", "nan", "2.5"])
for flag in ["--switch-latency-ms", "--switch-power-w", "--min-dwell-ms", "--power-limit-w"]:
    case(f"kdvfs{flag.replace('-', '_')}", KD + f" {flag} {{v}}", [flag, "{v}"], files=PF,
         values=["nan", "-1", "inf"])
case("kdvfs_trace_clock", "kernel-dvfs --trace {data}/kernel_dvfs/gpt_layer_trace.json "
     "--gpu rtx3080ti --trace-clock {v}", ["--trace-clock", "{v}"],
     values=["nan", "0", "-1"])
case("kdvfs_time_bins", KD + " --time-bins {v}", ["--time-bins", "{v}"], files=PF,
     values=["0", "-1", "10000000"])
# The DP's table bound, stated with its limit.
case("kdvfs_dp_cells", "kernel-dvfs --model llama3.2-3b --gpu a100-sxm4-40gb --layers 64 "
     "--time-bins 1000000", ["cells", "at most 4e+08"])
case("kdvfs_slowdown", KD + " --slowdown {v}", "{v}", files=PF, values=["-1%", "x", "nan"])
case("kdvfs_reference", KD + " --reference median", "median", files=PF)
case("kdvfs_two_inputs", KD + " --model llama3.2-3b", "exactly one input", files=PF)
# kernel-dvfs: profile CSV.
prof_bad = {
    "missing_column": "kernel,clock_mhz,time_s\nk,1410,0.1\n",
    "duplicate_column": "kernel,clock_mhz,time_s,energy_j,time_s\nk,1410,0.1,1,0.2\n",
    "negative_time": "kernel,clock_mhz,time_s,energy_j\nk,1410,-0.1,1\n",
    "nan_energy": "kernel,clock_mhz,time_s,energy_j\nk,1410,0.1,nan\n",
    "text_clock": "kernel,clock_mhz,time_s,energy_j\nk,fast,0.1,1\n",
    "ragged": "kernel,clock_mhz,time_s,energy_j\nk,1410,0.1\n",
    "empty": "",
    "header_only": "kernel,clock_mhz,time_s,energy_j\n",
    "huge": "kernel,clock_mhz,time_s,energy_j\nk,1410,1e400,1\n",
    "escape": "kernel,clock_mhz,time_s,energy_j\nk,\x1b[2J,0.1,1\n",
}
for name, content in prof_bad.items():
    case(f"kdvfs_profile_{name}", KD, "p.csv", files={"p.csv": content})
case("kdvfs_profile_folder", "kernel-dvfs --kernel-profile {dir}", "--kernel-profile")
# kernel-dvfs: torch trace.
trace_bad = {
    "malformed": '{"traceEvents": [',
    "no_events": '{"traceEvents": []}',
    "not_object": "[]",
    "dur_negative": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": -1}]}',
    "dur_string": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": "1"}]}',
    "ts_huge": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e400, "dur": 1}]}',
    "duplicate_key": '{"traceEvents": [], "traceEvents": []}',
}
for name, content in trace_bad.items():
    case(f"kdvfs_trace_{name}", "kernel-dvfs --trace {dir}/t.json --gpu rtx3080ti "
         "--trace-clock 1800", "t.json", files={"t.json": content})
# kernel-dvfs: switch-latency CSV.
case("kdvfs_switch_csv_columns", KD + " --switch-latency-csv {dir}/l.csv", "l.csv",
     files={"p.csv": PROFILE, "l.csv": "from,to,ms\n1005,1410,20\n"})
case("kdvfs_switch_csv_negative", KD + " --switch-latency-csv {dir}/l.csv", "l.csv",
     files={"p.csv": PROFILE, "l.csv": "from_mhz,to_mhz,latency_ms\n1005,1410,-20\n"})

# pipeline-solve: flags and Perseus profile.
PS = "pipeline-solve --stage-profile {dir}/s.csv --microbatches 4 --p-blocking 60"
SF = {"s.csv": STAGES}
case("psolve_microbatches", "pipeline-solve --stage-profile {dir}/s.csv --microbatches {v} "
     "--p-blocking 60", "{v}", files=SF, values=["0", "-1", "x", "4294967297"])
case("psolve_p_blocking", "pipeline-solve --stage-profile {dir}/s.csv --microbatches 4 "
     "--p-blocking {v}", "{v}", files=SF, values=["nan", "-60", "inf"])
case("psolve_unit_time", PS + " --unit-time-ms {v}", "{v}", files=SF,
     values=["0", "nan", "-1"])
case("psolve_transfer", PS + " --transfer-ms {v}", "{v}", files=SF, values=["nan", "-1"])
case("psolve_milp_nodes", PS + " --deadline 1 --milp-nodes {v}", ["--milp-nodes", "{v}"], files=SF,
     values=["-1", "abc", "1.5", "99999999999"])
case("psolve_milp_nodes_without_deadline", PS + " --milp-nodes 5", ["--milp-nodes", "--deadline"],
     files=SF)
stage_bad = {
    "missing_column": "stage,instruction,frequency,time\n0,forward,1410,0.1\n",
    "duplicate_column": "stage,instruction,frequency,time,energy,energy\n0,forward,1410,0.1,1,2\n",
    "bad_instruction": "stage,instruction,frequency,time,energy\n0,sideways,1410,0.1,1\n",
    "negative_time": "stage,instruction,frequency,time,energy\n0,forward,1410,-0.1,1\n",
    "nan_energy": "stage,instruction,frequency,time,energy\n0,forward,1410,0.1,nan\n",
    "stage_text": "stage,instruction,frequency,time,energy\nA,forward,1410,0.1,1\n",
    "empty": "",
    "only_forward": "stage,instruction,frequency,time,energy\n0,forward,1410,0.1,1\n",
}
for name, content in stage_bad.items():
    case(f"psolve_profile_{name}", PS, "s.csv", files={"s.csv": content})
case("psolve_profile_missing", PS, "s.csv")

# run-schedule.
with open(os.path.join(os.path.dirname(__file__), "..", "runtime", "two_stages.json")) as f:
    SCHEDULE = json.load(f)


def schedule_with(mutate):
    return mutated(SCHEDULE, mutate)


sched_bad = {
    "malformed": "{",
    "version": schedule_with(lambda s: s.update(format_version=4294967297)),
    "version_2": schedule_with(lambda s: s.update(format_version=2)),
    "unknown_field": schedule_with(lambda s: s.update(extra=True)),
    "method": schedule_with(lambda s: s.update(method="magic")),
    "clock_nan": json.dumps(SCHEDULE).replace('"clock_mhz": 930', '"clock_mhz": 1e400', 1),
    "clock_negative": json.dumps(SCHEDULE).replace('"clock_mhz": 930', '"clock_mhz": -930', 1),
    "direction": json.dumps(SCHEDULE).replace('"direction": "forward"', '"direction": "up"', 1),
    "duplicate_key": json.dumps(SCHEDULE)[:-1] + ', "method": "megatron"}',
    "stages_not_array": schedule_with(lambda s: s.update(stages={})),
}
for name, content in sched_bad.items():
    case(f"schedule_{name}", "run-schedule --schedule {dir}/s.json --dry-run", "s.json",
         files={"s.json": content})
case("schedule_stage", "run-schedule --schedule {data}/runtime/two_stages.json --dry-run "
     "--stage {v}", "{v}", values=["-1", "nan", "x"])
case("schedule_hold", "run-schedule --schedule {data}/runtime/two_stages.json --dry-run "
     "--hold-ms {v}", "{v}", values=["nan", "-5"])

case("schedule_record_dry_run", "run-schedule --schedule {data}/runtime/two_stages.json "
     "--dry-run --record {dir}/r.jsonl", ["--record", "dry run"])


# Measurement records (docs/measurement-format.md) for calibrate and compare --measured.
def record(gpu="NVIDIA A100-SXM4-40GB", schedule=None, energy=60.0, spans=6, iterations=1):
    """A record of stage 0 of `schedule` (default: two_stages.json), every span ended."""
    schedule = schedule or SCHEDULE
    header = {"kareus_measurement": 1, "rank": 0, "stage": 0, "boundaries": "host",
              "gpu": {"index": 0, "uuid": "GPU-0", "name": gpu, "driver": "535.129.03",
                      "power_limit_w": 400},
              "started_utc": "2025-01-01T00:00:00Z", "schedule": schedule}
    lines = [json.dumps(header)]
    ins = schedule["stages"][0]["instructions"]
    for it in range(iterations):
        for i, x in enumerate(ins[:spans]):
            lines.append(json.dumps({
                "type": "instruction", "iteration": it, "index": i,
                "microbatch": x["microbatch"], "direction": x["direction"],
                "clock_mhz": x["clock_mhz"], "observed_clock_mhz": x["clock_mhz"],
                "start_s": 0.25 * i, "time_s": 0.2, "energy_j": energy, "ended": True}))
    return "\n".join(lines) + "\n"


def at_one_clock(schedule):
    for stage in schedule["stages"]:
        for x in stage["instructions"]:
            x["clock_mhz"] = 1410


ONE_CLOCK = json.loads(schedule_with(at_one_clock))
CAL = "calibrate --gpu a100-sxm4-40gb --out {dir}/my-gpu.json --measured"
case("calibrate_other_model", f"{CAL} {{dir}}/r.jsonl",
     ["r.jsonl record 1", "gpu.name", "another GPU model than --gpu a100-sxm4-40gb"],
     files={"r.jsonl": record(gpu="NVIDIA H100 80GB HBM3")})
case("calibrate_mixed_models", f"{CAL} {{dir}}/a.jsonl {{dir}}/b.jsonl",
     ["b.jsonl record 1", "mix GPU models"],
     files={"a.jsonl": record(), "b.jsonl": record(gpu="NVIDIA A100-SXM4-80GB")})
case("calibrate_too_few", f"{CAL} {{dir}}/r.jsonl", ["r.jsonl record 2", "too few"],
     files={"r.jsonl": record(spans=3)})
case("calibrate_one_clock", f"{CAL} {{dir}}/r.jsonl",
     ["r.jsonl record 2", "clock_mhz = 1410 for every span"],
     files={"r.jsonl": record(schedule=ONE_CLOCK, iterations=2)})
case("calibrate_nan_energy", f"{CAL} {{dir}}/r.jsonl", ["r.jsonl record 2", "malformed JSON"],
     files={"r.jsonl": record().replace('"energy_j": 60.0', '"energy_j": NaN', 1)})
case("calibrate_negative_energy", f"{CAL} {{dir}}/r.jsonl",
     ["r.jsonl record 2", "/energy_j = -5"], files={"r.jsonl": record(energy=-5.0)})
case("calibrate_truncated", f"{CAL} {{dir}}/r.jsonl", ["r.jsonl record 7", "cut short"],
     files={"r.jsonl": record()[:-20]})
case("calibrate_not_a_record", f"{CAL} {{dir}}/r.jsonl", ["r.jsonl record 1", "header"],
     files={"r.jsonl": '{"type": "instruction"}\n'})
case("calibrate_frontier_without_workload", f"{CAL} {{data}}/calibration/"
     "llama3.2_3b_tp8_mbs8_seq4096.csv", ["--workload"])
case("calibrate_unknown_gpu", "calibrate --gpu v100 --out {dir}/g.json --measured {dir}/r.jsonl",
     ["--gpu", "v100"], files={"r.jsonl": record()})
case("compare_measured_other_schedule",
     "compare --plan {dir}/plan --measured {dir}/r.jsonl", ["r.jsonl record 1", "schedule"],
     files={"plan/schedule.json": json.dumps(SCHEDULE),
            "r.jsonl": record(schedule=ONE_CLOCK)})
case("compare_measured_with_second_plan",
     "compare --plan {dir}/plan perseus --measured {dir}/r.jsonl", ["--measured"],
     files={"plan/schedule.json": json.dumps(SCHEDULE), "r.jsonl": record()})
GPU_FILES = "{data}/../../data/gpus"
case("simulate_gpu_file_other_model", f"simulate --model llama3.2-3b --tp 8 --gpu-file "
     f"{GPU_FILES}/h100-sxm.json", ["--gpu-file", "h100-sxm.json", "describes h100-sxm"])
case("simulate_gpu_file_missing", "simulate --model llama3.2-3b --tp 8 --gpu-file {dir}/none.json",
     ["--gpu-file", "none.json"])
case("overlap_gpu_and_gpu_file", f"overlap --gpu a100-sxm4-40gb --gpu-file "
     f"{GPU_FILES}/a100-sxm4-40gb.json --shape 4096x4096x4096 --bytes 64MiB",
     ["--gpu-file", "not both"])

# energylens.
DATA = {"d.csv": EL_CSV + EL_ROWS}
el_csv_bad = {
    "missing_column": "scenario,tp,pp,batch,energy_j\ns,1,1,8,3\n",
    "duplicate_column": "scenario,tp,pp,batch,output_tokens,energy_j,tp\ns,1,1,8,100,3,2\n",
    "negative_energy": EL_CSV + "s,1,1,8,100,-3\n",
    "nan_energy": EL_CSV + "s,1,1,8,100,nan\n",
    "zero_tp": EL_CSV + "s,0,1,8,100,3\n",
    "text_batch": EL_CSV + "s,1,1,many,100,3\n",
    "header_only": EL_CSV,
    "ragged": EL_CSV + "s,1,1,8\n",
    "zero_run": EL_CSV.rstrip("\n") + ",run_s,gpus_metered\ns,1,1,8,100,3,0,1\n",
    "metered_below_serving": EL_CSV.rstrip("\n") + ",run_s,gpus_metered\ns,4,1,8,100,3,2,2\n",
    "empty_workload": EL_CSV.rstrip("\n") + ",workload\ns,1,1,8,100,3,chat\ns,1,1,16,100,3,\n",
    "zero_cap": EL_CSV.rstrip("\n") + ",max_output_tokens,requests\ns,1,1,8,100,3,0,8\n",
    "requests_below_batch": EL_CSV.rstrip("\n") + ",max_output_tokens,requests\ns,1,1,8,100,3,128,4\n",
    "cap_without_requests": EL_CSV.rstrip("\n") + ",max_output_tokens,requests\ns,1,1,8,100,3,128,\n",
    "drain_on_some_rows": EL_CSV.rstrip("\n") + ",max_output_tokens,requests\n"
                          "s,1,1,8,100,3,128,8\ns,2,1,8,100,3,,\n",
}
for name, content in el_csv_bad.items():
    case(f"energylens_fit_{name}", "energylens fit --data {dir}/d.csv --out {dir}/m.json",
         "d.csv", files={"d.csv": content})
# Each number of the canonical CSV beyond its range (docs/energylens.md): a batch of 1e308 crashed
# the fit.
EL_ALL = ("scenario,tp,pp,dp,batch,output_tokens,input_tokens,energy_j,time_s,power_w,run_s,"
          "gpus_metered,max_output_tokens,requests,max_model_len")
EL_ALL_ROW = "s,1,1,1,8,100,50,3,1,300,60,1,128,8,4096"
el_extreme = {"tp": "99999999", "pp": "99999999", "dp": "99999999", "batch": "1e308",
              "output_tokens": "1e300", "input_tokens": "1e300", "energy_j": "1e-300",
              "time_s": "1e300", "power_w": "1e300", "run_s": "1e-9", "gpus_metered": "99999999",
              "max_output_tokens": "9999999999", "requests": "9999999999999",
              "max_model_len": "9999999999"}
for column, value in el_extreme.items():
    cells = EL_ALL_ROW.split(",")
    cells[EL_ALL.split(",").index(column)] = value
    case(f"energylens_fit_extreme_{column}", "energylens fit --data {dir}/d.csv --out {dir}/m.json",
         ["d.csv", column, value],
         files={"d.csv": EL_ALL + "\n" + EL_ALL_ROW + "\n" + ",".join(cells) + "\n"})
case("energylens_fit_seed", "energylens fit --data {dir}/d.csv --seed {v} --out {dir}/m.json",
     "--seed", files=DATA, values=["-1", "1e3"])
case("energylens_fit_bags", "energylens fit --data {dir}/d.csv --descriptors off --bags {v}",
     ["--bags", "{v}"],
     files=DATA, values=["0", "-3"])
case("energylens_evaluate_bags", "energylens evaluate --data {dir}/d.csv --train-size 5 --seeds 1 "
     "--descriptors off --quiet --bags 0", ["--bags", "0"], files=DATA)
case("energylens_fit_out_under_file", "energylens fit --data {dir}/d.csv --out {dir}/f/m.json",
     "f", files=dict(DATA, f="file"))
case("energylens_import_format", "energylens import --format csv {dir}/d.csv {dir}/o.csv",
     "csv", files=DATA)
case("energylens_import_columns", "energylens import --format tokenpowerbench {dir}/d.csv "
     "{dir}/o.csv", "d.csv", files=DATA)
case("energylens_import_bad_energy", "energylens import --format tokenpowerbench "
     "{data}/energylens/tokenpowerbench_bad_energy.csv {dir}/o.csv", "tokenpowerbench_bad_energy")
case("energylens_evaluate_seeds", "energylens evaluate --data {dir}/d.csv --seeds {v}", "{v}",
     files=DATA, values=["1.5", "abc"])
case("energylens_design_budget", "energylens design --candidates {dir}/d.csv --descriptors off "
     "--budget {v}", ["--budget", "{v}"], files=DATA, values=["0", "-2", "10", "x"])
case("energylens_design_missing", "energylens design --candidates {dir}/none.csv --budget 2",
     "none.csv")
case("energylens_design_unknown_model", "energylens design --candidates {dir}/d.csv --budget 1",
     ["d.csv", "nosuch"],
     files={"d.csv": EL_CSV.rstrip("\n") + ",model,gpu\ns,1,1,8,100,3,nosuch,a100-sxm4-40gb\n"})
case("energylens_evaluate_design", "energylens evaluate --data {dir}/d.csv --design {v}",
     ["--design", "{v}"], files=DATA, values=["optimal", "D-optimal"])
case("energylens_evaluate_pool", "energylens evaluate --data {dir}/d.csv --design d-optimal "
     "--descriptors off --pool {v}", ["--pool", "{v}"], files=DATA, values=["0", "1", "1.5"])
case("energylens_discover_population", "energylens discover --data {dir}/d.csv "
     "--population {v}", "{v}", files=DATA, values=["-5", "x"])
case("energylens_discover_parsimony", "energylens discover --data {dir}/d.csv --parsimony {v}",
     "{v}", files=DATA, values=["nan", "inf", "-1"])
case("energylens_discover_generations", "energylens discover --data {dir}/d.csv "
     "--generations {v}", ["--generations", "{v}"], files=DATA, values=["-1", "0"])
# energylens model JSON: a valid fit, then one field made invalid each.
MODEL_FILE = os.path.join(os.path.dirname(__file__), "model.json")
with open(MODEL_FILE) as f:
    MODEL = json.load(f)


def model_with(mutate):
    return mutated(MODEL, mutate)


model_bad = {
    "a_p_negative": model_with(lambda m: m["params"].update(a_p=-1.0)),
    "e_p_zero": model_with(lambda m: m["params"].update(e_p=0.0)),
    "b_d_large": model_with(lambda m: m["params"].update(b_d=9.0)),
    "param_missing": model_with(lambda m: m["params"].pop("d1")),
    "bags_beyond_replicates": model_with(lambda m: m.update(bags=3)),
    "foreign_term": model_with(lambda m: m["params"].update(c_tp=0.5)),
    "variance_negative": model_with(lambda m: m.update(row_log_variance=-1.0)),
    "range_inverted": model_with(
        lambda m: m.update(training_ranges={"batch": {"low": 64.0, "high": 1.0}})),
    "range_unknown_input": model_with(
        lambda m: m.update(training_ranges={"colour": {"low": 1.0, "high": 2.0}})),
    "malformed": "{",
    "duplicate_key": json.dumps(MODEL)[:-1] + ', "train_rows": 3}',
}
for name, content in model_bad.items():
    case(f"energylens_model_{name}", "energylens predict --fit {dir}/m.json --data {dir}/d.csv",
         {"bags_beyond_replicates": ["m.json", "/bags"],
          "foreign_term": ["m.json", "c_tp", "not a parameter"],
          "range_inverted": ["m.json", "/training_ranges/batch", "low <= high"],
          "range_unknown_input": ["m.json", "/training_ranges/colour", "an input of"]
          }.get(name, "m.json"),
         files=dict(DATA, **{"m.json": content}))
case("energylens_select_missing", "energylens select --fit {dir}/m.json --candidates "
     "{dir}/none.csv", "none.csv", files={"m.json": json.dumps(MODEL)})
# Candidates' drain columns are checked as a training CSV's are.
CAND = "scenario,tp,pp,batch,output_tokens,max_output_tokens,requests\n"
candidate_bad = {
    "zero_cap": (CAND + "s,1,1,8,100,0,8\n", "max_output_tokens"),
    "fractional_requests": (CAND + "s,1,1,8,100,128,8.5\n", "requests"),
    "requests_below_batch": (CAND + "s,1,1,8,100,128,4\n", "requests"),
    "cap_without_requests": (CAND + "s,1,1,8,100,128,\n", "requests"),
    "drain_on_some_rows": (CAND + "s,1,1,8,100,128,8\ns,2,1,8,100,,\n", "requests"),
}
for name, (content, column) in candidate_bad.items():
    for command in ("select", "predict"):
        flag = "--candidates" if command == "select" else "--data"
        case(f"energylens_{command}_{name}", f"energylens {command} --fit {{dir}}/m.json "
             f"{flag} {{dir}}/c.csv", ["c.csv", column],
             files={"m.json": json.dumps(MODEL), "c.csv": content})

# Output paths: refused before any work (no store created, no search run), nothing written.
TPB = ("file,engine,model,model_tag,batch_size_field,fn_batch,fn_output_len,timestamp,entry,"
       "duration_s,total_output_tokens,responses,gpu_avg_power_W,gpu_energy_J,"
       "gpu_energy_per_token_J,gpu_energy_per_response_J,per_gpu_power_W,gpu_memory_total_mb,"
       "gpu_memory_after_load_mb\n"
       "raw/a.json,vllm,m,m,8,8,500,20250418_232621,0,100.0,4000,8,500.0,50000.0,12.5,6250.0,"
       "gpu0=500.0,,\n")
UNDER_FILE = {"f": "a file, not a folder"}
case("search_out_under_file", f"search {W} --partition fwd_attn --db {{dir}}/m.db "
     "--out {dir}/f/x.csv", ["--out", "f/x.csv", "not a folder"], files=UNDER_FILE)
case("plan_out_under_file", f"plan {W} --db {{dir}}/m.db --out {{dir}}/f/plan",
     ["--out", "f/plan", "not a folder"], files=UNDER_FILE)
case("plan_artifact_under_file", f"plan {W} --db {{dir}}/m.db --out {{dir}}/plan "
     "--export-artifact {dir}/f/artifact", ["--export-artifact", "f/artifact"], files=UNDER_FILE)
case("plan_report_is_folder", f"plan {W} --db {{dir}}/m.db --out {{dir}}/plan "
     "--report {dir}/page", ["--report", "page", "is a folder"], files={"page/keep": "x"})
case("plan_out_kept_on_refusal", f"plan {W} --db {{dir}}/m.db --out {{dir}}/plan "
     "--export-artifact {dir}/f/a", "--export-artifact",
     files=dict(UNDER_FILE, **{"plan/schedule.json": "old", "plan/summary.json": "old"}))
case("report_out_under_file", "report --plan {dir}/plan --out {dir}/f/r.html",
     ["--out", "f/r.html"], files=UNDER_FILE)
case("energylens_import_out_is_folder", "energylens import --format tokenpowerbench "
     "{dir}/t.csv {dir}/out", ["OUT", "is a folder"], files={"t.csv": TPB, "out/keep": "x"})
case("energylens_fit_out_is_folder", "energylens fit --data {dir}/d.csv --out {dir}/out",
     ["--out", "is a folder"], files=dict(DATA, **{"out/keep": "x"}))
case("workload_unknown_gpu", WF, ["w.json", "gpu = h800"],
     files={"w.json": workload_with(lambda w: w.update(gpu="h800"))})
case("workload_unknown_model", WF, ["w.json", "model = gpt9"],
     files={"w.json": workload_with(lambda w: w.update(model="gpt9"))})

# Bounds on what an input may ask for (docs/hardening.md), each refused before the work or the
# memory it would take, and values no GPU has.
case("workload_microbatches_bound", WF, ["w.json", "microbatches = 1000000000", "at most 250000"],
     files={"w.json": workload_with(lambda w: w["parallelism"].update(microbatches=10**9))})
case("simulate_microbatches_bound", f"simulate {W.replace('--microbatches 8', '--microbatches {v}')}",
     ["microbatches = {v}", "at most 250000"], values=["62501", "100000000", "1000000000"])
case("plan_microbatches_bound", f"plan {W.replace('--microbatches 8', '--microbatches 1000000000')}"
     " --no-db", ["microbatches = 1000000000", "at most 250000"])
case("psolve_microbatches_bound", "pipeline-solve --stage-profile {dir}/s.csv --microbatches {v} "
     "--p-blocking 60", ["--microbatches = {v}", "at most 250000"], files=SF,
     values=["125001", "1000000000"])
case("psolve_p_blocking_bound", "pipeline-solve --stage-profile {dir}/s.csv --microbatches 4 "
     "--p-blocking {v}", ["--p-blocking", "from 0 to 10000 W"], files=SF, values=["1e300", "10001"])
case("json_nul_byte", WF, ["w.json", "a NUL byte"],
     files={"w.json": json.dumps(WORKLOAD) + "\u0000" + ', "model": "x"}'})
case("simulate_model_is_folder", "simulate --model {dir}/llama --tp 8", ["llama", "is a folder"],
     files={"llama/config.json": "{}"})
case("schedule_hold_bound", "run-schedule --schedule {data}/runtime/two_stages.json --dry-run "
     "--hold-ms {v}", ["--hold-ms", "from 0 to 60000 ms"], values=["1e300", "60001"])
case("overlap_bytes_bound", "overlap --gpu a100-sxm4-40gb --compute gemm --shape 4096x4096x4096 "
     "--collective allreduce --bytes {v}", ["--bytes = {v}", "40 GiB"],
     values=["1e30", "18446744073709551616", "41GiB"])
case("overlap_shape_bound", "overlap --gpu a100-sxm4-40gb --compute {v} --collective allreduce "
     "--bytes 64MiB", ["--shape", "40 GiB"],
     values=["gemm --shape 99999999x99999999x99999999", "attention --shape 64x64x65536x4096",
             "elementwise --shape 9999999999"])
case("overlap_fit_together", "overlap --gpu a100-sxm4-40gb --compute elementwise "
     "--shape 4000000000 --collective allgather --bytes 20GiB", ["--shape", "together"])
for flag, values in [("--switch-latency-ms", ["1e300", "60001"]), ("--min-dwell-ms", ["1e300"]),
                     ("--switch-power-w", ["1e300", "10001"]), ("--power-limit-w", ["1e300"])]:
    case(f"kdvfs{flag.replace('-', '_')}_bound", KD + f" {flag} {{v}}", [flag, "{v}", "at most"],
         files=PF, values=values)
case("kdvfs_trace_clock_bound", "kernel-dvfs --trace {data}/kernel_dvfs/gpt_layer_trace.json "
     "--gpu rtx3080ti --trace-clock {v}", ["--trace-clock", "{v}"],
     values=["1e300", "1800.5", "0x708"])
prof_bounds = {
    # Line 3 holds a clock no GPU has; that line is named, not a later kernel's.
    "clock_fraction": ("kernel,clock_mhz,time_s,energy_j\na,1410,0.1,1\na,1740.5,0.1,1\n"
                       "b,1410,0.1,1\nb,1740,0.1,1\n", ["p.csv:3", "1740.5", "whole number of MHz"]),
    "clock_huge": ("kernel,clock_mhz,time_s,energy_j\na,1e300,0.1,1\n", ["p.csv:2", "1e300"]),
    "time_hex": ("kernel,clock_mhz,time_s,energy_j\na,1410,0x1p-3,1\n", ["p.csv:2", "0x1p-3"]),
    "time_bound": ("kernel,clock_mhz,time_s,energy_j\na,1410,3601,1\n", ["p.csv:2", "3601"]),
    "energy_bound": ("kernel,clock_mhz,time_s,energy_j\na,1410,1,1e10\n", ["p.csv:2", "1e10"]),
}
for name, (content, expect) in prof_bounds.items():
    case(f"kdvfs_profile_{name}", KD, expect, files={"p.csv": content})
case("kdvfs_profile_gpu_clock", KD + " --gpu a100-sxm4-40gb", ["p.csv:3", "1412",
     "not a supported clock"], files={"p.csv": "kernel,clock_mhz,time_s,energy_j\n"
                                      "a,1410,0.1,1\na,1412,0.1,1\n"})
case("kdvfs_switch_csv_bound", KD + " --switch-latency-csv {dir}/l.csv", ["l.csv:2", "1e300"],
     files={"p.csv": PROFILE, "l.csv": "from_mhz,to_mhz,latency_ms\n1005,1410,1e300\n"})
trace_bounds = {
    "dur_bound": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 1e300}]}',
    "ts_bound": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1}]}',
}
for name, content in trace_bounds.items():
    case(f"kdvfs_trace_{name}", "kernel-dvfs --trace {dir}/t.json --gpu rtx3080ti "
         "--trace-clock 1800", ["t.json", "1e+300"], files={"t.json": content})
stage_bounds = {
    "clock_huge": ("0,forward,1e300,0.1,1\n0,backward,1410,0.2,2\n", "1e300"),
    "clock_fraction": ("0,forward,1740.5,0.1,1\n0,backward,1410,0.2,2\n", "1740.5"),
    "clock_hex": ("0,forward,0x6c0,0.1,1\n0,backward,1410,0.2,2\n", "0x6c0"),
    "time_bound": ("0,forward,1410,1e300,1\n0,backward,1410,0.2,2\n", "1e300"),
    "energy_bound": ("0,forward,1410,0.1,1e300\n0,backward,1410,0.2,2\n", "1e300"),
    "stage_bound": ("125000,forward,1410,0.1,1\n", "125000"),
}
for name, (rows, value) in stage_bounds.items():
    case(f"psolve_profile_{name}", PS, ["s.csv:2", value],
         files={"s.csv": "stage,instruction,frequency,time,energy\n" + rows})


def renamed_partition(new_key, instruction=0, field="partitions", old_key="fwd_attn"):
    def mutate(s):
        partitions = s["stages"][0]["instructions"][instruction][field]
        partitions[new_key] = partitions.pop(old_key)
    return schedule_with(mutate)


sched_bounds = {
    "partition_unknown": renamed_partition("evil"),
    "partition_osc": renamed_partition("\x1b]0;owned\x07"),
    "partition_rtl": renamed_partition("fwd_\u202emlp"),
    "partition_direction": renamed_partition("bwd_attn"),
    "partition_recompute": renamed_partition("bwd_mlp", 2, "recompute_partitions"),
    "slot": schedule_with(lambda s: s["stages"][0]["instructions"][0]["partitions"]["fwd_attn"]
                          .update(slot="\x1b[2J")),
    "clock_bound": schedule_with(lambda s: s["stages"][0]["instructions"][0]
                                 .update(clock_mhz=20000)),
    "step_clock_bound": schedule_with(lambda s: s["stages"][0]["instructions"][0]
                                      .update(step_clocks_mhz=[930, 10**6])),
}
for name, content in sched_bounds.items():
    case(f"schedule_{name}", "run-schedule --schedule {dir}/s.json --dry-run", "s.json",
         files={"s.json": content})
case("plan_switch_latency_bound", f"plan {W} --no-db --switch-latency-ms {{v}}",
     ["--switch-latency-ms", "one minute"], values=["1e300", "60001"])

# Arguments themselves.
case("no_subcommand", "", "no command given")
case("unknown_subcommand", "simulat", "unknown command simulat; did you mean simulate?")
case("devices_extra", "devices --gpu 0", "--gpu")

with open(os.path.join(os.path.dirname(__file__), "cases.json"), "w") as f:
    json.dump({"cases": cases}, f, indent=1, ensure_ascii=True)
    f.write("\n")
total = sum(len(c.get("values", [None])) for c in cases)
print(f"{len(cases)} entries, {total} cases")
