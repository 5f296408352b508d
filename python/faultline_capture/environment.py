"""What changes legitimate results: versions, the recording device's identity, numerics switches."""
import os
import platform
import socket

import torch

from . import __version__


def rank_and_world():
    """(rank, world size) of a torch.distributed job, else from RANK/WORLD_SIZE, else (0, 1)."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except (ImportError, RuntimeError):
        pass
    try:
        return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 0, 1


def _cuda_matmul_flag(name):
    try:
        return bool(getattr(torch.backends.cuda.matmul, name))
    except (AttributeError, AssertionError):
        return None  # this torch version has no such switch


def numerics_switches():
    """Every switch that changes the bits a correct kernel may produce; None where this torch
    version does not have it."""
    precision = getattr(torch, "get_float32_matmul_precision", None)
    cudnn_version = None
    try:
        cudnn_version = torch.backends.cudnn.version()
    except (AttributeError, RuntimeError):
        pass
    return {
        "allow_tf32_matmul": _cuda_matmul_flag("allow_tf32"),
        "allow_tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "allow_fp16_reduced_precision_reduction": _cuda_matmul_flag("allow_fp16_reduced_precision_reduction"),
        "allow_bf16_reduced_precision_reduction": _cuda_matmul_flag("allow_bf16_reduced_precision_reduction"),
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "float32_matmul_precision": precision() if precision else None,
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "cudnn_version": cudnn_version,
        "torch_num_threads": torch.get_num_threads(),
    }


def versions():
    cuda = torch.version.cuda
    out = {
        "recorder": "faultline_capture " + __version__,
        "torch_version": torch.__version__,
        "cuda_version": cuda or "",
        "python_version": platform.python_version(),
    }
    if cuda and torch.cuda.is_available():
        try:
            # cuBLAS's version is not exposed by torch; the CUDA runtime's and the driver's are.
            out["cuda_runtime_version"] = str(torch._C._cuda_getCompiledVersion())
        except AttributeError:
            pass
    return out


def _nvml_identity(index):
    """name, uuid, serial, pci_bus_id, driver_version through NVML, when pynvml is importable."""
    try:
        import pynvml
    except ImportError:
        return {}
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)

        def text(v):
            return v.decode() if isinstance(v, bytes) else str(v)

        out = {"name": text(pynvml.nvmlDeviceGetName(handle)),
               "uuid": text(pynvml.nvmlDeviceGetUUID(handle)),
               "pci_bus_id": text(pynvml.nvmlDeviceGetPciInfo(handle).busId),
               "driver_version": text(pynvml.nvmlSystemGetDriverVersion())}
        try:
            out["serial"] = text(pynvml.nvmlDeviceGetSerial(handle))
        except pynvml.NVMLError:
            pass
        return out
    except Exception:  # NVML missing or failing: identity from torch only
        return {}


def device_identity(device, role):
    """The /devices/<label> attributes of the torch device `device` ("cpu", "cuda:1")."""
    device = torch.device(device)
    rank, world = rank_and_world()
    attrs = {"role": role, "hostname": socket.gethostname(), "rank": str(rank),
             "world_size": str(world), "device_type": device.type, "torch_device": str(device)}
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        attrs["name"] = props.name
        attrs["sm_count"] = str(props.multi_processor_count)
        attrs["compute_capability"] = "%d.%d" % (props.major, props.minor)
        for key in ("uuid", "pci_bus_id"):
            if hasattr(props, key):
                attrs[key] = str(getattr(props, key))
        attrs.update(_nvml_identity(index))
    else:
        attrs["name"] = platform.processor() or platform.machine() or "cpu"
    return attrs
