;;; passepartout-turn.el --- The chat turn as a state machine  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: convenience
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; One exchange of a chat buffer, from the prompt sent to the end of the
;; reply, is a `passepartout-turn'.  Its state moves only through
;; `passepartout-turn-advance', along `passepartout-turn-transitions':
;;
;;   thinking  -chunk->  streaming  -done->  done
;;       |  \-tool->thinking  -approval->  waiting  -answered->  thinking
;;       \-error-> error -done-> failed         any live -cancel-> cancelled
;;
;; done, cancelled and failed are final: an event that arrives after them
;; \(a late chunk after a cancel, say) is refused, and the chat drops it.
;; The states are plain symbols, so `passepartout-chat-state' and the
;; mode line can show them and tests can inspect them.

;;; Code:

(require 'cl-lib)

(cl-defstruct (passepartout-turn
               (:constructor passepartout-turn--make)
               (:copier nil))
  "One exchange: a prompt and the reply streaming in."
  (id nil :documentation "The turn id, a string made by Emacs.")
  (session nil :documentation "The session id of the chat buffer.")
  (state 'thinking :documentation "A state of `passepartout-turn-transitions'.")
  (prompt nil :documentation "The text sent.")
  (start nil :documentation "Marker at the start of the reply.")
  (end nil :documentation "Marker where the reply grows.")
  (bol t :documentation "Non-nil when the reply ends at a line start.")
  (tools nil :documentation "Alist of call id -> marker inside its drawer.")
  (chunks 0 :documentation "The number of chunks inserted.")
  (error nil :documentation "The last error, a string.")
  (refused nil :documentation "Descriptions of the actions the person refused.")
  (sent nil :documentation "`float-time' when the prompt was sent.")
  (first nil :documentation "`float-time' of the first chunk.")
  (finished nil :documentation "`float-time' when the turn ended."))

(defconst passepartout-turn-transitions
  (let ((live '((chunk . streaming) (tool . thinking) (approval . waiting)
                (answered . nil) (error . error) (done . done)
                (cancel . cancelled) (fail . failed))))
    `((thinking . ,live)
      (streaming . ,live)
      (waiting . ,(cons '(answered . thinking) live))
      (error . ,(cons '(done . failed) live))
      (done) (cancelled) (failed)))
  "For each state, the events it accepts and the state each leads to.
A nil next state keeps the current one.")

(defun passepartout-turn-live-p (turn)
  "Return non-nil when TURN has not ended."
  (and turn (memq (passepartout-turn-state turn) '(thinking streaming waiting error)) t))

(defun passepartout-turn-advance (turn event)
  "Move TURN along EVENT and return its new state, or nil when refused."
  (let* ((state (passepartout-turn-state turn))
         (edge (assq event (cdr (assq state passepartout-turn-transitions)))))
    (when edge
      (let ((next (or (cdr edge) state)))
        (setf (passepartout-turn-state turn) next)
        (when (memq next '(done cancelled failed))
          (setf (passepartout-turn-finished turn) (float-time)))
        next))))

(defun passepartout-turn-display-state (turn)
  "Return the state displayed for TURN, a chat buffer's last turn or nil.
One of idle, thinking, streaming, waiting or error."
  (pcase (and turn (passepartout-turn-state turn))
    ((or 'nil 'done 'cancelled) 'idle)
    ((or 'error 'failed) 'error)
    (state state)))

(defun passepartout-turn-reply (turn)
  "Return the text of TURN's reply so far, or nil when its buffer is gone."
  (let ((start (passepartout-turn-start turn))
        (end (passepartout-turn-end turn)))
    (when (and (markerp start) (marker-buffer start))
      (with-current-buffer (marker-buffer start)
        (buffer-substring-no-properties start end)))))

(provide 'passepartout-turn)
;;; passepartout-turn.el ends here
