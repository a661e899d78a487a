;;; passepartout-notices.el --- Notices where the person looks  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: convenience
;; Package-Requires: ((emacs "28.1") (org "9.5"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; Every notice the daemon sends (a job's result, a hook's, a Flight Plan
;; waiting for an answer, what happened while no client was attached) is
;; kept in the buffer *passepartout-notices*, newest last, and the mode
;; line counts those not seen yet ("Pp 3 notices"; a click opens the
;; buffer).  A notice that names a Flight Plan carries a button that opens
;; the approvals file at that plan; RET or a click follows it.
;;
;; The approvals file opens in `passepartout-approvals-mode': its TODO
;; keywords are the file's own (TODO APPROVED | DONE REJECTED CANCELLED)
;; even when the buffer was opened before the daemon wrote the file, and
;; they stay so when the buffer is reverted.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'button)
(require 'org)
(require 'passepartout)

(defcustom passepartout-notices-mode-line t
  "Non-nil: the mode line counts the notices not seen yet."
  :type 'boolean
  :group 'passepartout)

(defconst passepartout-notices-buffer-name "*passepartout-notices*"
  "The name of the buffer that keeps the notices.")

(defconst passepartout-approvals-keywords
  '((sequence "TODO" "APPROVED" "|" "DONE" "REJECTED" "CANCELLED"))
  "The TODO keywords of the approvals file, as its #+TODO line declares them.")

(defvar passepartout-notices--unseen 0
  "How many notices arrived since the notices buffer was last shown.")

(defconst passepartout-notices--mode-line-entry
  '(:eval (passepartout-notices--mode-line))
  "The element of `global-mode-string' that shows the count.")

(defvar passepartout-notices-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map (make-composed-keymap button-buffer-map special-mode-map))
    (define-key map (kbd "a") #'passepartout-approvals)
    (define-key map (kbd "n") #'forward-button)
    (define-key map (kbd "p") #'backward-button)
    map)
  "Keys of the notices buffer: RET follows a button, a opens the approvals file.")

(define-derived-mode passepartout-notices-mode special-mode "Pp-Notices"
  "The notices of the Passepartout daemon, newest last.
\\<passepartout-notices-mode-map>\\[push-button] on a Flight Plan opens it in the \
approvals file; \\[passepartout-approvals] opens that file."
  (setq-local truncate-lines nil)
  (visual-line-mode 1))

(defun passepartout-notices--buffer ()
  "Return the notices buffer, made when needed."
  (or (get-buffer passepartout-notices-buffer-name)
      (with-current-buffer (get-buffer-create passepartout-notices-buffer-name)
        (passepartout-notices-mode)
        (current-buffer))))

(defun passepartout-notices--mode-line ()
  "Return the mode line's count of unseen notices, or nil when there is none."
  (when (and passepartout-notices-mode-line (> passepartout-notices--unseen 0))
    (propertize (format " Pp %d notice%s" passepartout-notices--unseen
                        (if (= passepartout-notices--unseen 1) "" "s"))
                'face 'warning
                'help-echo "Passepartout notices not seen yet: mouse-1 shows them"
                'mouse-face 'mode-line-highlight
                'local-map (make-mode-line-mouse-map 'mouse-1 #'passepartout-notices))))

(defun passepartout-notices-unseen ()
  "Return how many notices arrived since the notices buffer was last shown."
  passepartout-notices--unseen)

(defun passepartout-notices--shown-p ()
  "Return non-nil when the notices buffer is shown in a window."
  (let ((buffer (get-buffer passepartout-notices-buffer-name)))
    (and buffer (get-buffer-window buffer t))))

(define-button-type 'passepartout-flight-plan
  'follow-link t
  'help-echo "Open this Flight Plan in the approvals file"
  'action (lambda (button)
            (passepartout-notices-open-plan (button-get button 'passepartout-plan))))

(define-button-type 'passepartout-approvals-file
  'follow-link t
  'help-echo "Open the approvals file"
  'action (lambda (_button) (passepartout-approvals)))

(defun passepartout-notices--buttons (start end)
  "Make buttons of what the text between START and END names.
A Flight Plan opens at its entry, the approvals file at its top."
  (save-excursion
    (goto-char start)
    (while (re-search-forward "\\bFlight Plan \\(fp-[[:alnum:]-]+\\)" end t)
      (make-text-button (match-beginning 0) (match-end 0)
                        'type 'passepartout-flight-plan
                        'passepartout-plan (match-string-no-properties 1)))
    (goto-char start)
    (while (re-search-forward "[^ \t\n]*approvals\\.org" end t)
      (unless (button-at (match-beginning 0))
        (make-text-button (match-beginning 0) (match-end 0)
                          'type 'passepartout-approvals-file)))))

;;;###autoload
(defun passepartout-notices-add (level text)
  "Keep TEXT, a notice of LEVEL from the server, in the notices buffer.
It counts as unseen until the buffer is shown."
  (let ((level (passepartout--name level)))
    (with-current-buffer (passepartout-notices--buffer)
      (let ((inhibit-read-only t)
            (at-end (= (point) (point-max))))
        (save-excursion
          (goto-char (point-max))
          (let ((start (point)))
            (insert (format-time-string "%H:%M ")
                    (propertize (format "%-7s " level)
                                'face (pcase level
                                        ("error" 'error)
                                        ("warning" 'warning)
                                        (_ 'shadow)))
                    (string-trim-right text) "\n")
            (passepartout-notices--buttons start (point))))
        (when at-end (goto-char (point-max)))))
    (unless (passepartout-notices--shown-p)
      (setq passepartout-notices--unseen (1+ passepartout-notices--unseen)))
    (when (and passepartout-notices-mode-line
               (not (member passepartout-notices--mode-line-entry global-mode-string)))
      (setq global-mode-string
            (append (if (listp global-mode-string) global-mode-string
                      (list global-mode-string))
                    (list passepartout-notices--mode-line-entry))))
    (force-mode-line-update t)))

;;;###autoload
(defun passepartout-notices ()
  "Show the notices of the daemon; they count as seen afterwards."
  (interactive)
  (let ((buffer (passepartout-notices--buffer)))
    (with-current-buffer buffer (goto-char (point-max)))
    (pop-to-buffer buffer)
    (setq passepartout-notices--unseen 0)
    (force-mode-line-update t)
    buffer))

;;;###autoload
(defun passepartout-notices-open-plan (plan)
  "Open the approvals file at the Flight Plan whose id is PLAN."
  (interactive "sFlight Plan id: ")
  (let* ((buffer (passepartout-approvals))
         (found (save-excursion
                  (goto-char (point-min))
                  (and (re-search-forward
                        (concat "^[ \t]*:ID:[ \t]+" (regexp-quote plan) "[ \t]*$") nil t)
                       (progn (org-back-to-heading t) (point))))))
    (if (not found)
        (message "Passepartout: %s is no longer in the approvals file" plan)
      (goto-char found)
      (if (fboundp 'org-fold-show-entry) (org-fold-show-entry) (org-show-entry))
      (when (eq (window-buffer) buffer) (recenter 0)))
    buffer))

;;;; The approvals file

(defun passepartout-approvals--keywords ()
  "Set the TODO keywords of the approvals file in this buffer."
  (setq-local org-todo-keywords passepartout-approvals-keywords)
  (org-set-regexps-and-options)
  (when font-lock-mode (font-lock-flush)))

;;;###autoload
(define-minor-mode passepartout-approvals-mode
  "The approvals file: its TODO keywords cycle to APPROVED and REJECTED.
The keywords hold even when the buffer was opened before the file
existed, and after the buffer is reverted."
  :lighter " Pp-Approvals"
  (if passepartout-approvals-mode
      (progn
        (passepartout-approvals--keywords)
        (add-hook 'after-revert-hook #'passepartout-approvals--keywords nil t))
    (remove-hook 'after-revert-hook #'passepartout-approvals--keywords t)
    (kill-local-variable 'org-todo-keywords)
    (org-set-regexps-and-options)))

(provide 'passepartout-notices)
;;; passepartout-notices.el ends here
