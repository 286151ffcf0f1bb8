# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An HTTP server that stands in for an upstream download site and counts requests.

Serves one directory and appends ``METHOD PATH STATUS`` to --log for every request, so a
test or the benchmark can count how often a run really fetched each file.  The benchmark
runs it on 127.0.0.1 (an ephemeral port, written to --port-file) for the Miniconda
installer; ``cluster.sh up --wheelhouse DIR`` runs it in a container on the test network
(--bind ::, IPv4 and IPv6) as the package index the nodes' pip is configured for.
It stops by itself after --max-seconds.
"""

import argparse
import functools
import http.server
import socket
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


class DualStackServer(http.server.ThreadingHTTPServer):
    """Listens on an IPv6 address and, for ::, on IPv4 too (the test network is dual-stack)."""

    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="directory to serve")
    parser.add_argument("--log", required=True, help="request log to append to")
    parser.add_argument("--port-file", help="where to write the port")
    parser.add_argument("--bind", default="127.0.0.1", help="address to listen on; :: listens on IPv6 and IPv4")
    parser.add_argument("--port", type=int, default=0, help="port (default: an ephemeral one)")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="stop after this long")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    CountingHandler.log_path = args.log
    handler = functools.partial(CountingHandler, directory=args.root)
    server_class = DualStackServer if ":" in args.bind else http.server.ThreadingHTTPServer
    server = server_class((args.bind, args.port), handler)
    if args.port_file:
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
