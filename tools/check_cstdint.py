#!/usr/bin/env python3
"""Lists the sources that use a fixed-width integer type (std::int64_t, uint32_t, ...) without <cstdint>.

A file passes when it includes <cstdint> (or <stdint.h>) itself, or includes a project header that does,
directly or through other project headers. Leaning on a standard header to bring <cstdint> along breaks on
newer compilers: since g++ 13, <string> no longer does. Exit status 1, with one line per file, when any
file fails.

    tools/check_cstdint.py [ROOT]      ROOT: the source tree (default: this repository)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.MULTILINE)
FIXED_WIDTH = re.compile(r"\b(u?int(8|16|32|64)_t|u?intptr_t)\b")
# Comments and string literals (raw ones first) are not uses of a type.
NOT_CODE = re.compile(r'R"\((?:.|\n)*?\)"|"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*(?:.|\n)*?\*/')
SOURCES = (".h", ".cuh", ".cpp", ".cu")
SKIPPED = {"build", ".git", "runs"}


def provides_cstdint(path, root, known, visiting):
    """Whether `path` includes <cstdint> itself or through the project headers it includes."""
    if path in known:
        return known[path]
    if path in visiting:  # an include cycle: the other path decides
        return False
    visiting.add(path)
    with open(path, encoding="utf-8", errors="replace") as source:
        text = source.read()
    result = False
    for name in INCLUDE.findall(text):
        if name in ("cstdint", "stdint.h"):
            result = True
            break
        header = os.path.join(root, name)
        if os.path.isfile(header) and provides_cstdint(header, root, known, visiting):
            result = True
            break
    visiting.discard(path)
    known[path] = result
    return result


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    known, failing = {}, []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED and not d.startswith("build"))
        for name in sorted(files):
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8", errors="replace") as source:
                code = NOT_CODE.sub("", source.read())
            if FIXED_WIDTH.search(code) and not provides_cstdint(path, root, known, set()):
                failing.append(os.path.relpath(path, root))
    for path in failing:
        print(f"{path}: uses a fixed-width integer type but does not include <cstdint>")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
