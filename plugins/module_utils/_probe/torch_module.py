# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torch_facts module's work: the environment's interpreter runs the probe, once, without privileges it need not have."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import gpu_info, torch_probe
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import runas, trusted_exec

GPU_QUERY_TIMEOUT = 20
TIMED_OUT_RCS = (124, 137)


def resolve_interpreter(module, python):
    """The interpreter to run, or None; a bare name is looked up in PATH."""
    if os.sep not in python:
        return module.get_bin_path(python)
    if os.path.isfile(python) and os.access(python, os.X_OK):
        return python
    return None


def give_up(module, msg, rc=None, stdout='', stderr='', facts=None):
    """Fail, or with ignore_missing return null facts and warn."""
    if module.params['ignore_missing']:
        module.warn(msg)
        facts = facts or torch_probe.null_facts(module.params['python'])
        module.exit_json(changed=False, ansible_facts={'torch': facts})
    module.fail_json(msg=msg, rc=rc, stdout=stdout, stderr=stderr)


def run_probe(module, python):
    timeout = module.params['timeout']
    argv = torch_probe.probe_command(python, module.params['probe_cuda'],
                                     gpu_timeout=min(GPU_QUERY_TIMEOUT, timeout),
                                     timeout_bin=module.get_bin_path('timeout'), timeout=timeout)
    wrapped = argv[0] != python  # run under coreutils timeout
    drop = privilege_drop(module, python)
    if drop:
        at = argv.index(python)
        argv = argv[:at] + drop + argv[at:]
    try:
        return (wrapped,) + module.run_command(argv, expand_user_and_vars=False, handle_exceptions=False)
    except OSError as exc:
        give_up(module, 'torch_facts could not run the interpreter %s: %s' % (python, exc),
                rc=127 if exc.errno == 2 else 126, stderr=str(exc))


def privilege_drop(module, python):
    """argv prefix that runs the probe as the only user besides root who can change the environment.

    Whoever runs the probe must be root or that user: any other account (the Ansible login user of
    an audit without become) would hand its own rights to the code that user can plant. Such a run
    is refused, naming the path and its owner."""
    writer = runas.foreign_writer(python)
    euid = os.geteuid()
    if writer is None or writer[0] == euid:
        return []
    if euid != 0:
        finding = runas.foreign_finding(python)
        runner = trusted_exec.user_name(euid)
        module.fail_json(msg='torch_facts: refusing to run %s as %s: %s %s, so the probe would run code another user can '
                             'change with the rights of %s. The managed environments are root\'s; probe this one as root '
                             '(become) or as its owner.' % (python, runner, finding.path, finding.reason, runner),
                         path=finding.path)
    setpriv = module.get_bin_path('setpriv')
    if setpriv is None:
        module.fail_json(msg='torch_facts: %s can be changed by uid %d, so it must not run as root, and setpriv '
                             '(util-linux) to run it as that user is missing' % (python, writer[0]))
    return runas.as_user_argv(setpriv, writer[0], writer[1])


def stderr_gist(text):
    """First and last line of stderr: a usage error leads, a traceback ends with its exception."""
    lines = [line.strip() for line in (text or '').splitlines() if line.strip()]
    if len(lines) > 1:
        return '%s ... %s' % (lines[0], lines[-1])
    return lines[0] if lines else 'no stderr'


def probe_document(module, python, wrapped, rc, stdout, stderr):
    """The probe's JSON document, or give up with a message naming the interpreter."""
    try:
        doc = torch_probe.parse_output(stdout)
    except torch_probe.ProbeError as exc:
        if rc in TIMED_OUT_RCS and wrapped:
            why = 'timed out after %ss' % module.params['timeout']
        elif rc in (126, 127):
            why = 'could not be run (rc %s): %s' % (rc, stderr_gist(stderr))
        else:
            why = 'failed (rc %s, %s): %s' % (rc, exc, stderr_gist(stderr))
        give_up(module, 'torch_facts probe with interpreter %s %s' % (python, why),
                rc=rc, stdout=stdout, stderr=stderr)
    if doc.get('fatal'):
        give_up(module, 'torch_facts probe with interpreter %s crashed: %s' % (python, doc['fatal']),
                rc=rc, stdout=stdout, stderr=(stderr or '') + (doc.get('traceback') or ''))
    return doc


def partial_facts(python, doc):
    """Null torch values, but what the probe found without torch (env, driver, GPUs)."""
    facts = torch_probe.null_facts(python)
    facts['python'] = doc.get('python')
    facts['env'] = torch_probe.env_facts(python, doc)
    gpu = gpu_info.summarise(doc.get('gpu') or {})
    facts.update(driver=gpu['driver'], gpus=gpu['gpus'], gpu_count=len(gpu['gpus']))
    return facts


def warn_probe_errors(module, doc, rc):
    if rc != 0:
        module.warn('torch_facts probe exited with rc %s after printing its result' % rc)
    errors = dict((doc.get('torch') or {}).get('errors') or {})
    if not (doc.get('torch') or {}).get('cuda'):
        errors.pop('nccl', None)  # CPU builds have no NCCL: not worth a warning
    for field, error in sorted(errors.items()):
        module.warn('torch_facts could not read %s: %s' % (field, error))
    for error in (doc.get('conda') or {}).get('errors') or []:
        module.warn('torch_facts skipped conda-meta/%s' % error)


ARGUMENT_SPEC = dict(
    python=dict(type='path', required=True),
    probe_cuda=dict(type='bool'),
    ignore_missing=dict(type='bool', default=False),
    timeout=dict(type='int', default=120),
)
MODULE_OPTIONS = dict()


def run(module):
    """Exit with the torch stack the interpreter reports as ansible_facts.torch."""
    given = module.params['python']
    if module.params['timeout'] < 1:
        module.fail_json(msg='timeout must be at least 1 second, got %s' % module.params['timeout'])
    python = resolve_interpreter(module, given)
    if python is None:
        give_up(module, 'torch_facts: the interpreter %s does not exist or is not executable' % given,
                rc=127, stderr='')
    wrapped, rc, stdout, stderr = run_probe(module, python)
    doc = probe_document(module, given, wrapped, rc, stdout, stderr)
    if doc.get('torch') is None:
        give_up(module, 'torch_facts: torch cannot be imported by %s: %s' % (given, doc.get('torch_error')),
                rc=rc, stdout='', stderr=stderr, facts=partial_facts(python, doc))
    warn_probe_errors(module, doc, rc)
    module.exit_json(changed=False, ansible_facts={'torch': torch_probe.build_facts(python, doc)})
