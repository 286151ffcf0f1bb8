# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torch_facts probe and the parsing of what it prints.

``PROBE`` is the source the environment's own interpreter runs (``python -I -c PROBE
OPTIONS_JSON``).  It only collects raw data and prints one JSON line after ``MARKER``;
every interpretation (version strings, package merge, fingerprint, GPU parsing) happens
in this module, in the module process, where it is unit-testable without torch.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re

from ansible_collections.torchfleet.cluster.plugins.module_utils import gpu_info

MARKER = 'TORCHFLEET_PROBE_JSON:'
SCHEMA = 1
STAMP_FILE = 'torchfleet-stamp'
PIP_CHANNEL = 'pypi'
PIP_BUILD = 'pypi_0'

# Runs in the environment's interpreter: stdlib only, valid syntax from Python 3.6 on,
# no "$" (run_command is told not to expand it anyway), nothing printed but the result.
# The GPU query (NVML in a thread, or nvidia-smi as a child process) is started before
# ``import torch`` so its cost hides behind the import.
PROBE = r'''
import json
import os
import platform
import subprocess
import sys
import threading
import time

MARKER = "TORCHFLEET_PROBE_JSON:"
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
    doc = {"schema": 1, "python": platform.python_version(), "executable": sys.executable,
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
        doc = {"schema": 1, "fatal": error_text(exc), "traceback": traceback.format_exc()}
    sys.stdout.write(MARKER + json.dumps(doc, sort_keys=True) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
'''


class ProbeError(Exception):
    """The probe did not produce a usable result."""


def probe_command(python, probe_cuda=False, gpu_timeout=20, timeout_bin=None, timeout=None):
    """The argv that runs the probe once; ``timeout_bin`` wraps it in coreutils timeout.

    ``probe_cuda=None`` lets the probe decide (a CUDA build of torch on a node with a driver)."""
    options = json.dumps({'probe_cuda': None if probe_cuda is None else bool(probe_cuda),
                          'gpu_timeout': gpu_timeout}, sort_keys=True)
    argv = [python, '-I', '-c', PROBE, options]
    if timeout_bin and timeout:
        argv = [timeout_bin, '--kill-after=5', str(int(timeout))] + argv
    return argv


def parse_output(stdout):
    """The probe's JSON document from its stdout (noise before or after is ignored)."""
    for line in reversed((stdout or '').splitlines()):
        if line.startswith(MARKER):
            try:
                doc = json.loads(line[len(MARKER):])
            except ValueError as exc:
                raise ProbeError('probe printed malformed JSON: %s' % exc)
            if not isinstance(doc, dict):
                raise ProbeError('probe printed JSON that is not an object')
            return doc
    raise ProbeError('probe printed no result line')


def cudnn_version_string(value):
    """``torch.backends.cudnn.version()`` as "major.minor.patch".

    cuDNN encodes CUDNN_VERSION as major*1000 + minor*100 + patch up to 8.x
    (8902 -> "8.9.2") and major*10000 + minor*100 + patch from 9.0 on
    (90100 -> "9.1.0", 91002 -> "9.10.2").
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    value = int(value)
    if value >= 90000:
        return '%d.%d.%d' % (value // 10000, (value % 10000) // 100, value % 100)
    return '%d.%d.%d' % (value // 1000, (value % 1000) // 100, value % 100)


def nccl_version_string(value):
    """``torch.cuda.nccl.version()`` -- (2, 27, 3) or (2, 27, 3, "suffix") -- as "2.27.3"."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        numbers = [str(part) for part in value[:3]]
        suffix = ''.join(str(part) for part in value[3:])
        return '.'.join(numbers) + suffix
    if isinstance(value, int):
        # old torch returned NCCL_VERSION_CODE: major*1000+minor*100+patch (10000 from 2.9)
        if value >= 20900:
            return '%d.%d.%d' % (value // 10000, (value % 10000) // 100, value % 100)
        return '%d.%d.%d' % (value // 1000, (value % 1000) // 100, value % 100)
    return str(value)


def env_name(python):
    """The environment's name as the user addresses it: ``/x/envs/train/bin/python`` -> "train".

    Symlinks are deliberately not resolved: the live env is a symlink to a build directory.
    """
    path = os.path.normpath(python)
    bindir = os.path.dirname(path)
    envdir = os.path.dirname(bindir) if os.path.basename(bindir) in ('bin', 'Scripts') else bindir
    return os.path.basename(envdir) or None


def normalise_name(name):
    """PEP 503 normalisation, also applied to conda names."""
    return re.sub(r'[-_.]+', '-', name).lower()


_SUBDIR_RE = re.compile(r'^(noarch|(linux|osx|win|emscripten|wasi|zos)-[a-z0-9_]+)$')


def channel_name(channel):
    """A channel as its name, independent of the mirror (host and path prefix) it came through.

    "https://mirror.example/conda-forge/linux-64" -> "conda-forge",
    "https://mirror.example/artifactory/api/conda/conda-forge/noarch" -> "conda-forge",
    "https://mirror.example/pkgs/main/noarch" -> "pkgs/main", "conda-forge" unchanged.
    """
    channel = (channel or '').strip()
    if '://' in channel:
        channel = channel.split('://', 1)[1]
        channel = channel.split('/', 1)[1] if '/' in channel else ''
    parts = [part for part in channel.split('/') if part]
    if parts and _SUBDIR_RE.match(parts[-1]):
        parts = parts[:-1]
    if len(parts) >= 2 and parts[-2] == 'pkgs':
        return '/'.join(parts[-2:])  # the defaults channels: pkgs/main, pkgs/r, ...
    return parts[-1] if parts else ''


def package_entries(conda, pip):
    """Merge conda records and Python distributions into {normalised name: entry}.

    A distribution whose .dist-info/.egg-info directory belongs to a conda record is that
    record's (as ``conda list`` decides); otherwise, on a name clash, conda wins.
    Pip-only packages get conda's shape for them: build "pypi_0", channel "pypi".
    """
    entries = {}
    owned = set()
    for record in (conda or {}).get('records') or []:
        entries[normalise_name(record['name'])] = {
            'version': record['version'], 'build': record.get('build') or '',
            'channel': channel_name(record.get('channel'))}
        owned.update(record.get('infos') or [])
    for dist in pip or []:
        name = normalise_name(dist['name'])
        if name in entries or dist.get('info') in owned:
            continue
        entries[name] = {'version': dist['version'], 'build': PIP_BUILD, 'channel': PIP_CHANNEL}
    return entries


def packages_sha256(entries):
    """sha256 of the lines "name version build channel\\n" sorted by name (UTF-8)."""
    lines = ''.join('%s %s %s %s\n' % (name, entry['version'], entry['build'], entry['channel'])
                    for name, entry in sorted(entries.items()))
    return hashlib.sha256(lines.encode('utf-8')).hexdigest()


def duplicate_installs(conda, pip):
    """Packages installed by conda and, separately, by pip (a dist-info no conda record owns):
    {normalised name: {'conda': version, 'pip': version}}."""
    records = {}
    owned = set()
    for record in (conda or {}).get('records') or []:
        records[normalise_name(record['name'])] = record['version']
        owned.update(record.get('infos') or [])
    found = {}
    for dist in pip or []:
        name = normalise_name(dist['name'])
        if name in records and dist.get('info') not in owned:
            found[name] = {'conda': records[name], 'pip': dist['version']}
    return found


def built_packages(stamp):
    """The stamp's record of what was built, {normalised name: {version, build}}, or None (an older stamp)."""
    packages = (stamp or {}).get('packages')
    if not isinstance(packages, dict):
        return None
    built = {}
    for name, record in packages.items():
        if isinstance(record, dict) and record.get('version') is not None:
            built[normalise_name(name)] = {'version': str(record['version']), 'build': str(record.get('build') or '')}
    return built


def build_changes(built, entries):
    """Every package added, removed or changed since the build: {name: {'built': {version, build} | None,
    'live': {version, build} | None}}; None when the build recorded no package list."""
    if built is None or entries is None:
        return None
    changes = {}
    for name in sorted(set(built) | set(entries)):
        was = built.get(name)
        now = entries.get(name)
        live = None if now is None else {'version': now['version'], 'build': now['build']}
        if was != live:
            changes[name] = {'built': was, 'live': live}
    return changes


def env_facts(python, doc):
    conda = doc.get('conda')
    pip = doc.get('pip')
    stamp = (conda or {}).get('stamp')
    if not isinstance(stamp, dict):
        stamp = None
    entries = package_entries(conda, pip) if (conda is not None or pip is not None) else None
    built = built_packages(stamp)
    if stamp is not None:
        # provenance only: what was built is reported as build_changes, not as hundreds of fields
        stamp = dict((k, v) for k, v in stamp.items() if k != 'packages')
    return {
        'name': env_name(python),
        'prefix': doc.get('prefix'),
        'spec_sha256': (stamp or {}).get('spec_sha256'),
        'packages_sha256': None if entries is None else packages_sha256(entries),
        'packages': None if entries is None else dict(
            (name, entry['version']) for name, entry in sorted(entries.items())),
        'builds': None if entries is None else dict(
            (name, entry['build']) for name, entry in sorted(entries.items())),
        'duplicates': None if entries is None else duplicate_installs(conda, pip),
        'build_changes': build_changes(built, entries),
        'stamp': stamp,
    }


def null_facts(python):
    """The facts' shape with every value unknown (``ignore_missing``)."""
    return {
        'version': None, 'cuda': None, 'cudnn': None, 'nccl': None,
        'cuda_available': None, 'gpu_count': None, 'gpus': None, 'driver': None, 'driver_cuda': None, 'python': None,
        'distributed': {'available': None, 'gloo': None, 'nccl': None, 'mpi': None},
        'env': {'name': env_name(python), 'prefix': None, 'spec_sha256': None,
                'packages_sha256': None, 'packages': None, 'builds': None, 'duplicates': None,
                'build_changes': None, 'stamp': None},
    }


def cuda_probe_gpus(probe):
    gpus = []
    for device in probe.get('devices') or []:
        uuid = device.get('uuid')
        if uuid and not uuid.startswith(('GPU-', 'MIG-')):
            uuid = 'GPU-' + uuid
        gpus.append({'name': device.get('name'),
                     'capability': '%s.%s' % (device.get('major'), device.get('minor')),
                     'uuid': uuid})
    return gpus


def build_facts(python, doc):
    """``ansible_facts.torch`` from a probe document that imported torch."""
    torch = doc['torch']
    gpu = gpu_info.summarise(doc.get('gpu') or {})
    facts = null_facts(python)
    facts.update({
        'version': torch.get('version'),
        'cuda': torch.get('cuda'),
        'cudnn': cudnn_version_string(torch.get('cudnn')),
        'nccl': nccl_version_string(torch.get('nccl')),
        'python': doc.get('python'),
        'driver': gpu['driver'],
        'driver_cuda': gpu['cuda_driver'],
        'distributed': torch.get('distributed') or facts['distributed'],
        'env': env_facts(python, doc),
    })
    probe = torch.get('cuda_probe')
    if probe is not None:
        facts['gpus'] = cuda_probe_gpus(probe)
        facts['gpu_count'] = int(probe.get('count') or 0)
        facts['cuda_available'] = bool(probe.get('available'))
    else:
        # without initialising CUDA: a CUDA build on a node whose driver lists GPUs
        facts['gpus'] = gpu['gpus']
        facts['gpu_count'] = len(gpu['gpus'])
        facts['cuda_available'] = bool(facts['cuda']) and facts['gpu_count'] > 0
    return facts
