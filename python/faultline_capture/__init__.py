"""faultline_capture: records PyTorch ops into Faultline trace v1, re-runs recorded ops on another
device, and converts torch.save checkpoints to HDF5 snapshots. See docs/capture.md."""
__version__ = "0.1.0"

from .convert import convert_checkpoint  # noqa: E402
from .recorder import record  # noqa: E402
from .rerun import rerun  # noqa: E402

__all__ = ["record", "rerun", "convert_checkpoint", "__version__"]
