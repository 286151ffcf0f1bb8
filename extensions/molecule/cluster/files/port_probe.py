# -*- coding: utf-8 -*-
# Copyright: torchfleet.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TCP reachability probe for the molecule verify playbooks (run with python3 -c).

  listen SECONDS PORT...       accept and close connections on each port, then exit
  connect TIMEOUT HOST PORT... print {"PORT": "open" | "refused" | "timeout" | "error: ..."}

A firewall that drops shows as "timeout"; nothing listening shows as "refused".
"""

import concurrent.futures
import json
import selectors
import socket
import sys
import time


def listen(seconds, ports):
    selector = selectors.DefaultSelector()
    for port in ports:
        # One dual-stack socket: IPv4 peers arrive as ::ffff:a.b.c.d.
        server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        server.bind(("::", port))
        server.listen(16)
        selector.register(server, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for key, dummy in selector.select(timeout=0.5):
            conn, dummy = key.fileobj.accept()
            conn.close()


def connect_one(timeout, host, port):
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return "open"
    except ConnectionRefusedError:
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as exc:
        return "error: %s" % exc


def connect(timeout, host, ports):
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(ports)) as pool:
        outcomes = pool.map(lambda port: connect_one(timeout, host, port), ports)
        print(json.dumps(dict(zip(map(str, ports), outcomes)), sort_keys=True))


def main(argv):
    mode, limit = argv[0], float(argv[1])
    if mode == "listen":
        listen(limit, [int(port) for port in argv[2:]])
    elif mode == "connect":
        connect(limit, argv[2], [int(port) for port in argv[3:]])
    else:
        sys.exit("port_probe: mode must be listen or connect, not %r" % mode)


main(sys.argv[1:])
