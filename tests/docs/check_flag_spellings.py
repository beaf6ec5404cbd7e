#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps command-line flags out of the library.

The library names fields ("scale_by"), and each front end spells them its own way when it prints
an error (kareus::Error::message, include/kareus/core/error.hpp): the CLI as "--scale-by", Python
as a keyword, the C API as its struct's field. Fails, naming file and line, when a string literal
in the C++ or CUDA sources of src/ or include/ spells a flag ("--db", "pass --db PATH").
Comments may mention flags: they explain, they are not what a user reads.

    check_flag_spellings.py --source-dir DIR   check DIR's src/ and include/
    check_flag_spellings.py --self-test        check that the checker finds what it should
"""
import argparse
import pathlib
import re
import sys

SUFFIXES = {".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".inc"}
FLAG = re.compile(r"(?<![\w-])--[A-Za-z]")


def string_literals(text):
    """(line, text) of each string literal of C++ source `text`, comments skipped."""
    out = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            # A raw literal: R"delim( ... )delim".
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end
            out.append((line, text[open_paren + 1:end]))
            line += text.count("\n", i, end)
            i = end + len(delim) + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append((line, text[i + 1:j]))
            i = j + 1
        elif c == "'" and not (i > 0 and text[i - 1].isalnum()):
            # A character literal ('"' must not open a string); after a digit, a separator.
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def problems_in(text):
    return [(line, literal) for line, literal in string_literals(text) if FLAG.search(literal)]


def check(source_dir):
    failures = []
    for top in ("src", "include"):
        for path in sorted((source_dir / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for line, literal in problems_in(text):
                failures.append(f"{path.relative_to(source_dir)}:{line}: \"{literal}\"")
    for f in failures:
        print(f, file=sys.stderr)
    if failures:
        print(f"{len(failures)} string literal(s) in the library spell a command-line flag: name "
              "the field (field_ref in kareus/core/error.hpp) and let the front end spell it",
              file=sys.stderr)
    return 1 if failures else 0


SELF_TEST_FLAGGED = [
    'throw Error::invalid("", "--scale-by", text, "allowed");',
    'hint = " (move it away or pass another --db)";',
    'auto s = R"(pass --out DIR)";',
    'x = "a\\"b --plan";',
]
SELF_TEST_PASSED = [
    "// a comment may say --scale-by\nint a = 1;",
    "/* and --db here,\n   over lines */ int b = 2;",
    "for (int k = n; k >= 0; --k) --units[k];",
    "char q = '\"'; const char* s = \"field_ref(scale_by) -- or none\";",
    "int big = 1'000'000; const char* t = \"x--y\";",
    'const char* u = "---";',
]


def self_test():
    bad = [c for c in SELF_TEST_FLAGGED if not problems_in(c)]
    bad += [c for c in SELF_TEST_PASSED if problems_in(c)]
    if not problems_in('int a;\n\nconst char* s = "--db";')[0][0] == 3:
        bad.append("line numbers")
    for c in bad:
        print(f"self-test: wrong verdict on {c!r}", file=sys.stderr)
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--source-dir", type=pathlib.Path)
    mode.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    return self_test() if args.self_test else check(args.source_dir)


if __name__ == "__main__":
    sys.exit(main())
