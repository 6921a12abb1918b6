"""The sections of a document that each command rewrites: ``python -m benchmarks.exports``
writes its section of ``docs/portability.md`` in place, and ``python -m
benchmarks.portability`` rewrites the rest and keeps it.

>>> document = "# Title\\n\\nmatrix\\n\\n## Real exports\\n\\nold\\n\\n## After\\n\\ntail\\n"
>>> print(replace_section(document, "## Real exports", "## Real exports\\n\\nnew\\n"), end="")
# Title
<BLANKLINE>
matrix
<BLANKLINE>
## Real exports
<BLANKLINE>
new
<BLANKLINE>
## After
<BLANKLINE>
tail
>>> kept_section(document, "## Real exports")
'## Real exports\\n\\nold\\n\\n'
"""

from __future__ import annotations


def replace_section(document: str, heading: str, section: str) -> str:
    """``document`` with its section under ``heading`` replaced by ``section`` (appended
    where it has none); a section runs to the next heading of its level."""
    start = document.find(heading + "\n")
    if start < 0:
        return document.rstrip("\n") + "\n\n" + section
    end = document.find("\n## ", start + len(heading))
    rest = "" if end < 0 else document[end + 1 :]
    return document[:start] + section + ("\n" + rest if rest else "")


def kept_section(document: str, heading: str) -> str:
    """The section under ``heading`` of ``document`` (empty where it has none), for a
    command that rewrites the rest of the document to keep."""
    start = document.find(heading + "\n")
    if start < 0:
        return ""
    end = document.find("\n## ", start + len(heading))
    return document[start:] if end < 0 else document[start : end + 1]
