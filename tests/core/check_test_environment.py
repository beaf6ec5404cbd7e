#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every GoogleTest case ctest discovered keeps its measurement store in the build tree.

Usage: check_test_environment.py BUILD_DIR. Reads `ctest --show-only=json-v1` and requires each
test labelled with its executable (kareus_add_test) to set XDG_CACHE_HOME under BUILD_DIR, so no
test writes to the user's ~/.cache/kareus.
"""
import json
import os
import subprocess
import sys

build = os.path.realpath(sys.argv[1])
listing = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                                    capture_output=True, text=True).stdout)
missing = []
checked = 0
for test in listing["tests"]:
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    if not any(label.startswith("test_") for label in props.get("LABELS", [])):
        continue
    checked += 1
    settings = props.get("ENVIRONMENT", []) + [
        m.replace("=set:", "=", 1) for m in props.get("ENVIRONMENT_MODIFICATION", [])]
    cache = [s.split("=", 1)[1] for s in settings if s.startswith("XDG_CACHE_HOME=")]
    if not cache or not os.path.realpath(cache[0]).startswith(build + os.sep):
        missing.append(test["name"])
if checked == 0:
    sys.exit("no discovered GoogleTest cases found in " + build)
if missing:
    sys.exit(f"{len(missing)} of {checked} tests do not set XDG_CACHE_HOME under {build}, "
             f"e.g. {missing[0]}")
print(f"{checked} tests keep their store under {build}")
