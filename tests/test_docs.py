#!/usr/bin/env python3
"""Host test: the docs hold together. Excerpts and tables match their sources, every
chapter the index links exists, every relative link, anchor and image resolves, every
step has a chapter with 'Try it' and an exercise, and the commands shown use real flags."""
import glob
import os
import re
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import docs_sync  # noqa: E402

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def markdown_files():
    return docs_sync.markdown_files()


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def links(path):
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)  # not inside code blocks
    return [m.group(1) for m in LINK.finditer(text)]


class Docs(unittest.TestCase):
    def test_excerpts_and_tables_match_sources(self):
        problems = docs_sync.sync(markdown_files(), write=False)
        self.assertEqual(problems, [], "\n".join(problems) + "\nfix: python3 scripts/docs_sync.py --write")

    def test_a_stale_excerpt_or_table_is_caught(self):
        """The check above can fail: edit a copy of a chapter and it must complain."""
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(ROOT, "README.md")) as f:  # the first measured cell of a README table
                cell = re.search(r"^\| step00_baseline \| \w+ \| (\d+) \|", f.read(), flags=re.M)
            self.assertIsNotNone(cell, "README.md has no generated ladder table to probe")
            for name, old, new in (("00_baseline.md", "smem[tid] += smem[tid + stride];", "smem[tid] += smem[tid + 1];"),
                                   ("README.md", cell.group(0), cell.group(0).replace(cell.group(1), str(int(cell.group(1)) + 1)))):
                src = os.path.join(ROOT, "docs" if name != "README.md" else "", name)
                dst = os.path.join(tmp, name)
                shutil.copy(src, dst)
                with open(dst) as f:
                    text = f.read()
                self.assertIn(old, text, f"{name} no longer contains the probe text")
                with open(dst, "w") as f:
                    f.write(text.replace(old, new, 1))
                problems = docs_sync.sync([dst], write=False)
                self.assertTrue(any("differs from its source" in p for p in problems), (name, problems))

    def test_every_step_has_a_linked_chapter(self):
        with open(os.path.join(ROOT, "docs", "README.md")) as f:
            index = f.read()
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        for step_dir in sorted(glob.glob(os.path.join(ROOT, "steps", "step[0-9][0-9]_*"))):
            name = os.path.basename(step_dir)
            chapter = f"{name[4:6]}_{name[7:]}.md"
            self.assertTrue(os.path.exists(os.path.join(ROOT, "docs", chapter)), f"{name} has no docs/{chapter}")
            self.assertIn(f"({chapter})", index, f"docs/README.md does not link {chapter}")
            self.assertIn(f"(docs/{chapter})", readme, f"README.md does not link docs/{chapter}")
            with open(os.path.join(ROOT, "docs", chapter)) as f:
                text = f.read()
            self.assertRegex(text, r"(?m)^## Try it$", chapter)
            self.assertRegex(text, r"(?m)^## Exercises?$", chapter)
            self.assertIn(f"steps/{name}/{name}.cu", text, f"{chapter} does not link its source")

    def test_links_anchors_and_images_resolve(self):
        for md in markdown_files():
            for target in links(md):
                if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
                    continue
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                self.assertTrue(os.path.exists(full), f"{os.path.relpath(md, ROOT)}: broken link {target}")
                if anchor and full.endswith(".md"):
                    self.assertIn(anchor, anchors(full), f"{os.path.relpath(md, ROOT)}: no heading for #{anchor}")
                if full.endswith(".png"):
                    with open(full, "rb") as f:
                        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", full)

    def test_commands_use_real_steps_and_flags(self):
        with open(os.path.join(ROOT, "common", "cli.hpp")) as f:
            flags = set(re.findall(r'flag == "(--[a-z-]+)"', f.read()))
        self.assertIn("--repeat-results", flags)
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            steps = set(re.findall(r"^  (step\d\d)_\w+$", f.read(), flags=re.M))
        for md in markdown_files():
            with open(md) as f:
                for line in f:
                    for short in re.findall(r"(?:make |\./)(step\d\d)\b", line):
                        self.assertIn(short, steps, f"{os.path.relpath(md, ROOT)}: unknown {short}: {line}")
                    m = re.search(r"\./step\d\d\S*", line)
                    if m:  # the flags after the program (not compute-sanitizer's before it)
                        for flag in re.findall(r"\s(--[a-z][a-z-]*)", line[m.end():].split("#")[0]):
                            self.assertIn(flag, flags, f"{os.path.relpath(md, ROOT)}: unknown flag {flag}: {line}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
