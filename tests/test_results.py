#!/usr/bin/env python3
"""Host test: results/ holds exactly what the product reads, and every path the product cites exists.

The product is every committed file outside results/ (docs, README, scripts, tests, plots, steps)
plus results/README.md. A file under results/ is cited when a product file names its path (a
link, a num block's `log`/`file=` path, a script's literal path) or a glob that matches it (`*`
stays within one folder); the loaders that glob the sweep CSVs are listed below. A cited folder
must exist but cites none of its files: each file a reader needs is named. Fails on:
  - an orphan: a committed file under results/ that nothing cites (git history keeps what goes);
  - a dead path: a cited results/ path or glob that matches no file;
  - a lab record: a script, diff or source file under results/ (an experiment's record is its
    commit and its note, not a folder in main).

    python3 tests/test_results.py            the test
    python3 tests/test_results.py --orphans  print the orphans, one per line (to git rm them)
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Globs read by code rather than named as a path: plots/results.py and docs_sync.py load every
# sweep CSV; plots/plot.py also reads the --batch rows beside them.
LOADER_GLOBS = ["results/*/step*.csv", "results/*/batched_*.csv"]
# Tests that check every committed CSV (no row above peak) or this folder: they read results/
# to guard it, not because the product needs a file.
CHECKERS = {"tests/test_csv_peak.py", "tests/test_results.py"}
LAB_RECORDS = (".py", ".sh", ".diff", ".patch", ".cu", ".cuh", ".cpp", ".hpp", ".job", ".slurm")
# A path to results/ as written in a product file: root-relative, or relative (../results/...).
PATH = re.compile(r"(?<![\w/.$-])(?:\.\./)*results/[A-Za-z0-9_.\-/*?\[\]]*")


def committed(root):
    try:
        out = subprocess.check_output(["git", "ls-files"], cwd=root, text=True, stderr=subprocess.DEVNULL)
        return [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (a test's temporary tree)
        return [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                for d, _, files in os.walk(root) if ".git" not in d for f in files]


def citations(root, files):
    """Every results/ path or glob that a product file names, with the files naming it."""
    cited = {}
    for f in files:
        if f.startswith("results/") and f != "results/README.md":
            continue
        if f in CHECKERS:
            continue
        if f.endswith((".png", ".jpg", ".pdf")):
            continue
        try:
            with open(os.path.join(root, f), errors="strict") as fh:
                text = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        for m in PATH.finditer(text):
            if text[m.end():m.end() + 1] in ("$", "<", "{"):
                continue  # a template a script fills in (results/logs/name_${slug}.txt)
            path = re.sub(r"^(\.\./)+", "", m.group(0)).rstrip(".:")
            if path in ("results", "results/"):
                continue
            cited.setdefault(path, set()).add(f)
    return cited


def audit(root):
    """(orphans, dead, lab_records): lists of results/ files or citations."""
    files = committed(root)
    data = sorted(f for f in files if f.startswith("results/"))
    cited = citations(root, files)
    patterns = list(cited) + LOADER_GLOBS
    reached, dead = set(), []
    for p in patterns:
        is_glob = any(c in p for c in "*?[")
        if is_glob:
            rx = re.compile(fnmatch.translate(p).replace(".*", "[^/]*"))
            hits = [d for d in data if rx.match(d)]
        elif p.endswith("/") or os.path.isdir(os.path.join(root, p)):
            folder = p.rstrip("/") + "/"
            hits = []
            if any(d.startswith(folder) for d in data):
                continue  # a folder link cites none of its files
        else:
            hits = [p] if p in data or os.path.exists(os.path.join(root, p)) else []
        # A doc's path or glob must match; a script's glob may name what it is about to write.
        from_docs = any(src.endswith(".md") for src in cited.get(p, ()))
        if not hits and p not in LOADER_GLOBS and (from_docs or not is_glob):
            dead.append(f"{p} (cited in {', '.join(sorted(cited[p]))})")
        reached.update(hits)
    reached.add("results/README.md")
    orphans = [d for d in data if d not in reached]
    lab = [d for d in data if d.endswith(LAB_RECORDS)]
    return orphans, dead, lab


class Results(unittest.TestCase):
    def test_results_hold_only_what_is_read_and_every_cited_path_exists(self):
        orphans, dead, lab = audit(ROOT)
        self.assertEqual(lab, [], "scripts/diffs/sources under results/: an experiment's record is its commit")
        self.assertEqual(dead, [], "cited but missing: fix the citation or commit the file")
        self.assertEqual(orphans, [], f"{len(orphans)} committed files under results/ that nothing cites: "
                         "git rm them (python3 tests/test_results.py --orphans | xargs git rm -q), or cite them")

    def test_the_audit_catches_an_orphan_a_dead_link_and_a_script(self):
        with tempfile.TemporaryDirectory() as tmp:
            def write(rel, text=""):
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
                with open(os.path.join(tmp, rel), "w") as f:
                    f.write(text)
            write("docs/a.md", "see [log](../results/logs/h200/run.txt) and results/logs/gone.txt, "
                  "<!-- num: log results/logs/h100/*.log re=\"x\" --> and results/logs/dir/ "
                  "and results/logs/nodir/.")
            write("results/logs/h200/run.txt")
            write("results/logs/h100/one.log")
            write("results/logs/dir/inner.txt")
            write("results/h200/step00_baseline.csv")
            write("results/logs/h200/unread.txt")
            write("results/logs/h200/job.sh")
            write("results/logs/h100/deeper/two.log")
            orphans, dead, lab = audit(tmp)
            self.assertEqual(orphans, ["results/logs/dir/inner.txt", "results/logs/h100/deeper/two.log",
                                       "results/logs/h200/job.sh", "results/logs/h200/unread.txt"])
            self.assertEqual(len(dead), 2, dead)
            self.assertTrue(dead[0].startswith("results/logs/gone.txt"), dead)
            self.assertTrue(dead[1].startswith("results/logs/nodir/"), dead)
            self.assertEqual(lab, ["results/logs/h200/job.sh"])


if __name__ == "__main__":
    if "--orphans" in sys.argv[1:]:
        print("\n".join(audit(ROOT)[0]))
        sys.exit(0)
    unittest.main(verbosity=2)
