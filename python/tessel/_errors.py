"""Diagnostics of libtessel as Python values and exceptions (never an abort)."""

import ctypes
import re

_SUGGESTION = re.compile(r"did you mean '?([^'?]+)'?\?")


def _text(raw):
    return raw.decode("utf-8", "replace")


class Diagnostic(object):
    """One libtessel diagnostic: where (file, line, column, field), what (message, code)
    and, when the message offers one, the suggested word ("did you mean ...?").
    str() is the CLI's line: "file:line:col: error: message"."""

    __slots__ = ("code", "file", "line", "column", "field", "message", "suggestion", "text")

    def __init__(self, lib, d):
        self.code = d.code
        self.file = _text(d.file) or None
        self.line = d.line or None
        self.column = d.column or None
        self.field = _text(d.field) or None
        self.message = _text(d.message)
        m = _SUGGESTION.search(self.message)
        self.suggestion = m.group(1) if m else None
        buf = ctypes.create_string_buffer(1400)
        lib.tessel_diag_format(ctypes.byref(d), buf, len(buf))
        self.text = _text(buf.value)

    def __str__(self):
        return self.text

    def __repr__(self):
        return "Diagnostic(%r)" % self.text


class TesselError(Exception):
    """A libtessel call failed: `code` (negative TESSEL_E*), `diagnostics` (every error
    reported, in order; the first is the CLI's first line)."""

    def __init__(self, code, diagnostics, what=None):
        self.code = code
        self.diagnostics = list(diagnostics)
        lines = [str(d) for d in self.diagnostics] or [what or "error %d" % code]
        Exception.__init__(self, "\n".join(lines))


class SpecError(TesselError):
    """A spec (or a sweep file, or a workload binding) that does not validate; every
    diagnostic the loader collected is in `diagnostics`."""


def from_list(lib, code, dl, cls=TesselError):
    """The exception for a failed call that filled the tessel_diag_list dl."""
    diags = [Diagnostic(lib, dl.items[i]) for i in range(dl.count)]
    return cls(code, diags, _text(lib.tessel_strerror(code)))


def from_diag(lib, code, d, cls=TesselError):
    """The exception for a failed call that filled the tessel_diag d."""
    if not d.code:
        d.code = code
    return cls(code, [Diagnostic(lib, d)], _text(lib.tessel_strerror(code)))


def warnings_of(lib, dl):
    return [Diagnostic(lib, dl.items[i]) for i in range(dl.count)]
