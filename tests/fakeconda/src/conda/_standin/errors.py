"""conda's exceptions, with the messages, JSON fields and exit codes of conda 25.11.1.

Real conda prints an error as "\\n<ExceptionName>: <message>\\n" on stderr, or with
--json as the sorted JSON of ``CondaError.dump_map()`` on stdout (stdout because the
return code is non-zero). ``dump_map`` is every public attribute plus the message kwargs.
"""

import json
import sys
import textwrap


def dals(text):
    """Dedent and left-strip, as conda.auxlib.ish.dals."""
    return textwrap.dedent(text).lstrip()


def dashlist(items, indent=2):
    """Format items as conda.common.io.dashlist does."""
    return "".join("\n" + " " * indent + "- " + str(item) for item in items)


class CondaError(Exception):
    """conda.CondaError: message template interpolated with kwargs."""

    return_code = 1
    module = "conda.exceptions"

    def __init__(self, message, caused_by=None, **kwargs):
        self.message = message or ""
        self._kwargs = kwargs
        self._caused_by = caused_by
        super().__init__(message)

    def __str__(self):
        try:
            return str(self.message) % self._kwargs
        except (KeyError, TypeError, ValueError):
            return str(self.message)

    def __repr__(self):
        return f"{self.__class__.__name__}: {self}"

    def dump_map(self):
        """The JSON object real conda prints for this error under --json."""
        result = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        result.update(
            exception_type=f"<class '{self.module}.{self.__class__.__name__}'>",
            exception_name=self.__class__.__name__,
            message=str(self),
            error=repr(self),
            caused_by=repr(self._caused_by),
            **self._kwargs,
        )
        return result


class ArgumentError(CondaError):
    """Bad command line; conda exits 2 for these."""

    return_code = 2


class CondaValueError(CondaError):
    """Invalid value given to a command."""


class CondaKeyError(CondaError):
    """Unknown or invalid configuration key."""

    def __init__(self, key, message):
        self.key = key
        self.msg = f"{key!r}: {message}"
        super().__init__(self.msg)


class EnvironmentLocationNotFound(CondaError):
    """Prefix does not exist."""

    def __init__(self, location):
        super().__init__("Not a conda environment: %(location)s", location=str(location))


class DirectoryNotACondaEnvironmentError(CondaError):
    """Prefix exists but has no conda-meta/history."""

    def __init__(self, target_directory):
        message = dals(
            """
            The target directory exists, but it is not a conda environment.
            Use 'conda create' to convert the directory to a conda environment.
              target directory: %(target_directory)s
            """
        )
        super().__init__(message, target_directory=str(target_directory))


class EnvironmentNameNotFound(CondaError):
    """No environment of that name in envs_dirs."""

    def __init__(self, environment_name):
        message = dals(
            """
            Could not find conda environment: %(environment_name)s
            You can list all discoverable environments with `conda info --envs`.
            """
        )
        super().__init__(message, environment_name=environment_name)


class CondaEnvironmentError(CondaError):
    """Operation not allowed on this environment."""


class CondaEnvException(CondaError):
    """Failure in the `conda env` family (e.g. pip failed)."""


class EnvironmentFileNotFound(CondaEnvException):
    """-f names a file that does not exist."""

    def __init__(self, filename):
        self.filename = str(filename)
        super().__init__(f"'{filename}' file not found")


class EnvironmentFileEmpty(CondaEnvException):
    """-f names an empty file."""

    def __init__(self, filename):
        self.filename = str(filename)
        super().__init__(f"Environment file '{filename}' is empty.")


class EnvironmentFileInvalid(CondaEnvException):
    """environment.yml that conda cannot parse."""

    def __init__(self, msg):
        super().__init__(f"Provided environment.yaml is invalid: {msg}")


class PackagesNotFoundError(CondaError):
    """Requested packages are in none of the channels (the libmamba solver's answer)."""

    def __init__(self, packages, channel_urls=()):
        packages = [str(p) for p in packages]
        if channel_urls:
            message = dals(
                """
                The following packages are not available from current channels:
                %(packages_formatted)s

                Current channels:
                %(channels_formatted)s

                To search for alternate channels that may provide the conda package you're
                looking for, navigate to

                    SEARCH_SITE

                and use the search bar at the top of the page.
                """
            ).replace("SEARCH_SITE", SEARCH_SITE)
        else:
            message = dals(
                """
                The following packages are missing from the target environment:
                %(packages_formatted)s
                """
            )
        self.allow_retry = False
        super().__init__(
            message,
            packages=packages,
            packages_formatted=dashlist(packages),
            channel_urls=list(channel_urls),
            channels_formatted=dashlist(channel_urls) if channel_urls else "",
        )


class CondaHTTPError(CondaError):
    """A package URL (of an explicit file) could not be fetched."""

    def __init__(self, url):
        message = dals(
            """
            HTTP 404 NOT FOUND for url <%(url)s>
            Elapsed: -

            An HTTP error occurred when trying to retrieve this URL.
            HTTP errors are often intermittent, and a simple retry will get you on your way.
            """
        )
        super().__init__(message, url=url, status_code=404, reason="NOT FOUND", elapsed_time="-", response_details="")


class PathNotFoundError(CondaError):
    """A file:// package of an explicit file does not exist (raised while computing its md5)."""

    def __init__(self, path):
        super().__init__("%(path)s", path=str(path))


class ChecksumMismatchError(CondaError):
    """A downloaded package does not have the md5/sha256 the explicit file gives for it."""

    def __init__(self, url, target_full_path, checksum_type, expected_checksum, actual_checksum):
        message = dals(
            """
            Conda detected a mismatch between the expected content and downloaded content
            for url '%(url)s'.
              download saved to: %(target_full_path)s
              expected %(checksum_type)s: %(expected_checksum)s
              actual %(checksum_type)s: %(actual_checksum)s
            """
        )
        super().__init__(
            message, url=url, target_full_path=str(target_full_path), checksum_type=checksum_type,
            expected_checksum=expected_checksum, actual_checksum=actual_checksum, partial_download=False,
        )


class CondaMultiError(CondaError):
    """conda.CondaMultiError: the failures of ProgressiveFetchExtract (the package downloads),
    printed as their own dump_map()s under "errors", with no message of its own."""

    module = "conda"

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__(None)

    def __str__(self):
        return "\n".join(str(e) for e in self.errors) + "\n"

    def __repr__(self):
        return "\n".join(repr(e) for e in self.errors)

    def dump_map(self):
        return {
            "exception_type": f"<class '{self.module}.{self.__class__.__name__}'>",
            "exception_name": self.__class__.__name__,
            "errors": [e.dump_map() for e in self.errors],
            "error": "Multiple Errors Encountered.",
        }


def fetch_failed(error):
    """What real conda raises when one package download fails: ProgressiveFetchExtract lists
    the failure twice (its done-callback and the loop that collects the futures both append it)."""
    return CondaMultiError([error, error])


class UnsatisfiableError(CondaError):
    """The requested specs cannot be installed together (pip's resolver said no)."""

    def __init__(self, detail):
        super().__init__(
            "The following specifications were found to be incompatible with each other:\n\n%(detail)s\n",
            detail=detail,
        )


class MultipleKeysError(CondaError):
    """One config file declares a parameter under two of its aliased names."""

    module = "conda.common.configuration"
    json_crashes = True

    def __init__(self, source, keys, preferred_key):
        self.parameter_name = preferred_key
        self.parameter_value = None
        self.source = str(source)
        self.keys = list(keys)
        msg = f"Multiple aliased keys in file {source}:\n" + "\n".join(f"  - {k}" for k in keys) + f"\nMust declare only one. Prefer '{preferred_key}'"
        super().__init__(msg)


class ParseError(CondaError):
    """A YAML file (condarc) could not be parsed."""


class ConfigurationLoadError(CondaError):
    """A condarc the YAML scanner or reader rejects (conda.common.configuration catches those
    two and reports the file; 0-based line and column, as the scanner's mark holds them)."""

    module = "conda.common.configuration"

    def __init__(self, path, message_addition="", **kwargs):
        super().__init__("Unable to load configuration file.\n  path: %(path)s\n" + message_addition, path=str(path), **kwargs)


class FileMark:  # pylint: disable=too-few-public-methods
    """ruamel.yaml.error.FileMark: where the parser was (0-based line and column)."""

    def __init__(self, name, line, column):
        self.name = name
        self.line = line
        self.column = column

    def __repr__(self):
        return f"<ruamel.yaml.error.FileMark object at {id(self):#x}>"

    def __str__(self):
        return f'  in "{self.name}", line {self.line + 1}, column {self.column + 1}'


class YamlError(Exception):
    """A ruamel.yaml error conda does not catch while loading a condarc (ParserError,
    ComposerError, ...): not a CondaError, so it ends in conda's unexpected-error report."""

    def __init__(self, name, module, context, context_mark, problem, problem_mark):
        super().__init__(context, context_mark, problem, problem_mark)
        self.name = name
        self.module = module

    def __str__(self):
        return "\n".join(str(part) for part in self.args if part is not None)

    def __repr__(self):
        return f"{self.name}({', '.join(repr(part) for part in self.args)})"


class ValidationError(CondaError):
    """conda.auxlib.exceptions.ValidationError: not a CondaError in real conda, so it is
    reported as an unexpected error (an error report), still with exit code 1."""

    module = "conda.auxlib.exceptions"


class CondaSystemExit(CondaError):
    """User declined a prompt; conda exits 0."""

    return_code = 0


# The address conda's PackagesNotFoundError points users to. This stand-in never names a
# real registry host (project rule), so the text says where the offline packages live.
SEARCH_SITE = "the offline wheelhouse of this stand-in (see tests/fakeconda/README.md)"


def print_json_crash(exc):
    """What conda 25.11/26.7 leave when print_conda_exception cannot serialise the error
    (MultipleKeysError keeps its keys as a frozenset): a chained traceback on stderr, nothing
    on stdout, exit 1 (the interpreter's status for an uncaught exception)."""
    sys.stderr.write(
        "Traceback (most recent call last):\n"
        '  File "conda/exception_handler.py", line 18, in __call__\n'
        "    return func(*args, **kwargs)\n"
        f"{exc.module}.{exc.__class__.__name__}: {exc}\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "conda/exceptions.py", line 1837, in print_conda_exception\n'
        "    exc_json = json.dumps(_json_error_map(exc_val), sort_keys=True)\n"
        "TypeError: Object of type frozenset is not JSON serializable\n"
    )
    return 1


def print_error(exc, json_mode):
    """Report ``exc`` the way conda.exceptions.print_conda_exception does."""
    if json_mode and getattr(exc, "json_crashes", False):
        return print_json_crash(exc)
    if json_mode:
        stream = sys.stdout if exc.return_code else sys.stderr
        stream.write(json.dumps(exc.dump_map(), indent=2, sort_keys=True, default=str) + "\n")
    else:
        sys.stderr.write(f"\n{exc!r}\n\n")
    return exc.return_code
