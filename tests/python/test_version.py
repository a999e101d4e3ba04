"""The version is written once, in the file VERSION: strided.__version__
(strided_version(), the running library's), the headers' STRIDED_VERSION_*
macros as the extension was compiled against them, the installed
distribution's metadata (pyproject.toml reads VERSION) and the file itself
must all say the same."""

import importlib.metadata
import os
import pathlib
import re

import pytest

import strided
from strided import _strided
from strided.__main__ import installed_version

VERSION_FILE = pathlib.Path(__file__).resolve().parents[2] / "VERSION"


def test_version_is_major_minor_patch():
    assert re.fullmatch(r"\d+\.\d+\.\d+", strided.__version__), strided.__version__


def test_library_and_headers_agree():
    b = _strided.build_info()
    assert b["version"] == strided.__version__
    assert b["header_version"] == strided.__version__
    assert ".".join(map(str, b["header_version_info"])) == strided.__version__


@pytest.mark.skipif(not VERSION_FILE.exists(), reason="not run from a source tree")
def test_version_file_agrees():
    assert VERSION_FILE.read_text().strip() == strided.__version__


def test_installed_distribution_agrees():
    version = installed_version()
    if version is None:
        pytest.skip("strided was not imported from an installed distribution "
                    f"({os.path.dirname(strided.__file__)})")
    assert version == strided.__version__
    assert importlib.metadata.version("strided") == strided.__version__
