#!/usr/bin/env python3
"""A PostgreSQL connection cut in the middle, for team-faults.t: listens on
a Unix socket and forwards each connection to the server's socket, both
ways, and cuts one connection once (both its sides shut down and closed;
later connections pass untouched), writing the cut to MARKER:
  CUT a number: the first connection whose client has sent more than CUT
      bytes, after exactly CUT bytes went through;
  CUT "commit": the first connection whose server answers a COMMIT
      (CommandComplete "COMMIT"), that answer kept from the client.

usage: pg-cut-proxy.py LISTEN_SOCKET SERVER_SOCKET CUT MARKER"""
import os
import selectors
import socket
import sys


class Pair:
    def __init__(self, client, server):
        self.client, self.server = client, server
        self.sent = 0  # client -> server bytes so far


def main():
    listen, target, marker = sys.argv[1], sys.argv[2], sys.argv[4]
    at_commit = sys.argv[3] == "commit"
    cut = 0 if at_commit else int(sys.argv[3])
    sel = selectors.DefaultSelector()
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(listen)
    os.chmod(listen, 0o777)  # the daemon may run as another user
    lsock.listen(16)
    sel.register(lsock, selectors.EVENT_READ, None)
    armed = True

    def close(pair):
        for s in (pair.client, pair.server):
            try:
                sel.unregister(s)
            except (KeyError, ValueError):
                pass
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    while True:
        for key, _ in sel.select():
            if key.data is None:
                client, _ = lsock.accept()
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    server.connect(target)
                except OSError:
                    client.close()
                    continue
                pair = Pair(client, server)
                sel.register(client, selectors.EVENT_READ, (pair, True))
                sel.register(server, selectors.EVENT_READ, (pair, False))
                continue
            pair, from_client = key.data
            src = pair.client if from_client else pair.server
            dst = pair.server if from_client else pair.client
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                close(pair)
                continue
            if armed and not at_commit and from_client and pair.sent + len(data) > cut:
                dst.sendall(data[: cut - pair.sent])
                armed = False
                close(pair)
                with open(marker, "w") as f:
                    f.write("cut after %d bytes from the client\n" % cut)
                continue
            if armed and at_commit and not from_client and b"C\x00\x00\x00\x0bCOMMIT\x00" in data:
                armed = False
                close(pair)
                with open(marker, "w") as f:
                    f.write("cut the server's answer to a COMMIT\n")
                continue
            if from_client:
                pair.sent += len(data)
            try:
                dst.sendall(data)
            except OSError:
                close(pair)


if __name__ == "__main__":
    main()
