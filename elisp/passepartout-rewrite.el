;;; passepartout-rewrite.el --- Rewrite a region, shown as a diff to accept  -*- lexical-binding: t; -*-

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

;; `passepartout-rewrite' asks the model for a replacement of the region
;; (no tools offered: the turn only writes text) and shows it as a diff
;; in `passepartout-rewrite-mode': \\[passepartout-rewrite-accept]
;; accepts, \\[passepartout-rewrite-reject] rejects,
;; \\[passepartout-rewrite-edit] edits the proposal first.
;;
;; The write passes the gates like any other: before the buffer changes,
;; the accepted text goes back to the server (method rewrite-check) as
;; the proposal it amounts to, `write-file' of the visited file's new
;; text (a reply, for a buffer visiting no file).  Every gate judges it
;; and the verdict is audited; a deny (a protected place, a policy rule,
;; a region holding `@personal' text the model never saw) leaves the
;; buffer as it was and says why.  An ask is answered by the accept
;; itself: the person saw the exact change.  Emacs then makes the change
;; in the buffer, as one step of undo, and does not save it.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'diff)
(require 'diff-mode)
(require 'passepartout)
(require 'passepartout-models)
(require 'passepartout-context)
(require 'passepartout-send)

(defconst passepartout-rewrite-buffer "*passepartout-rewrite*"
  "The buffer that shows a proposed rewrite as a diff.")

(defcustom passepartout-rewrite-instructions
  (concat "Rewrite the attached text as the person asks: %s\n\n"
          "Answer with the replacement text only: no explanation, no quotes, "
          "no code fence; keep its language and format.")
  "The prompt of a rewrite; %s is the person's instruction."
  :type 'string
  :group 'passepartout)

(defvar-local passepartout-rewrite--state nil
  "The rewrite shown here: a plist of :buffer :beg :end :old :new.")

(defvar passepartout-rewrite-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'passepartout-rewrite-accept)
    (define-key map (kbd "C-c C-k") #'passepartout-rewrite-reject)
    (define-key map (kbd "C-c C-e") #'passepartout-rewrite-edit)
    map)
  "Keymap of `passepartout-rewrite-mode'.")

(define-derived-mode passepartout-rewrite-mode diff-mode "Pp-Rewrite"
  "A proposed rewrite of a region, as a diff.
\\<passepartout-rewrite-mode-map>\\[passepartout-rewrite-accept] accepts it
\(once the server's gates allow the write),
\\[passepartout-rewrite-reject] rejects it,
\\[passepartout-rewrite-edit] edits the proposal first."
  :interactive nil
  (setq buffer-read-only t))

;;;; Asking

(defun passepartout-rewrite--clean (reply old)
  "Return REPLY without a fence around it, ending in a newline when OLD does."
  (let ((text (string-trim reply "[ \t\n]*" "[ \t\n]*")))
    (when (string-match "\\````[^\n]*\n\\(\\(?:.\\|\n\\)*?\\)\n?```\\'" text)
      (setq text (match-string 1 text)))
    (if (string-suffix-p "\n" old) (concat text "\n") text)))

;;;###autoload
(defun passepartout-rewrite (beg end instruction)
  "Ask for a rewrite of the region BEG..END following INSTRUCTION.
The proposal is shown as a diff to accept, reject or edit; nothing in
the buffer changes before it is accepted and the server's gates allow
the write.  Return the job of the turn."
  (interactive
   (if (use-region-p)
       (list (region-beginning) (region-end) (read-string "Rewrite the region how? "))
     (user-error "Passepartout: select the region to rewrite")))
  (when (string-empty-p (string-trim instruction))
    (user-error "Passepartout: say how to rewrite the region"))
  (when (= beg end)
    (user-error "Passepartout: the region is empty"))
  (let* ((buffer (current-buffer))
         (state (list :buffer buffer
                      :beg (copy-marker beg) :end (copy-marker end t)
                      :old (buffer-substring-no-properties beg end)))
         (part (passepartout-context-part
                (format "the text to rewrite (%s of %s)" (passepartout-send--lines beg end)
                        (passepartout-send--where))
                beg end))
         ;; No tool is offered: the turn writes the proposal and nothing else
         ;; (nil would read as "no list"; a list naming no tool offers none).
         (context (append (passepartout-models-turn-context)
                          (list :buffer (buffer-name) :attachments (list part)
                                :tools '("none")))))
    (passepartout-rewrite--refuse-private state)
    (when (use-region-p) (deactivate-mark))
    (message "Passepartout: asking for a rewrite...")
    (passepartout-send-turn
     (format passepartout-rewrite-instructions instruction) context
     :on-done (lambda (job) (passepartout-rewrite--proposed job state)))))

(defun passepartout-rewrite--refuse-private (state)
  "Signal a `user-error' when the server refuses STATE's region before sending.
A region holding private text is refused now, not on accept: the model
would see it withheld and nothing it proposed could be applied."
  (passepartout-start)
  (let ((answer (passepartout-rewrite--check (plist-put (copy-sequence state) :probe t))))
    (unless (plist-get answer :allowed)
      (user-error "Passepartout: no rewrite, nothing was sent: %s"
                  (or (plist-get answer :reason) "refused")))))

(defun passepartout-rewrite--proposed (job state)
  "Show the rewrite JOB proposed for STATE, or say why there is none."
  (pcase (passepartout-send-job-state job)
    ('done
     (let ((new (passepartout-rewrite--clean (passepartout-send-job-text job)
                                             (plist-get state :old))))
       (if (string-empty-p (string-trim new))
           (message "Passepartout: the model proposed no text")
         (passepartout-rewrite--show (plist-put state :new new)))))
    ('cancelled (message "Passepartout: rewrite cancelled"))
    (_ (message "Passepartout: no rewrite: %s" (passepartout-send-job-error job)))))

(defun passepartout-rewrite--show (state)
  "Show STATE's proposal as a diff of the region; return the diff buffer."
  (let ((old (make-temp-file "passepartout-rewrite-old"))
        (new (make-temp-file "passepartout-rewrite-new"))
        (out (get-buffer-create passepartout-rewrite-buffer)))
    (unwind-protect
        (let ((name (buffer-name (plist-get state :buffer))))
          (with-temp-file old (insert (plist-get state :old)))
          (with-temp-file new (insert (plist-get state :new)))
          (with-current-buffer out
            (let ((inhibit-read-only t))
              (erase-buffer)
              (call-process diff-command nil t nil "-u"
                            "--label" (concat name " (now)")
                            "--label" (concat name " (proposed)") old new))))
      (delete-file old)
      (delete-file new))
    (with-current-buffer out
      (passepartout-rewrite-mode)
      (setq passepartout-rewrite--state state)
      (let ((inhibit-read-only t))
        (goto-char (point-min))
        (insert (substitute-command-keys
                 (concat "# Rewrite of " (buffer-name (plist-get state :buffer))
                         ": \\<passepartout-rewrite-mode-map>"
                         "\\[passepartout-rewrite-accept] accept, "
                         "\\[passepartout-rewrite-reject] reject, "
                         "\\[passepartout-rewrite-edit] edit\n"))))
      (set-buffer-modified-p nil))
    ;; The person asked for this and waits for it: the diff takes the keys.
    (pop-to-buffer out)
    (message "%s" (substitute-command-keys
                   "\\<passepartout-rewrite-mode-map>Passepartout: \\[passepartout-rewrite-accept] \
accepts the rewrite, \\[passepartout-rewrite-reject] rejects it, \
\\[passepartout-rewrite-edit] edits it"))
    out))

;;;; Answering

(defun passepartout-rewrite--current ()
  "Return the rewrite state of this buffer, or fail clearly."
  (or passepartout-rewrite--state
      (user-error "Passepartout: no rewrite is shown here")))

(defun passepartout-rewrite--check (state)
  "Ask the server's gates about STATE's write; return its plist answer."
  (with-current-buffer (plist-get state :buffer)
    (save-restriction
      (widen)
      (passepartout-call-sync
       'rewrite-check
       (list (list :buffer (buffer-name)
                   :file (and buffer-file-name (expand-file-name buffer-file-name))
                   :before (buffer-substring-no-properties (point-min) (point-max))
                   :start (- (plist-get state :beg) (point-min))
                   :end (- (plist-get state :end) (point-min))
                   :new (or (plist-get state :new) "")
                   :probe (and (plist-get state :probe) t)))))))

(defun passepartout-rewrite-accept ()
  "Apply the rewrite shown, once the server's gates allow the write.
In the buffer that edits a proposal, show the diff of the edited text
instead.  Return applied, refused or edited."
  (interactive)
  (if passepartout-rewrite--editing
      (passepartout-rewrite--edit-done)
    (passepartout-rewrite--apply)))

(defun passepartout-rewrite--apply ()
  "Apply the rewrite shown here, once the gates allow it; applied or refused."
  (let* ((state (passepartout-rewrite--current))
         (buffer (plist-get state :buffer))
         (beg (plist-get state :beg))
         (end (plist-get state :end)))
    (unless (buffer-live-p buffer)
      (user-error "Passepartout: the buffer of the rewrite is gone"))
    (unless (equal (with-current-buffer buffer (buffer-substring-no-properties beg end))
                   (plist-get state :old))
      (user-error "Passepartout: the region changed since; ask for the rewrite again"))
    (let* ((verdict (passepartout-rewrite--check state))
           (allowed (plist-get verdict :allowed)))
      (if (not allowed)
          (progn
            (message "Passepartout: the rewrite was refused: %s"
                     (passepartout-visible (format "%s" (plist-get verdict :reason))))
            'refused)
        (with-current-buffer buffer
          (save-excursion
            (atomic-change-group
              (goto-char beg)
              (delete-region beg end)
              (insert (plist-get state :new)))))
        (passepartout-rewrite--close)
        (message "Passepartout: rewrite applied to %s (undo takes it back)"
                 (buffer-name buffer))
        'applied))))

(defun passepartout-rewrite-reject ()
  "Reject the rewrite shown or being edited: the region stays as it was."
  (interactive)
  (unless passepartout-rewrite--editing (passepartout-rewrite--current))
  (passepartout-rewrite--close)
  (message "Passepartout: rewrite rejected; the region is unchanged")
  'rejected)

(defun passepartout-rewrite--close ()
  "Close the diff buffer and the edit buffer, if any."
  (dolist (name (list passepartout-rewrite-buffer "*passepartout-rewrite-edit*"))
    (when-let ((buffer (get-buffer name)))
      (when-let ((window (get-buffer-window buffer)))
        (quit-window nil window))
      (kill-buffer buffer))))

;;;; Editing the proposal

(defvar-local passepartout-rewrite--editing nil
  "The rewrite state whose proposal this buffer edits.")

(defvar passepartout-rewrite-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'passepartout-rewrite-accept)
    (define-key map (kbd "C-c C-k") #'passepartout-rewrite-reject)
    map)
  "Keymap of `passepartout-rewrite-edit-mode'.")

(define-minor-mode passepartout-rewrite-edit-mode
  "Edit a proposed rewrite.
\\<passepartout-rewrite-edit-mode-map>\\[passepartout-rewrite-accept] \
shows the diff again, \\[passepartout-rewrite-reject] rejects the rewrite."
  :lighter " Pp-Edit"
  :interactive nil
  :keymap passepartout-rewrite-edit-mode-map)

(defun passepartout-rewrite-edit ()
  "Edit the proposal shown; the diff is shown again once the edit is done."
  (interactive)
  (let ((state (passepartout-rewrite--current))
        (buffer (get-buffer-create "*passepartout-rewrite-edit*")))
    (with-current-buffer buffer
      (erase-buffer)
      (insert (plist-get state :new))
      (goto-char (point-min))
      (passepartout-rewrite-edit-mode 1)
      (setq passepartout-rewrite--editing state))
    (pop-to-buffer buffer)
    (message "%s" (substitute-command-keys
                   "\\<passepartout-rewrite-edit-mode-map>\\[passepartout-rewrite-accept] \
to review the diff, \\[passepartout-rewrite-reject] to reject"))
    buffer))

(defun passepartout-rewrite--edit-done ()
  "Take the edited proposal and show its diff to accept; return edited."
  (let ((state passepartout-rewrite--editing)
        (text (buffer-substring-no-properties (point-min) (point-max))))
    (unless state (user-error "Passepartout: this buffer edits no rewrite"))
    (quit-window t)
    (passepartout-rewrite--show (plist-put (copy-sequence state) :new text))
    'edited))

(provide 'passepartout-rewrite)
;;; passepartout-rewrite.el ends here
