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
    except RuntimeError:
        # torch >= 2.9 refuses to read a legacy TF32 switch once the fp32_precision API set
        # the same thing ("mix of the legacy and new APIs"); the caller asks that API instead.
        return None


def _fp32_precision(backend, op):
    """torch >= 2.9's fp32_precision of (backend, op) ("tf32", "ieee", "none" for the
    default), or None where torch has no such API."""
    getter = getattr(torch._C, "_get_fp32_precision_getter", None)
    if getter is None:
        return None
    try:
        return str(getter(backend, op))
    except (RuntimeError, TypeError, ValueError):
        return None


def _float32_matmul_precision():
    precision = getattr(torch, "get_float32_matmul_precision", None)
    if precision is None:
        return None
    try:
        return precision()
    except RuntimeError:  # torch >= 2.9 after the fp32_precision API was used: no answer
        return None


def _cudnn_allow_tf32():
    try:
        return bool(torch.backends.cudnn.allow_tf32)
    except RuntimeError:  # as for the cuBLAS switch
        return None


def numerics_switches():
    """Every switch that changes the bits a correct kernel may produce; None where this torch
    version does not have it (or will not say)."""
    cudnn_version = None
    try:
        cudnn_version = torch.backends.cudnn.version()
    except (AttributeError, RuntimeError):
        pass
    # TF32: torch >= 2.9 keeps it as fp32_precision per backend and op, which the legacy
    # switches only mirror (and cannot be read at all once that API was used); where it
    # exists it is the answer, "tf32" meaning TF32 allowed.
    matmul_precision = _fp32_precision("cuda", "matmul")
    conv_precision = _fp32_precision("cuda", "conv")
    allow_tf32_matmul = _cuda_matmul_flag("allow_tf32") if matmul_precision is None else matmul_precision == "tf32"
    allow_tf32_cudnn = _cudnn_allow_tf32() if conv_precision is None else conv_precision == "tf32"
    return {
        "allow_tf32_matmul": allow_tf32_matmul,
        "allow_tf32_cudnn": allow_tf32_cudnn,
        "allow_fp16_reduced_precision_reduction": _cuda_matmul_flag("allow_fp16_reduced_precision_reduction"),
        "allow_bf16_reduced_precision_reduction": _cuda_matmul_flag("allow_bf16_reduced_precision_reduction"),
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "float32_matmul_precision": _float32_matmul_precision(),
        "fp32_precision_cuda_matmul": matmul_precision,
        "fp32_precision_cuda_conv": conv_precision,
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
