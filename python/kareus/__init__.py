# SPDX-License-Identifier: Apache-2.0
"""Kareus: energy-optimal GPU execution plans for large-model training.

The same objects as the C++ library and the C API (docs/python.md): plan a workload and read its
time-energy frontiers, load or export schedules, enforce one with the frequency controller,
measure energy with the monitor. PyTorch training loops use `kareus.torch`.
"""

from ._kareus import (
    ControllerStats,
    DeviceError,
    EnergyMeasurement,
    EnergyMonitor,
    Error,
    FrequencyController,
    IoError,
    IterationPoint,
    MethodResult,
    NvmlError,
    PLAN_REQUEST_FIELDS,
    PartitionLaunch,
    PlanResult,
    Schedule,
    ScheduleInstruction,
    SelectedPlan,
    StageSchedule,
    Workload,
    load_schedule,
    nvml_gpu_name,
    nvml_index_of_cuda_device,
    nvml_index_of_uuid,
    parse_schedule,
    plan,
)
from ._kareus import __version__

__all__ = [
    "__version__",
    "ControllerStats",
    "DeviceError",
    "EnergyMeasurement",
    "EnergyMonitor",
    "Error",
    "FrequencyController",
    "IoError",
    "IterationPoint",
    "MethodResult",
    "NvmlError",
    "PLAN_REQUEST_FIELDS",
    "PartitionLaunch",
    "PlanResult",
    "Schedule",
    "ScheduleInstruction",
    "SelectedPlan",
    "StageSchedule",
    "Workload",
    "load_schedule",
    "nvml_gpu_name",
    "nvml_index_of_cuda_device",
    "nvml_index_of_uuid",
    "parse_schedule",
    "plan",
]
