# SPDX-License-Identifier: Apache-2.0
"""What a schedule must leave in the fake NVML's log, read from the schedule's JSON document with
the json module rather than through kareus, so the expectations share no code with what they
test. `document` is the parsed JSON (json.load of a file, or json.loads of Schedule.to_json())."""


def stage_order(document, stage):
    """(microbatch, direction) of each instruction of `stage`, in order."""
    return [(i["microbatch"], i["direction"]) for i in document["stages"][stage]["instructions"]]


def expected_setters(document, stage, iterations, gpu=0):
    """The controller's NVML calls for `iterations` of `stage`: a setter whenever the clock
    differs from the previous instruction's."""
    lines, last = [], None
    for _ in range(iterations):
        for instruction in document["stages"][stage]["instructions"]:
            clock = instruction["clock_mhz"]
            if clock != last:
                lines.append(f"nvmlDeviceSetGpuLockedClocks {gpu} {clock:.0f} {clock:.0f}")
            last = clock
    return lines


def reset_line(gpu=0):
    return f"nvmlDeviceResetGpuLockedClocks {gpu}"
