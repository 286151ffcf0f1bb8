# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The conda_env module's work: an environment built aside, checked, then switched in one rename."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd
import shutil
import tempfile

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import conda as conda_utils
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.collection_version import COLLECTION_VERSION
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envstore
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import lock_files
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import pip_platform
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import safepath
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import runas
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import wheel_bundle
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec


class BuildError(Exception):
    def __init__(self, msg, cmd=None, rc=None, stdout='', stderr=''):
        super(BuildError, self).__init__(msg)
        self.result = {'msg': msg, 'cmd': cmd, 'rc': rc, 'stdout': stdout, 'stderr': stderr}


class CondaEnv:
    """One run of the module: check inputs, take the environment's lock, then inspect, decide and act.

    Deciding only while holding the lock matters: a run that looked at the live environment
    before another run switched it would act on what it saw, not on what is there."""

    def __init__(self, module):
        self.module = module
        params = module.params
        self.name = params['name']
        self.layout = envstore.Layout(params['prefix'], self.name)
        self.result = {'changed': False, 'name': self.name, 'prefix': self.layout.live,
                       'python': os.path.join(self.layout.live, 'bin', 'python'), 'build': None,
                       'action': 'none', 'stamp': None, 'previous': [], 'removed': [], 'commands': [],
                       'node_platform': pip_platform.this_node()}
        self.conda = None
        self.platform = None
        self.pip_environ = {}
        self.smoke_user = None
        self.smoke_argv = []
        self.drop = []

    # ------------------------------------------------------------ inputs

    def resolve_smoke_user(self):
        """Before anything is built: an unknown smoke-test user fails now, not after the build."""
        user = self.module.params['smoke_test_user']
        try:
            account = pwd.getpwnam(user)
        except KeyError:
            self.module.fail_json(msg='%s: smoke_test_user %r: no such user on this node' % (self.name, user))
        if account.pw_uid == os.geteuid():
            return
        setpriv = self.module.get_bin_path('setpriv')
        if setpriv is None:
            self.module.fail_json(msg='%s: setpriv (util-linux) is needed to run the smoke test as %s' % (self.name, user))
        self.smoke_user = (account.pw_uid, account.pw_gid)
        self.smoke_argv = runas.as_user_argv(setpriv, account.pw_uid, account.pw_gid)

    def load_inputs(self):
        params = self.module.params
        self.spec_bytes = self._read(params['spec'], params['spec_content'], 'spec')
        self.lock_bytes = self._read(params['lock'], params['lock_content'], 'lock')
        self.spec_sha = envspec.sha256_bytes(self.spec_bytes)
        self.lock_sha = None
        if self.lock_bytes is not None:
            self.lock_sha = self._given_lock_sha256() or envspec.sha256_bytes(self.lock_bytes)
        spec_file = params['spec_file'] or params['spec'] or 'environment.yml'
        self.stamp = envstore.make_stamp(self.name, self.spec_sha, self.lock_sha,
                                         COLLECTION_VERSION, spec_file)
        self.build = self.layout.build_dir(self.spec_sha, self.lock_sha)
        self._require_text(self.spec_bytes, params['spec'] or spec_file)
        self.spec = self._parse_spec()
        self.lock = self._parse_lock()
        self.expected = self._expected()
        self.smoke = params['smoke_test'] or envspec.default_smoke_test(self.expected or {})

    def _given_lock_sha256(self):
        given = self.module.params['lock_sha256']
        if given is None:
            return None
        if not envstore.valid_sha256(given.lower()):
            self.module.fail_json(msg='lock_sha256 must be a SHA-256 as 64 hex digits, got %r' % given)
        return given.lower()

    def _require_text(self, data, source):
        try:
            envspec.to_text(data, source)
        except envspec.SpecError as exc:
            self.module.fail_json(msg=str(exc))

    def _read(self, path, content, what):
        if content is not None:
            return content.encode('utf-8')
        if path is None:
            return None
        try:
            with open(path, 'rb') as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            self.module.fail_json(msg='cannot read the %s %s: %s' % (what, path, exc))

    def _parse_spec(self):
        if not envspec.HAS_YAML:
            return None
        try:
            spec = envspec.parse_spec(self.spec_bytes, self.stamp['spec_file'])
        except envspec.SpecError as exc:
            self.module.fail_json(msg=str(exc))
        if spec['name'] != self.name:
            self.module.fail_json(msg="%s names the environment %r but name=%r was requested"
                                  % (self.stamp['spec_file'], spec['name'], self.name))
        return spec

    def _parse_lock(self):
        if self.lock_bytes is None:
            return None
        source = self.module.params['lock'] or 'lock_content'
        try:
            kind = envspec.lock_kind(self.lock_bytes, source)
            if kind == envspec.LOCK_CONDA_LOCK and not envspec.HAS_YAML and not self.lock_bytes.lstrip().startswith(b'{'):
                self.module.fail_json(msg='%s: a conda-lock YAML file needs PyYAML on the node; pass it through '
                                          'the conda_env role (it converts the file on the controller)' % source)
            return envspec.parse_lock(self.lock_bytes, source)
        except envspec.SpecError as exc:
            self.module.fail_json(msg=str(exc))

    def _expected(self):
        if self.lock is not None and self.lock['kind'] == envspec.LOCK_CONDA_LOCK:
            self.platform = conda_utils.local_subdir()
            return envspec.lock_pins(self.lock, self.platform)
        if self.module.params['expected'] is not None:
            return dict((envspec.normalize_name(k), v) for k, v in self.module.params['expected'].items())
        if self.lock is not None and self.lock['kind'] == envspec.LOCK_EXPLICIT:
            pins = envspec.lock_pins(self.lock)
            if self.spec is not None:
                pins.update((n, v) for n, v, m in envspec.spec_requirements(self.spec) if m == 'pip')
            return pins
        if self.spec is not None:
            return envspec.expected_pins(self.spec)
        self.module.warn('PyYAML is not available on the node and no expected pins were given: '
                         'the pin check and the package diff are skipped')
        return None

    def conda_executable(self):
        return self.module.params['conda'] or self.layout.default_conda()

    def conda_cli(self):
        """The conda CLI, once it is known that no other user can change what it runs."""
        if self.conda is None:
            executable = self.conda_executable()
            finding = trusted_exec.untrusted_executable(executable)
            if finding is not None:
                self.module.fail_json(msg=trusted_exec.describe(finding, 'run %s' % executable),
                                      path=finding.path, name=self.name)
            environ = dict(self.module.params['environment'])
            self.conda = conda_utils.CondaCli(self.module, executable, environ, self.result['commands'])
        return self.conda

    def conda_available(self):
        return os.access(self.conda_executable(), os.X_OK)

    # ------------------------------------------------------------ locking

    def require_trusted_store(self):
        finding = self.layout.untrusted_store()
        if finding is not None:
            self.module.fail_json(msg=trusted_exec.describe(finding, 'change environments under %s' % self.layout.envs),
                                  path=finding.path, name=self.name)

    def locked(self, decide_and_act):
        """Run ``decide_and_act`` holding the environment's lock (never in check mode)."""
        self.require_trusted_store()
        try:
            with self.layout.locked(self.module.params['lock_timeout']):
                decide_and_act()
        except envstore.LockBusy as exc:
            self.module.fail_json(msg=str(exc), holder=exc.holder, lock=exc.path, name=self.name)

    # ------------------------------------------------------------ states

    def present(self):
        self.resolve_smoke_user()
        self.load_inputs()
        # Also in check mode: the role's plan runs it before root writes anything under the prefix.
        self.require_trusted_store()
        if self.module.check_mode:
            self.decide_present()
            return
        if not os.path.isdir(self.layout.root):
            self.module.fail_json(msg='conda not found at %s: %s does not exist (install Miniconda first, e.g. with the '
                                      'torchfleet.cluster.miniconda role)' % (self.conda_executable(), self.layout.root))
        self.locked(self._present_locked)

    def _present_locked(self):
        action, live = self.decide_present()
        if action == 'prune':
            self.result['removed'] = self.layout.remove_builds(self.drop)
        elif action in ('build', 'switch'):
            if action == 'build':
                self.build_new()
            self.switch(live)
            self.result['stamp'] = envstore.stamp_summary(self.stamp)

    def decide_present(self):
        """('none'|'prune'|'switch'|'build', live) from what is on disk now; fills in the result."""
        live = self.layout.inspect()
        if live['kind'] == 'other':
            self.module.fail_json(msg='%s exists and is neither a directory nor a symlink; move it away first' % self.layout.live)
        if live['ours'] and envstore.stamp_matches(live['stamp'], self.stamp) and live['healthy']:
            self.build = live['target']
            keep, self.drop = self.layout.kept_after(self.build, self.module.params['keep_previous'])
            self.result.update(build=self.build, stamp=envstore.stamp_summary(live['stamp']), previous=keep)
            if not self.drop:
                return 'none', live
            self.result.update(changed=True, action='prune', removed=self.drop)
            return 'prune', live
        reuse = self.layout.find_reusable(self.stamp, self.build)
        self.build = reuse or self.build
        action = 'switch' if reuse else 'build'
        if action == 'build':
            self.check_lock_files()
        self.result.update(build=self.build, action=action, changed=True)
        self.describe_change(live)
        if self.module.check_mode:
            self.result['stamp'] = self.stamp
            self.result['previous'] = self.layout.kept_after(self.build, self.module.params['keep_previous'])[0]
        return action, live

    def check_lock_files(self):
        """Refuse, before anything changes, a lock whose file:// packages do not match its digests."""
        if self.lock is None:
            return
        found = lock_files.problems(envspec.lock_packages(self.lock, self.platform))
        if found:
            self.module.fail_json(msg='%s: the lock\'s local package files do not match it, so nothing was built or '
                                      'changed: %s' % (self.name, '; '.join(found)), problems=found)

    def rolled_back(self):
        self.load_inputs()
        if self.module.check_mode:
            self.decide_rollback()
            return
        self.locked(self._rollback_locked)

    def _rollback_locked(self):
        if self.decide_rollback():
            self.layout.activate(self.result['build'])

    def decide_rollback(self):
        live = self.layout.inspect()
        target = self.layout.rollback_target(self.stamp)
        if target is None:
            self.module.fail_json(msg='no earlier build of %s is kept under %s to roll back to'
                                  % (self.name, self.layout.home))
        self.result.update(build=target, stamp=envstore.stamp_summary(envstore.read_stamp(target)),
                           previous=self.layout.kept_after(target, self.module.params['keep_previous'])[0])
        if live['kind'] == 'symlink' and live['target'] == target:
            return False
        if live['kind'] == 'dir':
            self.module.fail_json(msg='%s is a real directory, not a build managed by this module; nothing to roll back'
                                  % self.layout.live)
        self.result.update(changed=True, action='rollback')
        if self.module._diff:
            self.result['diff'] = {'before': '%s -> %s\n' % (self.layout.live, live.get('target')),
                                   'after': '%s -> %s\n' % (self.layout.live, target)}
        return True

    def absent(self):
        if self.module.check_mode or not os.path.isdir(self.layout.root):
            self.decide_absent()
            return
        self.locked(self._absent_locked)

    def _absent_locked(self):
        if self.decide_absent():
            self.layout.remove_all()

    def decide_absent(self):
        live = self.layout.inspect()
        builds = self.layout.all_builds()
        if live['kind'] == 'missing' and not builds:
            return False
        if live['kind'] == 'other':
            self.module.fail_json(msg='%s exists and is neither a directory nor a symlink; refusing to remove it' % self.layout.live)
        self.result.update(changed=True, action='remove', removed=builds + ([self.layout.live] if live['kind'] == 'dir' else []))
        if self.module._diff:
            self.result['diff'] = {'before': '%s\n' % '\n'.join([self.layout.live] + builds), 'after': ''}
        return True

    # ------------------------------------------------------------ diff

    def describe_change(self, live):
        if self.expected is None:
            return
        current = {}
        old_expected = {}
        if live['kind'] in ('symlink', 'dir') and live['healthy'] and self.conda_available():
            try:
                current = self.conda_cli().list_packages(self.layout.live)
            except (conda_utils.CondaCommandError, ValueError) as exc:
                self.module.warn('could not list the live environment for the diff: %s' % exc)
            old_expected = envstore.read_expected(live.get('target') or self.layout.live) or {}
        summary, before, after = envstore.package_diff(current, old_expected, self.expected)
        self.result['packages'] = summary
        if self.module._diff:
            self.result['diff'] = {'before_header': '%s (spec %s)' % (self.layout.live, (live.get('stamp') or {}).get('spec_sha256', 'none')[:12]),
                                   'after_header': '%s (spec %s)' % (self.layout.live, self.spec_sha[:12]),
                                   'before': before, 'after': after}

    # ------------------------------------------------------------ build and switch

    def build_new(self):
        conda = self.conda_cli()
        if not os.access(conda.executable, os.X_OK):
            self.fail(BuildError('conda not found at %s (install Miniconda first, e.g. with the torchfleet.cluster.miniconda role)'
                                 % conda.executable).result)
        # Under the lock nobody else is building: what lies here was left by an interrupted run.
        for leftover in [self.build] + self.layout.work_dirs():
            self.layout.discard(leftover)
        workdir = self.layout.workdir(self.build)
        try:
            self.use_pip_bundle(workdir)
            self.run_conda(workdir)
            python = os.path.join(self.build, 'bin', 'python')
            if not os.access(python, os.X_OK):
                raise BuildError('conda finished but %s has no bin/python' % self.build)
            self.install_pip_parts(workdir, python)
            self.smoke_test(python)
            installed = self.conda_cli().list_packages(self.build)
            self.check_pins(installed)
            self.stamp['packages'] = envstore.built_record(installed)
            envstore.record_build(self.build, self.stamp, self.spec_bytes, self.lock_bytes, self.expected)
        except BuildError as exc:
            self.layout.discard(self.build)
            self.fail(exc.result)
        except conda_utils.CondaCommandError as exc:
            self.layout.discard(self.build)
            self.fail({'msg': '%s: %s' % (self.name, exc.msg), 'cmd': exc.cmd, 'rc': exc.rc,
                       'stdout': exc.stdout, 'stderr': exc.stderr, 'error': exc.error})
        except Exception:
            self.layout.discard(self.build)
            raise
        finally:
            self.layout.discard(workdir)

    def use_pip_bundle(self, workdir):
        """Unpack and verify the cluster's pip bundle; from here on pip installs from it alone."""
        bundle = self.module.params['pip_bundle']
        if not bundle:
            return
        finding = trusted_exec.untrusted_writer(os.path.dirname(bundle))
        if finding is not None:
            raise BuildError(trusted_exec.describe(finding, 'install from %s' % bundle))
        self.remove_stale_bundles(bundle)
        wheels = os.path.join(workdir, 'wheels')
        os.mkdir(wheels, 0o700)
        try:
            names = wheel_bundle.unpack_verified(bundle, self.module.params['pip_bundle_files'], wheels)
        except wheel_bundle.BundleError as exc:
            raise BuildError('%s: the pip bundle %s was not used: %s' % (self.name, bundle, exc))
        self.pip_environ = {'PIP_NO_INDEX': '1', 'PIP_FIND_LINKS': wheels}
        self.conda_cli().environ.update(self.pip_environ)
        self.result['pip_bundle_files'] = names

    def remove_stale_bundles(self, bundle):
        hours = self.module.params['pip_bundle_max_age_hours']
        self.result['pip_bundles_removed'] = []
        if hours == 0:
            return
        try:
            self.result['pip_bundles_removed'] = wheel_bundle.remove_stale(
                os.path.dirname(bundle), hours * 3600, keep=(os.path.basename(bundle),), trusted_uids=(os.geteuid(),))
        except (safepath.UnsafePathError, OSError) as exc:
            # Housekeeping only: the build goes on with the verified bundle.
            self.module.warn('%s: older bundles beside %s were left in place: %s' % (self.name, bundle, exc))

    def run_conda(self, workdir):
        conda = self.conda_cli()
        if self.lock is None:
            conda.env_create(envstore.write_file(workdir, 'environment.yml', self.spec_bytes), self.build)
            return
        if self.lock['kind'] == envspec.LOCK_CONDA_LOCK:
            if self.platform not in self.lock['platforms']:
                raise BuildError('the conda-lock file covers %s, not this node\'s platform %s'
                                 % (', '.join(self.lock['platforms']), self.platform))
            explicit = envspec.render_explicit(self.lock, self.platform)
        else:
            explicit = self.lock_bytes
        conda.create_explicit(envstore.write_file(workdir, 'explicit.txt', explicit), self.build)

    def install_pip_parts(self, workdir, python):
        if self.lock is None:
            return
        if self.lock['kind'] == envspec.LOCK_CONDA_LOCK:
            lines, extra = envspec.pip_lock_lines(self.lock, self.platform), ['--no-deps']
        elif self.module.params['pip'] is not None:
            lines, extra = self.module.params['pip'], []
        else:
            lines, extra = [r['line'] for r in (self.spec or {}).get('pip', ())], []
            if self.spec is None and self.expected and self._spec_mentions_pip():
                raise BuildError('the spec has a pip: section but PyYAML is missing on the node to read it; '
                                 'pass its lines as pip (the conda_env role does)')
        if not lines:
            return
        requirements = envstore.write_file(workdir, 'requirements.txt', ('\n'.join(lines) + '\n').encode('utf-8'))
        cmd = [python, '-m', 'pip', 'install', '--no-input', '--disable-pip-version-check'] + extra + ['-r', requirements]
        environ = dict(self.module.params['environment'], **self.pip_environ)
        self.run_checked(cmd, 'pip install of the lock\'s pip packages', environ=environ)

    def _spec_mentions_pip(self):
        return b'pip:' in self.spec_bytes

    def smoke_test(self, python):
        """Run the smoke test as smoke_test_user, with a private scratch directory as its home and cwd."""
        home = tempfile.mkdtemp(prefix='.smoke-', dir=self.layout.home)
        try:
            if self.smoke_user:
                os.chown(home, *self.smoke_user)
            cmd = self.smoke_argv + [python, '-c', '\n'.join(self.smoke)]
            self.run_checked(cmd, 'smoke test (%s)' % '; '.join(self.smoke), cwd=home,
                             environ={'PYTHONNOUSERSITE': '1', 'HOME': home})
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def run_checked(self, cmd, what, cwd=None, environ=None):
        self.result['commands'].append(cmd)
        rc, out, err = self.module.run_command(cmd, cwd=cwd, environ_update=environ)
        if rc != 0:
            tail = (err or out or '').strip().splitlines()
            raise BuildError('%s: %s failed in the new build (rc=%d)%s' % (self.name, what, rc, (': ' + tail[-1]) if tail else ''),
                             cmd, rc, out, err)

    def check_pins(self, installed):
        if not self.module.params['verify_pins'] or not self.expected:
            return
        problems = envstore.pin_problems(self.expected, installed)
        if problems:
            raise BuildError('%s: the new build does not match the spec: %s' % (self.name, '; '.join(problems)))

    def switch(self, live):
        legacy = None
        if live['kind'] == 'dir':
            legacy = self.layout.move_legacy()
            self.result['legacy'] = legacy
            self.module.warn('%s was a real directory; it was moved to %s and replaced by a managed build'
                             % (self.layout.live, legacy))
        self.layout.activate(self.build)
        keep, drop = self.layout.kept_after(self.build, self.module.params['keep_previous'])
        self.result.update(previous=keep, removed=self.layout.remove_builds(drop))

    def fail(self, result):
        result = dict((k, v) for k, v in result.items() if v is not None)
        result.setdefault('rc', 1)
        result.update(name=self.name, build=self.build, commands=self.result['commands'],
                      live_untouched=self.layout.live)
        self.module.fail_json(**result)

    def run(self):
        state = self.module.params['state']
        getattr(self, state)()
        self.module.exit_json(**self.result)


ARGUMENT_SPEC = dict(
    name=dict(type='str', required=True),
    prefix=dict(type='path', default='/opt/miniconda3'),
    conda=dict(type='path'),
    spec=dict(type='path'),
    spec_content=dict(type='str'),
    spec_file=dict(type='str'),
    lock=dict(type='path'),
    lock_content=dict(type='str'),
    lock_sha256=dict(type='str'),
    state=dict(type='str', default='present', choices=['present', 'absent', 'rolled_back']),
    keep_previous=dict(type='int', default=1),
    smoke_test=dict(type='list', elements='str'),
    expected=dict(type='dict'),
    verify_pins=dict(type='bool', default=True),
    environment=dict(type='dict', default={}),
    smoke_test_user=dict(type='str', default='nobody'),
    pip=dict(type='list', elements='str'),
    lock_timeout=dict(type='int', default=300),
    pip_bundle=dict(type='path'),
    pip_bundle_files=dict(type='list', elements='dict'),
    pip_bundle_max_age_hours=dict(type='int', default=0),
)
MODULE_OPTIONS = dict(
    mutually_exclusive=[('spec', 'spec_content'), ('lock', 'lock_content')],
    required_together=[('pip_bundle', 'pip_bundle_files')],
    required_if=[('state', 'present', ('spec', 'spec_content'), True),
                 ('state', 'rolled_back', ('spec', 'spec_content'), True)],
)


def run(module):
    """Check, build, switch or roll back one environment as module.params say, then exit."""
    for option in ('keep_previous', 'lock_timeout', 'pip_bundle_max_age_hours'):
        if module.params[option] < 0:
            module.fail_json(msg='%s must be 0 or more, got %d' % (option, module.params[option]))
    if not envstore.valid_name(module.params['name']):
        module.fail_json(msg='name must be a plain environment name (letters, digits, . _ + -), got %r' % module.params['name'])
    module.params['environment'] = dict((str(k), str(v)) for k, v in module.params['environment'].items())
    CondaEnv(module).run()
