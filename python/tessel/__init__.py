"""tessel from Python: a ctypes package over libtessel.so (docs/python.md).

    spec = tessel.Spec("specs/extensor.yaml", set={"mapping.LLB.order": "KIJ"})
    A = tessel.from_scipy(scipy.io.mmread("G51.mtx.gz"), name="G51")
    r = tessel.run(spec, {"A": A}, estimator="stat")
    r.summary["energy_pj"], r.traffic
"""

from ._bound import Bound
from ._common import lib
from ._errors import Diagnostic, SpecError, TesselError
from ._many import grid, run_many
from ._run import Result, Stats, Workload, frame_or_rows, parse_csv, run, stats
from ._spec import Spec, TesselWarning
from ._sweep import SweepResult, sweep
from ._tensor import Tensor, from_coo, from_scipy, load

__all__ = ["Bound", "Diagnostic", "Result", "Spec", "SpecError", "Stats", "SweepResult", "Tensor",
           "TesselError", "TesselWarning", "Workload", "frame_or_rows", "from_coo",
           "from_scipy", "grid", "lib", "load", "parse_csv", "run", "run_many", "stats", "sweep"]
__version__ = "0.1.0"
