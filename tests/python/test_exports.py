"""The extension module exports its init function and nothing else: the
static library linked into it is compiled with hidden visibility, so no
strided_* symbol of it can clash with (or be interposed by) another copy of
libstrided loaded in the same process. scripts/exported-symbols reads the
dynamic symbol table; the installed shared library's exports are checked
against its headers by scripts/check-consumers."""

import pathlib
import subprocess
import sys

import strided._strided

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "exported-symbols"


def test_the_extension_exports_only_its_init_function():
    done = subprocess.run([sys.executable, str(SCRIPT), "extension", strided._strided.__file__],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "exactly the 1 expected symbol" in done.stdout
