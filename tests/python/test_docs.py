# SPDX-License-Identifier: Apache-2.0
"""The Megatron-style examples of docs/python.md, run as written on two ranks (gloo, the fake
NVML): each block marked `<!-- docs-test: NAME -->` is extracted and launched with the torchrun
command the page gives."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import kareus


def examples():
    text = (pathlib.Path(os.environ["KAREUS_DOCS_DIR"]) / "python.md").read_text()
    blocks = re.findall(r"<!-- docs-test: (\S+) -->\n```python\n(.*?)\n```", text, re.S)
    return dict(blocks)


def launch_command():
    """The launch docs/python.md gives, from its text: torchrun's own options and the script."""
    text = (pathlib.Path(os.environ["KAREUS_DOCS_DIR"]) / "python.md").read_text()
    line = re.search(r"^torchrun (.*) <file> schedule\.json$", text, re.M)
    assert line, "docs/python.md shows no torchrun line"
    return line.group(1).split()


def run_two_ranks(tmp_path, name, schedule, nvml_log):
    """Starts the example on two ranks as the docs launch it (python -m torch.distributed.run is
    torchrun under this interpreter), each rank on its own fake A100 (LOCAL_RANK 0 and 1)."""
    script = tmp_path / name
    script.write_text(examples()[name])
    env = dict(os.environ, KAREUS_FAKE_NVML_LOG=str(nvml_log.path),
               KAREUS_FAKE_NVML_SCRIPT=os.path.join(os.environ["KAREUS_TEST_DATA_DIR"], "nvml",
                                                    "two_a100.json"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", *launch_command(),
                           str(script), str(schedule)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


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


def test_the_launch_runs_on_this_torch():
    assert launch_command()[:2] == ["--standalone", "--nproc_per_node"]


def test_plain_1f1b_example(tmp_path, clocks_schedule_path, schedule_document, nvml_log):
    done = run_two_ranks(tmp_path, "train_1f1b.py", clocks_schedule_path, nvml_log)
    reports = [line for line in done.stdout.splitlines() if "schedule predicts" in line]
    assert len(reports) == 2 and "over 2 rank(s)" in reports[0]
    assert all(line.startswith("[default0]:") for line in reports)  # rank 0 prints, rank 1 not
    lines = nvml_log.lines()
    assert lines.count("nvmlDeviceResetGpuLockedClocks 0") == 1
    assert lines.count("nvmlDeviceResetGpuLockedClocks 1") == 1
    # Stage 0 (GPU 0) ends on 1410 MHz, stage 1 (GPU 1) on 1110 MHz, twice each (two iterations).
    assert lines.count("nvmlDeviceSetGpuLockedClocks 0 1410 1410") == 2
    assert lines.count("nvmlDeviceSetGpuLockedClocks 1 1110 1110") == 2


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
    done = run_two_ranks(tmp_path, "train_tp_nanobatch.py", tmp_path / "plan.json", nvml_log)
    assert "SM counts" in done.stderr  # gloo: the allow_partial warning names them
    assert sum("schedule predicts" in line for line in done.stdout.splitlines()) == 2
    for gpu in (0, 1):
        assert nvml_log.lines().count(f"nvmlDeviceResetGpuLockedClocks {gpu}") == 1
