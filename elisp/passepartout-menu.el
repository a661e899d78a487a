;;; passepartout-menu.el --- The transient menu of Passepartout  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; URL: https://github.com/passepartout-agent/passepartout

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; `M-x passepartout-menu' opens a transient menu (transient ships with
;; Emacs 28 and later) that reaches every command of the package: chat,
;; sending a region, subtree or buffer, rewriting a region, sessions, the
;; context and its list, jobs and Flight Plans, the server, its log and
;; the cost.  `passepartout-menu-commands' lists the commands it holds.

;;; Code:

(require 'cl-lib)
(require 'transient)
(require 'passepartout)
(require 'passepartout-chat)
(require 'passepartout-org)
(require 'passepartout-models)
(require 'passepartout-context)
(require 'passepartout-send)
(require 'passepartout-rewrite)

(defun passepartout-menu--outside-chat-p ()
  "Non-nil outside a chat buffer, where a region or a subtree can be sent."
  (not (passepartout-menu--in-chat-p)))

(defun passepartout-menu--in-chat-p ()
  "Non-nil in a chat buffer, where sending and cancelling apply."
  (bound-and-true-p passepartout-chat-mode))

;;;###autoload (autoload 'passepartout-menu "passepartout-menu" nil t)
(transient-define-prefix passepartout-menu ()
  "The menu of every Passepartout command."
  [["Chat"
    ("c" "Chat" passepartout-chat)
    ("n" "New chat" passepartout-chat-new)
    ("s" "Send the prompt" passepartout-chat-send :if passepartout-menu--in-chat-p)
    ("k" "Cancel the turn" passepartout-chat-cancel :if passepartout-menu--in-chat-p)
    ("r" "Resume a session" passepartout-chat-resume)]
   ["Send (C-u: reply in place)"
    ("RET" "Region, subtree or buffer" passepartout-send)
    ("e" "The region" passepartout-send-region)
    ("u" "The subtree" passepartout-send-subtree :if passepartout-menu--outside-chat-p)
    ("b" "The buffer" passepartout-send-buffer :if passepartout-menu--outside-chat-p)
    ("K" "Cancel a reply in place" passepartout-send-cancel
     :if passepartout-menu--outside-chat-p)]
   ["Rewrite"
    ("w" "Rewrite the region" passepartout-rewrite)
    ("A" "Accept (in the diff)" passepartout-rewrite-accept)
    ("D" "Reject" passepartout-rewrite-reject)
    ("E" "Edit the proposal" passepartout-rewrite-edit)]]
  [["Model"
    ("m" "Model (C-u: everywhere)" passepartout-select-model)
    ("t" "Tier (C-u: everywhere)" passepartout-select-tier)
    ("p" "Preset (C-u: everywhere)" passepartout-select-preset)]
   ["Context"
    ("x" "Show the context" passepartout-context-show)
    ("f" "Add a file" passepartout-context-add-file)
    ("B" "Add a buffer" passepartout-context-add-buffer)
    ("-" "Remove an item" passepartout-context-remove)
    ("C" "Clear the list" passepartout-context-clear)
    ("v" "The list as sent" passepartout-context-preview)
    ("o" "Org mode: focus, hooks, cron" passepartout-org-mode)
    ("O" "Org mode everywhere" global-passepartout-org-mode)]
   ["Jobs and approvals"
    ("j" "Cron jobs" passepartout-org-list-jobs)
    ("a" "Flight Plans (approvals)" passepartout-approvals)
    ("N" "Notices" passepartout-notices)]]
  [["Server"
    ("S" "Start" passepartout-start)
    ("R" "Restart" passepartout-restart)
    ("Q" "Stop" passepartout-stop)]
   ["State"
    ("i" "Status: model, provider, health" passepartout-status)
    ("l" "Log" passepartout-show-log)
    ("$" "Cost and tokens" passepartout-cost)]])

(defun passepartout-menu-commands ()
  "Return the commands of `passepartout-menu', each with its key.
A list of (KEY . COMMAND), read from the menu's own layout."
  (let (found)
    (cl-labels ((walk (node)
                  (cond
                   ((vectorp node) (mapc #'walk (append node nil)))
                   ((and (proper-list-p node) (eq (nth 1 node) 'transient-suffix))
                    (let ((plist (nth 2 node)))
                      (push (cons (plist-get plist :key) (plist-get plist :command))
                            found)))
                   ((proper-list-p node) (mapc #'walk node)))))
      (mapc #'walk (get 'passepartout-menu 'transient--layout)))
    (nreverse found)))

(provide 'passepartout-menu)
;;; passepartout-menu.el ends here
