#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps the repository a reference rather than a diary.

Fails, naming file and line, when a tracked text file carries a history word: an issue number,
an ordinal step or a numbered round of work, a numbered part of a work item, or a citation of the
design specification that is not part of this repository. What happened when belongs in git;
files say what is true now.
Also fails when a page of docs/benchmarks/ is longer than MAX_BENCHMARK_LINES: such a page is
the current results, the command that produced them and what they mean, not a log of runs.

Frequency steps ("900..1410 MHz step 30") and the steps of an algorithm ("the first step's
clock") are not history and do not match; another project's tracker is cited by its URL. This file
checks itself too: the words it looks for are only ever assembled at run time (SPEC, the
self-test's cases).

    check_reference.py --source-dir DIR      check DIR's tracked files (or all files, outside git)
    check_reference.py --self-test           check that the checker finds what it should
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

MAX_BENCHMARK_LINES = 220

_ORDINALS = (
    "third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|"
    r"\d+(?:st|nd|rd|th)"
)
# The name of the outside specification, assembled so that this file does not carry it.
SPEC = "kareus" + "-spec"
HISTORY = re.compile(
    r"\bissues? #?\d+"
    rf"|\b(?:{_ORDINALS}) (?:step|round)\b"
    r"|\brounds? \d+\b"
    r"|\bpart (?:two|three|four|five)\b"
    rf"|{SPEC}",
    re.IGNORECASE,
)


def tracked_files(root):
    """Paths (relative, POSIX) of the files git tracks under root; every file outside git (a
    source tarball), skipping build trees and dependencies."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        return [pathlib.PurePosixPath(p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "node_modules"}
        return [pathlib.PurePosixPath(p.relative_to(root).as_posix())
                for p in sorted(root.rglob("*"))
                if p.is_file() and not any(part in skip or part.startswith("build")
                                           for part in p.relative_to(root).parts)]


def history_word(line):
    """The first history word of a line, or None."""
    m = HISTORY.search(line)
    return m.group(0) if m else None


def problems(root):
    found = []
    for rel in tracked_files(root):
        path = root / rel
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary
            continue
        lines = data.decode("utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            word = history_word(line)
            if word:
                found.append(f"{rel}:{number}: history word '{word}': say what is true now, in "
                             "our own words (git keeps the history)")
        if rel.parent == pathlib.PurePosixPath("docs/benchmarks") and rel.suffix == ".md" \
                and len(lines) > MAX_BENCHMARK_LINES:
            found.append(f"{rel}: {len(lines)} lines, more than {MAX_BENCHMARK_LINES}: a "
                         "benchmark page is the current results, their command and what they "
                         "mean, with what was not kept as one line each")
    return found


def self_test():
    # (file, text before, the word, text after); the word is joined at run time, so that this
    # file, which checks itself, carries none.
    cases = [
        ("docs/a.md", "Since ", ("issue", " 12"), " the solver is exact."),
        ("src/b.cpp", "// As measured in the ", ("fifteenth", " step"), "."),
        ("src/c.cpp", "// kept after ", ("round", " 3"), ""),
        ("tests/d.cpp", "// Structure, ", ("part", " two"), ""),
        ("include/e.hpp", "// (", (SPEC,), " 4)"),
        ("bench/f.cpp", "// the ", ("3rd", " round"), " of tuning"),
    ]
    cases = {rel: (before + "".join(word) + after + "\n", "".join(word))
             for rel, before, word, after in cases}
    clean = ("// A100 clocks 900..1410 MHz step 30; the first step's clock is free.\n"
             "// Issues are filed upstream; a round trip takes 2 us.\n")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for rel, (text, _) in cases.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(clean + text)
        (root / "docs/benchmarks").mkdir(parents=True)
        (root / "docs/benchmarks/long.md").write_text("row\n" * (MAX_BENCHMARK_LINES + 1))
        (root / "docs/benchmarks/short.md").write_text("row\n" * MAX_BENCHMARK_LINES)
        (root / "docs/clean.md").write_text(clean)
        found = "\n".join(problems(root))
        ok = True
        for rel, (_, word) in cases.items():
            if f"{rel}:3: history word '{word}'" not in found:
                print(f"self-test: missed '{word}' in {rel}", file=sys.stderr)
                ok = False
        if "docs/benchmarks/long.md: 221 lines" not in found:
            print("self-test: missed the long benchmark page", file=sys.stderr)
            ok = False
        for rel in ("docs/benchmarks/short.md", "docs/clean.md"):
            if rel in found:
                print(f"self-test: flagged clean {rel}:\n{found}", file=sys.stderr)
                ok = False
        if found.count("\n") + 1 != len(cases) + 1:
            print(f"self-test: unexpected findings:\n{found}", file=sys.stderr)
            ok = False
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=pathlib.Path)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if args.source_dir is None:
        parser.error("--source-dir is required unless --self-test")
    found = problems(args.source_dir)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} problem(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
