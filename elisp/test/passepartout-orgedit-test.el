;;; passepartout-orgedit-test.el --- Tests for the agent's org edits in buffers  -*- lexical-binding: t; -*-

;;; Commentary:

;; The server writes an org file and calls `passepartout--on-org-edit' with
;; the text before and after: an unmodified buffer takes the new text as one
;; undoable change, a modified one takes the changed region and keeps the
;; person's changes, and a buffer whose region is gone is left alone.

;;; Code:

(require 'ert)
(require 'org)
(require 'passepartout-orgedit)

(defconst passepartout-orgedit-test--old
  "* Projects\n** Alpha\n:PROPERTIES:\n:ID:       alpha\n:END:\n* Inbox\n"
  "A file before the agent's edit.")

(defconst passepartout-orgedit-test--new
  "* Projects\n** Alpha\n:PROPERTIES:\n:ID:       alpha\n:Owner:    Ann\n:END:\n* Inbox\n"
  "The same file after the agent set a property.")

(defmacro passepartout-orgedit-test--visiting (var &rest body)
  "Visit a temporary org file holding the old text, bound to VAR, and run BODY."
  (declare (indent 1))
  `(let* ((,var (make-temp-file "orgedit" nil ".org" passepartout-orgedit-test--old))
          (buffer (find-file-noselect ,var)))
     (unwind-protect
         (with-current-buffer buffer
           (buffer-enable-undo)
           ,@body)
       (with-current-buffer buffer (set-buffer-modified-p nil))
       (kill-buffer buffer)
       (delete-file ,var))))

(ert-deftest passepartout-orgedit-unmodified-buffer-takes-the-edit-and-undo-works ()
  (passepartout-orgedit-test--visiting file
    (goto-char (point-max))
    (with-temp-file file (insert passepartout-orgedit-test--new))
    (undo-boundary)
    (passepartout--on-org-edit file passepartout-orgedit-test--old
                               passepartout-orgedit-test--new)
    (should (equal (buffer-string) passepartout-orgedit-test--new))
    (should-not (buffer-modified-p))
    (should (verify-visited-file-modtime))
    (undo-boundary)
    (let ((last-command 'ignore)) (undo))
    (should (equal (buffer-string) passepartout-orgedit-test--old))))

(ert-deftest passepartout-orgedit-modified-buffer-keeps-the-persons-changes ()
  (passepartout-orgedit-test--visiting file
    (goto-char (point-max))
    (insert "** Unsaved idea\n")
    (with-temp-file file (insert passepartout-orgedit-test--new))
    (passepartout--on-org-edit file passepartout-orgedit-test--old
                               passepartout-orgedit-test--new)
    (should (equal (buffer-string)
                   (concat passepartout-orgedit-test--new "** Unsaved idea\n")))
    (should (buffer-modified-p))))

(ert-deftest passepartout-orgedit-a-buffer-without-the-region-is-left-alone ()
  (passepartout-orgedit-test--visiting file
    (erase-buffer)
    (insert "* Something else entirely\n")
    (passepartout--on-org-edit file passepartout-orgedit-test--old
                               passepartout-orgedit-test--new)
    (should (equal (buffer-string) "* Something else entirely\n"))))

(ert-deftest passepartout-orgedit-no-buffer-no-change ()
  (should-not (passepartout--on-org-edit "/nonexistent/x.org" "a" "b")))

(provide 'passepartout-orgedit-test)

;;; passepartout-orgedit-test.el ends here
