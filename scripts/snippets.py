#!/usr/bin/env python3
"""Turns every ```swift block of README.md and of the DocC articles (Sources/*/*.docc/*.md) into a
Swift package that depends on this one by path, one executable target per block, so that building
that package compiles every snippet; and checks what compiling cannot (see scripts/check-snippets.sh,
which runs it, for the marker syntax).

    scripts/snippets.py generate PACKAGE-FOLDER   write the package (unchanged files are not rewritten)
    scripts/snippets.py list                      one line per snippet: where, kind, target

PACKAGE-FOLDER's parent must hold this repository as `SessionFetcher` (a symlink will do): the
generated manifest names it `.package(name: "SessionFetcher", path: "../SessionFetcher")`, the line
the README tells users to write.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The dependency lines of the generated manifest: a manifest snippet may show only these.
PACKAGE_LINE = '.package(name: "SessionFetcher", path: "../SessionFetcher"),'
PRODUCTS = [
    "SessionFetcher",
    "FetcherService",
    "MIMEDocument",
    "HTTPLogging",
    "FetcherTesting",
    "SessionUploadFetcher",
]
PRODUCT_LINES = ['.product(name: "%s", package: "SessionFetcher"),' % p for p in PRODUCTS]

MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
KINDS = {"program", "fragment", "manifest"}
KEYS = {"imports", "params", "same-as"}


class SnippetError(Exception):
    pass


class Snippet:
    def __init__(self, doc, line, code, marker):
        self.doc = doc  # repository-relative path
        self.line = line  # 1-based line of the first code line
        self.code = code  # the block's text, ending with a newline
        self.kind = "program"
        self.options = {}
        if marker is not None:
            parts = [p.strip() for p in marker.split(";") if p.strip()]
            self.kind = parts[0]
            if self.kind not in KINDS:
                raise SnippetError("%s:%d: unknown snippet kind %r" % (doc, line - 1, self.kind))
            for part in parts[1:]:
                key, _, value = part.partition(":")
                key = key.strip()
                if key not in KEYS:
                    raise SnippetError("%s:%d: unknown snippet key %r" % (doc, line - 1, key))
                self.options[key] = value.strip()
        parts = os.path.splitext(doc)[0].split("/")
        stem = re.sub(r"[^A-Za-z0-9]+", "_", "_".join([parts[1], parts[-1]] if len(parts) > 1 else parts))
        self.target = "snippet_%s_%d" % (stem, line)

    @property
    def where(self):
        return "%s:%d" % (self.doc, self.line)


def documents():
    docs = ["README.md"] + sorted(glob.glob("Sources/*/*.docc/*.md", root_dir=ROOT))
    return docs


def extract(doc):
    """The swift blocks of `doc`, each with the marker on the last non-blank line before it."""
    lines = open(os.path.join(ROOT, doc), encoding="utf-8").read().split("\n")
    snippets = []
    index = 0
    while index < len(lines):
        fence = re.match(r"^(\s*)```swift\s*$", lines[index])
        if not fence:
            index += 1
            continue
        indent = fence.group(1)
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise SnippetError("%s:%d: the swift block never ends" % (doc, index + 1))
        previous = index - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        marker = MARKER.match(lines[previous]) if previous >= 0 else None
        body = [l[len(indent):] if l.startswith(indent) else l for l in lines[index + 1 : end]]
        snippets.append(Snippet(doc, index + 2, "\n".join(body) + "\n", marker.group(1) if marker else None))
        index = end + 1
    return snippets


def split_imports(code):
    """The block's leading import lines (with `#if canImport … #endif` around them) and the rest."""
    lines = code.split("\n")
    head = 0
    depth = 0
    while head < len(lines):
        text = lines[head].strip()
        if text.startswith("import ") or (text.startswith("@preconcurrency import ")):
            head += 1
        elif text.startswith("#if canImport"):
            depth += 1
            head += 1
        elif text == "#endif" and depth > 0:
            depth -= 1
            head += 1
        elif not text and head + 1 < len(lines):
            head += 1
        else:
            break
    return "\n".join(lines[:head]), head, "\n".join(lines[head:])


def source(snippet):
    """main.swift of the snippet's target: errors point at the document's lines."""
    location = '#sourceLocation(file: "%s", line: %%d)\n' % snippet.doc
    extra = "".join(
        ("#if canImport(%s)\n  import %s\n#endif\n" % (m, m)) if m == "FoundationNetworking" else "import %s\n" % m
        for m in snippet.options.get("imports", "").split()
    )
    if snippet.kind == "program":
        return extra + location % snippet.line + snippet.code + "#sourceLocation()\n"
    imports, count, body = split_imports(snippet.code)
    text = extra
    if imports.strip():
        text += location % snippet.line + imports + "\n#sourceLocation()\n"
    text += "func snippet(%s) async throws {\n" % snippet.options.get("params", "")
    text += location % (snippet.line + count) + body + "\n#sourceLocation()\n}\n"
    return text


def manifest(snippets):
    targets = "".join(
        '    .executableTarget(name: "%s", dependencies: products, path: "Sources/%s", swiftSettings: swift6),\n'
        % (s.target, s.target)
        for s in snippets
    )
    products = "".join("  %s\n" % line for line in PRODUCT_LINES)
    return (
        "// swift-tools-version:6.0\n"
        "// Generated by scripts/snippets.py: one executable per swift block of the documentation.\n"
        "import PackageDescription\n\n"
        "let products: [Target.Dependency] = [\n%s]\n"
        "let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]\n\n"
        "let package = Package(\n"
        '  name: "DocumentationSnippets",\n'
        "  platforms: [.macOS(.v13)],\n"
        "  dependencies: [\n"
        "    %s\n"
        "  ],\n"
        "  targets: [\n%s  ]\n"
        ")\n"
    ) % (products, PACKAGE_LINE, targets)


def check(snippet, manifest_text):
    """What compiling cannot check: a manifest excerpt shows the generated package's own lines, and a
    program kept as an example is identical to its source file."""
    problems = []
    if snippet.kind == "manifest":
        lines = {l.strip() for l in manifest_text.split("\n")}
        for offset, line in enumerate(snippet.code.split("\n")):
            text = line.split(" //")[0].strip()
            if re.match(r'^"[^"]*",?$', text) or re.search(r'dependencies: \[\s*"', text):
                problems.append(
                    "%s:%d: %r: a plain string names a target of the same package; a product of this "
                    "package is .product(name:package:)" % (snippet.doc, snippet.line + offset, text)
                )
            if (".package(" in text or ".product(" in text) and not text.startswith("//"):
                if text not in lines:
                    problems.append(
                        "%s:%d: %r is not a dependency line of the checked package (%s, or one of %s)"
                        % (snippet.doc, snippet.line + offset, text, PACKAGE_LINE, ", ".join(PRODUCT_LINES))
                    )
    same_as = snippet.options.get("same-as")
    if same_as:
        path = os.path.join(ROOT, same_as)
        if not os.path.exists(path):
            problems.append("%s: %s does not exist" % (snippet.where, same_as))
        elif open(path, encoding="utf-8").read() != snippet.code:
            problems.append("%s: the block differs from %s (keep them identical)" % (snippet.where, same_as))
    return problems


def write_if_changed(path, text):
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("generate", "list") or (sys.argv[1] == "generate") != (len(sys.argv) == 3):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        snippets = [s for doc in documents() for s in extract(doc)]
    except SnippetError as error:
        print("snippets: error: %s" % error, file=sys.stderr)
        return 1
    if sys.argv[1] == "list":
        for s in snippets:
            print("%-70s %-9s %s" % (s.where, s.kind, s.target))
        return 0
    compiled = [s for s in snippets if s.kind != "manifest"]
    text = manifest(compiled)
    problems = [p for s in snippets for p in check(s, text)]
    for problem in problems:
        print("snippets: error: %s" % problem, file=sys.stderr)
    if problems:
        return 1
    folder = sys.argv[2]
    write_if_changed(os.path.join(folder, "Package.swift"), text)
    wanted = {s.target for s in compiled}
    sources = os.path.join(folder, "Sources")
    if os.path.isdir(sources):
        for name in os.listdir(sources):
            if name not in wanted:
                for leftover in glob.glob(os.path.join(sources, name, "*")):
                    os.remove(leftover)
                os.rmdir(os.path.join(sources, name))
    for s in compiled:
        write_if_changed(os.path.join(sources, s.target, "main.swift"), source(s))
    kinds = {k: sum(1 for s in snippets if s.kind == k) for k in sorted(KINDS)}
    print(
        "snippets: %d swift blocks in %d documents (%s)"
        % (len(snippets), len(documents()), ", ".join("%d %s" % (n, k) for k, n in kinds.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
