"""The one version number of sparklance, shared with the jar (read from the repository's VERSION file)."""

import os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))
_candidates = [_os.path.join(_here, "VERSION"), _os.path.join(_here, "..", "..", "VERSION")]
__version__ = next(open(p).read().strip() for p in _candidates if _os.path.exists(p))
