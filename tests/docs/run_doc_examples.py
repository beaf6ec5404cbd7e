#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the shell examples of README.md and docs/*.md that are marked runnable.

A runnable example is a fenced block whose info string is `sh kareus-example`:

    ```sh kareus-example
    kareus gpus
    # expect: a100-sxm4-40gb
    ```

A transcript is a fenced block right after a line `<!-- kareus-output: COMMAND -->` (invisible
once rendered): COMMAND runs like an example, and the block must be its stdout, line for line
(trailing spaces and blank lines aside). Only deterministic output can be marked so; it keeps the
figures a page quotes from drifting away from what the program prints.

Each block runs in `bash -euo pipefail` against the build tree (`kareus` on PATH is the built
one, and so is every program given with --tool), in a fresh folder where `data/` and `tests/`
point into the source tree, with HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME inside that folder so
nothing touches the user's files. A block fails on a non-zero exit, or when its stdout lacks the
text of one of its `# expect:` lines.
Unmarked blocks (output transcripts, synopses with [OPTIONS], GPU-only commands) are not run.
"""
import argparse
import difflib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^```sh kareus-example\s*$")
EXPECT = re.compile(r"^#\s*expect:\s*(.+?)\s*$")
TRANSCRIPT = re.compile(r"^<!--\s*kareus-output:\s*(.+?)\s*-->\s*$")


def examples(path):
    """(first line number, command, expected stdout or None) of every marked block of one
    Markdown file: for an example the command is the block and only its `# expect:` lines are
    checked; for a transcript the block is the whole expected stdout."""
    found, block, start, command, previous = [], None, 0, None, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if block is None:
            transcript = TRANSCRIPT.match(previous)
            if MARKER.match(line) or (transcript and line.startswith("```")):
                block, start = [], number + 1
                command = transcript.group(1) + "\n" if transcript else None
            elif transcript:
                sys.exit(f"{path}:{number - 1}: kareus-output marker not followed by a fenced block")
        elif line.startswith("```"):
            text = "\n".join(block) + "\n"
            found.append((start, command, text) if command else (start, text, None))
            block = None
        else:
            block.append(line)
        previous = line
    if block is not None:
        sys.exit(f"{path}:{start}: runnable example without a closing fence")
    return found


def normalised(text):
    """Lines without trailing spaces, without blank lines at the end."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def run_block(text, expected_stdout, source_dir, tool_path, timeout_s):
    """(ok, message) of one block."""
    with tempfile.TemporaryDirectory(prefix="kareus-doc-example-") as work:
        work = pathlib.Path(work)
        for name in ("data", "tests"):
            (work / name).symlink_to(source_dir / name)
        env = dict(os.environ)
        env.update(
            PATH=f"{tool_path}:{env.get('PATH', '/usr/bin:/bin')}",
            HOME=str(work / "home"),
            XDG_CACHE_HOME=str(work / "cache"),
            XDG_CONFIG_HOME=str(work / "config"),
            KAREUS_DATA_DIR=str(source_dir / "data"),
        )
        try:
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=work, env=env,
                               capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False, f"took longer than {timeout_s} s; mark only cheap examples"
    if r.returncode != 0:
        return False, f"exit code {r.returncode}\n--- stderr\n{r.stderr[-2000:]}"
    if expected_stdout is not None and normalised(r.stdout) != normalised(expected_stdout):
        diff = difflib.unified_diff(normalised(expected_stdout).splitlines(),
                                    normalised(r.stdout).splitlines(), "documented", "printed",
                                    lineterm="")
        return False, "stdout differs from the documented transcript\n" + "\n".join(diff)
    for line in text.splitlines():
        m = EXPECT.match(line)
        if m and m.group(1) not in r.stdout:
            return False, f"stdout lacks {m.group(1)!r}\n--- stdout\n{r.stdout[-2000:]}"
    return True, ""


def run_all(files, source_dir, tool_path, timeout_s):
    """The number of failed blocks; exits when no file has a runnable example."""
    total = failed = 0
    for path in files:
        for line, text, expected_stdout in examples(path):
            total += 1
            ok, message = run_block(text, expected_stdout, source_dir, tool_path, timeout_s)
            where = f"{path.relative_to(source_dir) if path.is_relative_to(source_dir) else path}:{line}"
            print(f"{'ok  ' if ok else 'FAIL'} {where}")
            if not ok:
                failed += 1
                print(f"{text}{message}", file=sys.stderr)
    if total == 0:
        sys.exit("no runnable examples found (```sh kareus-example blocks)")
    print(f"{total - failed} of {total} runnable examples passed")
    return failed


def self_test(source_dir, tool_path, timeout_s):
    """The runner itself: a failing command, a missing expected text, a transcript that differs
    from the output, and passing blocks."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = pathlib.Path(tmp) / "doc.md"
        doc.write_text("```sh kareus-example\nkareus --version\n# expect: kareus\n```\n"
                       "```sh kareus-example\nkareus gpus --no-such-flag\n```\n"
                       "```sh kareus-example\nkareus --version\n# expect: no such text\n```\n"
                       "```\nfalse  # unmarked: not run\n```\n"
                       "<!-- kareus-output: echo one; echo two -->\n```text\none\ntwo  \n\n```\n"
                       "<!-- kareus-output: echo one; echo three -->\n```text\none\ntwo\n```\n")
        failed = run_all([doc], source_dir, tool_path, timeout_s)
    if failed != 3:
        sys.exit(f"self-test: expected 3 failing examples, got {failed}")
    print("self-test passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=pathlib.Path, required=True)
    parser.add_argument("--kareus", type=pathlib.Path, required=True, help="the built kareus")
    parser.add_argument("--tool", type=pathlib.Path, action="append", default=[],
                        help="another built program the examples call (repeatable)")
    parser.add_argument("--timeout-s", type=float, default=60)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    source_dir = args.source_dir.resolve()
    tool_path = ":".join(str(p.resolve().parent) for p in [args.kareus] + args.tool)
    if args.self_test:
        return self_test(source_dir, tool_path, args.timeout_s)
    files = [source_dir / "README.md"] + sorted((source_dir / "docs").glob("*.md"))
    return 1 if run_all(files, source_dir, tool_path, args.timeout_s) else 0


if __name__ == "__main__":
    sys.exit(main())
