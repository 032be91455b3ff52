# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Extracts the examples of README.md and docs/*.md into a CMake project and checks the links.

Called by scripts/check-examples (whose header says what is checked):
    python3 scripts/examples.py REPO WORK_DIR FORTRAN(ON|OFF)
Writes WORK_DIR/CMakeLists.txt, one source per block, WORK_DIR/blocks.txt (TARGET KIND PAGE:FIRST LAST
per line) and prints what it found wrong with links and JSON blocks; exits 1 when it found anything.
"""
import json
import os
import re
import sys

FENCE_OPEN = re.compile(r"^```([A-Za-z0-9+_-]*)\s*$")
MARKER = re.compile(r"^<!--\s*(runnable|operation|configuration)\s*-->\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def pages(repo):
    docs = sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(repo, "docs")) if f.endswith(".md"))
    return ["README.md"] + docs


def blocks_of(repo, page):
    """Yields (language, marker, first and last content line numbers, text) for every fenced block."""
    lines = open(os.path.join(repo, page), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        yield m.group(1), marker.group(1) if marker else None, i + 2, end, "\n".join(lines[i + 1:end]) + "\n"
        i = end + 1


def slug(heading):
    """The anchor a Markdown renderer (GitHub's rules) gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors_of(repo, page):
    found = set()
    in_fence = False
    for line in open(os.path.join(repo, page), encoding="utf-8"):
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


def check_links(repo, all_pages):
    """Returns the problems: broken links or images, and pages not reachable from README.md."""
    problems, seen, todo = [], {"README.md"}, ["README.md"]
    while todo:
        page = todo.pop()
        in_fence = False
        for number, line in enumerate(open(os.path.join(repo, page), encoding="utf-8"), 1):
            if line.startswith("```"):
                in_fence = not in_fence
            if in_fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # https:, mailto:
                path, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(os.path.join(repo, resolved)):
                    problems.append(f"{page}:{number}: link to '{target}': no file {resolved}")
                    continue
                if anchor and resolved.endswith(".md") and anchor not in anchors_of(repo, resolved):
                    problems.append(f"{page}:{number}: link to '{target}': {resolved} has no heading '#{anchor}'")
                if resolved.endswith(".md") and resolved not in seen:
                    seen.add(resolved)
                    todo.append(resolved)
    for page in all_pages:
        if page not in seen:
            problems.append(f"{page}: not reachable from README.md through links (add it to 'Where to go next')")
    return problems


CXX_JSON_CHECK = """#include <korch/korch.hpp>
#include <iostream>
int main() {{
  const char* text = R"korch_example({text})korch_example";
  try {{
    {call};
  }} catch (const korch::Error& e) {{
    std::cerr << e.what() << "\\n";
    return 1;
  }}
  std::cout << "read by {reader}\\n";
}}
"""
READERS = {"operation": "korch::plan::Operation::from_json", "configuration": "korch::Configuration::from_json"}


def main():
    repo, work, fortran = sys.argv[1], sys.argv[2], sys.argv[3] == "ON"
    all_pages = pages(repo)
    problems = check_links(repo, all_pages)
    cmake = ["cmake_minimum_required(VERSION 3.16)", "project(korch_examples LANGUAGES C CXX%s)" % (" Fortran" if fortran else ""),
             "set(CMAKE_CXX_STANDARD 17)", "set(CMAKE_CXX_STANDARD_REQUIRED ON)", "set(CMAKE_C_STANDARD 11)",
             # Examples as clean as korch's own code (in Fortran, -Wextra rejects exact real comparisons and
             # a routine's unused `user` is its interface).
             'add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-Wall;-Wextra;-Werror>" "$<$<COMPILE_LANGUAGE:Fortran>:-Wall;-Wno-unused-dummy-argument;-Werror>")',
             "find_package(korch REQUIRED)"]
    listing = []
    for page in all_pages:
        for language, marker, line, last, text in blocks_of(repo, page):
            where = f"{page}:{line}"
            target = re.sub(r"[^A-Za-z0-9]", "_", f"{page}_{line}")
            source, kind, library = None, None, "korch::korch"
            if language in ("cpp", "c"):
                extension = "cpp" if language == "cpp" else "c"
                kind = "run" if re.search(r"\bint\s+main\s*\(", text) else "compile"
                source = f"{target}.{extension}"
                # Relative to the repository: sources that do not name the clone's folder hit ccache anywhere.
                text = f'#line {line} "{page}"\n' + text
            elif language == "fortran":
                if not fortran:
                    print(f"check-examples: {where}: skipped, this korch has no Fortran module", file=sys.stderr)
                    continue
                kind = "run" if re.search(r"^\s*program\s+\w+", text, re.M | re.I) else "compile"
                source, library = f"{target}.f90", "korch::fortran"
            elif language == "json":
                try:
                    json.loads(text)
                except ValueError as e:
                    problems.append(f"{where}: JSON block does not parse: {e}")
                    continue
                if marker not in READERS:
                    continue
                kind, source = "run", f"{target}.cpp"
                text = CXX_JSON_CHECK.format(text=text, reader=READERS[marker], call=f"{READERS[marker]}(text)")
            elif language == "sh" and marker == "runnable":
                open(os.path.join(work, target + ".sh"), "w").write(text)
                listing.append(f"{target}.sh shell {where} {last}")
                continue
            else:
                continue
            open(os.path.join(work, source), "w").write(text)
            add = "add_executable(%s %s)" if kind == "run" else "add_library(%s STATIC %s)"
            cmake += [add % (target, source), f"target_link_libraries({target} PRIVATE {library})"]
            listing.append(f"{target} {kind} {where} {last}")
    open(os.path.join(work, "CMakeLists.txt"), "w").write("\n".join(cmake) + "\n")
    open(os.path.join(work, "blocks.txt"), "w").write("".join(entry + "\n" for entry in listing))
    for problem in problems:
        print(f"check-examples: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
