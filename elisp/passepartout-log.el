;;; passepartout-log.el --- The *passepartout-log* buffer  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: processes
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; One buffer holds what the server prints on stderr and what Emacs has to
;; say about the connection (refused calls, malformed frames, exits), with
;; the time.  Its last lines go into the warning shown when the server
;; fails to start.  Old lines are dropped beyond a couple of megabytes.

;;; Code:

(defconst passepartout-log-buffer-name "*passepartout-log*"
  "The buffer that holds the server's stderr and protocol messages.")

(defun passepartout--log-buffer ()
  "Return the log buffer, creating it when needed."
  (or (get-buffer passepartout-log-buffer-name)
      (with-current-buffer (get-buffer-create passepartout-log-buffer-name)
        (special-mode)
        ;; A log is only appended to and trimmed: undo would keep every
        ;; trimmed half (a megabyte) alive.
        (buffer-disable-undo)
        (current-buffer))))

(defconst passepartout--log-max-size (* 2 1024 1024)
  "Characters the log buffer keeps; older lines are dropped.")

(defun passepartout--log-insert (text)
  "Append TEXT to the log buffer, dropping old lines beyond its maximum size."
  (with-current-buffer (passepartout--log-buffer)
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-max))
        (insert text)
        (when (> (buffer-size) passepartout--log-max-size)
          (goto-char (- (point-max) (/ passepartout--log-max-size 2)))
          (delete-region (point-min) (line-beginning-position)))))))

(defun passepartout--log (format-string &rest args)
  "Append FORMAT-STRING formatted with ARGS to the log buffer."
  (passepartout--log-insert
   (concat (format-time-string "[%T] ") (apply #'format format-string args) "\n")))

(defun passepartout--log-tail (&optional lines)
  "Return the last LINES (default 15) lines of the log buffer."
  (with-current-buffer (passepartout--log-buffer)
    (save-excursion
      (goto-char (point-max))
      (forward-line (- (or lines 15)))
      (buffer-substring-no-properties (point) (point-max)))))

(defun passepartout-show-log ()
  "Show the server's log buffer."
  (interactive)
  (display-buffer (passepartout--log-buffer)))

(provide 'passepartout-log)
;;; passepartout-log.el ends here
