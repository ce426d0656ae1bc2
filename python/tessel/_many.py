"""Many design points in one library call: run_many (a list of overrides) and grid (the
cross product of axes, a sweep over tensors in memory); one table out."""

import itertools

from ._fast import Pricer
from ._run import frame_or_rows, point_inputs
from ._spec import _set_list
from ._values import TEXTS_MAX, Values, layout, summary_of, text_cell


def _values(spec, points, tensors, estimator, strategy, stats, set, timing, label,
            drop_zeros):
    """Values of each point (a dict or list of overrides on top of spec, set and
    strategy), priced by tessel_sweep_values_points."""
    root, sets, code, db, data, stat, shared, cache, keep = point_inputs(
        spec, tensors, estimator, strategy, stats, set, drop_zeros)
    if not layout().complete:
        raise NotImplementedError("this libtessel writes summary or traffic columns the "
                                  "numeric layout does not list (tessel_report_value_columns)")
    if keep is None and stats is not None:
        pricer = stats._pricer(root, code, db, label, timing)
    else:
        pricer = Pricer(root, code, data, stat, shared, cache, db, label, timing)
    return pricer, pricer.chunks([sets + _set_list(p) for p in points])


def _frame(chunks, prefix):
    """summary.csv's rows as a DataFrame built by columns from the arrays (NumPy), with
    the dtypes a DataFrame of the rows' dicts has: a double column whose cells are all
    written as integers is int64, empty cells are NaN (None when all are)."""
    import numpy
    import pandas
    lay = layout()
    nt, ni, nd = len(lay.s_texts), len(lay.s_ints), len(lay.s_doubles)
    ints = numpy.concatenate([numpy.frombuffer(c[1], dtype=numpy.int64).reshape(
        c[0], lay.n_ints) for c in chunks])
    doubles = numpy.concatenate([numpy.frombuffer(c[2], dtype=numpy.float64).reshape(
        c[0], lay.n_doubles) for c in chunks])
    texts = []
    for n, _, _, text in chunks:
        raw = memoryview(text).cast("B")
        for i in range(n):
            size = int(ints[len(texts), lay.head - 3])
            cells = raw[i * TEXTS_MAX:i * TEXTS_MAX + size].tobytes().decode("utf-8")
            texts.append([text_cell(s) for s in cells.split("\0")[:nt]])
    columns = {}
    for k in (prefix[0] if prefix else {}):
        columns[k] = [p[k] for p in prefix]
    for k in range(nt):
        columns[lay.s_texts[k]] = [t[k] for t in texts]
    for k in range(ni):
        columns[lay.s_ints[k]] = ints[:, k].copy()
    for k in range(nd):
        col = doubles[:, k].copy()
        finite = numpy.isfinite(col)
        if not finite.any():
            columns[lay.s_doubles[k]] = [None] * len(col)
            continue
        col[~finite] = numpy.nan
        if finite.all() and (numpy.abs(col) < 1e15).all() and (col == numpy.trunc(col)).all():
            col = col.astype(numpy.int64)
        columns[lay.s_doubles[k]] = col
    order = list(prefix[0]) if prefix else []
    # a dict already in the columns' order: pandas then builds no Series to reindex
    return pandas.DataFrame({k: columns[k] for k in order + lay.summary_header})


def _tables(pricer, chunks, prefix, traffic):
    """summary rows (each after its prefix dict), and with traffic the traffic rows too."""
    try:
        import numpy  # noqa: F401  (pandas needs it)
        import pandas  # noqa: F401
        frame = True
    except ImportError:
        frame = False
    if not chunks:
        return (frame_or_rows([]), frame_or_rows([])) if traffic else frame_or_rows([])
    if frame and not traffic:
        return _frame(chunks, prefix)
    values = []
    for n, ints, doubles, text in chunks:
        views = [memoryview(a).cast("B") for a in (ints, doubles, text)]
        values.extend(Values.of_chunk(pricer.layout, views[0], views[1], views[2], i)
                      for i in range(n))
    if not any(prefix):  # run_many: each row a Summary, converted as it is read
        rows = [summary_of(v) for v in values]
    else:
        rows = []
        for pre, v in zip(prefix, values):
            row = dict(pre)
            row.update(v.summary())
            rows.append(row)
    if not traffic:
        return frame_or_rows(rows)
    trows = []
    for pre, v in zip(prefix, values):
        for t in v.traffic_rows():
            row = dict(pre)
            row.update(t)
            trows.append(row)
    return (_frame(chunks, prefix) if frame else rows), frame_or_rows(trows)


def run_many(spec=None, points=(), tensors=None, estimator=None, strategy=None, stats=None,
             set=None, timing=False, label=None, drop_zeros=False, traffic=False):
    """The design points `points` (each a dict or a list of "PATH=VALUE" overrides, applied
    after spec's own, `set` and `strategy`), priced as run prices each one, in one library
    call per 256 points. Returns one table of summary.csv's rows in the points' order (a
    DataFrame with pandas, else a list of dicts); with traffic=True, (summary, traffic).
    A point that fails raises its error, with `.point` its index."""
    points = list(points)
    pricer, chunks = _values(spec, points, tensors, estimator, strategy, stats, set, timing,
                             label, drop_zeros)
    return _tables(pricer, chunks, [{}] * len(points) if points else [], traffic)


def grid(spec=None, axes=None, tensors=None, estimator=None, strategy=None, stats=None,
         set=None, timing=False, label=None, drop_zeros=False, traffic=False):
    """A sweep over tensors in memory: every point of the cross product of `axes` (a dict
    of spec path -> list of values; the first axis changes slowest, as in a sweep file),
    priced by run_many on `stats` (or `tensors`). Rows start like a sweep's summary.csv:
    `point` (its number), one column per axis (the value as given), then summary.csv's
    columns."""
    axes = dict(axes or {})
    paths = list(axes)
    combos = list(itertools.product(*[list(axes[p]) for p in paths]))
    points = [dict(zip(paths, c)) for c in combos]
    pricer, chunks = _values(spec, points, tensors, estimator, strategy, stats, set, timing,
                             label, drop_zeros)
    prefix = []
    for i, c in enumerate(combos):
        pre = {"point": i}
        pre.update(zip(paths, c))
        prefix.append(pre)
    return _tables(pricer, chunks, prefix, traffic)
