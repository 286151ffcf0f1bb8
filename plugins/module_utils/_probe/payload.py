# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torch_facts probe: the program the environment's own interpreter runs.

``torch_probe.probe_command`` passes this file's source to ``python -I -c`` with the options as
one JSON argument. It only collects raw data and prints one JSON line after ``MARKER``; the
module process interprets it (``torch_probe``). Stdlib only, valid syntax from Python 3.6 on,
no dollar sign (run_command is told not to expand it anyway), nothing printed but the result. The GPU
query (NVML in a thread, or nvidia-smi as a child process) starts before ``import torch`` so
its cost hides behind the import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import platform
import subprocess
import sys
import threading
import time

MARKER = "TORCHFLEET_PROBE_JSON:"
SCHEMA = 1
SMI_FIELDS = ["name", "compute_cap", "uuid", "driver_version"]
SMI_SEARCH = ["/usr/bin", "/usr/local/bin", "/usr/local/nvidia/bin", "/opt/nvidia/bin"]
STAMP_FILE = "torchfleet-stamp"


def error_text(exc):
    return "%s: %s" % (type(exc).__name__, exc)


def text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def nvml_query():
    import pynvml
    pynvml.nvmlInit()
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            try:
                capability = list(pynvml.nvmlDeviceGetCudaComputeCapability(handle))
            except Exception:
                capability = None
            gpus.append({"name": text(pynvml.nvmlDeviceGetName(handle)),
                         "uuid": text(pynvml.nvmlDeviceGetUUID(handle)),
                         "capability": capability})
        try:
            cuda_driver = int(pynvml.nvmlSystemGetCudaDriverVersion())
        except Exception:
            cuda_driver = None
        return {"driver": text(pynvml.nvmlSystemGetDriverVersion()), "gpus": gpus, "cuda_driver": cuda_driver}
    finally:
        pynvml.nvmlShutdown()


class NvmlThread(threading.Thread):
    def __init__(self):
        threading.Thread.__init__(self, name="torchfleet-nvml")
        self.daemon = True
        self.result = None

    def run(self):
        try:
            self.result = nvml_query()
        except Exception as exc:
            self.result = {"error": error_text(exc)}


def find_smi():
    dirs = os.environ.get("PATH", "").split(os.pathsep) + SMI_SEARCH
    for directory in dirs:
        path = os.path.join(directory or ".", "nvidia-smi")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def start_smi(path, fields):
    env = dict(os.environ, LC_ALL="C")
    args = [path, "--query-gpu=" + ",".join(fields), "--format=csv,noheader"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def finish_smi(proc, fields, timeout):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"fields": fields, "rc": None, "stdout": "", "stderr": "timed out after %ss" % timeout}
    return {"fields": fields, "rc": proc.returncode,
            "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace")}


def retry_without_cap(path, result, timeout):
    if result["rc"] in (0, None) or "compute_cap" not in result["stdout"] + result["stderr"]:
        return result
    # drivers older than the compute_cap field reject the whole query: ask without it
    fields = [f for f in SMI_FIELDS if f != "compute_cap"]
    try:
        return finish_smi(start_smi(path, fields), fields, timeout)
    except (IOError, OSError) as exc:
        return {"fields": fields, "rc": None, "stdout": "", "stderr": error_text(exc)}


def read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def proc_driver(base="/proc/driver/nvidia"):
    gpus = {}
    try:
        names = sorted(os.listdir(os.path.join(base, "gpus")))
    except (IOError, OSError):
        names = []
    for name in names:
        gpus[name] = read_text(os.path.join(base, "gpus", name, "information"))
    return {"version": read_text(os.path.join(base, "version")), "gpus": gpus}


def libcuda_version():
    """cuDriverGetVersion of libcuda.so.1 (1000 * major + 10 * minor); it does not initialise CUDA."""
    import ctypes
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        rc = lib.cuDriverGetVersion(ctypes.byref(version))
    except Exception as exc:
        return {"version": None, "error": error_text(exc)}
    if rc != 0:
        return {"version": None, "error": "cuDriverGetVersion returned CUresult %d" % rc}
    return {"version": int(version.value), "error": None}


def driver_present():
    return os.path.isdir("/proc/driver/nvidia") or find_smi() is not None


class GpuQuery(object):
    """NVML when pynvml imports, else nvidia-smi; /proc is read in any case."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.nvml = None
        self.smi_path = None
        self.smi_proc = None
        self.smi_error = None

    def start(self):
        try:
            import importlib.util
            has_nvml = importlib.util.find_spec("pynvml") is not None
        except Exception:
            has_nvml = False
        if has_nvml:
            self.nvml = NvmlThread()
            self.nvml.start()
            return
        self.start_smi()

    def start_smi(self):
        self.smi_path = find_smi()
        if self.smi_path is None:
            return
        try:
            self.smi_proc = start_smi(self.smi_path, SMI_FIELDS)
        except (IOError, OSError) as exc:
            self.smi_error = error_text(exc)

    def finish(self):
        out = {"nvml": None, "nvidia_smi": None, "proc": proc_driver(),
               "libcuda": libcuda_version() if driver_present() else None}
        if self.nvml is not None:
            self.nvml.join(self.timeout)
            out["nvml"] = self.nvml.result or {"error": "NVML query timed out"}
            if "error" not in out["nvml"]:
                return out
            self.start_smi()
        if self.smi_error is not None:
            out["nvidia_smi"] = {"fields": SMI_FIELDS, "rc": None, "stdout": "", "stderr": self.smi_error}
        elif self.smi_proc is not None:
            first = finish_smi(self.smi_proc, SMI_FIELDS, self.timeout)
            out["nvidia_smi"] = retry_without_cap(self.smi_path, first, self.timeout)
        return out


def torch_facts(torch, probe_cuda):
    facts = {"version": str(torch.__version__), "cuda": None, "cudnn": None, "nccl": None,
             "distributed": None, "cuda_probe": None, "errors": {}}
    try:
        facts["cuda"] = torch.version.cuda
    except Exception as exc:
        facts["errors"]["cuda"] = error_text(exc)
    try:
        facts["cudnn"] = torch.backends.cudnn.version()
    except Exception as exc:
        facts["errors"]["cudnn"] = error_text(exc)
    try:
        version = torch.cuda.nccl.version()
        facts["nccl"] = list(version) if isinstance(version, tuple) else version
    except Exception as exc:
        # CPU builds have no NCCL: AttributeError on torch._C._nccl_version
        facts["errors"]["nccl"] = error_text(exc)
    facts["distributed"] = distributed_facts(torch, facts["errors"])
    if probe_cuda:
        facts["cuda_probe"] = cuda_probe(torch, facts["errors"])
    return facts


def distributed_facts(torch, errors):
    out = {"available": False, "gloo": False, "nccl": False, "mpi": False}
    try:
        dist = torch.distributed
        out["available"] = bool(dist.is_available())
        if out["available"]:
            out["gloo"] = bool(dist.is_gloo_available())
            out["nccl"] = bool(dist.is_nccl_available())
            out["mpi"] = bool(dist.is_mpi_available())
    except Exception as exc:
        errors["distributed"] = error_text(exc)
    return out


def cuda_probe(torch, errors):
    out = {"available": False, "count": 0, "devices": []}
    try:
        out["available"] = bool(torch.cuda.is_available())
        if out["available"]:
            out["count"] = int(torch.cuda.device_count())
            for index in range(out["count"]):
                props = torch.cuda.get_device_properties(index)
                uuid = getattr(props, "uuid", None)
                out["devices"].append({"name": props.name, "major": props.major, "minor": props.minor,
                                       "uuid": None if uuid is None else str(uuid)})
    except Exception as exc:
        errors["cuda_probe"] = error_text(exc)
    return out


def owned_infos(files):
    owned = set()
    for path in files:
        if not isinstance(path, str) or "-info" not in path:
            continue
        for part in path.split("/"):
            if part.endswith(".dist-info") or part.endswith(".egg-info"):
                owned.add(part)
                break
    return sorted(owned)


def conda_meta(prefix):
    meta = os.path.join(prefix, "conda-meta")
    if not os.path.isdir(meta):
        return None
    out = {"records": [], "stamp": None, "errors": []}
    for name in sorted(os.listdir(meta)):
        if not (name.endswith(".json") or name == STAMP_FILE):
            continue
        try:
            with open(os.path.join(meta, name), "rb") as handle:
                doc = json.loads(handle.read().decode("utf-8"))
        except (IOError, OSError, ValueError) as exc:
            out["errors"].append("%s: %s" % (name, error_text(exc)))
            continue
        if name == STAMP_FILE:
            out["stamp"] = doc
        elif isinstance(doc, dict) and doc.get("name") and doc.get("version") is not None:
            out["records"].append({"name": doc["name"], "version": str(doc["version"]),
                                   "build": str(doc.get("build") or ""),
                                   "channel": str(doc.get("channel") or ""),
                                   "infos": owned_infos(doc.get("files") or [])})
        else:
            out["errors"].append("%s: not a package record" % name)
    return out


def read_header(path):
    if os.path.isdir(path):
        for leaf in ("METADATA", "PKG-INFO"):
            if os.path.isfile(os.path.join(path, leaf)):
                path = os.path.join(path, leaf)
                break
        else:
            return {}
    fields = {}
    with open(path, "rb") as handle:
        for raw in handle:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line:
                break
            key, sep, value = line.partition(":")
            if sep and key in ("Name", "Version") and key not in fields:
                fields[key] = value.strip()
                if len(fields) == 2:
                    break
    return fields


def distributions():
    # what importlib.metadata.distributions() finds, without importing it (and email):
    # the Name/Version header of every .dist-info/.egg-info on sys.path, in path order
    out = []
    seen = set()
    for entry in sys.path:
        directory = os.path.realpath(entry or ".")
        if directory in seen or not os.path.isdir(directory):
            continue
        seen.add(directory)
        try:
            leaves = sorted(os.listdir(directory))
        except (IOError, OSError):
            continue
        for leaf in leaves:
            if not (leaf.endswith(".dist-info") or leaf.endswith(".egg-info")):
                continue
            try:
                fields = read_header(os.path.join(directory, leaf))
            except (IOError, OSError):
                continue
            if fields.get("Name") and fields.get("Version"):
                out.append({"name": fields["Name"], "version": fields["Version"], "info": leaf})
    return out


def collect(options):
    started = time.time()
    timings = {}
    gpu = GpuQuery(float(options.get("gpu_timeout", 20)))
    gpu.start()
    doc = {"schema": SCHEMA, "python": platform.python_version(), "executable": sys.executable,
           "prefix": sys.prefix, "torch": None, "torch_error": None}
    mark = time.time()
    try:
        import torch
    except Exception as exc:
        torch = None
        doc["torch_error"] = error_text(exc)
    timings["import_torch"] = time.time() - mark
    mark = time.time()
    probe_cuda = options.get("probe_cuda")
    if probe_cuda is None:
        # auto: measure CUDA wherever a CUDA build of torch meets an NVIDIA driver or GPU
        probe_cuda = torch is not None and bool(getattr(torch.version, "cuda", None)) and driver_present()
    if torch is not None:
        doc["torch"] = torch_facts(torch, bool(probe_cuda))
    timings["torch_facts"] = time.time() - mark
    mark = time.time()
    doc["conda"] = conda_meta(sys.prefix)
    doc["pip"] = distributions()
    timings["packages"] = time.time() - mark
    mark = time.time()
    doc["gpu"] = gpu.finish()
    timings["gpu_wait"] = time.time() - mark
    timings["total"] = time.time() - started
    doc["timings"] = timings
    return doc


def main():
    try:
        options = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
        doc = collect(options)
    except Exception as exc:
        import traceback
        doc = {"schema": SCHEMA, "fatal": error_text(exc), "traceback": traceback.format_exc()}
    sys.stdout.write(MARKER + json.dumps(doc, sort_keys=True) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
