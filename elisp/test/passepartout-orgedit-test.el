;;; passepartout-orgedit-test.el --- Tests for the agent's org edits in buffers  -*- lexical-binding: t; -*-

;;; Commentary:

;; The server writes an org file and calls `passepartout--on-org-edit' with
;; the text before and after: an unmodified buffer takes the new text as one
;; undoable change, a modified one takes the changed region and keeps the
;; person's changes, and a buffer whose region is gone is left alone.  Against
;; the real server: the model's org-set-property on a file visited with
;; unsaved changes lands on disk and in the buffer, and undo takes it back.

;;; Code:

(require 'ert)
(require 'org)
(require 'passepartout-orgedit)
(require 'passepartout-test-helpers)
(require 'passepartout-chat)

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

(ert-deftest passepartout-orgedit-server-edit-reaches-the-visiting-buffer ()
  "An approved org tool's edit is on disk and in the buffer, whose changes stay."
  (let* ((dir (make-temp-file "passepartout-orgedit-" t))
         (file (expand-file-name "tasks.org" dir))
         (passepartout-approval-function (lambda (_description _info) t)))
    (with-temp-file file (insert passepartout-orgedit-test--old))
    (let ((visiting (find-file-noselect file)))
      (unwind-protect
          (progn
            (with-current-buffer visiting
              (buffer-enable-undo)
              (goto-char (point-max))
              (insert "** Unsaved idea\n")
              (undo-boundary))
            (passepartout-test-with-shared-server
                `(((tool_calls . [((name . "org-set-property")
                                   (arguments . ((file . ,file) (heading . "id:alpha")
                                                 (key . "Owner") (value . "Ann"))))]))
                  ((text . "Set.")))
              (let* ((buffer (passepartout-chat))
                     (turn (passepartout-test-prompt buffer "Ann owns Alpha")))
                (should (eq (passepartout-test-wait-turn turn) 'done))
                (should (equal (with-temp-buffer (insert-file-contents file) (buffer-string))
                               passepartout-orgedit-test--new))
                (passepartout-test-wait
                 (lambda () (with-current-buffer visiting
                              (string-match-p ":Owner:" (buffer-string))))
                 10 "the edit in the visiting buffer")
                (with-current-buffer visiting
                  (should (equal (buffer-string)
                                 (concat passepartout-orgedit-test--new "** Unsaved idea\n")))
                  (undo-boundary)
                  (let ((last-command 'ignore)) (undo))
                  (should (equal (buffer-string)
                                 (concat passepartout-orgedit-test--old
                                         "** Unsaved idea\n")))))))
        (with-current-buffer visiting (set-buffer-modified-p nil))
        (kill-buffer visiting)
        (delete-directory dir t)))))

(provide 'passepartout-orgedit-test)

;;; passepartout-orgedit-test.el ends here
