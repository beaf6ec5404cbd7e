# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: the test data, and the fake NVML's setter log of each test."""

import json
import os
import pathlib

import pytest


def _required_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set; run these tests through ctest, which sets it")
    return value


@pytest.fixture(scope="session")
def data_dir():
    _required_env("KAREUS_NVML_LIBRARY")
    _required_env("KAREUS_FAKE_NVML_SCRIPT")
    return pathlib.Path(_required_env("KAREUS_TEST_DATA_DIR"))


@pytest.fixture
def schedule_path(data_dir):
    return data_dir / "runtime" / "two_stages.json"


@pytest.fixture
def clocks_schedule_path(data_dir):
    """two_stages.json as a clocks-only (perseus, sequential) schedule."""
    return data_dir / "runtime" / "two_stages_sequential.json"


class NvmlLog:
    def __init__(self, path):
        self.path = path

    def lines(self):
        return self.path.read_text().splitlines() if self.path.exists() else []


@pytest.fixture
def nvml_log(tmp_path, monkeypatch):
    """The fake NVML appends every clock setter to $KAREUS_FAKE_NVML_LOG, read at each call."""
    path = tmp_path / "nvml.log"
    monkeypatch.setenv("KAREUS_FAKE_NVML_LOG", str(path))
    return NvmlLog(path)


@pytest.fixture
def schedule_document(schedule_path):
    return json.loads(schedule_path.read_text())
