"""The reproducibility signature (spec: OUT-SIGNATURE), in the style of sacrebleu's.

One string pins everything that can change the numbers: package version, spec version,
adapter, and (with intervals) B, seed, level, interval methods and pairing.
"""

from __future__ import annotations

import attrs

from ._version import __version__

#: Version of spec/SPEC.md whose definitions this code implements.
SPEC_VERSION = "1"


@attrs.frozen(slots=True)
class Signature:
    """The settings that produced a set of numbers."""

    adapter: str = "records"
    bootstrap: int = 0
    seed: int = 0
    level: float = 0.95
    paired: bool = True
    #: Adapter settings that change the numbers (benchmark package version, thresholds, ...).
    adapter_options: tuple[tuple[str, str], ...] = attrs.field(default=(), kw_only=True)

    def __str__(self) -> str:
        adapter = self.adapter
        if self.adapter_options:
            adapter += "[" + ",".join(f"{k}={v}" for k, v in self.adapter_options) + "]"
        parts = [f"prefixexec:{__version__}", f"spec:{SPEC_VERSION}", f"adapter:{adapter}"]
        if self.bootstrap > 0:
            parts += [
                f"boot:{self.bootstrap}",
                f"seed:{self.seed}",
                f"level:{self.level:g}",
                "ci:percentile",
                "rr:wilson",
                f"paired:{'yes' if self.paired else 'no'}",
            ]
        else:
            parts.append("boot:0")
        return "|".join(parts)
