"""Messaging faces of the daemon: Telegram and Signal, each off until configured.

A messaging face is a client of the daemon over its socket, like ``passepartout
chat`` (:class:`~passepartout.faces.face.Face`): the daemon starts each configured
one as a thread at boot (:mod:`.run`).  A message from an allowed chat becomes a
prompt in that chat's own session (``telegram-<chat id>``, ``signal-<number>``), the
reply goes back when the turn is done, with its tool calls summarised, and an approval
the gates ask is asked on the phone (:mod:`.relay`).  The transports only speak their
protocol (:mod:`.telegram`, :mod:`.signal_cli`); every text that leaves for a
messaging service passes the same exit as a request to a remote model
(:mod:`.boundary`).
"""
