"""The wire: what the daemon and its clients share.  Frames and their codec, admission
of a connection, the token, the daemon's place (the server takes it, clients prove it),
finding or starting the daemon, and the client's connection."""
