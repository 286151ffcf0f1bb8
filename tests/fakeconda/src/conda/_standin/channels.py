"""Channel names and URLs, resolved the way conda's Channel model does (a small subset).

Every channel is served from the one offline wheelhouse, so any package that is there is
"available" from any channel; the channel only shows up in URLs and package records.
"""

SUBDIR = "linux-64"
NOARCH = "noarch"


def _alias(context):
    return str(context.get("channel_alias")).rstrip("/")


def channel_base_urls(name, context):
    """Base URLs (without subdir) a channel name or URL stands for."""
    if name == "defaults":
        return [str(url).rstrip("/") for url in context.get("default_channels")]
    if "://" in name:
        return [name.rstrip("/")]
    custom = context.get("custom_channels") or {}
    if name in custom:
        return [f"{str(custom[name]).rstrip('/')}/{name}"]
    return [f"{_alias(context)}/{name}"]


def channel_name(base_url, context):
    """``Channel.name`` of a base URL (conda/models/channel.py, _read_channel_configuration):
    the part below channel_alias or a custom channel's location; otherwise, for a file://
    URL, its last path component, and for another URL its path (a leading ``conda/``
    dropped, for Anaconda Enterprise). Never the full URL."""
    for prefix in [_alias(context)] + [str(v).rstrip("/") for v in (context.get("custom_channels") or {}).values()]:
        if base_url.startswith(prefix + "/"):
            return base_url[len(prefix) + 1:]
    if "://" not in base_url:
        return base_url
    scheme, rest = base_url.split("://", 1)
    if scheme == "file":
        return rest.rstrip("/").rsplit("/", 1)[-1]
    parts = [part for part in rest.split("/")[1:] if part]
    if parts and parts[0] == "conda":
        parts = parts[1:]
    return "/".join(parts)


def effective_channels(spec_channels, context):
    """Channels of an environment file first, then the configured ones (unless nodefaults)."""
    names = [c for c in spec_channels if c != "nodefaults"]
    if "nodefaults" not in spec_channels:
        names += [c for c in context.channels if c not in names]
    return names or ["defaults"]


def all_channel_urls(names, context):
    """The per-subdir URLs of channels, as conda info and PackagesNotFoundError list them."""
    urls = []
    for name in names:
        for base in channel_base_urls(name, context):
            urls += [f"{base}/{SUBDIR}", f"{base}/{NOARCH}"]
    return list(dict.fromkeys(urls))


def primary_base_url(names, context):
    """The base URL packages are recorded as coming from: the first channel's."""
    return channel_base_urls(names[0], context)[0]
