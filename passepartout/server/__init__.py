"""The server side of the wire: the daemon, the EPC server's dispatch, the method table
the faces may call, the peer channel that carries a session's events to a client, and
what the server keeps for them (backlog, attachments, focus)."""
