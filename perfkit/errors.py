"""Exceptions raised by perfkit.

Every error a user can cause says where (``path:line``), what was expected and what was found,
so it can be fixed without reading a traceback.

The exit contract of the ``perfkit`` command (:mod:`perfkit.cli`): statuses 0, 1 and 3 come
only from an analysis (``perfkit gate``: 0 pass, 1 regression, 3 inconclusive); every error,
whether a usage error, unreadable data or a bug, exits :data:`ERROR_STATUS` (2) with one line
``perfkit: error: ...`` on stderr.
"""

from __future__ import annotations

#: the exit status of every error (usage, data, internal): never 1, which CI reads as a result
ERROR_STATUS = 2


class PerfkitError(Exception):
    """Base class of every error perfkit raises on purpose.

    The CLI prints it as one line, ``perfkit: error: ...``, and exits with :attr:`exit_status`,
    :data:`ERROR_STATUS` (2) for every error: 0, 1 and 3 belong to the analyses.
    """

    exit_status = ERROR_STATUS


class UsageError(PerfkitError, ValueError):
    """Bad input from the user: an unknown metric or column, an option out of range, a selection
    that does not parse, a design the method does not take (a factor with three levels in a
    2^k analysis). Exit status 2. Also a :class:`ValueError`, for callers that catch that."""


class DataError(PerfkitError, ValueError):
    """The data cannot answer the question: no runs, too few levels for a fit, a side with no
    runs. Exit status 2, as every error. Also a :class:`ValueError`, for callers that catch
    that."""


class ParseError(PerfkitError):
    """A tool's output could not be read.

    Parameters
    ----------
    path : str
        The file (or ``<string>`` for text passed directly).
    line : int or None
        1-based line number where reading failed; None when the whole file is at fault.
    expected : str
        What the parser was looking for, in words.
    found : str, optional
        What it found instead (shortened to 80 characters).
    """

    def __init__(self, path: str, line: int | None, expected: str, found: str | None = None):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        if self.found is None:
            return f"{where}: expected {self.expected}"
        found = self.found if len(self.found) <= 80 else self.found[:77] + "..."
        return f"{where}: expected {self.expected}, found {found!r}"


class UnknownFormatError(PerfkitError):
    """A file named explicitly is not the output of any tool perfkit reads."""


class LoadError(PerfkitError):
    """Some files under a path were recognised as tool output but could not be parsed.

    ``runs`` holds everything that did load, ``errors`` the ParseErrors, so a caller can keep the
    good runs and still report the bad files.
    """

    def __init__(self, errors: list[PerfkitError], runs: list | None = None):
        self.errors = list(errors)
        self.runs = list(runs or [])
        lines = "\n".join(str(e) for e in self.errors)
        super().__init__(f"{len(self.errors)} file(s) could not be read:\n{lines}")


#: the option that leaves unreadable runs out of an analysis instead of refusing it
SKIP_UNREADABLE = "--skip-unreadable"


class UnreadableError(DataError):
    """Runs that could not be read under an input, refused as a whole: an analysis, a history
    point or a report made from part of the runs would mislead without saying so.

    ``errors`` are the load errors (``path:line: reason`` each); the CLI prints one line per
    error (:attr:`problems`), the last also saying what was refused and that
    ``--skip-unreadable`` leaves them out, named in the output.
    """

    def __init__(self, errors: list[PerfkitError], where: str, refused: str):
        self.errors = list(errors)
        count = (f"{len(self.errors)} file(s)" if len(self.errors) > 1 else "1 file")
        lines = [str(e) for e in self.errors]
        them = "them" if len(self.errors) > 1 else "it"
        lines[-1] += (f" ({count} under {where} could not be read: {refused}; "
                      f"{SKIP_UNREADABLE} leaves {them} out, named in the output)")
        self.problems = lines
        super().__init__("\n".join(lines))
