#!/usr/bin/env python3
"""Host test: the docs stay readable in one sitting. Counts the prose words of each file (outside
fenced code blocks, tables and HTML comments; a num block counts as its value) against its budget.

    python3 tests/test_budgets.py            the test
    python3 tests/test_budgets.py --table    every file: words, budget, ok or over
"""
import glob
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (glob relative to the root, budget in prose words). The first pattern a file matches wins.
BUDGETS = [
    ("README.md", 700),
    ("docs/README.md", 1000),
    ("docs/0[0-5]_*.md", 1200),
    ("docs/racecheck.md", 1200),
    ("docs/0[6-9]_*.md", 2500),
    ("docs/1[0-9]_*.md", 2500),
    ("docs/workshop.md", 3000),
]


def prose_words(text):
    """Words a reader reads as prose: no code blocks, no table rows, no comments, no link targets."""
    text = re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("|")]
    text = "\n".join(lines)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)           # images: no prose
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)        # links: their text only
    return len(re.findall(r"[A-Za-z0-9][\w'.,/+-]*", text))


def budgeted_files():
    seen = {}
    for pattern, budget in BUDGETS:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            seen.setdefault(os.path.relpath(path, ROOT), budget)
    return seen


def table():
    rows = []
    for rel, budget in budgeted_files().items():
        with open(os.path.join(ROOT, rel)) as f:
            words = prose_words(f.read())
        rows.append((rel, words, budget))
    return rows


class Budgets(unittest.TestCase):
    def test_every_file_within_its_budget(self):
        over = [f"{rel}: {words} prose words, budget {budget}" for rel, words, budget in table() if words > budget]
        self.assertEqual(over, [], "\n".join(over) + "\nmove bookkeeping to the chapter's evidence page "
                         "(docs/evidence/) and cut what does not teach")

    def test_every_chapter_has_a_budget(self):
        chapters = {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md"))}
        self.assertEqual(sorted(chapters - set(budgeted_files())), [])

    def test_the_count_skips_code_tables_and_comments_and_can_fail(self):
        text = ("One two three.\n\n```cuda\nint not_prose = 1;\n```\n| a | table |\n|---|---|\n"
                "<!-- hidden words here -->four <!-- num: csv x -->5.0<!-- /num --> [six](x.md)\n")
        self.assertEqual(prose_words(text), 6)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "long.md")
            with open(path, "w") as f:
                f.write("word " * 1201)
            with open(path) as f:
                self.assertGreater(prose_words(f.read()), 1200)


if __name__ == "__main__":
    if "--table" in sys.argv[1:]:
        for rel, words, budget in table():
            print(f"{rel:32s} {words:6d} / {budget:5d}  {'ok' if words <= budget else 'OVER'}")
        sys.exit(0)
    unittest.main(verbosity=2)
