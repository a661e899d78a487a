;;; passepartout-orgedit.el --- The agent's org edits in the buffers visiting them  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: outlines
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; The server's org tools write an org file on disk, then tell Emacs the
;; file's text before and after the edit.  A buffer visiting the file gets
;; the same edit as one change that `undo' takes back: an unmodified buffer
;; becomes the new text and stays unmodified (it matches the disk again); a
;; buffer with unsaved changes gets the changed region where the old text of
;; that region still stands, once, and keeps the person's changes.  When the
;; region is not found, the buffer is left alone and a message says so.

;;; Code:

(require 'subr-x)

(defconst passepartout-orgedit-context 200
  "Characters of unchanged text each side of an edit that place it in a buffer.")

(defun passepartout-orgedit--prefix (a b)
  "Return the length of the common prefix of strings A and B."
  (let ((cmp (compare-strings a nil nil b nil nil)))
    (if (eq cmp t) (length a) (1- (abs cmp)))))

(defun passepartout-orgedit--region (old new)
  "Return (START OLD-END NEW-END): where NEW differs from OLD."
  (let* ((start (passepartout-orgedit--prefix old new))
         (room (min (- (length old) start) (- (length new) start)))
         (tail (min room (passepartout-orgedit--prefix (reverse old) (reverse new)))))
    (list start (- (length old) tail) (- (length new) tail))))

(defun passepartout-orgedit--replace (beg end text)
  "Replace BEG..END of the current buffer with TEXT, keeping point and markers."
  (let ((source (generate-new-buffer " *passepartout-orgedit*")))
    (unwind-protect
        (progn
          (with-current-buffer source (insert text))
          (save-restriction
            (narrow-to-region beg end)
            (replace-buffer-contents source 1.0)))
      (kill-buffer source))))

(defun passepartout-orgedit--patch (old new)
  "Apply the change from OLD to NEW where OLD's changed region stands once.
Return non-nil when the buffer was changed."
  (pcase-let* ((`(,start ,old-end ,new-end) (passepartout-orgedit--region old new))
               (from (max 0 (- start passepartout-orgedit-context)))
               (to (min (length old) (+ old-end passepartout-orgedit-context)))
               (needle (substring old from to)))
    (save-excursion
      (save-restriction
        (widen)
        (goto-char (point-min))
        (let ((case-fold-search nil))
          (when (and (search-forward needle nil t)
                     (not (save-excursion (search-forward needle nil t))))
            (let ((at (- (match-beginning 0) from)))
              (passepartout-orgedit--replace (+ at start) (+ at old-end)
                                             (substring new start new-end))
              t)))))))

(defun passepartout--on-org-edit (file old new)
  "Show the agent's edit of FILE in the buffer visiting it, if any.
OLD is the file's text the edit was made on, NEW the text now on disk."
  (when-let ((buffer (and (stringp file) (stringp old) (stringp new)
                          (find-buffer-visiting file))))
    (with-current-buffer buffer
      (let ((text (save-restriction
                    (widen)
                    (buffer-substring-no-properties (point-min) (point-max)))))
        (cond
         ((equal text new))
         ((and (not (buffer-modified-p)) (equal text old))
          ;; The disk already holds NEW: no "changed on disk" question first.
          (set-visited-file-modtime)
          (save-restriction
            (widen)
            (passepartout-orgedit--replace (point-min) (point-max) new))
          (set-buffer-modified-p nil)
          (set-visited-file-modtime))
         ((passepartout-orgedit--patch old new)
          ;; The disk holds the agent's edit, the buffer holds it too: saving
          ;; the buffer loses nothing, so no "changed on disk" question.
          (set-visited-file-modtime)
          (message "Passepartout edited %s; your unsaved changes are kept"
                   (buffer-name)))
         (t
          (message "Passepartout changed %s on disk; the buffer differs, so it is left as it is"
                   (buffer-name))))))))

(provide 'passepartout-orgedit)

;;; passepartout-orgedit.el ends here
