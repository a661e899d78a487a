;;; passepartout.el --- A personal agent that lives in your org files  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (org "9.5"))
;; Keywords: convenience, outlines, processes
;; URL: https://github.com/passepartout-agent/passepartout

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; Passepartout is a personal agent: a Python server runs the agent loop and
;; Emacs is its face.  This is the package's entry: its user options, the
;; notifications the server sends, and the commands.
;;
;;   M-x passepartout-chat      chat in an org buffer (passepartout-chat.el)
;;   M-x passepartout-start     start the server; also -stop and -restart
;;   M-x passepartout-status    the server's state and health
;;   M-x passepartout-show-log  the server's stderr
;;
;; The server process lives in passepartout-server.el, approvals in
;; passepartout-approval.el, the wire protocol in passepartout-epc.el,
;; org automation and focus in passepartout-org.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'passepartout-server)

(defcustom passepartout-model nil
  "The model the chat asks for, as a litellm model name, or nil.
When nil, the server uses its configured default (PASSEPARTOUT_MODEL)."
  :type '(choice (const :tag "Server default" nil) string)
  :group 'passepartout)

(defcustom passepartout-approval-function #'passepartout-approval-ask-minibuffer
  "The function that asks the person whether an action may run.
It is called with DESCRIPTION, a string naming the exact action, and
INFO, a plist from the server (:kind, :code, :name, :args...).  Only
the return value t approves the action; anything else denies it.  It is
called with dialogs off, so `yes-or-no-p' asks in the minibuffer."
  :type 'function
  :group 'passepartout)

(defcustom passepartout-chat-buffer-name "*passepartout*"
  "The name of the chat buffer `passepartout-chat' opens."
  :type 'string
  :group 'passepartout)

;;;; Text shown to the person

(defun passepartout-visible (text)
  "Return TEXT with the characters that hide or reorder it shown as \\uNNNN.
Bidi controls (U+202A-U+202E, U+2066-U+2069 and the marks) make Emacs
display text in another order than Lisp reads it, and other format
characters (zero-width spaces and joiners, the byte order mark) are
invisible; the line and paragraph separators are no line ends for Lisp.
What the person reads (a question, a reply) is what Lisp holds."
  (if (not (string-match-p "[^[:ascii:]]" text))
      text
    (mapconcat (lambda (char)
                 (if (memq (get-char-code-property char 'general-category) '(Cf Zl Zp))
                     (format "\\u%04x" char)
                   (string char)))
               text "")))

;;;; Notifications from the server

(defvar passepartout--last-status nil "The last status plist the server pushed.")

(defun passepartout--name (value)
  "Return VALUE, a symbol, keyword or string from the server, as a string.
A keyword loses its colon; nil is the empty string."
  (string-remove-prefix ":" (if (stringp value) value (format "%s" (or value "")))))

(defun passepartout--on-notify (level text)
  "Show TEXT, a notification of LEVEL (info, warning or error) from the server."
  (let ((text (if (stringp text) text (format "%S" text))))
    (passepartout--log "notify %s: %s" level text)
    (if (member (format "%s" level) '("warning" "error" ":warning" ":error"))
        (display-warning 'passepartout text
                         (if (string-suffix-p "error" (format "%s" level)) :error :warning))
      (message "Passepartout: %s" text))))

(defun passepartout--on-status (plist)
  "Record PLIST, a status the server pushed."
  (setq passepartout--last-status plist)
  (force-mode-line-update t))

(defun passepartout-status-text (state status)
  "Return a one-line summary of the server's STATE and its STATUS plist."
  (let ((problems (plist-get status :problems))
        (sessions (plist-get status :sessions))
        (approvals (plist-get status :pending-approvals)))
    (concat (format "Passepartout: %s" state)
            (if (plist-get status :health) (format ", %s" (plist-get status :health)) "")
            (if (consp sessions) (format ", %d session(s)" (length sessions)) "")
            (if (and (numberp approvals) (> approvals 0))
                (format ", %d approval(s) waiting" approvals)
              "")
            (if problems
                (concat "; problems: "
                        (mapconcat (lambda (p) (format "%s" p)) problems "; "))
              ""))))

(defun passepartout-status ()
  "Show the server's state and health in the echo area."
  (interactive)
  (if (passepartout-live-p)
      (passepartout-call 'status nil
                         (lambda (status)
                           (setq passepartout--last-status status)
                           (message "%s" (passepartout-status-text
                                          passepartout--state status))))
    (message "%s" (passepartout-status-text passepartout--state nil))))

;; The callbacks and commands of the other files load when first needed.
(autoload 'passepartout-chat "passepartout-chat" "Open a Passepartout chat buffer." t)
(autoload 'passepartout--on-chunk "passepartout-chat")
(autoload 'passepartout--on-done "passepartout-chat")
(autoload 'passepartout--on-error "passepartout-chat")
(autoload 'passepartout--on-tool "passepartout-chat")
(autoload 'passepartout--on-approval "passepartout-approval")
(autoload 'passepartout-approval-ask-minibuffer "passepartout-approval")
(autoload 'passepartout-org-mode "passepartout-org"
  "Send Passepartout the edits of :HOOK: and :CRON: headings, and the focus." t)
(autoload 'global-passepartout-org-mode "passepartout-org"
  "Turn `passepartout-org-mode' on in every org buffer." t)
(autoload 'passepartout-org-list-jobs "passepartout-org"
  "Show the server's cron jobs, soonest first, in an org buffer." t)

(provide 'passepartout)
;;; passepartout.el ends here
