"""tessel.sweep: a sweep file (or dict) evaluated by libtessel's sweep runner."""

import ctypes
import json
import os
import shutil
import tempfile

from . import _errors
from ._common import _b, _diag_list, lib
from ._lib import PROGRESS_FN, Diag
from ._run import frame_or_rows, parse_csv


def _absolute(d, base_dir):
    """The dict's spec and data paths made absolute against base_dir (a sweep file's
    paths resolve against its directory; a dict's against base_dir)."""
    d = dict(d)
    if isinstance(d.get("spec"), str) and not os.path.isabs(d["spec"]):
        d["spec"] = os.path.join(base_dir, d["spec"])
    data = d.get("data")
    if isinstance(data, list):
        out = []
        for entry in data:
            if isinstance(entry, str) and not os.path.isabs(entry):
                entry = os.path.join(base_dir, entry)
            out.append(entry)
        d["data"] = out
    return d


class SweepResult(object):
    """summary (rows of summary.csv), traffic (traffic.csv) and pareto (pareto.csv, when
    the sweep names objectives): DataFrames with pandas, else lists of dicts; the files'
    text in summary_csv, traffic_csv, pareto_csv; points and eval_seconds as reported."""

    def __init__(self, texts, points, eval_seconds):
        self.summary_csv = texts.get("summary.csv", "")
        self.traffic_csv = texts.get("traffic.csv", "")
        self.pareto_csv = texts.get("pareto.csv")
        self.points = points
        self.eval_seconds = eval_seconds

    @property
    def summary(self):
        return frame_or_rows(parse_csv(self.summary_csv))

    @property
    def traffic(self):
        return frame_or_rows(parse_csv(self.traffic_csv))

    @property
    def pareto(self):
        return None if self.pareto_csv is None else frame_or_rows(parse_csv(self.pareto_csv))


def sweep(source, jobs=1, progress=None, output=None, timing=False, skip_invalid=False,
          base_dir=None):
    """Evaluates a sweep (docs/sweep.md): source is a sweep file or a dict of one (paths
    relative to base_dir, default the current directory). jobs threads (0: every core);
    progress(done, total, seconds) is called from this thread while it runs; output a
    directory to keep the files in (default: a temporary one, removed). Returns a
    SweepResult whose .summary is a DataFrame (with pandas) or a list of dicts."""
    L = lib()
    sw = ctypes.c_void_p()
    dl = _diag_list()
    try:
        if isinstance(source, dict):
            text = _b(json.dumps(_absolute(source, base_dir or os.getcwd())))
            rc = L.tessel_sweep_parse(b"<dict>", text, len(text), None, ctypes.byref(sw),
                                      ctypes.byref(dl))
        else:
            rc = L.tessel_sweep_load(_b(os.fspath(source)), None, ctypes.byref(sw),
                                     ctypes.byref(dl))
        if rc:
            raise _errors.from_list(L, rc, dl, _errors.SpecError)
    finally:
        L.tessel_diag_list_free(ctypes.byref(dl))
    failure = []

    def relay(ud, done, total, seconds):
        if failure:
            return
        try:
            progress(int(done), int(total), float(seconds))
        except BaseException as e:  # kept and raised once the C call returns
            failure.append(e)

    cb = PROGRESS_FN(relay) if progress else PROGRESS_FN()
    tmp = None
    if output is None:
        tmp = tempfile.mkdtemp(prefix="tessel-sweep-")
        output = os.path.join(tmp, "out")
    points = ctypes.c_uint64()
    seconds = ctypes.c_double()
    d = Diag()
    try:
        rc = L.tessel_sweep_run_flat(sw, _b(os.fspath(output)), int(jobs), 1 if timing else 0,
                                     1 if skip_invalid else 0, 1, cb, None, None,
                                     ctypes.byref(points), ctypes.byref(seconds),
                                     ctypes.byref(d))
        if rc:
            raise _errors.from_diag(L, rc, d)
        if failure:
            raise failure[0]
        texts = {}
        for name in ("summary.csv", "traffic.csv", "pareto.csv"):
            path = os.path.join(output, name)
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    texts[name] = f.read()
        return SweepResult(texts, points.value, seconds.value)
    finally:
        L.tessel_sweep_free(ctypes.byref(sw))
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
