"""help() says what the README says: every public function documents itself, and the stubs list it."""
import pathlib

import easyplan


def test_every_public_name_has_a_docstring():
    for name in easyplan.__all__:
        assert getattr(easyplan, name).__doc__, name
    assert "plan" in easyplan.plan.__doc__ and "Plan" in easyplan.plan.__doc__


def test_the_stub_declares_every_public_name():
    stub = pathlib.Path(easyplan.__file__).with_name("__init__.pyi").read_text()
    for name in easyplan.__all__:
        assert f"def {name}(" in stub or f"class {name}" in stub, name


def test_the_readme_python_examples_run():
    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    section = readme.read_text().split("\n## Python\n")[1].split("\n## ")[0]
    blocks = section.split("```python\n")[1:]
    assert blocks, "README.md has no python example"
    for block in blocks:
        exec(compile(block.split("```")[0], "README.md", "exec"), {})
