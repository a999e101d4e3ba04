# Sphinx configuration of strided's Python API reference, generated from the docstrings of the
# installed package (numpydoc style, read by napoleon). scripts/build-docs builds it into
# build-docs/html with warnings as errors, and runs its examples as doctests.
import strided

project = "strided"
version = release = strided.__version__
copyright = "the strided authors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.napoleon",
]

# The Markdown guides beside this directory are not part of this build.
root_doc = "index"
exclude_patterns = []

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True}
# The C methods' signatures come from their __text_signature__; from_buffer, which has two
# forms, gives them as the first lines of its docstring.
autodoc_docstring_signature = True
autoclass_content = "class"

# The examples import what they use but strided, which every page has.
doctest_global_setup = "import strided"

html_theme = "alabaster"
html_title = f"strided {release} Python API"
html_show_sourcelink = False
