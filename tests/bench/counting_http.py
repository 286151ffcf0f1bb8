# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A loopback HTTP server that stands in for the Miniconda download and counts requests.

Serves one directory on 127.0.0.1 (an ephemeral port, written to --port-file) and appends
``METHOD PATH STATUS`` to --log for every request, so the benchmark can count how many
times a run really fetched the installer.  It stops by itself after --max-seconds.
"""

import argparse
import functools
import http.server
import threading


class CountingHandler(http.server.SimpleHTTPRequestHandler):
    """SimpleHTTPRequestHandler that logs one machine-readable line per request."""

    log_path = None
    log_lock = threading.Lock()

    def log_request(self, code="-", size="-"):
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write("%s %s %s\n" % (self.command, self.path, getattr(code, "value", code)))

    def log_message(self, format, *args):
        """Keep stderr quiet; log_request has the record."""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="directory to serve")
    parser.add_argument("--log", required=True, help="request log to append to")
    parser.add_argument("--port-file", required=True, help="where to write the port")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="stop after this long")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    CountingHandler.log_path = args.log
    handler = functools.partial(CountingHandler, directory=args.root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(args.port_file, "w", encoding="utf-8") as port_file:
        port_file.write("%d\n" % server.server_address[1])
    stopper = threading.Timer(args.max_seconds, server.shutdown)
    stopper.daemon = True
    stopper.start()
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
