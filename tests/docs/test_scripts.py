"""What the README promises about the scripts: the binary the first command builds can be put on PATH as
the README says, and scripts/python shows its build's progress on stderr as scripts/easyplan does
(issue 34: it built for minutes in silence)."""
import re
import subprocess

from doc_examples import ROOT


def common(script):
    """Runs bash `script` with scripts/_common.sh sourced; returns (stdout, stderr)."""
    done = subprocess.run(["bash", "-c", f'source "{ROOT}/scripts/_common.sh"; {script}'], capture_output=True,
                          text=True, check=True)
    return done.stdout, done.stderr


def test_readme_says_how_to_put_the_built_easyplan_on_path():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    release, _ = common("easyplan_release_dir")
    # The first two commands stay the README's first two lines of code.
    assert readme.split("```sh\n", 1)[1].startswith("scripts/easyplan resolve examples/llama-3.1-8b/config.json\n"
                                                    "scripts/test\n")
    exported = re.findall(r'export PATH="\$PWD/([^:"]+):\$PATH"', readme)
    assert exported, "README.md does not say how to put easyplan on PATH"
    # The directory is where scripts/easyplan builds the binary (scripts/_common.sh: easyplan_release_dir).
    assert ROOT / exported[0] == ROOT / release.strip() / "cli"


def test_progress_shows_a_builds_steps_on_stderr():
    out, err = common('printf "[1/40] CXX a\\nwarning\\n[20/40] CXX b\\n[40/40] LINK c\\n" | '
                      'easyplan_progress "the Python module"')
    assert out == ""
    assert err.splitlines() == ["easyplan: building the Python module, 2% (1/40)",
                                "easyplan: building the Python module, 50% (20/40)",
                                "easyplan: building the Python module, 100% (40/40)"]
    _, quiet = common('echo "ninja: no work to do." | easyplan_progress "the Python module"')
    assert quiet == ""  # an up-to-date build says nothing


def test_scripts_python_and_easyplan_pipe_their_builds_through_the_progress():
    for script in ("python", "easyplan"):
        text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
        assert re.search(r"easyplan_build\w*\s.*\|\s*tee\s.*\|\s*easyplan_progress", text), script
