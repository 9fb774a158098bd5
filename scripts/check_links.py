#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the relative links of every Markdown file in the repository (the test docs.links): each [text](target)
and ![alt](image) whose target is not a URL must name an existing file or directory, and a #fragment must be a
heading of the target page (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens).

    scripts/check_links.py [ROOT]        exit status 1 and one line per broken link
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*```")


def markdown_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "*.md"], check=True,
                             capture_output=True, text=True).stdout.split()
        return [f for f in out if os.path.exists(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
        return found


def anchors(path):
    """GitHub's heading anchors of a Markdown file."""
    result, seen, fenced = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip()
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f"{slug}-{n}")
    return result


def links(path):
    fenced = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans are not links
        for m in LINK.finditer(line):
            yield number, m.group(1)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    broken = checked = 0
    for rel in sorted(markdown_files(root)):
        path = os.path.join(root, rel)
        for number, target in links(path):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            checked += 1
            file_part, _, fragment = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            problem = None
            if not os.path.exists(dest):
                problem = "no such file"
            elif fragment and dest.endswith(".md") and fragment not in anchors(dest):
                problem = f"no heading #{fragment}"
            if problem:
                broken += 1
                print(f"{rel}:{number}: {target}: {problem}")
    print(f"check_links: {checked} relative links, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
