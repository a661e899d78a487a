;;; passepartout-org.el --- Org HOOK/CRON drawers and focus for Passepartout  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; URL: https://github.com/passepartout-agent/passepartout

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; `passepartout-org-mode' watches an org buffer for headings that carry
;; a :HOOK: or :CRON: property.  When such a heading is added, changed or
;; removed, the change is sent to the server when the buffer is saved, as
;; an `org-edit' call with this plist:
;;
;;   (:file "/abs/file.org" :action added|changed|removed
;;    :id "ID or nil" :heading "Title" :outline ("Parent" ...)
;;    :old "the heading's text before, or nil" :new "its text now, or nil")
;;
;; The server rescans the saved file (or, for a file not on disk, reads the
;; texts), updates its cron jobs and fires the hooks; their results come
;; back as notifications.  Changes are sent on save so the server sees what
;; the file holds: an unsaved edit is not yet a change.
;;
;; With the mode on, Emacs also tells the server, when idle, which heading
;; the person is at: a `focus' call with (:file :id :heading :outline
;; :body), the body being the heading's own text up to the next heading,
;; at most `passepartout-org-focus-body-max' characters.  A chat buffer is
;; never the focus.  `passepartout-context-show' shows what the next chat
;; turn carries.
;;
;; `global-passepartout-org-mode' turns the mode on in every org buffer;
;; `passepartout-org-list-jobs' shows the server's cron jobs.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'passepartout)

(defgroup passepartout-org nil
  "Org drawers that schedule and hook Passepartout."
  :group 'passepartout
  :prefix "passepartout-org-")

(defcustom passepartout-org-properties '("HOOK" "CRON")
  "Properties that make a heading interesting to the server."
  :type '(repeat string))

(defcustom passepartout-org-focus-delay 1.5
  "Idle seconds after which the heading at point is sent as the focus."
  :type 'number)

(defcustom passepartout-org-focus-body-max 4000
  "The most characters of the focused heading's own text sent to the server."
  :type 'integer)

(defcustom passepartout-org-start-server nil
  "Non-nil means an org edit starts the server when it is not running.
When nil, edits made while the server is down are left to its scan of
the memex at its next start."
  :type 'boolean)

(defvar-local passepartout-org--snapshot nil
  "The watched headings at the last save: an alist of (KEY . PLIST).")

(defvar-local passepartout-org--last-focus nil
  "The focus plist last sent from this buffer.")

(defvar passepartout-org--focus-timer nil
  "The idle timer that sends the focus.")

(defvar passepartout-org-mode)  ; defined below by `define-minor-mode'

(defvar passepartout-org-edit-functions nil
  "Functions called with each org-edit plist before it is sent.
For tests and for people who want to see what is sent.")

;;;; Reading the buffer

(defun passepartout-org--property-regexp ()
  "Return a regexp that matches the lines of the watched properties."
  (concat "^[ \t]*:" (regexp-opt passepartout-org-properties) ":"))

(defun passepartout-org--watched-p ()
  "Non-nil when the heading at point has a watched property in its drawer.
As the server reads it and org's agenda: not under a COMMENT heading, an
archived one, or in a file tagged with `org-archive-tag'."
  (and (not (org-in-commented-heading-p))
       (not (org-in-archived-heading-p))
       (not (member org-archive-tag org-file-tags))
       (cl-some (lambda (name) (org-entry-get nil name)) passepartout-org-properties)))

(defun passepartout-org--node ()
  "The plist of the heading at point: its id, title, outline and text."
  (save-excursion
    (org-back-to-heading t)
    (let ((start (point)))
      (list :id (org-entry-get nil "ID")
            :heading (substring-no-properties (org-get-heading t t t t))
            :outline (mapcar #'substring-no-properties (org-get-outline-path))
            :text (buffer-substring-no-properties
                   start (progn (outline-next-heading)
                                (skip-chars-backward " \t\n" start)
                                (point)))))))

(defun passepartout-org--key (node)
  "The key of NODE: its id, else its outline path and title."
  (or (plist-get node :id)
      (mapconcat #'identity
                 (append (plist-get node :outline) (list (plist-get node :heading)))
                 "\0")))

(defun passepartout-org--collect ()
  "The watched headings of the buffer, as an alist of (KEY . NODE)."
  (let (nodes seen)
    (org-with-wide-buffer
     (goto-char (point-min))
     (let ((case-fold-search t)
           (regexp (passepartout-org--property-regexp)))
       (while (re-search-forward regexp nil t)
         (save-excursion
           (when (and (ignore-errors (org-back-to-heading t) t)
                      (not (memq (point) seen))
                      (passepartout-org--watched-p))
             (push (point) seen)
             (let ((node (passepartout-org--node)))
               (push (cons (passepartout-org--key node) node) nodes)))))))
    (nreverse nodes)))

(defun passepartout-org--changes (old new file)
  "The org-edit plists that turn the alist OLD into NEW in FILE."
  (let (changes)
    (dolist (entry new)
      (let ((before (cdr (assoc (car entry) old)))
            (node (cdr entry)))
        (unless (and before (equal (plist-get before :text) (plist-get node :text)))
          (push (passepartout-org--edit file (if before 'changed 'added) before node)
                changes))))
    (dolist (entry old)
      (unless (assoc (car entry) new)
        (push (passepartout-org--edit file 'removed (cdr entry) nil) changes)))
    (nreverse changes)))

(defun passepartout-org--edit (file action before after)
  "The org-edit plist of ACTION in FILE, from node BEFORE to node AFTER."
  (let ((node (or after before)))
    (list :file file :action action
          :id (plist-get node :id)
          :heading (plist-get node :heading)
          :outline (plist-get node :outline)
          :old (plist-get before :text)
          :new (plist-get after :text))))

;;;; Talking to the server

(defun passepartout-org--send (method plist)
  "Call the server's METHOD with PLIST when the server is up.
With `passepartout-org-start-server', start it when it is down."
  (when (or (passepartout-live-p) passepartout-org-start-server)
    (passepartout-call method (list plist) nil
                       (lambda (err)
                         (message "Passepartout: %s failed: %s" method
                                  (passepartout-epc-format-error err))))))

(defun passepartout-org--after-save ()
  "Send what changed in the watched headings since the last save."
  (let* ((file (and buffer-file-name (expand-file-name buffer-file-name)))
         (new (passepartout-org--collect))
         (changes (and file (passepartout-org--changes passepartout-org--snapshot new file))))
    (setq passepartout-org--snapshot new)
    (dolist (change changes)
      (run-hook-with-args 'passepartout-org-edit-functions change)
      (passepartout-org--send 'org-edit change))))

(defvar passepartout-chat-mode)  ; passepartout-chat.el

(defun passepartout-org--body ()
  "The text of the heading at point after its heading line, bounded.
Up to the next heading, so a child's text is never part of it."
  (save-excursion
    (org-back-to-heading t)
    (let ((start (min (point-max) (1+ (line-end-position))))
          (end (save-excursion (outline-next-heading) (point))))
      (string-trim (buffer-substring-no-properties
                    start (max start (min end (+ start passepartout-org-focus-body-max))))))))

(defun passepartout-org-focus ()
  "The focus plist of point: (:file :id :heading :outline :body), or nil.
Nil in a chat buffer: the conversation is no place in the person's notes."
  (when (and (derived-mode-p 'org-mode)
             (not (bound-and-true-p passepartout-chat-mode))
             (not (org-before-first-heading-p)))
    (save-excursion
      (org-back-to-heading t)
      (list :file (and buffer-file-name (expand-file-name buffer-file-name))
            :id (org-entry-get nil "ID")
            :heading (substring-no-properties (org-get-heading t t t t))
            :outline (mapcar #'substring-no-properties (org-get-outline-path))
            :body (passepartout-org--body)))))

(defun passepartout-org--send-focus ()
  "Send the heading at point as the focus, when it moved since the last one."
  (when (and passepartout-org-mode (passepartout-live-p))
    (let ((focus (ignore-errors (passepartout-org-focus))))
      (when (and focus (not (equal focus passepartout-org--last-focus)))
        (setq passepartout-org--last-focus focus)
        (passepartout-org--send 'focus focus)))))

(defun passepartout-org--update-timer ()
  "Run the focus timer while some buffer has the mode, and only then."
  (let ((wanted (cl-some (lambda (buffer) (buffer-local-value 'passepartout-org-mode buffer))
                         (buffer-list))))
    (cond
     ((and wanted (not passepartout-org--focus-timer))
      (setq passepartout-org--focus-timer
            (run-with-idle-timer passepartout-org-focus-delay t
                                 #'passepartout-org--send-focus)))
     ((and (not wanted) passepartout-org--focus-timer)
      (cancel-timer passepartout-org--focus-timer)
      (setq passepartout-org--focus-timer nil)))))

;;;; What the context holds

;;;###autoload
(defun passepartout-context-show ()
  "Show what the next chat turn carries as org context.
When called from an org buffer, the heading at point is sent as the
focus first; from a chat buffer, the last heading sent stays the focus."
  (interactive)
  (let ((focus (ignore-errors (passepartout-org-focus))))
    (when focus
      (passepartout-call-sync 'focus (list focus))
      (setq passepartout-org--last-focus focus)))
  (let ((text (passepartout-call-sync 'context nil)))
    (with-current-buffer (get-buffer-create "*passepartout-context*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert "# What the next chat turn carries as org context (the notes\n"
                "# related to the prompt are found when it is sent).\n\n"
                (passepartout-visible (if (stringp text) text (format "%s" text))) "\n")
        (goto-char (point-min))
        (view-mode 1))
      (display-buffer (current-buffer))
      (current-buffer))))

;;;; The modes

;;;###autoload
(define-minor-mode passepartout-org-mode
  "Send Passepartout the edits of :HOOK: and :CRON: headings, and the focus.
When a heading with one of `passepartout-org-properties' is added,
changed or removed, saving the buffer sends the change to the server;
when Emacs is idle, the heading at point is sent as the focus."
  :lighter " Pp"
  :group 'passepartout-org
  (if passepartout-org-mode
      (if (not (derived-mode-p 'org-mode))
          (progn (setq passepartout-org-mode nil)
                 (user-error "Passepartout-org-mode needs an org-mode buffer"))
        (setq passepartout-org--snapshot (passepartout-org--collect))
        (add-hook 'after-save-hook #'passepartout-org--after-save nil t))
    (remove-hook 'after-save-hook #'passepartout-org--after-save t)
    (setq passepartout-org--snapshot nil
          passepartout-org--last-focus nil))
  (passepartout-org--update-timer))

(defun passepartout-org--turn-on ()
  "Turn on `passepartout-org-mode' in an org buffer."
  (when (derived-mode-p 'org-mode)
    (passepartout-org-mode 1)))

;;;###autoload
(define-globalized-minor-mode global-passepartout-org-mode
  passepartout-org-mode passepartout-org--turn-on
  :group 'passepartout-org)

;;;; Jobs

(defun passepartout-org--insert-jobs (jobs)
  "Insert JOBS, the server's job plists, as org headings."
  (if (null jobs)
      (insert "No cron jobs.  Add a :CRON: property with an org timestamp to a heading.\n")
    (dolist (job jobs)
      (insert (format "* %s\n" (plist-get job :heading)))
      (dolist (key '(:timestamp :tier :next-run :last-run :last-result :file :id))
        (let ((value (plist-get job key)))
          (when value
            (insert (format "- %s :: %s\n" (substring (symbol-name key) 1)
                            (replace-regexp-in-string "\n" " " (format "%s" value))))))))))

;;;###autoload
(defun passepartout-org-list-jobs ()
  "Show the server's cron jobs, soonest first, in an org buffer."
  (interactive)
  (passepartout-call
   'jobs nil
   (lambda (jobs)
     (with-current-buffer (get-buffer-create "*passepartout-jobs*")
       (let ((inhibit-read-only t))
         (erase-buffer)
         (org-mode)
         (passepartout-org--insert-jobs jobs)
         (goto-char (point-min))
         (setq buffer-read-only t))
       (display-buffer (current-buffer))))
   (lambda (err)
     (message "Passepartout: jobs failed: %s" (passepartout-epc-format-error err)))))

(provide 'passepartout-org)
;;; passepartout-org.el ends here
