#!/usr/bin/env python3
"""Fails when Linux-only API is used outside a Linux guard in Sources, Tests or Examples.

There is no Mac in CI, so this reads the code instead: a Swift line that names glibc-only API
(below) must sit inside an `#if` branch whose condition names Linux (`os(Linux)`,
`canImport(Glibc)`, `canImport(Musl)`, `canImport(FoundationNetworking)` or Package.swift's
`FOUNDATION_NETWORKING`) and no Apple platform (`|| os(macOS)`, `LIBCURL_ENGINE`), and not in that
branch's `#else`. Comments are ignored. Prints each offending line and exits 1; exits 0 when none.

    scripts/check-apple-guards.py [folder ...]     (default: Sources Tests Examples)
"""
import re
import sys
from pathlib import Path

# API that exists only in glibc (or is spelled differently on Darwin), and the project's own
# Linux-only helpers: each would stop the build on Apple platforms. (Reading /proc is left out: it
# compiles everywhere, and tests that need it say so with `.linuxOnly`.)
LINUX_ONLY = [
    (re.compile(r"\bGlibc\."), "a Glibc-qualified call"),
    (re.compile(r"\bMSG_NOSIGNAL\b"), "MSG_NOSIGNAL (Darwin has SO_NOSIGPIPE)"),
    (re.compile(r"\bSOCK_(STREAM|DGRAM|RAW)\.rawValue\b"), "SOCK_*.rawValue (an Int32 on Darwin)"),
    (re.compile(r"\bRUSAGE_(SELF|CHILDREN)\.rawValue\b"), "RUSAGE_*.rawValue (an Int32 on Darwin)"),
    (re.compile(r"__sigaction_handler"), "glibc's sigaction layout"),
    (re.compile(r"\bChildProcess\b"), "ChildProcess (posix_spawn with glibc, Linux only)"),
    (re.compile(r"\b(malloc_trim|mallopt|mallinfo2?)\("), "a call of glibc's allocator API"),
    (re.compile(r"\b(unshare|setns|prctl|epoll_\w+|eventfd)\("), "a Linux system call"),
]
LINUX_CONDITION = re.compile(
    r"os\(Linux\)|canImport\((Glibc|Musl|FoundationNetworking)\)|\bFOUNDATION_NETWORKING\b")
# A condition that also holds on an Apple platform (`|| os(macOS)`; LIBCURL_ENGINE, which Package.swift
# sets for Linux and macOS) guards code that must build there too.
APPLE_CONDITION = re.compile(
    r"os\((macOS|iOS|tvOS|watchOS|visionOS)\)|canImport\(Darwin\)|\bLIBCURL_ENGINE\b")


def names_linux_only(condition):
    condition = condition.split("//")[0]
    return bool(LINUX_CONDITION.search(condition)) and "!" not in condition \
        and not APPLE_CONDITION.search(condition)


def offending_lines(path):
    # Each open #if: (whether its active branch is a Linux branch, whether the #if named Linux).
    stack = []
    found = []
    in_block_comment = False
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_block_comment = False
        if "/*" in line and "*/" not in line.split("/*", 1)[1]:
            line = line.split("/*", 1)[0]
            in_block_comment = True
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        # Names inside string literals (a command line, a message) are not calls.
        code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        code = re.sub(r"//.*$", "", code)
        directive = stripped.split()[0] if stripped.startswith("#") and stripped.split() else ""
        if directive == "#if":
            linux = names_linux_only(stripped)
            stack.append([linux, linux])
            continue
        if directive == "#elseif":
            if stack:
                linux = names_linux_only(stripped)
                stack[-1] = [linux, stack[-1][1] or linux]
            continue
        if directive == "#else":
            if stack:
                # The #else of `#if os(Linux)` is the non-Linux side; the #else of a non-Linux
                # condition (e.g. `#if canImport(Darwin)`) is where Linux code lives.
                stack[-1] = [not stack[-1][1], stack[-1][1]]
            continue
        if directive == "#endif":
            if stack:
                stack.pop()
            continue
        if any(frame[0] for frame in stack):
            continue
        for pattern, why in LINUX_ONLY:
            if pattern.search(code):
                found.append((number, why, raw.strip()))
                break
    return found


SELF_TEST = [
    # (source, offending line numbers)
    ("let n = Int32(MSG_NOSIGNAL)\n", [1]),
    ("#if os(Linux)\n  _ = Glibc.send(fd, p, n, 0)\n#endif\n", []),
    ("#if os(Linux)\n  let a = 1\n#else\n  _ = Glibc.kill(1, 9)\n#endif\n", [4]),
    ("#if canImport(Darwin)\n  let t = SOCK_STREAM\n#else\n  let t = Int32(SOCK_STREAM.rawValue)\n#endif\n", []),
    ("#if canImport(FoundationNetworking)\n  #if DEBUG\n    malloc_trim(0)\n  #endif\n#endif\n", []),
    ("#if !os(Linux)\n  try ChildProcess.run([])\n#endif\n", [2]),
    ("// ChildProcess.run in a comment\nlet s = \"unshare(1) in a string\"\n", []),
    ("/* Glibc.kill\n   in a block comment */\nlet x = 1\n", []),
    ("#if FOUNDATION_NETWORKING\n  _ = mallopt(1, 2)\n#endif\n", []),
    ("#if !FOUNDATION_NETWORKING\n  _ = mallopt(1, 2)\n#endif\n", [2]),
    ("#if LIBCURL_ENGINE\n  _ = Glibc.read(fd, p, n)\n#endif\n", [2]),
    ("#if canImport(FoundationNetworking) || os(macOS)\n  _ = Glibc.close(fd)\n#endif\n", [2]),
    ("#if LIBCURL_ENGINE\n  #if canImport(Glibc)\n    _ = Glibc.close(fd)\n  #endif\n#endif\n", []),
]


def self_test():
    import tempfile
    failures = 0
    for source, expected in SELF_TEST:
        with tempfile.NamedTemporaryFile("w", suffix=".swift", delete=False) as file:
            file.write(source)
        found = [number for number, _, _ in offending_lines(Path(file.name))]
        Path(file.name).unlink()
        if found != expected:
            failures += 1
            print(f"self-test: expected {expected}, found {found} in:\n{source}")
    return failures


def main(arguments):
    if self_test():
        return 2
    folders = arguments or ["Sources", "Tests", "Examples"]
    failures = 0
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.swift")):
            if ".build" in path.parts:
                continue
            for number, why, text in offending_lines(path):
                failures += 1
                print(f"{path}:{number}: {why} outside a Linux guard: {text}")
    if failures:
        print(f"{failures} line(s) use Linux-only API outside a guard", file=sys.stderr)
        return 1
    print("Linux-only API: every use is inside a Linux guard")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
