"""The Megatron-style examples of docs/python.md, run as written on two ranks (gloo, the fake
NVML): each block marked `<!-- docs-test: NAME -->` is extracted and started twice with the
environment torchrun gives its workers."""

import json
import os
import pathlib
import re
import socket
import subprocess
import sys

import pytest

import kareus


def examples():
    text = (pathlib.Path(os.environ["KAREUS_DOCS_DIR"]) / "python.md").read_text()
    blocks = re.findall(r"<!-- docs-test: (\S+) -->\n```python\n(.*?)\n```", text, re.S)
    return dict(blocks)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_two_ranks(tmp_path, name, schedule, nvml_log):
    script = tmp_path / name
    script.write_text(examples()[name])
    port = str(free_port())
    processes = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK="0",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port, CUDA_VISIBLE_DEVICES="0",
                   KAREUS_FAKE_NVML_LOG=str(nvml_log.path))
        processes.append(subprocess.Popen([sys.executable, str(script), str(schedule)], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
    outputs = [p.communicate(timeout=120) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        assert p.returncode == 0, err
    return outputs


def test_the_docs_have_every_example():
    assert set(examples()) == {"planning.py", "train_1f1b.py", "train_tp_nanobatch.py"}


def test_planning_example(tmp_path):
    """As written: it plans, selects by deadline and by energy budget, and saves a schedule."""
    script = tmp_path / "planning.py"
    script.write_text(examples()["planning.py"])
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    saved = kareus.load_schedule(str(tmp_path / "schedule.json"))
    assert saved.method == "kareus"
    assert (tmp_path / "measurements.sqlite").exists()


def test_version_is_the_cli_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", kareus.__version__)


def test_plain_1f1b_example(tmp_path, clocks_schedule_path, schedule_document, nvml_log):
    outputs = run_two_ranks(tmp_path, "train_1f1b.py", clocks_schedule_path, nvml_log)
    reports = [line for line in outputs[0][0].splitlines() if "schedule predicts" in line]
    assert len(reports) == 2 and "over 2 rank(s)" in reports[0]
    assert outputs[1][0] == ""  # rank 1 prints nothing
    lines = nvml_log.lines()
    assert lines.count("nvmlDeviceResetGpuLockedClocks 0") == 2
    # Stage 0 ends on 1410 MHz, stage 1 on 1110 MHz, twice each (two iterations).
    assert lines.count("nvmlDeviceSetGpuLockedClocks 0 1410 1410") == 2


def test_tensor_parallel_nanobatch_example(tmp_path, nvml_log):
    workload = kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", tp=2, pp=1, microbatches=2,
                               microbatch_size=2, sequence_length=512)
    # Nanobatching+Perseus overlaps every instruction; kareus keeps this small job's backward
    # sequential, where overlap does not pay.
    plan = kareus.plan(workload, methods=["nanobatch-perseus"], seed=0)
    schedule = plan.schedule("nanobatch-perseus", plan["nanobatch-perseus"].fastest())
    document = json.loads(schedule.to_json())
    assert {i["execution"] for i in document["stages"][0]["instructions"]} == {"nanobatch"}
    schedule.save(tmp_path / "plan.json")
    outputs = run_two_ranks(tmp_path, "train_tp_nanobatch.py", tmp_path / "plan.json", nvml_log)
    assert "SM counts" in outputs[0][1]  # gloo: the allow_partial warning names them
    assert sum("schedule predicts" in line for line in outputs[0][0].splitlines()) == 2
    assert nvml_log.lines().count("nvmlDeviceResetGpuLockedClocks 0") == 2
