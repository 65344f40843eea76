#!/usr/bin/env python3
"""Host test: the docs hold together. Excerpts, tables and inline numbers match their
sources, every chapter the index links exists, every relative link, anchor and image
resolves, every step has a chapter with 'Try it' and an exercise, and the commands shown
use real flags."""
import glob
import os
import re
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "maintainer"))
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
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)  # nor in the (hidden) queries of num blocks
    return [m.group(1) for m in LINK.finditer(text)]


class Docs(unittest.TestCase):
    def test_excerpts_and_tables_match_sources(self):
        problems = docs_sync.sync(markdown_files(), write=False)
        self.assertEqual(problems, [], "\n".join(problems) + "\nfix: python3 scripts/maintainer/docs_sync.py --write")

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

    def test_a_stale_inline_number_is_caught_and_rewritten(self):
        """Doctor one measured number in a copy of a chapter: the check names it, --write puts
        the computed value back."""
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(ROOT, "docs", "05_vectorized.md")
            with open(src) as f:
                original = f.read()
            block = docs_sync.NUM.search(original)
            self.assertIsNotNone(block, "05_vectorized.md has no num block to probe")
            doctored = original.replace(block.group(0), block.group(0).replace(
                f"-->{block.group(2)}<!--", f"-->{block.group(2)}9<!--"), 1)
            self.assertNotEqual(doctored, original)
            dst = os.path.join(tmp, "05_vectorized.md")
            with open(dst, "w") as f:
                f.write(doctored)
            problems = docs_sync.sync([dst], write=False)
            self.assertTrue(any("num" in p and "differs from its source" in p for p in problems), problems)
            docs_sync.sync([dst], write=True)
            with open(dst) as f:
                self.assertEqual(f.read(), original)

    def sample(self):
        """Rows in the measurement schema: one device, step05 with two variants at three sizes,
        CUB and the floor; two CUB rows at 2^12 pool by their median."""
        unmeasured = {"ms_min": "", "ms_max": "", "batch": "1"}  # the spread columns, as in a sweep without it
        lines = [",".join(docs_sync.results.COLUMNS)]

        def row(step, variant, n, ms, x_cub, x_floor):
            fields = dict(device="Test GPU", cuda="13.0", step=step, variant=variant, dtype="int", n=str(n),
                          ms=f"{ms:.6f}", gbps=f"{4 * n / ms / 1e6:.2f}", pct_peak="50.00", verified="true",
                          x_cub=f"{x_cub:.4f}", x_floor=f"{x_floor:.4f}", shape="array")
            lines.append(",".join(fields[c] if c in fields else unmeasured[c] for c in docs_sync.results.COLUMNS))

        for n, us, x_cub in ((2 ** 12, 5.0, 0.80), (2 ** 16, 5.5, 1.30), (2 ** 20, 6.0, 1.10)):
            for variant, factor in (("v4_batch4", 1.0), ("v4_batch1", 1.25)):
                row("step05_vectorized", variant, n, us * factor / 1000, x_cub / factor, 1.2)
            row("cub", "cub", n, us * x_cub / 1000, 1.0, 1.1)
            row("floor", "read", n, us / 1200, 1.05, 1.0)
        row("cub", "cub", 2 ** 12, 0.005, 1.0, 1.1)
        rows = docs_sync.results.parse(lines, "sample.csv")
        for r in rows:
            r["run"] = "step05_vectorized"
        return rows

    def test_inline_queries_compute_the_right_thing(self):
        rows = self.sample()
        q = "csv device='Test GPU' step=step05 dtype=int "

        def num(spec):
            return docs_sync.inline_number(spec, rows)

        self.assertEqual(num(q + "variant=v4_batch4 n=2^16 col=x_cub"), "1.30")
        self.assertEqual(num(q + "variant=v4_batch4 n=2^12..2^20 col=x_cub range"), "0.80-1.30")
        self.assertEqual(num(q + "variant=v4_batch4 n=2^16,2^20 col=x_cub min"), "1.10")
        self.assertEqual(num(q + "variant=* n=2^20 col=x_cub fmt=.3f range sep=' to '"), "0.880 to 1.100")
        self.assertEqual(num(q + "variant=best n=2^12..2^20 col=us range"), "5.0-6.0")  # best: v4_batch4
        self.assertEqual(num(q + "variant=v4_batch1 n=2^16 col=us over='variant=v4_batch4' op=change fmt=+.0%"), "+25%")
        self.assertEqual(num(q + "variant=v4_batch4 n=2^16 col=us over='step=floor variant=read' op=diff fmt=.2f"),
                         "0.92")
        self.assertEqual(num("csv device='Test GPU' step=cub dtype=int n=2^12 col=us"), "4.5")  # median of 4.0 and 5.0
        self.assertEqual(num(q + "variant=* n=* count"), "6")
        self.assertEqual(num(q + "variant=v4_batch4 n=2^20 col=ms scale=1000/2 fmt=.1f"), "3.0")
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "run.txt")
            with open(log, "w") as f:
                f.write("int  atomic  -> 1 distinct\nfloat atomic  -> 5 distinct\nfloat cub err 6.4e-04\n")
            self.assertEqual(num(f'log {log} re="^float .*-> (\\d+) distinct"'), "5")
            self.assertEqual(num(f'log {log} re="-> (\\d+) distinct" range'), "1-5")
            self.assertEqual(num(f'log {log} re="-> (\\d+) distinct" nth=1'), "1")
            self.assertEqual(num(f'log {log} re="distinct" count'), "2")
            self.assertEqual(num(f'log {log} re="err (\\S+)"'), "6.4e-04")  # no fmt: the text as logged
            self.assertEqual(num(f'log {log} re="err (\\S+)" fmt=.5f'), "0.00064")
            self.assertEqual(num(f'log {log} re="^float .*-> (\\d+)" over="re=\'^int .*-> (\\d+)\'" fmt=.0f'), "5")

    def test_the_examples_in_the_syntax_help_are_valid_queries(self):
        """Each example of docs_sync.py's help runs on the committed data (its values may
        move with a new sweep; the queries must not break)."""
        rows = docs_sync.load_measurements(sorted(glob.glob(os.path.join(ROOT, "results", "*", "step*.csv"))))
        examples = list(docs_sync.NUM.finditer(docs_sync.__doc__))
        self.assertGreater(len(examples), 3)
        for m in examples:
            self.assertRegex(docs_sync.inline_number(m.group(1), rows), r"\d", m.group(1))

    def test_a_query_that_matches_nothing_or_too_much_is_an_error(self):
        rows = self.sample()
        q = "csv device='Test GPU' step=step05 dtype=int variant=v4_batch4 col=x_cub "
        for spec, words in ((q + "n=2^9", "no row"),                       # nothing at all
                            (q + "n=2^16,2^9 range", "n=2^9 matches no row"),  # one listed value missing
                            (q + "n=2^12..2^20", "3 values match"),          # several without range/min/max
                            (q + "n=2^16 colour=red", "unknown key"),
                            ("csv device='Other GPU' step=cub n=2^16", "no row"),
                            ("log results/logs/step03_repeat_results.txt re='no such line'", "matches nothing")):
            with self.assertRaises(ValueError, msg=spec) as caught:
                docs_sync.inline_number(spec, rows)
            self.assertIn(words, str(caught.exception), spec)
        with tempfile.TemporaryDirectory() as tmp:  # and sync reports it, naming the file and line
            md = os.path.join(tmp, "chapter.md")
            with open(md, "w") as f:
                f.write(f"Fast: <!-- num: {q}n=2^9 -->1.30<!-- /num -->x.\n"
                        f"<!-- num: {q}n=2^16 -->1.30<!-- /num -->x starts a line.\n"
                        f"Broken: <!-- num: {q}n=2^16 -->1.30<!-- /num\n-->x.\n")
            problems = docs_sync.sync([md], write=False, rows=rows)
            self.assertTrue(any("chapter.md:1: num" in p and "no row" in p for p in problems), problems)
            self.assertTrue(any("chapter.md:2: a num block starts the line" in p for p in problems), problems)
            self.assertTrue(any("chapter.md:3: a broken num block" in p for p in problems), problems)

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
            cli = f.read()
        # Every flag is named as a string in its FlagGroup's list of flags.
        groups = cli[cli.index("inline const std::vector<FlagGroup>& flag_groups()"):]
        flags = set(re.findall(r'"(--[a-z][a-z-]*)"', groups[:groups.index("return groups;")]))
        # ... and a step's own groups in its folder (OwnFlags: g.flags = {"--blocks"}, or {0, {"--gpus"}, ...}).
        for own in glob.glob(os.path.join(ROOT, "steps", "*", "*.*h*")):
            with open(own) as f:
                for names in re.findall(r'(?:\{0, |flags = )\{("--[a-z-]+"(?:, "--[a-z-]+")*)\}', f.read()):
                    flags |= set(re.findall(r'"(--[a-z-]+)"', names))
        self.assertTrue({"--repeat-results", "--cols", "--pass-rate", "--blocks", "--id-file", "--gpus"} <= flags, flags)
        # The steps are the folders steps/stepNN_name (each declared by its own CMakeLists.txt).
        steps = {os.path.basename(d)[:6] for d in glob.glob(os.path.join(ROOT, "steps", "step[0-9][0-9]_*"))
                 if os.path.exists(os.path.join(d, "CMakeLists.txt"))}
        for md in markdown_files():
            with open(md) as f:
                for line in f:
                    for short in re.findall(r"(?:make |\./)(step\d\d)\b", line):
                        self.assertIn(short, steps, f"{os.path.relpath(md, ROOT)}: unknown {short}: {line}")
                    m = re.search(r"\./step\d\d\S*", line)
                    if m:  # the flags after the program (not compute-sanitizer's before it)
                        for flag in re.findall(r"\s(--[a-z][a-z-]*)", line[m.end():].split("#")[0]):
                            self.assertIn(flag, flags, f"{os.path.relpath(md, ROOT)}: unknown flag {flag}: {line}")


    def test_every_evidence_page_is_linked_from_its_chapter_and_the_index(self):
        pages = sorted(glob.glob(os.path.join(ROOT, "docs", "evidence", "*.md")))
        self.assertTrue(pages, "no evidence pages")
        with open(os.path.join(ROOT, "docs", "evidence", "README.md")) as f:
            index = f.read()
        for page in pages:
            name = os.path.basename(page)
            if name == "README.md":
                continue
            chapter = os.path.join(ROOT, "docs", name)
            self.assertTrue(os.path.exists(chapter), f"evidence page without a chapter: {name}")
            with open(chapter) as f:
                self.assertIn(f"evidence/{name}", f.read(), f"docs/{name} does not link its evidence page")
            self.assertIn(f"({name})", index, f"docs/evidence/README.md does not list {name}")

if __name__ == "__main__":
    unittest.main(verbosity=2)
