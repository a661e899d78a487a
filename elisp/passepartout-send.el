;;; passepartout-send.el --- Send a region, a subtree or a buffer from anywhere  -*- lexical-binding: t; -*-

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

;; `passepartout-send' works from any buffer, as `gptel-send' does: it
;; asks for a prompt and sends it with the region, else the org subtree
;; at point, else the whole buffer, attached.  The reply goes into the
;; chat buffer; with a prefix argument it is written in place at point.
;; `passepartout-send-region', `passepartout-send-subtree' and
;; `passepartout-send-buffer' choose the part explicitly.
;;
;; The part goes as the buffer's text and the part's bounds; the server
;; withholds what lies in `@personal' subtrees (see
;; passepartout-context.el).  A reply written into an org buffer gets
;; org's escaping comma before any line org would read as structure (a
;; heading, a drawer such as :CRON:, a keyword), so a reply can never
;; plant a job or a property; the text reads the same.
;;
;; `passepartout-send-turn' runs a turn outside any chat buffer with
;; callbacks for its chunks and its end; the rewrite command uses it.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'passepartout)
(require 'passepartout-chat)
(require 'passepartout-models)
(require 'passepartout-context)

;;;; Turns outside a chat buffer

(cl-defstruct (passepartout-send-job
               (:constructor passepartout-send-job--make)
               (:copier nil))
  "A turn whose events go to callbacks instead of a chat buffer."
  (session nil :documentation "The session id.")
  (turn nil :documentation "The turn id.")
  (on-chunk nil :documentation "Function of one string, each piece of the reply.")
  (on-done nil :documentation "Function of the job, when the turn ended.")
  (text "" :documentation "The reply so far.")
  (error nil :documentation "The error the turn ended with, a string, or nil.")
  (state 'running :documentation "One of running, done, cancelled or failed."))

(defvar passepartout-send--jobs (make-hash-table :test 'equal)
  "Session id -> the `passepartout-send-job' running in it.")

(defun passepartout-send--job (session turn-id)
  "Return the running job of SESSION for TURN-ID, or nil."
  (let ((job (gethash session passepartout-send--jobs)))
    (and job (equal (passepartout-send-job-turn job) turn-id) job)))

(defun passepartout-send--finish (job state &optional error)
  "End JOB in STATE, with ERROR when it failed, and call its end function."
  (when (eq (passepartout-send-job-state job) 'running)
    (remhash (passepartout-send-job-session job) passepartout-send--jobs)
    (setf (passepartout-send-job-state job) state)
    (when error (setf (passepartout-send-job-error job) error))
    (when (passepartout-send-job-on-done job)
      (funcall (passepartout-send-job-on-done job) job))))

(defun passepartout-send--around-chunk (orig session turn-id text)
  "Give TEXT to the job of SESSION's TURN-ID, else call ORIG with the three."
  (if (not (gethash session passepartout-send--jobs))
      (funcall orig session turn-id text)
    (let ((job (passepartout-send--job session turn-id)))
      (when (and job (stringp text))
        (setf (passepartout-send-job-text job)
              (concat (passepartout-send-job-text job) text))
        (when (passepartout-send-job-on-chunk job)
          (funcall (passepartout-send-job-on-chunk job) text))))))

(defun passepartout-send--around-done (orig session turn-id info)
  "End the job of SESSION's TURN-ID, by INFO; else call ORIG with the three."
  (if (not (gethash session passepartout-send--jobs))
      (funcall orig session turn-id info)
    (let ((job (passepartout-send--job session turn-id)))
      (when job
        (passepartout-send--finish
         job (cond ((plist-get info :cancelled) 'cancelled)
                   ((passepartout-send-job-error job) 'failed)
                   (t 'done)))))))

(defun passepartout-send--around-error (orig session turn-id kind message)
  "Note KIND and MESSAGE in SESSION's job TURN-ID, else call ORIG with the four."
  (if (not (gethash session passepartout-send--jobs))
      (funcall orig session turn-id kind message)
    (let ((job (passepartout-send--job session turn-id)))
      (when job
        (setf (passepartout-send-job-error job) (format "%s: %s" kind message))))))

(defun passepartout-send--around-tool (orig session turn-id info)
  "Drop tool events of a job's SESSION; else call ORIG with TURN-ID and INFO."
  (unless (gethash session passepartout-send--jobs)
    (funcall orig session turn-id info)))

(advice-add 'passepartout--on-chunk :around #'passepartout-send--around-chunk)
(advice-add 'passepartout--on-done :around #'passepartout-send--around-done)
(advice-add 'passepartout--on-error :around #'passepartout-send--around-error)
(advice-add 'passepartout--on-tool :around #'passepartout-send--around-tool)

(defun passepartout-send--server-exited (what)
  "Fail every running job: the server went away, see WHAT."
  (dolist (job (hash-table-values passepartout-send--jobs))
    (passepartout-send--finish job 'failed what)))

(add-hook 'passepartout-server-exit-functions #'passepartout-send--server-exited)

(cl-defun passepartout-send-turn (text context &key session on-chunk on-done)
  "Send TEXT with the CONTEXT plist as a turn outside any chat buffer.
SESSION is the session id (by default a new one).  The turn works in the
current buffer's workspace (`passepartout-workspace-of') unless CONTEXT
names one.  ON-CHUNK is called
with each piece of the reply, ON-DONE with the job when the turn ended
\(its state done, cancelled or failed, its text and error).  Return the
`passepartout-send-job'."
  (let* ((workspace (and (not (plist-member context :workspace))
                         (passepartout-workspace-of)))
         (context (if workspace (append context (list :workspace workspace)) context))
         (session (or session (concat "send-" (passepartout--new-id 12))))
         (job (passepartout-send-job--make :session session
                                           :turn (passepartout--new-id 12)
                                           :on-chunk on-chunk :on-done on-done)))
    (when-let ((old (gethash session passepartout-send--jobs)))
      (passepartout-send-cancel-job old))
    (puthash session job passepartout-send--jobs)
    (passepartout-start)
    (passepartout-call 'chat-send
                       (list session (passepartout-send-job-turn job) text context)
                       nil
                       (lambda (err)
                         (passepartout-send--finish
                          job 'failed (passepartout-epc-format-error err))))
    job))

(defun passepartout-send-cancel-job (job)
  "Cancel JOB, a `passepartout-send-job' still running."
  (when (eq (passepartout-send-job-state job) 'running)
    (when (passepartout-live-p)
      (passepartout-call 'chat-cancel (list (passepartout-send-job-session job)
                                            (passepartout-send-job-turn job))))
    (passepartout-send--finish job 'cancelled)))

;;;; What is sent

(defun passepartout-send--where ()
  "Return the name of the current buffer, for the labels of its parts."
  (if buffer-file-name (file-name-nondirectory buffer-file-name) (buffer-name)))

(defun passepartout-send--lines (beg end)
  "Return \"lines A-B\" for BEG..END of the current buffer."
  (save-restriction
    (widen)
    (format "lines %d-%d" (line-number-at-pos beg)
            (line-number-at-pos (max beg (if (and (> end beg)
                                                  (eq (char-before end) ?\n))
                                             (1- end) end))))))

(defun passepartout-send--subtree ()
  "Return (BEG END LABEL) of the org subtree at point."
  (save-excursion
    (org-back-to-heading t)
    (let ((title (substring-no-properties (org-get-heading t t t t)))
          (beg (point)))
      (org-end-of-subtree t t)
      (list beg (point) (format "the subtree \"%s\" of %s" title
                                (passepartout-send--where))))))

(defun passepartout-send--part (&optional what beg end)
  "Return (BEG END LABEL) of WHAT: region, subtree or buffer.
Without WHAT: the active region, else the org subtree at point, else
the whole buffer.  BEG and END, when given, are the region's bounds."
  (let ((what (or what
                  (cond ((use-region-p) 'region)
                        ((and (derived-mode-p 'org-mode) (not (org-before-first-heading-p)))
                         'subtree)
                        (t 'buffer)))))
    (pcase what
      ('region
       (unless (or beg (use-region-p)) (user-error "Passepartout: no active region"))
       (let ((beg (or beg (region-beginning))) (end (or end (region-end))))
         (list beg end (format "the region of %s (%s)" (passepartout-send--where)
                               (passepartout-send--lines beg end)))))
      ('subtree
       (unless (and (derived-mode-p 'org-mode) (not (org-before-first-heading-p)))
         (user-error "Passepartout: point is not in an org subtree"))
       (passepartout-send--subtree))
      (_ (save-restriction
           (widen)
           (list (point-min) (point-max)
                 (format "the buffer %s" (passepartout-send--where))))))))

;;;; The reply in a chat buffer

(defun passepartout-send--to-chat (prompt part)
  "Send PROMPT with PART, a plist of `passepartout-context-part', in the chat.
Return the chat turn."
  (let ((choice (passepartout-models-turn-context))
        (buffer (save-window-excursion (passepartout-chat))))
    (prog1
        (with-current-buffer buffer
          (goto-char (point-max))
          (unless (bolp) (insert "\n"))
          (insert prompt "\n[with " (plist-get part :name) "]")
          (let ((passepartout-context-extra (list part))
                (passepartout-chat-turn-choice choice))
            (passepartout-chat-send)))
      (display-buffer buffer))))

;;;; The reply in place

(defconst passepartout-send--org-structure
  (concat "^\\([ \t]*\\)\\(,*\\(?:\\*\\|#\\+\\|:[^ \t\n:]*:"
          "\\|\\(?:SCHEDULED\\|DEADLINE\\|CLOSED\\):\\|%%\\)\\)")
  "A line org reads as structure, as the server's `org_escape' finds it.")

(defun passepartout-send-org-escape (text)
  "Return TEXT with org's comma before each line org would read as structure."
  (replace-regexp-in-string passepartout-send--org-structure "\\1,\\2"
                            (passepartout-visible text) t))

(defvar-local passepartout-send--session nil
  "The session of this buffer's replies in place.")

(defvar-local passepartout-send--job nil
  "The reply in place running in this buffer, or nil.")

(defun passepartout-send--in-place (prompt part)
  "Send PROMPT with PART; write the reply at point.  Return the job."
  (let* ((buffer (current-buffer))
         (org (derived-mode-p 'org-mode))
         (group (prepare-change-group))
         (start (progn
                  (activate-change-group group)
                  ;; The reply starts a line of its own, never glued to the text.
                  (unless (bolp) (insert "\n"))
                  (copy-marker (point))))
         (end (copy-marker (point) t))
         (context (append (passepartout-models-turn-context)
                          (list :buffer (buffer-name)
                                :attachments (cons part (passepartout-context-attachments))))))
    (unless passepartout-send--session
      (setq passepartout-send--session (concat "send-" (passepartout--new-id 12))))
    (setq passepartout-send--job
          (passepartout-send-turn
           prompt context
           :session passepartout-send--session
           :on-chunk
           (lambda (_text)
             (when (buffer-live-p buffer)
               (with-current-buffer buffer
                 (when passepartout-send--job
                   (passepartout-send--show-reply
                    (passepartout-send-job-text passepartout-send--job) start end org)))))
           :on-done
           (lambda (job)
             (when (buffer-live-p buffer)
               (with-current-buffer buffer
                 (setq passepartout-send--job nil)
                 (passepartout-send--show-reply (passepartout-send-job-text job)
                                                start end org)
                 (accept-change-group group)
                 (undo-amalgamate-change-group group)))
             (message "Passepartout: %s"
                      (pcase (passepartout-send-job-state job)
                        ('done "the reply is in place")
                        ('cancelled "cancelled")
                        (_ (format "error: %s" (passepartout-send-job-error job))))))))
    (message "Passepartout: asking; the reply comes in at point")
    passepartout-send--job))

(defun passepartout-send--show-reply (text start end org)
  "Show TEXT, the reply so far, between the markers START and END.
In an ORG buffer, lines org would read as structure are escaped."
  (let* ((shown (passepartout-inert (if org (passepartout-send-org-escape text)
                                      (passepartout-visible text)))))
    (unless (equal shown (buffer-substring-no-properties start end))
      (save-excursion
        (let ((inhibit-read-only t))
          (goto-char start)
          (delete-region start end)
          (insert shown)
          (set-marker end (point)))))))

(defun passepartout-send-cancel ()
  "Cancel the reply being written in place in this buffer."
  (interactive)
  (if passepartout-send--job
      (passepartout-send-cancel-job passepartout-send--job)
    (message "Passepartout: no reply is being written here")))

;;;; The commands

(defun passepartout-send--dispatch (what in-place prompt &optional beg end)
  "Send PROMPT with the part WHAT; the reply IN-PLACE or in the chat.
BEG and END are the region's bounds, when WHAT is region."
  (when (string-empty-p (string-trim (or prompt "")))
    (user-error "Passepartout: the prompt is empty"))
  (pcase-let* ((`(,beg ,end ,label) (passepartout-send--part what beg end))
               (part (passepartout-context-part label beg end)))
    (when (use-region-p) (deactivate-mark))
    (if in-place
        (passepartout-send--in-place prompt part)
      (passepartout-send--to-chat prompt part))))

(defun passepartout-send--read-prompt (what)
  "Read the prompt for the part WHAT would send."
  (read-string (format "Ask about %s: " (nth 2 (passepartout-send--part what)))))

;;;###autoload
(defun passepartout-send (&optional in-place prompt)
  "Send a PROMPT with the region, else the org subtree, else the buffer.
The reply goes into the chat buffer; with a prefix argument IN-PLACE,
it is written at point.  In a chat buffer, send the chat's prompt."
  (interactive
   (if (bound-and-true-p passepartout-chat-mode)
       (list nil nil)
     (list current-prefix-arg (passepartout-send--read-prompt nil))))
  (if (bound-and-true-p passepartout-chat-mode)
      (passepartout-chat-send)
    (passepartout-send--dispatch nil in-place prompt)))

;;;###autoload
(defun passepartout-send-region (beg end prompt &optional in-place)
  "Send PROMPT with the region BEG..END; with a prefix IN-PLACE, reply at point."
  (interactive
   (if (use-region-p)
       (list (region-beginning) (region-end)
             (passepartout-send--read-prompt 'region) current-prefix-arg)
     (user-error "Passepartout: no active region")))
  (passepartout-send--dispatch 'region in-place prompt (min beg end) (max beg end)))

;;;###autoload
(defun passepartout-send-subtree (prompt &optional in-place)
  "Send PROMPT with the org subtree at point; a prefix IN-PLACE replies at point."
  (interactive (list (passepartout-send--read-prompt 'subtree) current-prefix-arg))
  (passepartout-send--dispatch 'subtree in-place prompt))

;;;###autoload
(defun passepartout-send-buffer (prompt &optional in-place)
  "Send PROMPT with the whole buffer; a prefix IN-PLACE replies at point."
  (interactive (list (passepartout-send--read-prompt 'buffer) current-prefix-arg))
  (passepartout-send--dispatch 'buffer in-place prompt))

(provide 'passepartout-send)
;;; passepartout-send.el ends here
