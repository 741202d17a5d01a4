"""Every `$ easyplan ...` example of README.md and docs/*.md runs, from a scratch copy of the repository
root, and prints what the document shows under it (tests/docs/doc_examples.py has the format). A
documented example that no longer holds fails here. EASYPLAN_BINARY is the easyplan the examples call."""
import os
import pathlib
import shutil
import subprocess

import pytest

from doc_examples import ROOT, documents, examples_of, matches

BINARY = pathlib.Path(os.environ.get("EASYPLAN_BINARY", ROOT / "build" / "cli" / "easyplan")).resolve()
EXAMPLES = [example for path in documents() for example in examples_of(path)]


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory):
    """One scratch directory per document: the repository's top level as symlinks, and `easyplan` on PATH."""
    made = {}

    def get(file):
        if file not in made:
            work = tmp_path_factory.mktemp(file.replace("/", "_"))
            for entry in ROOT.iterdir():
                if entry.name not in (".git", "build", "build-release"):
                    (work / entry.name).symlink_to(entry)
            bin_dir = work / ".bin"
            bin_dir.mkdir()
            (bin_dir / "easyplan").symlink_to(BINARY)
            made[file] = work
        return made[file]

    return get


def test_the_documents_have_examples():
    files = {e.file for e in EXAMPLES}
    assert "README.md" in files and len(EXAMPLES) >= 30, files


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example_prints_what_the_document_shows(example, workdirs):
    work = workdirs(example.file)
    env = dict(os.environ, PATH=f"{work / '.bin'}:{os.environ['PATH']}", COLUMNS="100")
    # As a terminal shows it: stdout and stderr in one stream, the command's own redirections first.
    done = subprocess.run(["bash", "-c", "{ " + example.command + "\n} 2>&1"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    # A crash or an internal error is never what a document shows (exit 3; 128+ for a signal). An
    # example that shows no output shows a command that works: exit 0, or 1 for findings.
    assert done.returncode < 3, done.stdout
    if not any(line.strip() for line in example.expected):
        assert done.returncode in (0, 1), f"{example.id}: $ {example.command}\n{done.stdout}"
        return
    actual = done.stdout.split("\n")
    assert matches(example.expected, actual), (
        f"{example.id}: $ {example.command}\n--- the document shows:\n" + "\n".join(example.expected) +
        "\n--- easyplan printed:\n" + done.stdout)


def test_elisions_match_any_lines_and_prefixes():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert matches(["a b..."], ["a b c"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a b..."], ["a c"])
    assert matches([], [""])


def _help_examples():
    """The commands of `easyplan --help`'s Examples block (cli/app.cc), each as the words to run."""
    text = subprocess.run([str(BINARY), "--help"], capture_output=True, text=True, check=True).stdout
    block = text.split("Examples:\n", 1)[1].split("\n\n", 1)[0]
    # Each line is "  easyplan ARGS   what it shows": the command ends at the first run of 3 spaces.
    return [line.strip().split("   ", 1)[0].split() for line in block.splitlines() if line.strip()]


def test_the_top_level_help_examples_run(workdirs):
    examples = _help_examples()
    assert len(examples) >= 4 and all(words[0] == "easyplan" for words in examples), examples
    work = workdirs("help")
    for words in examples:
        done = subprocess.run([str(BINARY)] + words[1:], cwd=work, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"$ {' '.join(words)}\n{done.stderr}"
